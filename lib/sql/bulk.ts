import type { Filter, QueryContext } from '../query/parse.js'
import type { TableColumn } from '../table/table.js'
import type { Statement } from '../table/statement.js'
import { quoteIdent } from './identifier.js'
import { Params } from './params.js'
import { ScopedRows } from './scope.js'
import { whereConditions, whereOf } from './where.js'

/**
 * PATCH `/` (SPEC §8.5): the given columns of every row matching the filters, in one
 * statement. One with no filter, or nothing to set, is refused here, whatever the route checked.
 */
export function compileBulkUpdate (ctx: QueryContext, filters: readonly Filter[], values: ReadonlyMap<TableColumn, unknown>): Statement {
  if (filters.length === 0) throw new Error('compileBulkUpdate: a bulk update needs a filter')
  if (values.size === 0) throw new Error('compileBulkUpdate: nothing to set')
  const params = new Params<readonly Filter[]>()
  const rows = new ScopedRows(ctx.scopes, params.scoped)
  const sets = [...values].map(([c, value]) => `${quoteIdent(c.name)} = ${params.add(() => value)}`)
  // Only rows in the scope change (SPEC §8.6); their keys come back for the check of the rows as written.
  const conditions = [...rows.conditions(ctx.table, 't0'), ...whereConditions(params, rows, filters, (f) => f)]
  const text = `UPDATE ${quoteIdent(ctx.table.name)} AS t0 SET ${sets.join(', ')}${whereOf(conditions)} RETURNING t0.${quoteIdent(ctx.table.primaryKey.name)} AS id`
  return Object.freeze({ text, values: params.values(filters, ctx.scopes) })
}
