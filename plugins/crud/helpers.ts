import { parseFilterQuery, parseIdsQuery, type Filter, type IdsQuery } from '../../lib/query/parse.js'
import { compileIds } from '../../lib/sql/select.js'
import { referencesTo } from '../../lib/table/table.js'
import { aRow, idsQuerySchema, listQuerySchema } from '../../schemas/query.js'
import { CountResponse, described, IdsResponse, ReferencesResponse, SchemaDocumentResponse } from '../../schemas/responses.js'

/* The 200s of the helper routes, one object each for every table: serialisers are kept per schema object. */
const COUNTED = described(CountResponse, 'The number of rows matching the filters, and the default page size.')
const IDS = described(IdsResponse, 'Each matching id with its readable representation, in primary key order.')
const REFERENCES = described(ReferencesResponse, 'The foreign keys of every table that point at this one.')
const SCHEMA = described(SchemaDocumentResponse, 'The JSON Schema of the row a client sends (the POST body), with `extra` annotations.')
import { newRow, newRowSchema, schemaDocument } from '../../schemas/row.js'
import type { CrudContext } from './context.js'
import { countRows } from './count.js'
import { compilers, route, type OnlyMethods } from './routing.js'

const HELPER_PATHS = ['/schema/', '/ids/', '/count/', '/new/', '/references/']

/** The helper routes of SPEC §2.5 to §2.8: `/count/`, `/ids/`, `/new/`, `/schema/`, `/references/`, read-only all. */
export function helperRoutes (c: CrudContext, onlyMethods: OnlyMethods): void {
  const { fastify, table, query: ctx, db, options: { excludeSecrets, maxJoins } } = c
  const documentJson = JSON.stringify(schemaDocument(table, { excludeSecrets, maxJoins, schemaExtra: c.options.schemaExtra }))

  route<{ Querystring: Filter[] }>(fastify, {
    method: 'GET',
    url: '/count/',
    schema: c.routeSchema('getCount', 'count', [400, 503], { summary: `Count ${table.name} rows matching the filters`, querystring: listQuerySchema(table, c.queryOptions), response: { 200: COUNTED } }),
    validatorCompiler: compilers(c.ajv, (raw) => parseFilterQuery(ctx, raw)),
    handler: async (request) => {
      await c.validate('getCount', request)
      const { count, estimated } = await countRows(c, await c.scoped(request), request.query)
      // Exact mode keeps the reference body; estimated mode says which kind each count is (SPEC §7.2).
      return c.options.countMode === 'exact' ? { count, page_size: c.options.pageSize } : { count, page_size: c.options.pageSize, estimated }
    }
  })

  route<{ Querystring: IdsQuery }>(fastify, {
    method: 'GET',
    url: '/ids/',
    schema: c.routeSchema('getIds', 'ids', [400, 503], { summary: `Ids and readable names of ${table.name} rows`, querystring: idsQuerySchema(c.options.maxPageSize), response: { 200: IDS } }),
    validatorCompiler: compilers(c.ajv, (raw) => parseIdsQuery(ctx, raw)),
    handler: async (request) => {
      await c.validate('getIds', request)
      const result = await db.run<{ id: number | string, readable: string }>(compileIds(await c.scoped(request), request.query), 'read')
      const out: Record<string, string> = {}
      for (const r of result.rows) out[String(r.id)] = r.readable
      return out
    }
  })

  route(fastify, {
    method: 'GET',
    url: '/new/',
    schema: c.routeSchema('getNew', 'new', [], { summary: `Defaults for a new ${table.name} row`, response: { 200: described(newRowSchema(table, excludeSecrets), 'The defaults of a new row; nothing is saved.') } }),
    handler: async (request) => {
      await c.validate('getNew', request)
      return newRow(table, excludeSecrets)
    }
  })

  route(fastify, {
    method: 'GET',
    url: '/schema/',
    schema: c.routeSchema('getSchema', 'schema', [], { summary: `JSON Schema of ${aRow(table.name)}`, response: { 200: SCHEMA } }),
    handler: async (request, reply) => {
      await c.validate('getSchema', request)
      // Serialised once at registration: the document never changes.
      return reply.type('application/json; charset=utf-8').serializer(String).send(documentJson)
    }
  })

  route(fastify, {
    method: 'GET',
    url: '/references/',
    schema: c.routeSchema('getReferences', 'references', [], { summary: `Foreign keys pointing at ${table.name}`, response: { 200: REFERENCES } }),
    handler: async (request) => {
      await c.validate('getReferences', request)
      return { references: referencesTo(table) }
    }
  })

  for (const url of HELPER_PATHS) onlyMethods(url, ['GET', 'HEAD'])
}
