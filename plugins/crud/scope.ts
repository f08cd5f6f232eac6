import { TABLECRUD_ERR_OUT_OF_SCOPE } from '../../lib/errors.js'
import type { Row, Runner } from '../../lib/db/port.js'
import type { ScopedTable } from '../../lib/query/scope.js'
import { compileInScope } from '../../lib/sql/write.js'

/** Whether the request's scopes restrict the rows of the table (SPEC §8.6). */
export function isScoped (ctx: ScopedTable): boolean {
  return ctx.scopes.of(ctx.table).length > 0
}

/**
 * Refuses with a 403 `TABLECRUD_ERR_OUT_OF_SCOPE` a write whose rows (by key), as written, are
 * not all in the scope of the mount's table. Run in the write's transaction, after the write:
 * the throw rolls it back, so nothing is written (SPEC §8.6).
 */
export async function checkScope (ctx: ScopedTable, run: Runner, ids: readonly unknown[]): Promise<void> {
  if (!isScoped(ctx) || ids.length === 0) return
  const found = (await run.run<{ count: number }>(compileInScope(ctx, ids))).rows[0]!.count
  if (found < new Set(ids).size) throw new TABLECRUD_ERR_OUT_OF_SCOPE()
}

/**
 * Under a scope, checks the rows a write returned to the table of `ctx`, in its transaction:
 * `expected` rows written, every one in the scope, or a 403 (and the transaction rolls back).
 * An upsert whose conflicting row is out of the scope writes and returns nothing for it
 * (lib/sql/write.ts), so a row short is a row out of scope too.
 */
export async function checkWritten (ctx: ScopedTable, run: Runner, expected: number, written: Row[]): Promise<Row[]> {
  if (!isScoped(ctx)) return written
  if (written.length < expected) throw new TABLECRUD_ERR_OUT_OF_SCOPE()
  await checkScope(ctx, run, written.map((row) => row[ctx.table.primaryKey.name]))
  return written
}
