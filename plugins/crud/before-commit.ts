import type { TObject } from '@sinclair/typebox'
import fastJson from 'fast-json-stringify'
import { SchemaDriftError } from '../../lib/db/check.js'
import { sqlType } from '../../lib/db/ddl.js'
import type { Database, Runner } from '../../lib/db/port.js'
import { isStalePlan } from '../../lib/errors.js'
import type { Table } from '../../lib/table/table.js'
import { serialiserCompiler } from './compilers.js'
import type { Row } from './options.js'

/**
 * Each failure drops its connection (the port does), so after as many tries as a pool holds
 * connections a fresh one answers; pools past this size are rare, and their last try is a 503.
 */
const MAX_ATTEMPTS = 20

/**
 * Runs a write and the serialisation of its answer in one transaction (issue 27): a row the
 * response cannot carry (a column's type changed by hand) throws before COMMIT, so the answer
 * is either the row or an error with nothing written, and a retrying client cannot duplicate
 * it. A statement that an online migration made stale aborts the transaction having written
 * nothing, and is tried again on another connection, as the port's `run` answers it outside one.
 */
export async function beforeCommit<T> (db: Database, work: (tx: Runner) => Promise<T>): Promise<T> {
  return await retriedWhenStale(async () => await db.transaction(work))
}

/** A write tried again, on another connection, while a statement made stale by an online migration aborts it having written nothing. */
export async function retriedWhenStale<T> (write: () => Promise<T>, attempt = 1): Promise<T> {
  try {
    return await write()
  } catch (error) {
    if (attempt === MAX_ATTEMPTS || !isStalePlan(error)) throw error
    return await retriedWhenStale(write, attempt + 1)
  }
}

/** A row as the response writes it, or a SchemaDriftError naming the first column it cannot write. */
export type RowAnswer = (row: Row) => string

export function rowAnswer (table: Table, schema: TObject): RowAnswer {
  const serialise = serialiserCompiler({ schema })
  return (row) => {
    try {
      return serialise(row)
    } catch (error) {
      throw driftOf(table, schema, row, error)
    }
  }
}

/**
 * Rows as `{"rows": [...]}`, written by `list` (createdResponse of the row schema) in one call:
 * a call of `row` for each and a join took 17 to 18 µs for 100 rows of three columns, this 9 to
 * 12 (compiled build, Node 20). A row `list` cannot write is written again one by one by `row`,
 * whose error names its column.
 */
export function rowsAnswer (list: TObject, row: RowAnswer): (rows: readonly Row[]) => string {
  const serialise = serialiserCompiler({ schema: list })
  return (rows) => {
    try {
      return serialise({ rows })
    } catch {
      return `{"rows":[${rows.map(row).join(',')}]}`
    }
  }
}

/** The drift error of a row the schema cannot write: each column tried alone (a rare path, compiled each time) finds the culprit. */
function driftOf (table: Table, schema: TObject, row: Row, error: unknown): SchemaDriftError {
  const culprit = table.columns.find((column) => {
    const property = schema.properties[column.name]
    if (property === undefined || !Object.hasOwn(row, column.name)) return false
    try {
      fastJson({ type: 'object', properties: { value: property } })({ value: row[column.name] })
      return false
    } catch {
      return true
    }
  })
  return new SchemaDriftError(table.name, culprit?.name ?? null, culprit === undefined ? null : sqlType(table, culprit), error)
}
