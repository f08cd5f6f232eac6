import type { FastifyReply, FastifyRequest } from 'fastify'
import { TABLECRUD_ERR_ROW_NOT_FOUND } from '../../lib/errors.js'
import { sealCursor, type CursorValues } from '../../lib/query/cursor.js'
import { listBinding, parseId, parseListQuery, parseSingleQuery, type ListQuery, type QueryContext, type SingleQuery } from '../../lib/query/parse.js'
import { compileKeyset, compileList, compileSingle, shapeRow, sortKeyAlias, TOTAL, type ListStatement } from '../../lib/sql/select.js'
import { aRow, idParamsSchema, pageQuerySchema, singleQuerySchema } from '../../schemas/query.js'
import { described, ETagHeader, EXPORT_DESCRIPTION, listOrExportResponse, NotModifiedResponse, withHeaders } from '../../schemas/responses.js'
import { ifNoneMatch, textETag } from '../../lib/etag.js'
import type { CrudContext } from './context.js'
import { countRows } from './count.js'
import { exportFormat, sendExport } from './export.js'
import type { Row } from './options.js'
import { compilers, route } from './routing.js'
import { customShape, rowsOf, sendJson, shapeSerialiser } from './serialise.js'

/** The read routes of SPEC §2.3 and §2.4: GET `/` and GET `/:id/`. */
export function readRoutes (c: CrudContext): void {
  const { fastify, table, query: ctx, db, schemas: { row } } = c
  const serialiseShape = shapeSerialiser()

  route<{ Querystring: ListQuery }>(fastify, {
    method: 'GET',
    url: '/',
    schema: c.routeSchema('getAll', 'list', [400, 503], {
      summary: `List ${table.name} rows`,
      description: EXPORT_DESCRIPTION,
      querystring: pageQuerySchema(table, c.queryOptions),
      response: { 200: listOrExportResponse(row) }
    }),
    validatorCompiler: compilers(c.ajv, (raw) => parseListQuery(ctx, raw)),
    handler: async (request, reply) => {
      const query = request.query
      await c.validate('getAll', request)
      const format = exportFormat(query, request)
      const scoped = await c.scoped(request)
      if (format !== null) return await sendExport(c, scoped, reply, query, format)
      if (query.cursor !== null) return await keysetPage(c, scoped, serialiseShape, request, reply, query, query.cursor.after)
      // In 'estimated' mode the total is counted (or estimated) apart, not by the window.
      const windowTotal = query.rangeHeader && c.options.countMode === 'exact'
      const statement = compileList(scoped, query, windowTotal)
      const result = await db.run(statement, 'read')
      const rows = rowsOf(result, statement)
      if (query.rangeHeader) await contentRange(c, scoped, reply, query, statement, result.rows)
      if (customShape(statement, query.readable)) return await serialiseShape.page(reply, statement.shape, { rows })
      return { rows }
    }
  })

  route<{ Querystring: SingleQuery, Params: { id: string } }>(fastify, {
    method: 'GET',
    url: '/:id/',
    schema: c.routeSchema('getSingle', 'get', [400, 404, 503], {
      summary: `Get ${aRow(table.name)}`,
      params: idParamsSchema(table),
      querystring: singleQuerySchema(table, c.queryOptions),
      headers: conditionalHeaders,
      response: { 200: described(withHeaders(row, { ETag: ETagHeader }), 'The row, with its ETag.'), 304: NotModifiedResponse }
    }),
    validatorCompiler: compilers(c.ajv, (raw) => parseSingleQuery(ctx, raw)),
    handler: async (request, reply) => {
      const query = request.query
      await c.validate('getSingle', request)
      const key = parseId(table, request.params.id)
      const statement = compileSingle(await c.scoped(request), key, query)
      const result = await db.run(statement, 'read')
      if (result.rows.length === 0) throw new TABLECRUD_ERR_ROW_NOT_FOUND(table.name, JSON.stringify(key))
      const served = rowsOf(result, statement)[0]!
      // Written here, by the shape's serialiser or the route's schema, so the ETag is of the text
      // sent: another __visible_fields is another representation (SPEC §7.3). (Fastify's type
      // allows a buffer from a custom serialiser; the route's writes text.)
      const text = customShape(statement, query.readable) ? serialiseShape.text(statement.shape, served) : reply.serialize(served) as string
      const etag = textETag(text)
      reply.header('etag', etag)
      const none = request.headers['if-none-match']
      if (none !== undefined && ifNoneMatch(none, etag)) return await reply.code(304).send()
      return await sendJson(reply, text)
    }
  })
}

/** The request headers of GET `/:id/`, for OpenAPI only (Fastify validates none of them here). */
const conditionalHeaders = {
  type: 'object',
  properties: { 'if-none-match': { type: 'string', description: 'An ETag of the row: a 304 with no body while the row, as these parameters serve it, still has it.' } }
}

/**
 * A keyset page (SPEC §7.1): one row more than the page is read, to know whether another
 * follows; its cursor seals the sort-key values of the page's last row, and `Link` holds the
 * full URL of the next page (this request's, `__cursor` replaced).
 */
async function keysetPage (c: CrudContext, ctx: QueryContext, serialiseShape: ReturnType<typeof shapeSerialiser>, request: FastifyRequest, reply: FastifyReply, query: ListQuery, after: CursorValues | null): Promise<unknown> {
  const statement = compileKeyset(ctx, query, after, query.pageSize + 1)
  const result = await c.db.run(statement, 'read')
  const more = result.rows.length > query.pageSize
  const page = more ? result.rows.slice(0, query.pageSize) : result.rows
  let next: string | null = null
  if (more) {
    const last = page[page.length - 1]!
    const values = Array.from({ length: statement.keys }, (_, i) => last[sortKeyAlias(i)] as string | null)
    next = sealCursor(c.query.cursorKey, listBinding(c.query, query), values)
    const url = new URL(request.url, `${request.protocol}://${request.host}`)
    url.searchParams.set('__cursor', next)
    reply.header('link', `<${url.href}>; rel="next"`)
  }
  const body = { rows: page.map((r) => shapeRow(r, statement.shape)), next_cursor: next }
  if (customShape(statement, query.readable)) return await serialiseShape.page(reply, statement.shape, body)
  return body
}

/**
 * `Content-Range: <name> <first>-<last>/<total>` (SPEC §2.3), exposed to browsers. The total
 * comes with the page; an empty page past the first asks for it separately, and so does
 * every page in 'estimated' count mode (SPEC §7.2).
 */
async function contentRange (c: CrudContext, ctx: QueryContext, reply: FastifyReply, query: ListQuery, statement: ListStatement, rows: readonly Row[]): Promise<void> {
  const { offset } = statement
  const windowed = c.options.countMode === 'exact' && rows.length > 0
  const total = windowed
    ? Number(rows[0]![TOTAL])
    : rows.length === 0 && offset === 0 && c.options.countMode === 'exact' ? 0 : (await countRows(c, ctx, query.filters)).count
  setContentRange(reply, query.rangeHeaderName, offset, rows.length, total)
}

/** `Content-Range: <name> <first>-<last>/<total>` for a page of `length` rows from `offset`, listed in Access-Control-Expose-Headers (SPEC §6.20). */
export function setContentRange (reply: FastifyReply, name: string, offset: number, length: number, total: number): void {
  const last = length > 0 ? offset + length - 1 : offset
  reply.header('content-range', `${name} ${offset}-${last}/${total}`)
  const exposed = String(reply.getHeader('access-control-expose-headers') ?? '')
  const names = exposed.split(',').map((s) => s.trim()).filter(Boolean)
  if (!names.some((n) => n.toLowerCase() === 'content-range')) reply.header('access-control-expose-headers', [...names, 'Content-Range'].join(', '))
}
