import type { FastifyPluginAsync, FastifyReply, FastifyRequest, FastifySchema, HTTPMethods, RouteOptions } from 'fastify'
import type { FastifySchemaCompiler, FastifyValidationResult } from 'fastify/types/schema.js'
import type { TSchema } from '@sinclair/typebox'
import type { PoolClient, QueryConfig, QueryResult } from 'pg'
import type {} from '@fastify/swagger'
import { Ajv } from 'ajv'
import formats from 'ajv-formats'
import { wireTypes } from '../lib/db/types.js'
import {
  HttpError, TABLECRUD_ERR_BODY_ID_MISMATCH, TABLECRUD_ERR_BODY_INVALID, TABLECRUD_ERR_METHOD_NOT_ALLOWED,
  TABLECRUD_ERR_HOOK, TABLECRUD_ERR_QS_MISSING_FILTER, TABLECRUD_ERR_ROUTE_NOT_FOUND, TABLECRUD_ERR_ROW_NOT_FOUND,
  TABLECRUD_ERR_ID_INVALID, TABLECRUD_ERR_VALIDATION, withBody
} from '../lib/errors.js'
import {
  parseFilterQuery, parseId, parseIdsQuery, parseListQuery, parseSingleQuery, queryContext,
  type Filter, type IdsQuery, type ListQuery, type RawQuery, type SingleQuery
} from '../lib/query/parse.js'
import { compileCount, compileIds, compileList, compileSingle, shapeRow, TOTAL, type SelectStatement, type Shape, type Statement } from '../lib/sql/select.js'
import { statementName } from '../lib/sql/statements.js'
import { compileBulkDelete, compileDelete, compileDeleteIds, compileExists, compileInsert, compileMatchingIds, compileUpdate } from '../lib/sql/write.js'
import { referencesTo, type TableColumn } from '../lib/table/table.js'
import { toDatabase, ValueError, writeDefault } from '../lib/values/write.js'
import { hashPassword } from '../lib/auth/password.js'
import { userTable } from '../lib/auth/tables.js'
import { idParamsSchema, idsQuerySchema, listQuerySchema, singleQuerySchema } from '../schemas/query.js'
import {
  ContentRangeHeader, CountResponse, DeletedCountHeader, ErrorResponse, IdsResponse, listResponse, LocationHeader,
  ReferencesResponse, ServiceUnavailableResponse, withHeaders
} from '../schemas/responses.js'
import { createSchema, newRow, newRowSchema, patchSchema, replaceSchema, rowSchema, schemaDocument } from '../schemas/row.js'
import { shapeSchema } from '../schemas/shape.js'
import { database } from './database.js'
import { errorHandler, sendError } from './errors.js'
import { checkOptions, OPERATIONS, type Crud, type Hook, type Operation, type Row, type TableCrudOptions } from './table-crud-options.js'

export type { Crud, Hook, HookContext, Row, TableCrudOptions, Validator, Validators } from './table-crud-options.js'

const WRITE_METHODS: HTTPMethods[] = ['POST', 'PUT', 'PATCH', 'DELETE']

/** A Fastify validator compiler: bodies by our own Ajv, query strings by our parser, params as they come. */
function compilers (ajv: Ajv, parse: ((raw: RawQuery) => unknown) | null): FastifySchemaCompiler<FastifySchema> {
  return ({ schema, httpPart }) => {
    if (httpPart === 'body') return ajv.compile(schema as object) as FastifyValidationResult
    if (httpPart === 'querystring' && parse !== null) {
      return ((data: unknown) => {
        try {
          return { value: parse(data as RawQuery) }
        } catch (error) {
          return { error: error as Error }
        }
      }) as unknown as FastifyValidationResult
    }
    return ((data: unknown) => ({ value: data })) as unknown as FastifyValidationResult
  }
}

/**
 * Exposes one table as a REST API (SPEC §2), in its own encapsulated context: register it once
 * per table with a prefix.
 * @example
 * app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false, maxJoins: 1 })
 */
