import type { Filter, QueryContext } from '../query/parse.js'
import type { Table, TableColumn } from '../table/table.js'
import { quoteIdent } from './identifier.js'
import { perSequence } from '../table/per-table.js'
import type { Statement } from '../table/statement.js'
import { Values } from './params.js'
import { returningList } from './select.js'
import type { ScopedTable } from '../query/scope.js'
import { ScopedRows } from './scope.js'
import { whereClause, whereOf } from './where.js'

const table = (t: Table): string => quoteIdent(t.name)
const key = (t: Table): string => quoteIdent(t.primaryKey.name)

/**
 * What an upsert (lib/sql/upsert.ts) adds to an INSERT: its ` ON CONFLICT ... DO UPDATE SET ...`
 * clause, `, <more>` to return, and the scopes the conflicting row must be in to be updated
 * (SPEC §8.6): a row out of them is neither updated nor returned.
 */
export interface InsertTail { readonly onConflict: string, readonly returning: string, readonly scoped?: ScopedTable }
const NO_TAIL: InsertTail = { onConflict: '', returning: '' }

/** The tail's ON CONFLICT clause, with the WHERE of the conflicting row's scope (on the table's own name). */
function onConflict (t: Table, tail: InsertTail, values: Values): string {
  if (tail.scoped === undefined) return tail.onConflict
  const conditions = new ScopedRows(tail.scoped.scopes, values.scoped).conditions(t, table(t), 'conflict')
  return tail.onConflict + whereOf(conditions)
}

/**
 * Which of the rows with keys `ids` are in the scope of their table (SPEC §8.6): run after a
 * write, in its transaction, to refuse one whose rows would fall outside it.
 */
export function compileInScope (ctx: ScopedTable, ids: readonly unknown[]): Statement {
  const values = new Values(ctx.scopes)
  const from = new ScopedRows(ctx.scopes, values.scoped).from(ctx.table, 't0')
  return Object.freeze({ text: `SELECT count(*)::int AS count FROM ${from} WHERE t0.${key(ctx.table)} = ANY(${values.add(ids)})`, values: values.list })
}

/**
 * INSERT texts kept, a table, by its columns in order, secrets included ([0]) or excluded ([1]):
 * a POST writes every column (fullRow), so one or two column lists; preSave hooks may make a
 * few more. Past the cap a text is written each time, so no sequence of bodies grows the cache.
 * One row's (`VALUES`) and an array's (`jsonb_populate_recordset`) are kept apart.
 */
const inserts = [perSequence<Table, TableColumn, InsertText>(16), perSequence<Table, TableColumn, InsertText>(16)] as const
const rowsInserts = [perSequence<Table, TableColumn, InsertText>(16), perSequence<Table, TableColumn, InsertText>(16)] as const

/**
 * An INSERT's texts: without RETURNING (`head`), with it (`text`), and with each unscoped
 * upsert tail (`upserts`, by the tail upsertTail keeps: an upsert of one row sends one of these
 * texts, not a new string for the port to hash each time).
 */
interface InsertText { readonly head: string, readonly text: string, readonly upserts: WeakMap<InsertTail, string> }

/**
 * The texts of an INSERT of `columns`, written by `head` the first time: kept per column list, as
 * a POST profile spent 2.5-3 µs a request writing them; and the port (plugins/database.ts) finds
 * a text it has seen before by a hash the string already holds.
 */
function insertTexts (kept: typeof inserts, t: Table, columns: Iterable<TableColumn>, excludeSecrets: boolean, head: () => string): InsertText {
  return kept[excludeSecrets ? 1 : 0](t, columns, () => {
    const written = head()
    return { head: written, text: `${written} RETURNING ${returningList(t, excludeSecrets)}`, upserts: new WeakMap() }
  })
}

