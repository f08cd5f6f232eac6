import { filtersKey } from '../query/filter.js'
import type { Filter, QueryContext } from '../query/parse.js'
import type { TableColumn } from '../table/table.js'
import type { Statement } from '../table/statement.js'
import { quoteIdent } from './identifier.js'
import { Params } from './params.js'
import { NO_SHAPE, shapeCache } from './select.js'
import { ScopedRows } from './scope.js'
import { whereConditions, whereOf } from './where.js'

/** What a bulk update's parameters are fetched from: the request's filters and the values to set. */
interface BulkUpdate { readonly filters: readonly Filter[], readonly values: ReadonlyMap<TableColumn, unknown> }

const bulkUpdates = shapeCache<BulkUpdate>()

/**
 * PATCH `/` (SPEC §8.5): the given columns of every row matching the filters, in one
 * statement, its text kept by the columns set and the filters' shape as a list's is. One with
 * no filter, or nothing to set, is refused here, whatever the route checked.
 */
export function compileBulkUpdate (ctx: QueryContext, filters: readonly Filter[], values: ReadonlyMap<TableColumn, unknown>): Statement {
  if (filters.length === 0) throw new Error('compileBulkUpdate: a bulk update needs a filter')
  if (values.size === 0) throw new Error('compileBulkUpdate: nothing to set')
  const input: BulkUpdate = { filters, values }
  const { text, params } = bulkUpdates(ctx, `${[...values.keys()].map((c) => c.name).join(',')}|${filtersKey(filters)}`, () => {
    const params = new Params<BulkUpdate>()
    const rows = new ScopedRows(ctx.scopes, params.scoped)
    const sets = [...values.keys()].map((c) => `${quoteIdent(c.name)} = ${params.add((i) => i.values.get(c))}`)
    // Only rows in the scope change (SPEC §8.6); their keys come back for the check of the rows as written.
    const conditions = [...rows.conditions(ctx.table, 't0'), ...whereConditions(params, rows, filters, (i) => i.filters)]
    const text = `UPDATE ${quoteIdent(ctx.table.name)} AS t0 SET ${sets.join(', ')}${whereOf(conditions)} RETURNING t0.${quoteIdent(ctx.table.primaryKey.name)} AS id`
    return { text, shape: NO_SHAPE, params }
  })
  return Object.freeze({ text, values: params.values(input, ctx.scopes) })
}
