import type { Filter, QueryContext } from '../query/parse.js'
import type { Table } from '../table/table.js'
import type { Statement } from '../table/statement.js'
import { quoteIdent, quoteLiteral } from './identifier.js'
import { Params } from './params.js'
import { ScopedRows } from './scope.js'
import { filtersKey, where } from './where.js'

/**
 * The planner's estimates behind `countMode: 'estimated'` (SPEC §7.2). The texts depend on the
 * table and the filters' shape only (cached, so each is a named statement once per connection);
 * the filter values are bind parameters like everywhere else.
 */

/**
 * One row `{ rows }`: the table's statistics (pg_class.reltuples); -1 until it is first
 * analysed (PostgreSQL 14+). Only for a table read without a scope: the statistics count
 * every row (SPEC §8.6).
 */
export function compileTableEstimate (table: Table): Statement {
  return Object.freeze({ text: `SELECT reltuples::float8 AS rows FROM pg_class WHERE oid = ${quoteLiteral(quoteIdent(table.name))}::regclass`, values: [] })
}

const MAX_SHAPES = 1000
const plans = new WeakMap<Table, Map<string, { text: string, params: Params<readonly Filter[]> }>>()

/**
 * One row `{ "QUERY PLAN": [{ Plan: { "Plan Rows" } }] }`: `EXPLAIN (FORMAT JSON)` of the
 * count's filtered scan without the aggregate, so the top node's rows are the estimate, also
 * under a Gather (whose rows are the total; an aggregate node would answer 1, and a parallel
 * scan's rows are per worker).
 */
export function compileFilteredEstimate (ctx: QueryContext, filters: readonly Filter[]): Statement {
  const table = ctx.table
  let byKey = plans.get(table)
  if (byKey === undefined) plans.set(table, byKey = new Map())
  const key = `${filtersKey(filters)}|${ctx.scopes.key}`
  let cached = byKey.get(key)
  if (cached === undefined) {
    const params = new Params<readonly Filter[]>()
    const rows = new ScopedRows(ctx.scopes, params.scoped)
    const text = `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${rows.from(table, 't0')}${where(params, rows, filters, (f) => f)}`
    cached = { text, params }
    // Bounded like the compilers' own caches (lib/sql/select.ts): past the cap, built each time.
    if (byKey.size < MAX_SHAPES) byKey.set(key, cached)
  }
  return Object.freeze({ text: cached.text, values: cached.params.values(filters, ctx.scopes) })
}

/** What `compileFilteredEstimate`'s row holds. */
export type PlanRow = { 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }
