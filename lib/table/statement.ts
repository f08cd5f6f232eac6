import type { Table, TableColumn } from './table.js'

/**
 * What a compiler gives and a runner takes: SQL text and its bind values (`pool.query`'s
 * shape). Here, beside the table types, so lib/sql, lib/auth, schemas/ and plugins/ share it
 * without importing one another.
 */
export interface Statement {
  readonly text: string
  readonly values: readonly unknown[]
}

/** Where each selected column goes in a response row: `director.name` -> `{ director: { name } }`. */
export interface Shape {
  /** Where each selected column goes; a nested one is a path. */
  readonly paths: ReadonlyArray<readonly string[]>
  /** The column aliases, in select order. */
  readonly aliases: readonly string[]
  /** What each path holds: a table's column, or null for a readable representation (text). */
  readonly sources: ReadonlyArray<{ readonly table: Table, readonly column: TableColumn } | null>
  /** True when every path is one key long, so rows from pg are already the response rows. */
  readonly flat: boolean
  /** Identifies the shape, for caching its serialiser. */
  readonly key: string
}

/** A SELECT whose rows are response rows once put in `shape`. */
export interface SelectStatement extends Statement {
  readonly shape: Shape
}
