import { bodyInvalid, type FieldError } from '../../lib/errors.js'
import { compileInsert, compileInsertRows, sameKeys, type InsertTail } from '../../lib/sql/write.js'
import type { QueryContext } from '../../lib/query/parse.js'
import { isScoped } from './scope.js'
import { resultTypes } from '../../lib/db/types.js'
import { INSERTED, upsertTail } from '../../lib/sql/upsert.js'
import type { Table, TableColumn } from '../../lib/table/table.js'
import type { CrudContext } from './context.js'
import type { RowAnswer } from './before-commit.js'
import { writeRows, writeStatement } from './write-rows.js'
import type { Row } from './options.js'

/** Upsert (SPEC §8.5): POST `/` with `__on_conflict`, of one row or of an array of rows. */

type Values = Map<TableColumn, unknown>

/** One row to upsert: its values as POST writes them, and the columns a conflict updates. */
export interface UpsertRow {
  readonly values: Values
  readonly update: readonly TableColumn[]
}

/**
 * The columns a conflict on each target may update: every column but the primary key and the
 * target's own, found once a target (conflictTargets keeps one array each).
 */
const updatable = new WeakMap<readonly TableColumn[], readonly TableColumn[]>()

/**
 * The columns an upsert updates on a conflict: those the body gives, and those the preSave
 * hooks changed (`filled` is the row before the hooks, `written` after), the conflict target
 * and the primary key left out. The defaults of the columns left out are for a new row only.
 */
export function updateColumns (table: Table, target: readonly TableColumn[], body: Row, filled: Row, written: Row): TableColumn[] {
  let candidates = updatable.get(target)
  if (candidates === undefined) updatable.set(target, candidates = table.columns.filter((c) => !c.primaryKey && !target.includes(c)))
  // A loop, not a filter's closure: this runs for each row of an array (an upsert of 100 rows
  // spent 9 µs here on the bench machine walking every column, 5 walking these).
  const update: TableColumn[] = []
  for (const c of candidates) {
    const name = c.name
    if (Object.hasOwn(written, name) && (Object.hasOwn(body, name) || !Object.is(filled[name], written[name]))) update.push(c)
  }
  return update
}

/**
 * The tail with the request's scope for its conflicting row, or the kept tail as it is when the
 * table has none: then the statement's text is kept too (lib/sql/write.ts `tailed`).
 */
function inScope (ctx: QueryContext, tail: InsertTail): InsertTail {
  return isScoped(ctx) ? { ...tail, scoped: ctx } : tail
}

/**
 * Upserts one row: resolves to the row as written, whether it was inserted (told by the
 * statement itself, lib/sql/upsert.ts) and its answer. The row keeps `__inserted`: `answer`
 * writes it by the row schema, which has no such property, and a copy without it would cost.
 */
export async function upsertOne (c: CrudContext, ctx: QueryContext, target: readonly TableColumn[], one: UpsertRow, answer: RowAnswer): Promise<{ row: Row, inserted: boolean, text: string }> {
  const { table, options: { excludeSecrets } } = c
  const statement = compileInsert(table, one.values, excludeSecrets, inScope(ctx, upsertTail(target, one.update)))
  return await writeStatement(c, ctx, statement, resultTypes(table, excludeSecrets, true), 1, ([row]) => ({ row: row!, inserted: row![INSERTED] === true, text: answer(row!) }))
}

/**
 * Upserts every row, all or none, and resolves to `answer` of them as written, in order. Consecutive rows
 * that give and update the same columns go in one statement, as bulk insert does (create.ts
 * `insertRows`); several such runs go in one transaction. Two rows with the same target value are refused first (a
 * statement cannot update one row twice). When the database refuses a statement, the rows are
 * upserted again one by one, to name the one that fails (create.ts `writeRows`).
 */
export async function upsertRows<T> (c: CrudContext, ctx: QueryContext, target: readonly TableColumn[], rows: readonly UpsertRow[], answer: (written: Row[]) => T): Promise<T> {
  refuseRepeats(target, rows)
  const { table, options: { excludeSecrets } } = c
  // A conflicting row out of the scope is neither updated nor returned (SPEC §8.6). The answer
  // of an array does not tell inserted rows from updated ones, so the rows are returned
  // without `__inserted`, as POST of an array returns them.
  const tail = (update: readonly TableColumn[]): InsertTail => inScope(ctx, upsertTail(target, update, false))
  return await writeRows(c, ctx, rows, runsOf(rows),
    (run) => compileInsertRows(table, run.map((r) => r.values), excludeSecrets, tail(run[0]!.update)),
    (row) => compileInsert(table, row.values, excludeSecrets, tail(row.update)),
    answer, resultTypes(table, excludeSecrets))
}

/**
 * The rows cut where the columns to update or the columns given change: each run is one
 * statement, and runs go in the order sent, so new keys are drawn in that order too. The
 * columns given differ where a preSave hook drops a column from some rows only, or a UUID key
 * is given for some rows only: one statement of them all was a 500 (compileInsertRows).
 */
function runsOf (rows: readonly UpsertRow[]): UpsertRow[][] {
  const runs: UpsertRow[][] = []
  // The same columns in the same order (updateColumns lists them in the table's order).
  const same = (a: readonly TableColumn[], b: readonly TableColumn[]): boolean => a.length === b.length && a.every((col, i) => col === b[i])
  for (const row of rows) {
    const last = runs.at(-1)
    if (last !== undefined && same(last[0]!.update, row.update) && sameKeys(last[0]!.values, row.values)) last.push(row)
    else runs.push([row])
  }
  return runs
}

/** A 400 for each row whose target value an earlier row has: one statement cannot update a row twice. */
function refuseRepeats (target: readonly TableColumn[], rows: readonly UpsertRow[]): void {
  const seen = new Map<unknown, number>()
  const failures: FieldError[] = []
  // A loop over keys made without an array a row: an upsert of 100 rows spent 2% of its CPU here.
  for (let index = 0; index < rows.length; index++) {
    const key = targetKey(target, rows[index]!.values)
    if (key === null) continue
    const first = seen.get(key)
    if (first === undefined) seen.set(key, index)
    else failures.push({ index, field: target.map((col) => col.name).join(','), message: `repeats the __on_conflict value of element ${first}` })
  }
  if (failures.length > 0) throw bodyInvalid(failures)
}

/**
 * What tells one row's target value from another's, or null when it cannot conflict: NULL is
 * distinct from NULL in a unique constraint, and a key left out is the database's to make. One
 * scalar (a code, a slug, a number: the usual target) is its own key, kept apart from another
 * type's by the Map; an object, or a value after another, makes the key JSON text. A request's
 * keys are all of one kind, as its target is one.
 */
function targetKey (target: readonly TableColumn[], values: Values): unknown {
  let key: unknown = null
  for (const col of target) {
    const value = values.get(col)
    if (value === undefined || value === null) return null
    key = key === null && typeof value !== 'object' ? value : JSON.stringify([key, value])
  }
  return key
}
