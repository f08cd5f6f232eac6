import type { Filter, QueryContext } from '../query/parse.js'
import type { TableColumn } from '../table/table.js'
import type { Statement } from '../table/statement.js'
import { quoteIdent } from './identifier.js'
import { Params } from './params.js'
import { where } from './where.js'

/**
 * PATCH `/` (SPEC §8.5): the given columns of every row matching the filters, in one
 * statement. One with no filter, or nothing to set, is refused here, whatever the route checked.
 */
export function compileBulkUpdate (ctx: QueryContext, filters: readonly Filter[], values: ReadonlyMap<TableColumn, unknown>): Statement {
  if (filters.length === 0) throw new Error('compileBulkUpdate: a bulk update needs a filter')
  if (values.size === 0) throw new Error('compileBulkUpdate: nothing to set')
  const params = new Params<readonly Filter[]>()
  const sets = [...values].map(([c, value]) => `${quoteIdent(c.name)} = ${params.add(() => value)}`)
  const text = `UPDATE ${quoteIdent(ctx.table.name)} AS t0 SET ${sets.join(', ')}${where(params, filters, (f) => f)}`
  return Object.freeze({ text, values: params.values(filters) })
}
