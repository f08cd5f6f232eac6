import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  TABLECRUD_ERR_BODY_ID_MISMATCH, TABLECRUD_ERR_PRECONDITION_FAILED, TABLECRUD_ERR_PRECONDITION_REQUIRED,
  TABLECRUD_ERR_QS_MISSING_FILTER, TABLECRUD_ERR_ROW_NOT_FOUND
} from '../../lib/errors.js'
import { ifMatch, textETag } from '../../lib/etag.js'
import { parseId, type Filter, type QueryContext } from '../../lib/query/parse.js'
import type { BulkQuery } from '../../lib/query/writes.js'
import { compileSingle } from '../../lib/sql/select.js'
import { compileBulkDelete, compileDelete, compileDeleteIds, compileExists, compileLockRow, compileMatchingIds, compileUpdate } from '../../lib/sql/write.js'
import { aRow, idParamsSchema } from '../../schemas/query.js'
import { bulkQuerySchema } from '../../schemas/writes.js'
import { described, DeletedCountHeader, ETagHeader, withHeaders, type ErrorStatus } from '../../schemas/responses.js'
import { patchSchema, replaceSchema } from '../../schemas/row.js'
import type { Runner } from '../../lib/db/port.js'
import { bodyValues, type BodyValues, type Checked } from './body.js'
import { bulkQuery, bulkUpdateRoute, limited, tooMany } from './bulk-update.js'
import { beforeCommit, rowAnswer } from './before-commit.js'
import { postRoute } from './create.js'
import { guarded, hookError, type CrudContext } from './context.js'
import type { Row } from './options.js'
import { compilers, route } from './routing.js'
import { checkScope } from './scope.js'
import { sendJson } from './serialise.js'

type IdRoute = { Params: { id: string }, Body: Row }

/** The write routes of SPEC §2.5: POST `/`, PUT, PATCH and DELETE `/:id/`, and bulk DELETE and PATCH `/` when allowed (§8.5). */
export function writeRoutes (c: CrudContext): void {
  const { fastify, table, hooks: { preSave, prePatch }, schemas: { row } } = c
  const values = bodyValues(table)
  const write = writer(c, values)
  const params = idParamsSchema(table)
  const pk = table.primaryKey
  // Our own Ajv checks bodies; Fastify's would refuse a bad id as a body error, before the validators (SPEC §6.14).
  const validatorCompiler = compilers(c.ajv, null)
  // If-Match (SPEC §7.3): 412 when it does not hold, 428 when the table requires it.
  const conditional: ErrorStatus[] = c.options.requireIfMatch ? [404, 412, 428] : [404, 412]

  postRoute(c, values)

  route<IdRoute>(fastify, {
    method: 'PUT',
    url: '/:id/',
    schema: c.routeSchema('putSingle', 'replace', [400, 413, 415, 422, 503, ...conditional], {
      summary: `Replace ${aRow(table.name)}`,
      params,
      headers: ifMatchHeaders,
      body: replaceSchema(table),
      response: { 200: described(withHeaders(row, { ETag: ETagHeader }), 'The row as written, with its new ETag.') }
    }),
    validatorCompiler,
    handler: async (request, reply) => {
      const { key, checked } = await write.target(request, 'putSingle')
      const updated = await write.conditional(request, key, preSave.length > 0, async (run, ctx) => {
        let full = values.fullRow(request.body, key)
        for (const hook of preSave) full = await guarded(async () => await hook.callable(full, { request }), hookError)
        delete full[pk.name]
        return await write.update(run, ctx, key, full, checked)
      })
      return answer(reply, updated)
    }
  })

  route<IdRoute>(fastify, {
    method: 'PATCH',
    url: '/:id/',
    schema: c.routeSchema('patchSingle', 'patch', [400, 413, 415, 422, 503, ...conditional], {
      summary: `Change some columns of ${aRow(table.name)}`,
      params,
      headers: ifMatchHeaders,
      body: patchSchema(table),
      response: { 200: described(withHeaders(row, { ETag: ETagHeader }), 'The row as written, with its new ETag.') }
    }),
    validatorCompiler,
    handler: async (request, reply) => {
      const { key, checked } = await write.target(request, 'patchSingle')
      const updated = await write.conditional(request, key, prePatch.length > 0, async (run, ctx) => {
        let changes: Row = { ...request.body }
        delete changes[pk.name]
        for (const hook of prePatch) changes = await guarded(async () => await hook.callable(key, changes, { request }), hookError)
        return await write.update(run, ctx, key, changes, checked)
      })
      return answer(reply, updated)
    }
  })

  deleteRoutes(c, write, conditional)
  if (c.options.allowBulkUpdate) bulkUpdateRoute(c, values)
}

