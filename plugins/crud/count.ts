import type { Filter, QueryContext } from '../../lib/query/parse.js'
import { compileFilteredEstimate, compileTableEstimate, type PlanRow } from '../../lib/sql/count.js'
import { compileCount } from '../../lib/sql/select.js'
import type { CrudContext } from './context.js'

export interface Total {
  readonly count: number
  readonly estimated: boolean
}

/**
 * The number of rows matching `filters` (SPEC §7.2). In 'exact' mode a `count(*)`. In
 * 'estimated' mode the planner's estimate first: the table statistics without filters, else
 * the row estimate of the same filtered scan; above `exactCountLimit` that estimate is the
 * answer, otherwise the rows are counted.
 */
export async function countRows (c: CrudContext, ctx: QueryContext, filters: readonly Filter[]): Promise<Total> {
  if (c.options.countMode === 'estimated') {
    const estimate = await estimateRows(c, ctx, filters)
    if (estimate > c.options.exactCountLimit) return { count: estimate, estimated: true }
  }
  const result = await c.db.run<{ count: string }>(compileCount(ctx, filters), 'read')
  return { count: Number(result.rows[0]!.count), estimated: false }
}

async function estimateRows (c: CrudContext, ctx: QueryContext, filters: readonly Filter[]): Promise<number> {
  // A scope is a filter: the statistics would count the rows out of it too (SPEC §8.6).
  if (filters.length === 0 && ctx.scopes.of(c.table).length === 0) {
    const result = await c.db.run<{ rows: number }>(compileTableEstimate(c.table), 'read')
    return Math.round(result.rows[0]!.rows)
  }
  const result = await c.db.run<PlanRow>(compileFilteredEstimate(ctx, filters), 'read')
  return Math.round(result.rows[0]!['QUERY PLAN'][0]!.Plan['Plan Rows'])
}