/** The statement's text: the INSERT's kept text, or with the upsert's tail. */
function tailed (t: Table, texts: InsertText, excludeSecrets: boolean, tail: InsertTail, values: Values): string {
  if (tail === NO_TAIL) return texts.text
  const write = (): string => `${texts.head}${onConflict(t, tail, values)} RETURNING ${returningList(t, excludeSecrets)}${tail.returning}`
  // Kept with its INSERT's when the tail adds no scope, whose values vary by request.
  if (tail.scoped !== undefined) return write()
  let text = texts.upserts.get(tail)
  if (text === undefined) texts.upserts.set(tail, text = write())
  return text
}

/**
 * POST: every given column (defaults already filled in); returns the row as GET `/:id/` shows it.
 * `INSERT INTO <table> (<columns>) VALUES ($1, ..., $n)`, or `DEFAULT VALUES` for no column.
 */
export function compileInsert (t: Table, row: ReadonlyMap<TableColumn, unknown>, excludeSecrets: boolean, tail = NO_TAIL): Statement {
  const values = new Values(tail.scoped?.scopes)
  // The row's values are $1 to $n, as the text writes them; a scope's come after.
  // A loop: push(...row.values()) spread the iterator through an array first (150 ns against 40).
  for (const value of row.values()) values.list.push(value)
  const texts = insertTexts(inserts, t, row.keys(), excludeSecrets, () => {
    if (row.size === 0) return `INSERT INTO ${table(t)} DEFAULT VALUES`
    const columns = [...row.keys()].map((c) => quoteIdent(c.name)).join(', ')
    const params = Array.from({ length: row.size }, (_, i) => `$${i + 1}`).join(', ')
    return `INSERT INTO ${table(t)} (${columns}) VALUES (${params})`
  })
  return Object.freeze({ text: tailed(t, texts, excludeSecrets, tail, values), values: values.list })
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
  // One JSON.stringify of plain objects, in the columns' order, is V8's fast path: a call per
  // value, or strings joined, were most of the statement's cost for 100 rows. A JSONB value is
  // already JSON text (its `write`), which goes in as it is, not as a string.
  const json = columns.some((c) => c.type === 'jsonb')
    ? withJsonText(columns, rows)
    : JSON.stringify(rows.map((row) => {
      const member: Record<string, unknown> = {}
      for (const c of columns) member[c.name] = row.get(c)
      return member
    }))
  const values = new Values(tail.scoped?.scopes)
  // $1, as the text writes it; a scope's values come after.
  values.add(json)
  const texts = insertTexts(rowsInserts, t, columns, excludeSecrets, () => {
    const names = columns.map((c) => quoteIdent(c.name))
    return `INSERT INTO ${table(t)} (${names.join(', ')}) SELECT ${names.map((n) => `x.${n}`).join(', ')} FROM jsonb_populate_recordset(NULL::${table(t)}, $1::jsonb) AS x`
  })
  return Object.freeze({ text: tailed(t, texts, excludeSecrets, tail, values), values: values.list })
}

/** The rows as a JSON array, the text of each JSONB value written in as it is. */
function withJsonText (columns: readonly TableColumn[], rows: ReadonlyArray<ReadonlyMap<TableColumn, unknown>>): string {
  const members = columns.map((c) => [JSON.stringify(c.name) + ':', c.type === 'jsonb'] as const)
  return '[' + rows.map((row) => '{' + columns.map((c, i) => {
    const value = row.get(c)
    const [name, raw] = members[i]!
    return name + (raw && value !== null ? value as string : JSON.stringify(value))
  }).join(',') + '}').join(',') + ']'
}

/** Whether rows give the same columns, at least one: what `compileInsertRows` takes. */
export function sameColumns (rows: ReadonlyArray<ReadonlyMap<TableColumn, unknown>>): boolean {
  const first = rows[0]
  return first !== undefined && first.size > 0 && rows.every((row) => sameKeys(first, row))
}

/** Whether two rows give the same columns, in any order. */
export function sameKeys (a: ReadonlyMap<TableColumn, unknown>, b: ReadonlyMap<TableColumn, unknown>): boolean {
  if (a.size !== b.size) return false
  for (const c of a.keys()) if (!b.has(c)) return false
  return true
}

