import { typeOf } from './column-types.js'
import { column as col, type ColumnSpec } from './column.js'
import type { TableColumn } from './table.js'

/*
 * Full-text search of a table (SPEC §8.4): which text columns make its document and which text
 * search configuration reads them. Checked when the table is defined, so a typo in a column or
 * a configuration fails at start-up, not on the first search.
 */

/** The table option `search`. */
export interface SearchOptions {
  /** Text columns (varchar, text, email) whose words are searched, in this order. */
  columns: string[]
  /** A text search configuration: one PostgreSQL ships (default 'simple'), or a schema-qualified one of your own. */
  config?: string
}

/** The checked option, as a table holds it. */
export interface Search {
  readonly columns: readonly string[]
  readonly config: string
}

/**
 * The configurations every PostgreSQL from 12 to 17 ships in pg_catalog (PGlite too). A name
 * of this list is known good when the table is defined; a configuration of your own is named
 * schema-qualified (`public.my_english`) and PostgreSQL checks it when `createTables` creates
 * the search index, naming it if it does not exist.
 */
export const BUILT_IN_CONFIGS: ReadonlySet<string> = new Set([
  'simple', 'arabic', 'armenian', 'basque', 'catalan', 'danish', 'dutch', 'english', 'finnish', 'french', 'german', 'greek',
  'hindi', 'hungarian', 'indonesian', 'irish', 'italian', 'lithuanian', 'nepali', 'norwegian', 'portuguese', 'romanian',
  'russian', 'serbian', 'spanish', 'swedish', 'tamil', 'turkish', 'yiddish'
])

const QUALIFIED = /^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/

/** The configuration a table searches with; 'simple' (no stemming, no stop words) for a table without the option. */
export function searchConfig (search: Search | null): string {
  return search?.config ?? 'simple'
}

/** The checked `search` option, or a problem to report with the table's name. */
export function parseSearch (columns: ReadonlyMap<string, ColumnSpec>, option: unknown): Search | string {
  if (typeof option !== 'object' || option === null) return 'search must be { columns: [...text columns], config }'
  const { columns: names, config = 'simple' } = option as { columns?: unknown, config?: unknown }
  if (!Array.isArray(names) || names.length === 0) return 'search.columns must list at least one text column'
  for (const name of names) {
    const column = typeof name === 'string' ? columns.get(name) : undefined
    if (column === undefined) return `search.columns names ${JSON.stringify(name)}, which is not a column`
    if (!typeOf(column).matches) return `search.columns names ${name} (type ${column.type}): only varchar, text and email columns are searched`
    // A search would tell which words a secret holds.
    if (column.secret) return `search.columns names ${name}, a secret column`
  }
  if (new Set(names).size !== names.length) return 'search.columns names a column twice'
  if (typeof config !== 'string' || !(BUILT_IN_CONFIGS.has(config) || QUALIFIED.test(config))) {
    return `search.config ${JSON.stringify(config)} is not a text search configuration PostgreSQL ships (${[...BUILT_IN_CONFIGS].join(', ')}); name one of your own schema-qualified (public.my_config)`
  }
  return Object.freeze({ columns: Object.freeze([...names as string[]]), config })
}

/**
 * The `__search` condition's column: the table's whole document, not one of its columns. A
 * synthetic column (`__` cannot start a column name), known by identity.
 */
export const DOCUMENT: TableColumn = Object.freeze({ ...col.text(), name: '__search' })

/** The relevance sort key of `__search` (SPEC §8.4), likewise known by identity. */
export const RANK: TableColumn = Object.freeze({ ...col.real(), name: '__rank' })