/** The 200 of PUT and PATCH: the row as written before COMMIT (its text), with its ETag. */
function answer (reply: FastifyReply, text: string): FastifyReply {
  return sendJson(reply.header('etag', textETag(text)), text)
}

/** The request headers of PUT, PATCH and DELETE `/:id/`, for OpenAPI only. */
const ifMatchHeaders = {
  type: 'object',
  properties: { 'if-match': { type: 'string', description: 'The ETag the row had when read (or *): the write happens only while the row still has it, else 412.' } }
}

/** DELETE `/:id/`, and the bulk DELETE `/` when `allowBulkDelete` is on. */
function deleteRoutes (c: CrudContext, write: Writer, conditional: readonly ErrorStatus[]): void {
  const { fastify, table } = c
  const preDelete = c.hooks.preDelete
  route<{ Params: { id: string } }>(fastify, {
    method: 'DELETE',
    url: '/:id/',
    // 400: a bad id, or a preDelete hook refusing; 422: a delete RESTRICT blocks.
    schema: c.routeSchema('deleteSingle', 'delete', [400, 422, 503, ...conditional], {
      summary: `Delete ${aRow(table.name)}`,
      params: idParamsSchema(table),
      headers: ifMatchHeaders,
      response: { 204: { type: 'null', description: 'Deleted' } }
    }),
    validatorCompiler: compilers(c.ajv, null),
    handler: async (request, reply) => {
      await c.validate('deleteSingle', request)
      const key = parseId(table, request.params.id)
      await write.conditional(request, key, preDelete.length > 0, async (run, ctx) => {
        if (preDelete.length > 0) await write.preDelete(key, request)
        const result = await run.run(compileDelete(ctx, key))
        if (result.rowCount === 0) throw write.notFound(key)
      })
      return reply.code(204).send()
    }
  })

  if (!c.options.allowBulkDelete) return
  route<{ Querystring: BulkQuery }>(fastify, {
    method: 'DELETE',
    url: '/',
    schema: c.routeSchema('deleteAll', 'bulkDelete', [400, 422, 503], {
      summary: `Delete the ${table.name} rows matching the filters`,
      description: `Deletes every ${table.name} row matching the filters, in one transaction; X-Deleted-Count says how many. At least one filter is required, else a 400 (TABLECRUD_ERR_QS_MISSING_FILTER), so a forgotten query string cannot empty the table: to delete every row, filter on something every row matches, such as \`${table.primaryKey.name}__operator=not_null\`.`,
      querystring: bulkQuerySchema(table, c.queryOptions, c.options.maxAffected),
      response: { 204: { type: 'null', description: 'Deleted; X-Deleted-Count says how many', headers: { 'X-Deleted-Count': DeletedCountHeader } } }
    }),
    validatorCompiler: compilers(c.ajv, bulkQuery(c)),
    handler: async (request, reply) => {
      const { filters, maxAffected } = request.query
      await c.validate('deleteAll', request)
      if (filters.length === 0) throw new TABLECRUD_ERR_QS_MISSING_FILTER()
      const ctx = await c.scoped(request)
      // Over maxAffected (SPEC §8.5), the delete rolls back.
      const deleted = await limited(c, maxAffected, async (tx) => preDelete.length === 0
        ? Number((await tx.run(compileBulkDelete(ctx, filters))).rowCount)
        : await write.deleteWithHooks(tx, ctx, filters, request, maxAffected))
      return reply.code(204).header('x-deleted-count', String(deleted)).send()
    }
  })
}