/**
 * ` WHERE <key> = $1` (`ids`: `= ANY($1)`) on the row aliased `t0`, and the scope of its table
 * (SPEC §8.6): a row out of it is not found.
 */
function byKey (ctx: ScopedTable, id: unknown, values: Values, ids = false): string {
  const match = `t0.${key(ctx.table)} = ${ids ? `ANY(${values.add(id)})` : values.add(id)}`
  return whereOf([match, ...new ScopedRows(ctx.scopes, values.scoped).conditions(ctx.table, 't0')])
}

/** PUT and PATCH: the given columns of one row. A statement with nothing to set is refused. */
export function compileUpdate (ctx: ScopedTable, id: unknown, values: ReadonlyMap<TableColumn, unknown>, excludeSecrets: boolean): Statement {
  if (values.size === 0) throw new Error('compileUpdate: nothing to set')
  const t = ctx.table
  const params = new Values(ctx.scopes)
  const sets = [...values].map(([c, value]) => `${quoteIdent(c.name)} = ${params.add(value)}`)
  return Object.freeze({
    text: `UPDATE ${table(t)} AS t0 SET ${sets.join(', ')}${byKey(ctx, id, params)} RETURNING ${returningList(t, excludeSecrets)}`,
    values: params.list
  })
}

/** DELETE `/:id/`. */
export function compileDelete (ctx: ScopedTable, id: unknown): Statement {
  const values = new Values(ctx.scopes)
  return Object.freeze({ text: `DELETE FROM ${table(ctx.table)} AS t0${byKey(ctx, id, values)}`, values: values.list })
}

/**
 * The row as GET `/:id/` serves it without parameters, locked until the transaction ends: an
 * `If-Match` write compares its ETag and writes while no other write can change it (SPEC §7.3).
 */
export function compileLockRow (ctx: ScopedTable, id: unknown, excludeSecrets: boolean): Statement {
  const values = new Values(ctx.scopes)
  const list = returningList(ctx.table, excludeSecrets).split(', ').map((c) => `t0.${c}`).join(', ')
  return Object.freeze({ text: `SELECT ${list} FROM ${table(ctx.table)} AS t0${byKey(ctx, id, values)} FOR UPDATE`, values: values.list })
}

/** Whether a row exists (in the scope): hooks run only for rows that do (SPEC §6.14). */
export function compileExists (ctx: ScopedTable, id: unknown): Statement {
  const values = new Values(ctx.scopes)
  return Object.freeze({ text: `SELECT 1 FROM ${table(ctx.table)} AS t0${byKey(ctx, id, values)}`, values: values.list })
}

/** The keys of the rows a bulk DELETE matches, locked: their preDelete hooks run before the delete. */
export function compileMatchingIds (ctx: QueryContext, filters: readonly Filter[]): Statement {
  if (filters.length === 0) throw new Error('compileMatchingIds: a bulk delete needs a filter')
  const { text, values } = whereClause(filters, ctx)
  return Object.freeze({ text: `SELECT t0.${key(ctx.table)} AS id FROM ${table(ctx.table)} AS t0${text} FOR UPDATE`, values })
}

/** DELETE `/` with filters; one with none is refused here, whatever the route checked. */
export function compileBulkDelete (ctx: QueryContext, filters: readonly Filter[]): Statement {
  if (filters.length === 0) throw new Error('compileBulkDelete: a bulk delete needs a filter')
  const { text, values } = whereClause(filters, ctx)
  return Object.freeze({ text: `DELETE FROM ${table(ctx.table)} AS t0${text}`, values })
}

/** Deletes rows by key (after their hooks ran). */
export function compileDeleteIds (ctx: ScopedTable, ids: readonly unknown[]): Statement {
  const values = new Values(ctx.scopes)
  return Object.freeze({ text: `DELETE FROM ${table(ctx.table)} AS t0${byKey(ctx, ids, values, true)}`, values: values.list })
}
