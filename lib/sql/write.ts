import type { Filter, QueryContext } from '../query/parse.js'
import type { Table, TableColumn } from '../table/table.js'
import { quoteIdent } from './identifier.js'
import type { Statement } from '../table/statement.js'
import { Values } from './params.js'
import { returningList } from './select.js'
import { whereClause } from './where.js'

const table = (t: Table): string => quoteIdent(t.name)
const key = (t: Table): string => quoteIdent(t.primaryKey.name)

/** What an upsert (lib/sql/upsert.ts) adds to an INSERT: its ` ON CONFLICT ...` clause, and `, <more>` to return. */
export interface InsertTail { readonly onConflict: string, readonly returning: string }
const NO_TAIL: InsertTail = { onConflict: '', returning: '' }

/** POST: every given column (defaults already filled in); returns the row as GET `/:id/` shows it. */
export function compileInsert (t: Table, row: ReadonlyMap<TableColumn, unknown>, excludeSecrets: boolean, tail = NO_TAIL): Statement {
  const returning = returningList(t, excludeSecrets) + tail.returning
  if (row.size === 0) return Object.freeze({ text: `INSERT INTO ${table(t)} DEFAULT VALUES${tail.onConflict} RETURNING ${returning}`, values: [] })
  const values = new Values()
  const columns = [...row.keys()].map((c) => quoteIdent(c.name))
  const params = [...row.values()].map((value) => values.add(value))
  return Object.freeze({
    text: `INSERT INTO ${table(t)} (${columns.join(', ')}) VALUES (${params.join(', ')})${tail.onConflict} RETURNING ${returning}`,
    values: values.list
  })
}

/**
 * POST of an array (SPEC §7.4): rows with the same columns, in one statement whose text
 * depends on the columns only, never on the number of rows, so one prepared statement serves
 * every batch of a shape. The rows travel as one JSON array that `jsonb_populate_recordset`
 * turns into records of the table's own row type, each value read by its column's input
 * function with its modifier (a varchar(5) refuses a longer value, as an INSERT does) and
 * nested arrays becoming multi-dimensional ones, which `unnest` of one array per column
 * could not carry. The function scan yields the rows in array order, so they are inserted and
 * returned in the order sent.
 */
export function compileInsertRows (t: Table, rows: ReadonlyArray<ReadonlyMap<TableColumn, unknown>>, excludeSecrets: boolean, tail = NO_TAIL): Statement {
  if (!sameColumns(rows)) throw new Error('compileInsertRows: rows must give the same columns, at least one')
  const columns = [...rows[0]!.keys()]
  const names = columns.map((c) => quoteIdent(c.name))
  // A JSONB value is already JSON text (its `write`): it goes in as it is, not as a string.
  const members = columns.map((c) => [JSON.stringify(c.name) + ':', c.type === 'jsonb'] as const)
  const json = rows.map((row) => '{' + columns.map((c, i) => {
    const value = row.get(c)
    const [name, raw] = members[i]!
    return name + (raw && value !== null ? value as string : JSON.stringify(value))
  }).join(',') + '}')
  return Object.freeze({
    text: `INSERT INTO ${table(t)} (${names.join(', ')}) SELECT ${names.map((n) => `x.${n}`).join(', ')} FROM jsonb_populate_recordset(NULL::${table(t)}, $1::jsonb) AS x${tail.onConflict} RETURNING ${returningList(t, excludeSecrets)}${tail.returning}`,
    values: [`[${json.join(',')}]`]
  })
}

/** Whether rows give the same columns, at least one: what `compileInsertRows` takes. */
export function sameColumns (rows: ReadonlyArray<ReadonlyMap<TableColumn, unknown>>): boolean {
  const columns = [...(rows[0]?.keys() ?? [])]
  return columns.length > 0 && rows.every((row) => row.size === columns.length && columns.every((c) => row.has(c)))
}

/** PUT and PATCH: the given columns of one row. A statement with nothing to set is refused. */
export function compileUpdate (t: Table, id: unknown, values: ReadonlyMap<TableColumn, unknown>, excludeSecrets: boolean): Statement {
  if (values.size === 0) throw new Error('compileUpdate: nothing to set')
  const params = new Values()
  const sets = [...values].map(([c, value]) => `${quoteIdent(c.name)} = ${params.add(value)}`)
  return Object.freeze({
    text: `UPDATE ${table(t)} SET ${sets.join(', ')} WHERE ${key(t)} = ${params.add(id)} RETURNING ${returningList(t, excludeSecrets)}`,
    values: params.list
  })
}

/** DELETE `/:id/`. */
export function compileDelete (t: Table, id: unknown): Statement {
  return Object.freeze({ text: `DELETE FROM ${table(t)} WHERE ${key(t)} = $1`, values: [id] })
}

/**
 * The row as GET `/:id/` serves it without parameters, locked until the transaction ends: an
 * `If-Match` write compares its ETag and writes while no other write can change it (SPEC §7.3).
 */
export function compileLockRow (t: Table, id: unknown, excludeSecrets: boolean): Statement {
  return Object.freeze({ text: `SELECT ${returningList(t, excludeSecrets)} FROM ${table(t)} WHERE ${key(t)} = $1 FOR UPDATE`, values: [id] })
}

/** Whether a row exists: hooks run only for rows that do (SPEC §6.14). */
export function compileExists (t: Table, id: unknown): Statement {
  return Object.freeze({ text: `SELECT 1 FROM ${table(t)} WHERE ${key(t)} = $1`, values: [id] })
}

/** The keys of the rows a bulk DELETE matches, locked: their preDelete hooks run before the delete. */
export function compileMatchingIds (ctx: QueryContext, filters: readonly Filter[]): Statement {
  if (filters.length === 0) throw new Error('compileMatchingIds: a bulk delete needs a filter')
  const { text, values } = whereClause(filters)
  return Object.freeze({ text: `SELECT t0.${key(ctx.table)} AS id FROM ${table(ctx.table)} AS t0${text} FOR UPDATE`, values })
}

/** DELETE `/` with filters; one with none is refused here, whatever the route checked. */
export function compileBulkDelete (ctx: QueryContext, filters: readonly Filter[]): Statement {
  if (filters.length === 0) throw new Error('compileBulkDelete: a bulk delete needs a filter')
  const { text, values } = whereClause(filters)
  return Object.freeze({ text: `DELETE FROM ${table(ctx.table)} AS t0${text}`, values })
}

/** Deletes rows by key (after their hooks ran). */
export function compileDeleteIds (t: Table, ids: readonly unknown[]): Statement {
  return Object.freeze({ text: `DELETE FROM ${table(t)} WHERE ${key(t)} = ANY($1)`, values: [ids] })
}
