import type { FieldPath } from '../query/fields.js'
import { DOCUMENT, searchConfig } from '../table/search.js'
import type { Table, TableColumn } from '../table/table.js'
import { objectName, quoteIdent, quoteLiteral } from './identifier.js'

/*
 * Full-text search in SQL (SPEC §8.4). The document of a table is one expression, written by
 * `documentSql` both for the GIN index `createTables` makes and for every query, so that the
 * planner finds the index: an expression index serves a query only when the query holds the
 * same expression (same function, same constant configuration, same columns in the same order).
 * The configuration is a constant of the definition, never a request's value.
 */

const regconfig = (table: Table): string => `${quoteLiteral(searchConfig(table.search))}::regconfig`

const qualified = (alias: string | null, name: string): string => alias === null ? quoteIdent(name) : `${alias}.${quoteIdent(name)}`

/** The words of one text column, as the `search` operator of a tree reads them. */
export function vectorSql (table: Table, column: string): string {
  return `to_tsvector(${regconfig(table)}, coalesce(${column}, ''))`
}

/**
 * The document of a table with `search` (its columns' words, a NULL column as no words), on the
 * rows aliased `alias`, or unqualified (null) for the index. `coalesce` and `||` keep it
 * immutable, as an index expression must be (concat_ws is only stable).
 */
export function documentSql (table: Table, alias: string | null): string {
  const columns = table.search!.columns.map((c) => `coalesce(${qualified(alias, c)}, '')`)
  return `to_tsvector(${regconfig(table)}, ${columns.join(" || ' ' || ")})`
}

/** A websearch query (words, "phrases", -excluded, or) read by the table's configuration. */
export function querySql (table: Table, placeholder: string): string {
  return `websearch_to_tsquery(${regconfig(table)}, ${placeholder})`
}

/** The column SQL a condition is written on: the document for `__search`, else the column of the row aliased `alias`. */
export function conditionColumn (field: FieldPath, column: TableColumn, alias: string): string {
  return column === DOCUMENT ? documentSql(field.table, alias) : qualified(alias, column.name)
}

/** `<words> @@ <query>`: the document is already a tsvector, one column becomes one. */
export function matchSql (field: FieldPath, column: TableColumn, columnSql: string, placeholder: string): string {
  const words = column === DOCUMENT ? columnSql : vectorSql(field.table, columnSql)
  return `${words} @@ ${querySql(field.table, placeholder)}`
}

/** The relevance of a row of the table aliased `t0` to the search bound at `placeholder`. */
export function rankSql (table: Table, placeholder: string): string {
  return `ts_rank(${documentSql(table, 't0')}, ${querySql(table, placeholder)})`
}

/** The GIN expression index of a table's search, or null for a table without one. */
export function searchIndexSql (table: Table): string | null {
  if (table.search === null) return null
  return `CREATE INDEX IF NOT EXISTS ${quoteIdent(objectName(table.name, 'search_idx'))} ON ${quoteIdent(table.name)} USING gin (${documentSql(table, null)})`
}