export const tableCrud: FastifyPluginAsync<TableCrudOptions> = async function tableCrud (fastify, rawOptions) {
  const options = checkOptions(rawOptions)
  const { table, excludeSecrets } = options
  const pg = database(fastify, 'tableCrud')

  const ctx = queryContext(table, options)
  const crud: Crud = Object.freeze({
    table,
    readOnly: options.readOnly,
    allowBulkDelete: options.allowBulkDelete,
    pageSize: options.pageSize,
    maxPageSize: options.maxPageSize,
    excludeSecrets,
    maxJoins: options.maxJoins
  })
  const validators = options.validators ?? {}
  const extraContext = validators.extraContext ?? {}
  const hooksOf = <T extends Hook['hookType']>(type: T) => options.hooks.filter((h): h is Extract<Hook, { hookType: T }> => h.hookType === type)
  const preSave = hooksOf('preSave')
  const prePatch = hooksOf('prePatch')
  const preDelete = hooksOf('preDelete')

  const ajv = new Ajv({ coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: false, strict: false })
  formats.default(ajv)

  const row = rowSchema(table, excludeSecrets, options.maxJoins)
  const errors = { '4xx': ErrorResponse, 503: ServiceUnavailableResponse, '5xx': ErrorResponse }
  const queryOptions = { excludeSecrets, maxJoins: options.maxJoins, maxPageSize: options.maxPageSize }
  const documentJson = JSON.stringify(schemaDocument(table, { excludeSecrets, maxJoins: options.maxJoins, schemaExtra: options.schemaExtra }))
  const writeColumns = new Map(table.columns.map((c) => [c.name, c]))
  const tags = [table.name]

  /**
   * Runs a statement as a named prepared statement, on `client` or a pooled connection. A
   * pooled connection goes back for reuse after an error the database answered (a constraint,
   * bad data): pg-pool's own `query` would drop it, and every 422 would cost a reconnect.
   */
  async function run (statement: Statement, client?: PoolClient): Promise<QueryResult<Row>> {
    const config: QueryConfig & { query_timeout: number } = {
      text: statement.text,
      values: statement.values as unknown[],
      types: wireTypes,
      query_timeout: options.queryTimeout
    }
    const name = statementName(statement.text)
    if (name !== undefined) config.name = name
    if (client !== undefined) return await client.query<Row>(config)
    const connection = await checkout()
    try {
      const result = await connection.query<Row>(config)
      connection.release()
      return result
    } catch (error) {
      connection.release(answeredByDatabase(error) ? undefined : error as Error)
      throw error
    }
  }

  /**
   * A pooled connection that cannot crash the process: a checked-out pg client emits 'error'
   * when its connection drops, and with no listener that is an uncaught exception. The query
   * in flight rejects as well, which is how the request learns of it.
   */
  async function checkout (): Promise<PoolClient> {
    const connection = await pg.connect()
    const ignore = (): void => {}
    connection.on('error', ignore)
    const release = connection.release.bind(connection)
    connection.release = (error?: Error | boolean) => {
      connection.off('error', ignore)
      release(error)
    }
    return connection
  }

  // Each operation's own validators, then `every` (SPEC §2.9), listed once here rather than per request.
  const validatorLists = new Map(OPERATIONS.map((op) => [op, [...(op === 'every' ? [] : validators[op] ?? []), ...(validators.every ?? [])]]))
  async function validate (operation: Operation, request: FastifyRequest): Promise<void> {
    for (const validator of validatorLists.get(operation)!) {
      await guarded(async () => await validator(crud, request, extraContext), () => new TABLECRUD_ERR_VALIDATION())
    }
  }

  /** Serialisers for query shapes the route schema does not cover (joins, `__readable`), by shape. */
  const shapeSchemas = new Map<string, TSchema>()
  function serializeShape (reply: FastifyReply, shape: Shape, list: boolean): void {
    const key = `${list ? 'list' : 'one'}:${shape.key}`
    let schema = shapeSchemas.get(key)
    if (schema === undefined) {
      schema = list ? listResponse(shapeSchema(shape)) : shapeSchema(shape)
      if (shapeSchemas.size < 500) shapeSchemas.set(key, schema)
    }
    // A custom serialiser leaves the content type unset: Fastify only sets it for its own.
    reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(schema as Record<string, unknown>, '200'))
  }

  function rowsOf (result: QueryResult<Row>, statement: SelectStatement): Row[] {
    return statement.shape.flat ? result.rows : result.rows.map((r) => shapeRow(r, statement.shape))
  }

  function custom (statement: SelectStatement, readable: boolean): boolean {
    return !statement.shape.flat || readable
  }

  /** The route, with and without its trailing slash (SPEC §2: no redirect). */
  function route (options: Omit<RouteOptions, 'url'> & { url: string }): void {
    const routeOptions = options as RouteOptions
    fastify.route(routeOptions)
    if (options.url !== '/') fastify.route({ ...routeOptions, url: options.url.replace(/\/$/, '') })
  }

  /** Methods a path does not have answer 405 before anything is parsed (SPEC §6.13, §6.14). */
  function notAllowed (url: string, allowed: HTTPMethods[]): void {
    const method = WRITE_METHODS.filter((m) => !allowed.includes(m))
    const allow = ['GET', 'HEAD', ...allowed].join(', ')
    const refuse = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      reply.header('allow', allow)
      return sendError(reply, new TABLECRUD_ERR_METHOD_NOT_ALLOWED(request.method, request.url.split('?')[0]))
    }
    // Answered in onRequest, before a body is parsed; the handler is never reached.
    route({ method, url, schema: { hide: true }, onRequest: refuse, handler: refuse })
  }

  const id = (request: FastifyRequest): number | string => parseId(table, (request.params as { id: string }).id)

  fastify.setErrorHandler(errorHandler)
  fastify.setNotFoundHandler(async (request, reply) => sendError(reply, new TABLECRUD_ERR_ROUTE_NOT_FOUND(request.method, request.url.split('?')[0])))
  // A body must be JSON: without this, text/plain bodies would reach validation as strings.
  fastify.removeContentTypeParser('text/plain')

  // GET /
  route({
    method: 'GET',
    url: '/',
    schema: { tags, summary: `List ${table.name} rows`, querystring: listQuerySchema(table, queryOptions), response: { 200: withHeaders(listResponse(row), { 'Content-Range': ContentRangeHeader }), ...errors } },
    validatorCompiler: compilers(ajv, (raw) => parseListQuery(ctx, raw)),
    handler: async (request, reply) => {
      const query = request.query as ListQuery
      await validate('getAll', request)
      const statement = compileList(ctx, query, query.rangeHeader)
      const result = await run(statement)
      const rows = rowsOf(result, statement)
      if (query.rangeHeader) {
        const offset = (query.page - 1) * query.pageSize
        const total = rows.length > 0
          ? Number(result.rows[0]![TOTAL])
          : offset === 0 ? 0 : Number((await run(compileCount(ctx, query.filters))).rows[0]!.count)
        const last = rows.length > 0 ? offset + rows.length - 1 : offset
        reply.header('content-range', `${query.rangeHeaderName} ${offset}-${last}/${total}`)
        const exposed = String(reply.getHeader('access-control-expose-headers') ?? '')
        const names = exposed.split(',').map((s) => s.trim()).filter(Boolean)
        if (!names.some((n) => n.toLowerCase() === 'content-range')) reply.header('access-control-expose-headers', [...names, 'Content-Range'].join(', '))
      }
      if (custom(statement, query.readable)) serializeShape(reply, statement.shape, true)
      return { rows }
    }
  })

  // GET /:id/
  route({
    method: 'GET',
    url: '/:id/',
    schema: { tags, summary: `Get one ${table.name} row`, params: idParamsSchema(table), querystring: singleQuerySchema(table, queryOptions), response: { 200: row, ...errors } },
    validatorCompiler: compilers(ajv, (raw) => parseSingleQuery(ctx, raw)),
    handler: async (request, reply) => {
      const query = request.query as SingleQuery
      await validate('getSingle', request)
      const key = id(request)
      const statement = compileSingle(ctx, key, query)
      const result = await run(statement)
      if (result.rows.length === 0) throw new TABLECRUD_ERR_ROW_NOT_FOUND(table.name, JSON.stringify(key))
      if (custom(statement, query.readable)) serializeShape(reply, statement.shape, false)
      return rowsOf(result, statement)[0]
    }
  })

  // GET /count/
  route({
    method: 'GET',
    url: '/count/',
    schema: { tags, summary: `Count ${table.name} rows matching the filters`, querystring: listQuerySchema(table, queryOptions), response: { 200: CountResponse, ...errors } },
    validatorCompiler: compilers(ajv, (raw) => parseFilterQuery(ctx, raw)),
    handler: async (request) => {
      await validate('getCount', request)
      const result = await run(compileCount(ctx, request.query as Filter[]))
      return { count: Number(result.rows[0]!.count), page_size: options.pageSize }
    }
  })

  // GET /ids/
  route({
    method: 'GET',
    url: '/ids/',
    schema: { tags, summary: `Ids and readable names of ${table.name} rows`, querystring: idsQuerySchema(), response: { 200: IdsResponse, ...errors } },
    validatorCompiler: compilers(ajv, (raw) => parseIdsQuery(ctx, raw)),
    handler: async (request) => {
      await validate('getIds', request)
      const result = await run(compileIds(ctx, request.query as IdsQuery))
      const out: Record<string, string> = {}
      for (const r of result.rows) out[String(r.id)] = r.readable as string
      return out
    }
  })

  // GET /new/
  route({
    method: 'GET',
    url: '/new/',
    schema: { tags, summary: `Defaults for a new ${table.name} row`, response: { 200: newRowSchema(table, excludeSecrets), ...errors } },
    handler: async (request) => {
      await validate('getNew', request)
      return newRow(table, excludeSecrets)
    }
  })

  // GET /schema/
  route({
    method: 'GET',
    url: '/schema/',
    schema: { tags, summary: `JSON Schema of a ${table.name} row`, response: { 200: { type: 'object', additionalProperties: true }, ...errors } },
    handler: async (request, reply) => {
      await validate('getSchema', request)
      return reply.type('application/json; charset=utf-8').serializer((s: unknown) => s as string).send(documentJson)
    }
  })

  // GET /references/
  route({
    method: 'GET',
    url: '/references/',
    schema: { tags, summary: `Foreign keys pointing at ${table.name}`, response: { 200: ReferencesResponse, ...errors } },
    handler: async (request) => {
      await validate('getReferences', request)
      return { references: referencesTo(table) }
    }
  })

  for (const url of ['/schema/', '/ids/', '/count/', '/new/', '/references/']) notAllowed(url, [])

  const writable = !options.readOnly
  notAllowed('/', writable ? (options.allowBulkDelete ? ['POST', 'DELETE'] : ['POST']) : [])
  notAllowed('/:id/', writable ? ['PUT', 'PATCH', 'DELETE'] : [])
  // The router answers an id longer than Fastify's maxParamLength (100 by default) with its own
  // 414 before any route of ours: such paths land here, answered as SPEC §6.11 and §6.13 say.
  const idMethods: HTTPMethods[] = ['GET', 'HEAD', ...(writable ? ['PUT', 'PATCH', 'DELETE'] as const : [])]
  const beyondRoutes = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const path = request.url.split('?')[0]!
    if ((request.params as { '*': string })['*'].replace(/\/$/, '').includes('/')) {
      return sendError(reply, new TABLECRUD_ERR_ROUTE_NOT_FOUND(request.method, path))
    }
    if (!idMethods.includes(request.method as HTTPMethods)) {
      reply.header('allow', idMethods.join(', '))
      return sendError(reply, new TABLECRUD_ERR_METHOD_NOT_ALLOWED(request.method, path))
    }
    return sendError(reply, new TABLECRUD_ERR_ID_INVALID())
  }
  fastify.route({ method: ['GET', 'HEAD', ...WRITE_METHODS], url: '/*', schema: { hide: true }, onRequest: beyondRoutes, handler: beyondRoutes })
  if (!writable) return

  /** Body values as the database takes them; each failing field named in one 400. */
  function toRow (values: Row): Map<TableColumn, unknown> {
    const out = new Map<TableColumn, unknown>()
    const failures: Array<{ field: string, message: string }> = []
    for (const [name, value] of Object.entries(values)) {
      const column = writeColumns.get(name)
      if (column === undefined) continue
      try {
        out.set(column, toDatabase(column, value))
      } catch (error) {
        failures.push({ field: name, message: (error as ValueError).message })
      }
    }
    if (failures.length > 0) {
      throw withBody(new TABLECRUD_ERR_BODY_INVALID(failures.map((f) => `${f.field} ${f.message}`).join('; ')), { errors: failures })
    }
    return out
  }

  /** The row a POST or PUT writes: the body, and the default of every column left out (SPEC §6.15). */
  function fullRow (body: Row, key: unknown): Row {
    const out: Row = {}
    for (const column of table.columns) {
      if (column.primaryKey) {
        if (key !== undefined) out[column.name] = key
        // POST: a key the database does not assign (not a Serial) is the client's, and required.
        else if (column.type !== 'serial' && Object.hasOwn(body, column.name)) out[column.name] = body[column.name]
      } else {
        out[column.name] = Object.hasOwn(body, column.name) ? body[column.name] : writeDefault(column)
      }
    }
    return out
  }

  /**
   * What PUT and PATCH check before their hooks, in the order of SPEC §6.14: the body's values,
   * the validators, the id (and the body's key against it), and that the row exists when hooks
   * are to run for it.
   */
  async function updateTarget (request: FastifyRequest, operation: 'putSingle' | 'patchSingle', hooks: number): Promise<{ body: Row, key: number | string }> {
    const body = request.body as Row
    toRow(body)
    await validate(operation, request)
    const key = id(request)
    const name = table.primaryKey.name
    if (Object.hasOwn(body, name) && body[name] !== key) throw new TABLECRUD_ERR_BODY_ID_MISMATCH(name)
    if (hooks > 0) await requireRow(key)
    return { body, key }
  }

  async function requireRow (key: unknown, client?: PoolClient): Promise<void> {
    const found = await run(compileExists(table, key), client)
    if (found.rows.length === 0) throw new TABLECRUD_ERR_ROW_NOT_FOUND(table.name, JSON.stringify(key))
  }

  /**
   * The values a write sends, after the hooks: on the built-in user table the password is
   * hashed (SPEC §3), so no hook or client ever stores it as given.
   */
  async function prepare (values: Row): Promise<Map<TableColumn, unknown>> {
    if (table === userTable && typeof values.password === 'string') {
      values = { ...values, password: await hashPassword(values.password) }
    }
    return toRow(values)
  }

  const notFound = (key: unknown): Error => new TABLECRUD_ERR_ROW_NOT_FOUND(table.name, JSON.stringify(key))

  // POST /
  route({
    method: 'POST',
    url: '/',
    schema: { tags, summary: `Create a ${table.name} row`, body: createSchema(table), response: { 201: withHeaders(row, { Location: LocationHeader }), ...errors } },
    validatorCompiler: compilers(ajv, null),
    handler: async (request, reply) => {
      const body = request.body as Row
      toRow(body)
      await validate('postSingle', request)
      let values = fullRow(body, undefined)
      for (const hook of preSave) values = await guarded(async () => await hook.callable(values, { request }), hookError)
      if (table.primaryKey.type === 'serial') delete values[table.primaryKey.name]
      const result = await run(compileInsert(table, await prepare(values), excludeSecrets))
      const created = result.rows[0]!
      const key = created[table.primaryKey.name]
      const prefix = fastify.prefix.replace(/\/$/, '')
      reply.code(201).header('location', `${prefix}/${encodeURIComponent(String(key))}/`)
      return created
    }
  })

  // PUT /:id/
  route({
    method: 'PUT',
    url: '/:id/',
    schema: { tags, summary: `Replace a ${table.name} row`, params: idParamsSchema(table), body: replaceSchema(table), response: { 200: row, ...errors } },
    validatorCompiler: compilers(ajv, null),
    handler: async (request) => {
      const { body, key } = await updateTarget(request, 'putSingle', preSave.length)
      let values = fullRow(body, key)
      for (const hook of preSave) values = await guarded(async () => await hook.callable(values, { request }), hookError)
      delete values[table.primaryKey.name]
      return await update(key, values)
    }
  })

  // PATCH /:id/
  route({
    method: 'PATCH',
    url: '/:id/',
    schema: { tags, summary: `Change some columns of a ${table.name} row`, params: idParamsSchema(table), body: patchSchema(table), response: { 200: row, ...errors } },
    validatorCompiler: compilers(ajv, null),
    handler: async (request) => {
      const { body, key } = await updateTarget(request, 'patchSingle', prePatch.length)
      let values: Row = { ...body }
      delete values[table.primaryKey.name]
      for (const hook of prePatch) values = await guarded(async () => await hook.callable(key, values, { request }), hookError)
      return await update(key, values)
    }
  })

  async function update (key: unknown, values: Row): Promise<Row> {
    const changes = await prepare(values)
    changes.delete(table.primaryKey)
    if (changes.size === 0) {
      const current = await run(compileSingle(ctx, key, { fields: null, readable: false }))
      if (current.rows.length === 0) throw notFound(key)
      return current.rows[0]!
    }
    const result = await run(compileUpdate(table, key, changes, excludeSecrets))
    if (result.rows.length === 0) throw notFound(key)
    return result.rows[0]!
  }

  // DELETE /:id/
  route({
    method: 'DELETE',
    url: '/:id/',
    schema: { tags, summary: `Delete a ${table.name} row`, params: idParamsSchema(table), response: { 204: { type: 'null', description: 'Deleted' }, ...errors } },
    // Fastify's own Ajv would refuse a bad id as a body error, before the validators (SPEC §6.14).
    validatorCompiler: compilers(ajv, null),
    handler: async (request, reply) => {
      await validate('deleteSingle', request)
      const key = id(request)
      if (preDelete.length > 0) {
        await requireRow(key)
        await guarded(async () => { for (const hook of preDelete) await hook.callable(key, { request }) }, hookError)
      }
      const result = await run(compileDelete(table, key))
      if (result.rowCount === 0) throw notFound(key)
      return reply.code(204).send()
    }
  })

  if (!options.allowBulkDelete) return

  // DELETE /
  route({
    method: 'DELETE',
    url: '/',
    schema: { tags, summary: `Delete the ${table.name} rows matching the filters`, querystring: listQuerySchema(table, queryOptions), response: { 204: { type: 'null', description: 'Deleted; X-Deleted-Count says how many', headers: { 'X-Deleted-Count': DeletedCountHeader } }, ...errors } },
    validatorCompiler: compilers(ajv, (raw) => parseFilterQuery(ctx, raw)),
    handler: async (request, reply) => {
      const filters = request.query as Filter[]
      await validate('deleteAll', request)
      if (filters.length === 0) throw new TABLECRUD_ERR_QS_MISSING_FILTER()
      const deleted = preDelete.length === 0
        ? Number((await run(compileBulkDelete(ctx, filters))).rowCount)
        : await deleteWithHooks(filters, request)
      return reply.code(204).header('x-deleted-count', String(deleted)).send()
    }
  })

  /** Locks the matching rows, runs each one's preDelete hooks, deletes them: all or nothing. */
  async function deleteWithHooks (filters: readonly Filter[], request: FastifyRequest): Promise<number> {
    const client = await checkout()
    try {
      await client.query('BEGIN')
      const ids = (await run(compileMatchingIds(ctx, filters), client)).rows.map((r) => r.id)
      for (const key of ids) {
        await guarded(async () => { for (const hook of preDelete) await hook.callable(key, { request }) }, hookError)
      }
      const result = ids.length === 0 ? 0 : Number((await run(compileDeleteIds(table, ids), client)).rowCount)
      await client.query('COMMIT')
      client.release()
      return result
    } catch (error) {
      // A connection whose ROLLBACK fails is broken: released with the error, the pool drops it.
      client.release(await client.query('ROLLBACK').then(() => undefined, (failure: Error) => failure))
      throw error
    }
  }
}

/** An error message from the server (it has a severity) that leaves the connection usable: not a shutdown. */
function answeredByDatabase (error: unknown): boolean {
  const { code, severity } = error as { code?: unknown, severity?: unknown }
  return typeof severity === 'string' && severity !== 'FATAL' && severity !== 'PANIC' &&
    typeof code === 'string' && !code.startsWith('08') && !code.startsWith('57P')
}

/**
 * Runs a validator or hook: an error carrying `statusCode` answers with that status and its
 * message (SPEC §2.9, §2.10); any other becomes `otherwise`.
 */
async function guarded<T> (fn: () => Promise<T>, otherwise: (error: unknown) => Error): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    const status = (error as { statusCode?: unknown }).statusCode
    if (typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 600) {
      const code = (error as { code?: unknown }).code
      throw new HttpError(status, String((error as Error).message), typeof code === 'string' ? code : 'TABLECRUD_ERR_REFUSED')
    }
    throw otherwise(error)
  }
}

const hookError = (error: unknown): Error => new TABLECRUD_ERR_HOOK(error instanceof Error ? error.message : String(error))
