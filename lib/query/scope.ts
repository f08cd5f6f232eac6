import { TABLECRUD_ERR_SCOPE_INVALID } from '../errors.js'
import type { Table, TableColumn } from '../table/table.js'
import { fieldPaths, type FieldPath } from './fields.js'
import { filterKind, filtersKey, readValue, type Condition, type Filter } from './filter.js'
import { parseTrees } from './tree.js'

/*
 * Row scopes (SPEC §8.6): what a scope function answers for a request, read as filters of its
 * table. lib/sql writes them into every statement (lib/sql/scope.ts); their values are bind
 * parameters, and their structure, never their values, is part of each statement's cache key.
 */

/** What a scope function answers: column → value (ANDed; null is IS NULL), or a tree of SPEC §8.2. */
export type ScopeConditions = Readonly<Record<string, unknown>> | string

/** A scope function of a mount or a table definition; `R` is the request. */
export type ScopeFunction<R = any> = (request: R) => ScopeConditions | Promise<ScopeConditions>

/** The scopes of one request: the filters each table's rows must meet (none: every row). */
export interface Scopes {
  /** The structure of every scope (never a value): part of the key each compiled text is cached by. */
  readonly key: string
  of: (table: Table) => readonly Filter[]
}

const NONE: readonly Filter[] = Object.freeze([])

/** No scope: every row of every table. */
export const NO_SCOPES: Scopes = Object.freeze({ key: '', of: () => NONE })

/**
 * The scopes of a mount whose scopes are resolved per request, before the request's own are
 * known: compiling with them throws, so a route that forgot to take the request's scopes fails
 * its first test instead of reading every row.
 */
export const UNRESOLVED_SCOPES: Scopes = Object.freeze({
  get key (): string { throw new Error('row scopes: this statement was compiled without the request\'s scopes') },
  of: () => { throw new Error('row scopes: this statement was compiled without the request\'s scopes') }
})

/** The scopes of a request, by table. */
export function scopesOf (byTable: ReadonlyMap<Table, readonly Filter[]>): Scopes {
  const key = [...byTable].filter(([, f]) => f.length > 0).map(([t, f]) => `${t.name}{${filtersKey(f)}}`).sort().join(',')
  return Object.freeze({ key, of: (table: Table) => byTable.get(table) ?? NONE })
}

/** What the write compilers take: a table and the scopes its rows are read and written under. */
export interface ScopedTable {
  readonly table: Table
  readonly scopes: Scopes
}

/** A table read without scopes (helpers and tests). */
export const unscoped = (table: Table): ScopedTable => ({ table, scopes: NO_SCOPES })

/** How deep a scope's tree may follow relations (`director.owner.e.1` is one hop). */
const SCOPE_JOINS = 2

const scopeFields = new WeakMap<Table, ReadonlyMap<string, FieldPath>>()

/** What a scope may name: every column, secret ones too (a scope is the server's, not a client's), and paths through relations. */
function fieldsOf (table: Table): ReadonlyMap<string, FieldPath> {
  let fields = scopeFields.get(table)
  if (fields === undefined) scopeFields.set(table, fields = new Map(fieldPaths(table, SCOPE_JOINS, false, true).map((f) => [f.name, f])))
  return fields
}

/** A scope value as its column reads it: a string as a query value, a number, bigint or boolean as its text. */
function scopeValue (table: Table, column: TableColumn, value: unknown): unknown {
  const name = column.name
  const text = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean' ? String(value) : undefined
  const parsed = text === undefined ? undefined : readValue(column, text)
  if (parsed === undefined) throw new TABLECRUD_ERR_SCOPE_INVALID(table.name, `${JSON.stringify(value) ?? String(value)} is not a value of the column ${name} (type ${column.type})`)
  return parsed
}

function equals (table: Table, name: string, value: unknown): Condition {
  const column = table.columnMap.get(name)
  if (column === undefined) throw new TABLECRUD_ERR_SCOPE_INVALID(table.name, `${JSON.stringify(name)} is not a column; the columns are ${[...table.columnMap.keys()].join(', ')}`)
  const field: FieldPath = { name, joins: [], table, column }
  if (value === null) return { kind: 'null', field, column, operator: 'is_null', match: 'exact', values: [], negated: false }
  // Equality, case-sensitive on text too: a scope is no search.
  return { kind: filterKind(column, 'e', 'exact'), field, column, operator: 'e', match: 'exact', values: [scopeValue(table, column, value)], negated: false }
}

/**
 * The filters of a scope function's answer for `table`, or a TABLECRUD_ERR_SCOPE_INVALID (500,
 * its message in the log) naming what is wrong: an unknown column, a value the column does not
 * take, a tree that does not parse.
 */
export function parseScope (table: Table, conditions: unknown): Filter[] {
  if (typeof conditions === 'string') {
    try {
      return conditions === '' ? [] : parseTrees({ filterable: fieldsOf(table), maxPageSize: 1000 }, [{ key: '__and', text: conditions }])
    } catch (error) {
      throw new TABLECRUD_ERR_SCOPE_INVALID(table.name, (error as Error).message)
    }
  }
  if (typeof conditions !== 'object' || conditions === null || Array.isArray(conditions)) {
    throw new TABLECRUD_ERR_SCOPE_INVALID(table.name, 'a scope function must answer an object of column → value or a tree string')
  }
  return Object.entries(conditions).map(([name, value]) => equals(table, name, value))
}
