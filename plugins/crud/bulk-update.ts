import type { FastifyRequest } from 'fastify'
import { bodyInvalid, TABLECRUD_ERR_QS_MISSING_FILTER, TABLECRUD_ERR_TOO_MANY_ROWS, withBody } from '../../lib/errors.js'
import type { Runner } from '../../lib/db/port.js'
import { parseBulkQuery, type BulkQuery } from '../../lib/query/writes.js'
import { compileBulkUpdate } from '../../lib/sql/bulk.js'
import { described } from '../../schemas/responses.js'
import { patchSchema } from '../../schemas/row.js'
import { bulkQuerySchema, UpdatedCountResponse } from '../../schemas/writes.js'
import type { BodyValues } from './body.js'
import { guarded, hookError, type CrudContext } from './context.js'
import type { Row } from './options.js'
import { compilers, route } from './routing.js'
import { checkScope } from './scope.js'

/**
 * Runs `work` (a bulk write, resolving to how many rows it changed) in a transaction that
 * rolls back when that is more than `limit` (SPEC §8.5): the count is of the rows the
 * statement itself changed, under the locks it took, so no concurrent write can slip between
 * a count and the change. Over the limit: the 400 with `details.matched`, nothing changed.
 */
export async function limited (c: CrudContext, limit: number, work: (tx: Runner) => Promise<number>): Promise<number> {
  return await c.db.transaction(async (tx) => {
    const matched = await work(tx)
    if (matched > limit) throw tooMany(matched, limit)
    return matched
  })
}

export function tooMany (matched: number, limit: number): Error {
  return withBody(new TABLECRUD_ERR_TOO_MANY_ROWS(), { details: { matched, limit } })
}

/** The query-string compiler of bulk PATCH and DELETE `/`: filters and `__max_affected`. */
export function bulkQuery (c: CrudContext): (raw: Record<string, string | string[] | undefined>) => BulkQuery {
  return (raw) => parseBulkQuery(c.query, c.options.maxAffected, raw)
}

/** PATCH `/` (SPEC §8.5), when `allowBulkUpdate`: the body's columns on every row matching the filters, in one statement. */
export function bulkUpdateRoute (c: CrudContext, values: BodyValues): void {
  const { fastify, table, hooks: { prePatch } } = c
  const pk = table.primaryKey
  route<{ Querystring: BulkQuery, Body: Row }>(fastify, {
    method: 'PATCH',
    url: '/',
    schema: c.routeSchema('patchAll', 'bulkUpdate', [400, 413, 415, 422, 503], {
      summary: `Change some columns of every ${table.name} row matching the filters`,
      description: `Sets the body's columns on every ${table.name} row matching the filters, in one statement; answers how many rows changed. At least one filter is required, else a 400 (TABLECRUD_ERR_QS_MISSING_FILTER): to change every row, filter on something every row matches, such as \`${pk.name}__operator=not_null\`. More than ${c.options.maxAffected} matching rows (or \`__max_affected\`) is a 400 (TABLECRUD_ERR_TOO_MANY_ROWS) and nothing changes. The primary key cannot be changed here.`,
      querystring: bulkQuerySchema(table, c.queryOptions, c.options.maxAffected),
      body: patchSchema(table),
      response: { 200: described(UpdatedCountResponse, 'How many rows changed.') }
    }),
    validatorCompiler: compilers(c.ajv, bulkQuery(c)),
    handler: async (request) => {
      const { filters, maxAffected } = request.query
      const checked = values.check(request.body, c.validated('patchAll'))
      if (Object.hasOwn(request.body, pk.name)) throw bodyInvalid([{ field: pk.name, message: 'cannot be changed by a bulk update' }])
      await c.validate('patchAll', request)
      if (filters.length === 0) throw new TABLECRUD_ERR_QS_MISSING_FILTER()
      const changes = await values.prepare(await patched(request, prePatch, { ...request.body }), checked)
      changes.delete(pk)
      // The scope first: a scope function that refuses the request answers even for an empty patch.
      const ctx = await c.scoped(request)
      if (changes.size === 0) return { count: 0 }
      const count = await limited(c, maxAffected, async (tx) => {
        const changed = (await tx.run<{ id: unknown }>(compileBulkUpdate(ctx, filters, changes))).rows.map((r) => r.id)
        // Every changed row still in the scope, or none changes (SPEC §8.6).
        if (changed.length <= maxAffected) await checkScope(ctx, tx, changed)
        return changed.length
      })
      return { count }
    }
  })
}

/** The patch after the prePatch hooks, each run once with the whole patch; a bulk update has no one id, so they get null. */
async function patched (request: FastifyRequest, hooks: CrudContext['hooks']['prePatch'], patch: Row): Promise<Row> {
  let changes = patch
  for (const hook of hooks) changes = await guarded(async () => await hook.callable(null as unknown as number, changes, { request }), hookError)
  return changes
}