interface Writer {
  /**
   * What PUT and PATCH check first, in the order of SPEC §6.14: the body's values, the
   * validators, the id (and the body's key against it). Resolves to the key, and the body as
   * checked, for `update` to convert only what the validators and hooks changed.
   */
  readonly target: (request: FastifyRequest<IdRoute>, operation: 'putSingle' | 'patchSingle') => Promise<{ key: number | string, checked: Checked }>
  /**
   * The rest of a write to one row, after `target`: the row lookup (404), If-Match (428, 412,
   * SPEC §7.3), then `work` (hooks and the write). With If-Match, all of it runs in one
   * transaction on the row locked `FOR UPDATE`, so no other write lands between the comparison
   * and this one. Without, the row is looked up only when hooks are to run for it. A row scope
   * (SPEC §8.6) needs no transaction here: `update` checks it in the transaction that writes
   * the row, and a DELETE carries it in its WHERE.
   */
  readonly conditional: <T>(request: FastifyRequest, key: unknown, hooks: boolean, work: (run: Runner, ctx: QueryContext) => Promise<T>) => Promise<T>
  /**
   * Writes `values` on the row of `key` in the scope (404 otherwise; a row the write takes out of
   * the scope is a 403), and writes its answer, in one transaction (the caller's, or one of its
   * own when `run` is the pool): a row the response cannot write is not committed (issue 27).
   */
  readonly update: (run: Runner, ctx: QueryContext, key: unknown, values: Row, checked: Checked) => Promise<string>
  readonly preDelete: (key: number | string, request: FastifyRequest) => Promise<void>
  /** Locks the matching rows, runs each one's preDelete hooks, deletes them (in the caller's transaction). */
  readonly deleteWithHooks: (tx: Runner, ctx: QueryContext, filters: readonly Filter[], request: FastifyRequest, limit: number) => Promise<number>
  readonly notFound: (key: unknown) => Error
}

function writer (c: CrudContext, values: BodyValues): Writer {
  const { table, db } = c
  const answerRow = rowAnswer(table, c.schemas.row)
  const notFound = (key: unknown): Error => new TABLECRUD_ERR_ROW_NOT_FOUND(table.name, JSON.stringify(key))
  const requireRow = async (ctx: QueryContext, key: unknown, runner: Runner): Promise<void> => {
    if ((await runner.run(compileExists(ctx, key))).rows.length === 0) throw notFound(key)
  }
  const preDelete = async (key: number | string, request: FastifyRequest): Promise<void> => {
    await guarded(async () => { for (const hook of c.hooks.preDelete) await hook.callable(key, { request }) }, hookError)
  }
  return {
    notFound,
    preDelete,
    async target (request, operation) {
      const checked = values.check(request.body, c.validated(operation))
      await c.validate(operation, request)
      const key = parseId(table, request.params.id)
      // Compared as the database takes them: a BigInt's 2 is the path's "2", a UUID's case is no difference.
      if (checked.row.has(table.primaryKey) && checked.row.get(table.primaryKey) !== key) throw new TABLECRUD_ERR_BODY_ID_MISMATCH(table.primaryKey.name)
      return { key, checked }
    },
    async conditional (request, key, hooks, work) {
      const ctx = await c.scoped(request)
      const expected = request.headers['if-match']
      if (expected === undefined) {
        if (hooks || c.options.requireIfMatch) await requireRow(ctx, key, db)
        if (c.options.requireIfMatch) throw new TABLECRUD_ERR_PRECONDITION_REQUIRED()
        return await work(db, ctx)
      }
      return await db.transaction(async (tx) => {
        const current = (await tx.run(compileLockRow(ctx, key, c.options.excludeSecrets))).rows[0]
        if (current === undefined) throw notFound(key)
        // The current row's ETag as GET `/:id/` serves it: its text by the same row schema.
        if (!ifMatch(expected, textETag(answerRow(current)))) throw new TABLECRUD_ERR_PRECONDITION_FAILED()
        return await work(tx, ctx)
      })
    },
    async update (run, ctx, key, row, checked) {
      const changes = await values.prepare(row, checked)
      changes.delete(table.primaryKey)
      const statement = changes.size === 0
        ? compileSingle(ctx, key, { fields: null, readable: false })
        : compileUpdate(ctx, key, changes, c.options.excludeSecrets)
      const once = async (tx: Runner): Promise<string> => {
        const row = (await tx.run(statement)).rows[0]
        if (row === undefined) throw notFound(key)
        await checkScope(ctx, tx, [key])
        return answerRow(row)
      }
      return run === db ? await beforeCommit(db, once) : await once(run)
    },
    async deleteWithHooks (tx, ctx, filters, request, limit) {
      const ids = (await tx.run<{ id: number | string }>(compileMatchingIds(ctx, filters))).rows.map((r) => r.id)
      // No hook runs for a delete over the limit (SPEC §8.5).
      if (ids.length > limit) throw tooMany(ids.length, limit)
      for (const key of ids) await preDelete(key, request)
      return ids.length === 0 ? 0 : Number((await tx.run(compileDeleteIds(ctx, ids))).rowCount)
    }
  }
}
