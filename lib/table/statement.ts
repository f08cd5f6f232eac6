import type { Table, TableColumn } from './table.js'

/**
 * What a compiler gives and a runner takes: SQL text and its bind values (`pool.query`'s
 * shape). Here, beside the table types, so lib/sql, lib/auth, schemas/ and plugins/ share it
 * without importing one another.
 */
export interface Statement {
  readonly text: string
  readonly values: readonly unknown[]
  /**
   * `'custom'`: planned for its values at every run, so sent unnamed. A named statement gets
   * PostgreSQL's generic plan after five runs, blind to a LIMIT's value: for a grouping it chose
   * GroupAggregate over the whole index, twice the time of HashAggregate and a sort (measured in
   * the bench, issue 31). Planning costs some 0.1 ms, little beside a statement that scans.
   */
  readonly plan?: 'custom'
}

/**
 * What an embed (SPEC §8.1) holds: an array of rows of the inner shape, and how the values
 * PostgreSQL's JSON does not write as the wire does (sent as text) are put in wire form.
 */
export interface EmbedSource {
  /** The embedded table, and the ForeignKey its relation follows. */
  readonly table: Table
  readonly column: TableColumn
  readonly embed: Shape
  readonly convert: ((value: unknown) => unknown) | null
}

/** What a path of a shape holds: a table's column, an embed, or null for a readable representation (text). */
export type ShapeSource = { readonly table: Table, readonly column: TableColumn, readonly embed?: undefined } | EmbedSource | null

/** Where each selected column goes in a response row: `director.name` -> `{ director: { name } }`. */
export interface Shape {
  /** Where each selected column goes; a nested one is a path. */
  readonly paths: ReadonlyArray<readonly string[]>
  /** The column aliases, in select order. */
  readonly aliases: readonly string[]
  /** What each path holds. */
  readonly sources: readonly ShapeSource[]
  /** True when every path is one key long, so rows from pg are already the response rows. */
  readonly flat: boolean
  /** Identifies the shape, for caching its serialiser. */
  readonly key: string
}

/** A SELECT whose rows are response rows once put in `shape`. */
export interface SelectStatement extends Statement {
  readonly shape: Shape
}
