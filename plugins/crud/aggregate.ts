import { parseAggregateQuery, type AggregateQuery, type Output } from '../../lib/query/aggregate.js'
import { compileAggregate, compileAggregateCount } from '../../lib/sql/aggregate.js'
import { TOTAL } from '../../lib/sql/select.js'
import { aggregateQuerySchema, aggregateRowSchema, AggregateResponse } from '../../schemas/aggregate.js'
import { described, listResponse } from '../../schemas/responses.js'
import { serialiserCompiler } from './compilers.js'
import { sendJson } from './serialise.js'
import type { CrudContext } from './context.js'
import type { Row } from './options.js'
import { setContentRange } from './reads.js'
import { compilers, route, type OnlyMethods } from './routing.js'

const URL = '/aggregate/'
const AGGREGATED = described(AggregateResponse, 'A page of groups: each group key, then each aggregate; one row without __group_by.')

/** A row of pg's holding the outputs at their aliases as the wire row: a count, a 64-bit integer in pg, is a JSON integer. */
function wireRow (row: Row, outputs: readonly Output[]): Row {
  const out: Row = {}
  for (const output of outputs) {
    const value = row[output.alias]
    out[output.name] = output.kind === 'count' ? Number(value) : value
  }
  return out
}

/**
 * GET `/aggregate/` (SPEC §8.3) when the mount sets `aggregates`; otherwise every method there
 * answers 405 with an empty `Allow` (RFC 9110: a resource disabled by configuration), so the
 * path is never read as an id.
 */
export function aggregateRoutes (c: CrudContext, onlyMethods: OnlyMethods): void {
  const { fastify, table, query: ctx, db } = c
  if (!c.options.aggregates) {
    onlyMethods(URL, [])
    return
  }
  // One serialiser per shape of outputs, kept as long as the query's shape is (lib/query/aggregate.ts).
  const serialisers = new WeakMap<readonly Output[], (data: unknown) => string>()
  const serialiserOf = (outputs: readonly Output[]): (data: unknown) => string => {
    let serialise = serialisers.get(outputs)
    if (serialise === undefined) serialisers.set(outputs, serialise = serialiserCompiler({ schema: listResponse(aggregateRowSchema(outputs)) }))
    return serialise
  }
  route<{ Querystring: AggregateQuery }>(fastify, {
    method: 'GET',
    url: URL,
    schema: c.routeSchema('getAggregate', 'aggregate', [400, 503], {
      summary: `Aggregate ${table.name} rows by group`,
      querystring: aggregateQuerySchema(table, c.queryOptions),
      response: { 200: AGGREGATED }
    }),
    validatorCompiler: compilers(c.ajv, (raw) => parseAggregateQuery(ctx, raw)),
    handler: async (request, reply) => {
      const query = request.query
      await c.validate('getAggregate', request)
      const scoped = await c.scoped(request)
      const statement = compileAggregate(scoped, query, query.rangeHeader)
      const result = await db.run<Row>(statement, 'read')
      const { outputs } = query
      if (query.rangeHeader) {
        const first = result.rows[0]
        const total = first !== undefined
          ? Number(first[TOTAL])
          : statement.offset === 0 ? 0 : Number((await db.run<{ count: string }>(compileAggregateCount(scoped, query), 'read')).rows[0]!.count)
        setContentRange(reply, query.rangeHeaderName, statement.offset, result.rows.length, total)
      }
      // Named rows go out as pg gives them: the serialiser writes a count's digits as an integer.
      return await sendJson(reply, serialiserOf(outputs)({ rows: statement.named ? result.rows : result.rows.map((row) => wireRow(row, outputs)) }))
    }
  })
  onlyMethods(URL, ['GET', 'HEAD'])
}
