import { bodyInvalid, bodyOf, fromDatabaseError, TABLECRUD_ERR_BODY_INVALID, withBody, type FieldError } from '../../lib/errors.js'
import type { Statement } from '../../lib/table/statement.js'
import type { QueryContext } from '../../lib/query/parse.js'
import { beforeCommit, retriedWhenStale } from './before-commit.js'
import { checkWritten, isScoped } from './scope.js'
import type { CrudContext } from './context.js'
import type { Row } from './options.js'

/*
 * Writing several rows all or none, and naming the one the database refuses: shared by POST of
 * an array, upsert and nested insert.
 */

/**
 * The error of the element at `index`, saying so: field errors gain `index` (as Ajv's do), any
 * other error `details.index`.
 */
export function atIndex (error: unknown, index: number): Error {
  const body = bodyOf(error)
  if (error instanceof TABLECRUD_ERR_BODY_INVALID) return bodyInvalid((body!.errors as FieldError[]).map((e) => ({ index, ...e })))
  return withBody(error as Error, { ...body, details: { ...(body?.details as object | undefined), index } })
}

/**
 * One write statement and its answer, computed before the write counts as done: under a row
 * scope in a transaction, the `count` rows as written checked in it (SPEC §8.6); without one, in
 * one statement once the connection has shown the result types `types` (lib/db/types.ts
 * `resultTypes`; the port's `single`), where BEGIN and COMMIT made three round trips.
 */
export async function writeStatement<T> (c: CrudContext, ctx: QueryContext, statement: Statement, types: readonly number[] | null, count: number, answer: (written: Row[]) => T): Promise<T> {
  if (isScoped(ctx)) return await beforeCommit(c.db, async (tx) => answer(await checkWritten(ctx, tx, count, (await tx.run(statement)).rows)))
  return await retriedWhenStale(async () => await c.db.single(statement, types, (result) => answer(result.rows)))
}

/**
 * Writes rows, all or none, and resolves to `answer` of what each statement returned, in
 * order, computed before COMMIT (beforeCommit: a row the answer cannot carry is not
 * committed): each of `runs` (consecutive rows) in one statement by `many`, whose result
 * columns have the type OIDs `types` (lib/db/types.ts `resultTypes`). When the database
 * refuses a statement with a client error (a constraint, a value out of range), nothing was
 * written, and the rows are written again one by one (`one`) in a transaction, only to learn
 * which one is refused: the first to fail answers, with its index, and the transaction rolls
 * back. With no runs, rows go that second way directly.
 */
export async function writeRows<R, T> (c: CrudContext, ctx: QueryContext, rows: readonly R[], runs: ReadonlyArray<readonly R[]>, many: (run: readonly R[]) => Statement, one: (row: R) => Statement, answer: (written: Row[]) => T, types: readonly number[] | null): Promise<T> {
  const { db } = c
  if (runs.length > 0) {
    try {
      // One statement: without BEGIN and COMMIT where no row scope has it checked (writeStatement).
      if (runs.length === 1) return await writeStatement(c, ctx, many(runs[0]!), types, rows.length, answer)
      return await beforeCommit(db, async (tx) => {
        const written: Row[] = []
        for (const run of runs) written.push(...(await tx.run(many(run))).rows)
        // Under a row scope, the rows as written are checked in the transaction (SPEC §8.6).
        return answer(await checkWritten(ctx, tx, rows.length, written))
      })
    } catch (error) {
      if (clientError(error) === undefined) throw error
    }
  }
  return await beforeCommit(db, async (tx) => {
    const created: Row[] = []
    for (const [index, row] of rows.entries()) {
      try {
        // No row back: an upsert's conflicting row out of the scope, refused below.
        created.push(...(await tx.run(one(row))).rows)
      } catch (error) {
        const refused = clientError(error)
        // Anything else (a 503) is thrown as it came, for the transaction to judge its connection.
        throw refused === undefined ? error : atIndex(refused, index)
      }
    }
    return answer(await checkWritten(ctx, tx, rows.length, created))
  })
}

/** The 4xx a database error maps to, or undefined for any other error (a 503, a bug). */
export function clientError (error: unknown): Error | undefined {
  const mapped = fromDatabaseError(error) as (Error & { statusCode: number }) | undefined
  return mapped !== undefined && mapped.statusCode < 500 ? mapped : undefined
}
