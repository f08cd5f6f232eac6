import type { Filter } from '../../lib/query/parse.js'
import { quoteIdent, quoteLiteral } from '../../lib/sql/identifier.js'
import { compileCount } from '../../lib/sql/select.js'
import type { CrudContext } from './context.js'

export interface Total {
  readonly count: number
  readonly estimated: boolean
}

/**
 * The number of rows matching `filters` (SPEC §7.2). In 'exact' mode a `count(*)`. In
 * 'estimated' mode the planner's estimate first: the table statistics (pg_class.reltuples)
 * without filters, else the row estimate of `EXPLAIN (FORMAT JSON)` of the same filtered
 * scan; above `exactCountLimit` that estimate is the answer, otherwise the rows are counted.
 */
export async function countRows (c: CrudContext, filters: readonly Filter[]): Promise<Total> {
  const statement = compileCount(c.query, filters)
  if (c.options.countMode === 'estimated') {
    const estimate = await estimateRows(c, filters, statement.text, statement.values)
    if (estimate > c.options.exactCountLimit) return { count: estimate, estimated: true }
  }
  const result = await c.db.run<{ count: string }>(statement)
  return { count: Number(result.rows[0]!.count), estimated: false }
}

async function estimateRows (c: CrudContext, filters: readonly Filter[], text: string, values: readonly unknown[]): Promise<number> {
  if (filters.length === 0) {
    // -1 until the table is first analysed (PostgreSQL 14+): then it is counted.
    const table = quoteLiteral(quoteIdent(c.table.name))
    const result = await c.db.run<{ rows: number }>({ text: `SELECT reltuples::float8 AS rows FROM pg_class WHERE oid = ${table}::regclass`, values: [] })
    return Math.round(result.rows[0]!.rows)
  }
  // The count's own filtered scan, without the aggregate: the top node's rows are then the
  // estimate, also under a Gather (whose rows are the total; the count's aggregate node would
  // answer 1, and a parallel scan's rows are per worker).
  const rows = text.replace(/^SELECT count\(\*\) AS count /, 'SELECT 1 ')
  const result = await c.db.run<{ 'QUERY PLAN': Array<{ Plan: Plan }> }>({ text: `EXPLAIN (FORMAT JSON) ${rows}`, values })
  return Math.round(result.rows[0]!['QUERY PLAN'][0]!.Plan['Plan Rows'])
}

interface Plan { 'Plan Rows': number }
