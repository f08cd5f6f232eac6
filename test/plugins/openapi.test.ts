import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import SwaggerParser from '@apidevtools/swagger-parser'
import { column, defineTable } from '../../lib/table/index.js'
import { BEARER_SECURITY_SCHEME } from '../../lib/auth/security.js'
import { MATCH_TYPES, OPERATOR_NAMES as OPERATORS } from '../../lib/query/fields.js'
import { BOOLEAN_SPELLINGS } from '../../schemas/query.js'
import { CountResponse, ErrorResponse, IdsResponse, listResponse, ReferencesResponse } from '../../schemas/responses.js'
import { createSchema, newRowSchema, patchSchema, replaceSchema, rowSchema } from '../../schemas/row.js'
import { openApi, vendorExtra, type OpenApiOptions } from '../../plugins/openapi.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { jwtAuth } from '../../plugins/auth/jwt-auth.js'
import { tokenAuth } from '../../plugins/auth/token-auth.js'
import { staticTokenProvider } from '../../lib/auth/providers.js'

/*
 * The document needs no database: TableCRUD does not query while registering (SPEC §6.17), so
 * the pool points at a port nothing listens on and is never used.
 */
const NOWHERE = 'postgres://postgres@127.0.0.1:1/none'

const director = defineTable('oa_director', {
  name: column.varchar({ length: 50 }),
  born: column.timestamp({ null: true }),
  code: column.varchar({ length: 8, secret: true })
}, { readable: 'name' })
const film = defineTable('oa_film', {
  name: column.varchar({ length: 100, required: true }),
  rating: column.numeric({ digits: [3, 1], null: true }),
  director: column.foreignKey(director),
  tags: column.array(column.text()),
  released: column.boolean()
})

type Doc = Record<string, any>
const plain = (value: unknown): any => JSON.parse(JSON.stringify(value))
/** The document as `<routePrefix>/json` serves it. */
const documentOf = (app: FastifyInstance): Doc => plain(app.swagger())

/**
 * A body schema as the document holds it. @fastify/swagger drops every `nullable` member when
 * it writes OpenAPI 3.1 (the OpenAPI 3.0 keyword), the `nullable` of our `extra` annotations
 * included; nullability stays in the `anyOf` with `{ type: 'null' }`.
 */
function documented (schema: unknown): Doc {
  return JSON.parse(JSON.stringify(schema), (key, value) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'nullable' in value) {
      const { nullable, ...rest } = value
      return rest
    }
    return value
  })
}

async function build (t: Test, setup: (app: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: NOWHERE })
  await setup(app)
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

/** Directors public and read-only; films writable behind jwtAuth, as the demo mounts them. */
async function twoTables (t: Test, options: OpenApiOptions = {}): Promise<FastifyInstance> {
  return await build(t, async (app) => {
    await app.register(openApi, { info: { title: 'Films', version: '2.0.0' }, ...options })
    await app.register(tableCrud, { table: director, prefix: '/api/directors' })
    await app.register(async (admin) => {
      await admin.register(jwtAuth, { secret: 'openapi-test-secret' })
      await admin.register(tableCrud, { table: film, prefix: '/films', readOnly: false, allowBulkDelete: true, maxJoins: 1 })
    }, { prefix: '/api/admin' })
  })
}

const ORDERED = OPERATORS.filter((op) => op !== 'search')
const UNORDERED = ['e', 'ne', 'is_null', 'not_null', 'in', 'not_in']
/** Text columns also take search (SPEC §8.4). */
const TEXT = [...UNORDERED, 'search']
/** Arrays: no in/not_in (SPEC §7.6). */
const CONTAINS = ['e', 'ne', 'is_null', 'not_null']
const HELPERS = ['count/', 'ids/', 'new/', 'schema/', 'references/']
const PATHS: Record<string, string[]> = {
  '/api/directors/': ['get'],
  '/api/directors/{id}/': ['get'],
  ...Object.fromEntries(HELPERS.map((h) => [`/api/directors/${h}`, ['get']])),
  '/api/admin/films/': ['delete', 'get', 'post'],
  '/api/admin/films/{id}/': ['delete', 'get', 'patch', 'put'],
  ...Object.fromEntries(HELPERS.map((h) => [`/api/admin/films/${h}`, ['get']]))
}

function operations (doc: Doc): Array<[string, string, Doc]> {
  return Object.entries(doc.paths as Doc).flatMap(([path, item]) => Object.entries(item as Doc).map(([method, op]) => [path, method, op as Doc] as [string, string, Doc]))
}

/** The query parameters of an operation, by name, each checked to be an optional query parameter. */
function queryParameters (t: Test, op: Doc): Map<string, Doc> {
  const out = new Map<string, Doc>()
  for (const parameter of op.parameters ?? []) {
    if (parameter.in !== 'query') continue
    t.equal(parameter.required, false, `${parameter.name as string} is optional`)
    out.set(parameter.name, parameter)
  }
  return out
}

/** A media type object referring to a component. */
const ref = (name: string): Doc => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } })
const UNAVAILABLE = {
  description: 'The database cannot be reached or timed out.',
  headers: { 'Retry-After': { schema: { type: 'integer', minimum: 0 }, description: 'Seconds to wait before trying again.' } },
  content: ref('ErrorResponse')
}
/** The error responses of the TableCRUD routes, one per status, each in the error shape. */
const MEANINGS: Record<number, string> = {
  400: 'Bad input: the query string, the id or the body (not JSON, failing validation, unknown keys), or a validator or hook refusing it; the message names the offending input.',
  401: 'Credentials missing, malformed, expired or revoked.',
  403: 'A validator refuses the request.',
  404: 'No row has this id.',
  412: "If-Match does not hold the row's current ETag: the row has changed since it was read, and nothing was written.",
  413: 'The body is over the size limit.',
  415: 'The body is not `application/json`.',
  422: 'The write violates a database constraint (unique, foreign key, not-null, check), named in `details`.',
  428: 'If-Match is missing, and this table requires it for writes.'
}
const UNAUTHENTICATED = {
  description: MEANINGS[401],
  headers: { 'WWW-Authenticate': { schema: { type: 'string' }, description: 'Bearer' } },
  content: ref('ErrorResponse')
}
/** The export media types of GET `/` (SPEC §7.5), beside its JSON page. */
const EXPORTS = {
  'application/x-ndjson': { schema: { type: 'string', description: 'Every matching row, one JSON object per line, as a row of the JSON page.' } },
  'text/csv': { schema: { type: 'string', description: 'Every matching row, RFC 4180: a header row of the field names (`director.name` for a joined field), arrays as their JSON text.' } }
}
function errors (...statuses: number[]): Doc {
  return Object.fromEntries(statuses.map((status) => [status, status === 503
    ? UNAVAILABLE
    : status === 401 ? UNAUTHENTICATED : { description: MEANINGS[status], content: ref('ErrorResponse') }]))
}

t.test('the document of two tables validates as OpenAPI 3.1', async (t) => {
  const app = await twoTables(t)
  const doc = documentOf(app)
  t.equal(doc.openapi, '3.1.0')
  t.strictSame(doc.info, { title: 'Films', version: '2.0.0' })
  const validated = await SwaggerParser.validate(structuredClone(doc) as never) as Doc
  t.equal(validated.openapi, '3.1.0')
  // The parser does check: a parameter in no valid place is refused.
  const broken = structuredClone(doc)
  broken.paths['/api/directors/'].get.parameters[0].in = 'body'
  await t.rejects(SwaggerParser.validate(broken as never), /in/)
})

t.test('every route and method, each path once, with its trailing slash and {id}; the 405 helpers hidden', async (t) => {
  const app = await twoTables(t)
  const doc = documentOf(app)
  t.strictSame(Object.fromEntries(Object.entries(doc.paths as Doc).map(([path, item]) => [path, Object.keys(item as Doc).sort()])), PATHS)
  for (const [path, method, op] of operations(doc)) {
    const parameter = (op.parameters ?? []).filter((p: Doc) => p.in === 'path')
    if (!path.includes('{id}')) {
      t.strictSame(parameter, [], `${method} ${path} has no path parameter`)
      continue
    }
    const key = path.startsWith('/api/admin') ? 'oa_film' : 'oa_director'
    t.strictSame(parameter, [{
      schema: { type: 'integer', minimum: 1, maximum: 2147483647 },
      example: 1,
      in: 'path',
      name: 'id',
      required: true,
      description: `The id of an ${key} row.`
    }], `${method} ${path}`)
  }
})

t.test('one tag per table, on each of its operations', async (t) => {
  const app = await twoTables(t)
  const doc = documentOf(app)
  t.strictSame(doc.tags, [{ name: 'oa_director' }, { name: 'oa_film' }])
  for (const [path, method, op] of operations(doc)) {
    t.strictSame(op.tags, [path.startsWith('/api/admin/films/') ? 'oa_film' : 'oa_director'], `${method} ${path}`)
    t.type(op.summary, 'string')
  }
})

t.test('bearerAuth on the routes jwtAuth protects, and only there; the scheme declared', async (t) => {
  const app = await twoTables(t)
  const doc = documentOf(app)
  t.strictSame(doc.components.securitySchemes, { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'API token or JWT', description: BEARER_SECURITY_SCHEME.description } })
  // In a code span, so Swagger UI (CommonMark) shows <token> instead of taking it for a tag.
  t.match(BEARER_SECURITY_SCHEME.description, /^`Authorization: Bearer <token>`/)
  t.equal(doc.security, undefined)
  for (const [path, method, op] of operations(doc)) {
    if (path.startsWith('/api/admin/')) t.strictSame(op.security, [{ bearerAuth: [] }], `${method} ${path}`)
    else t.notOk('security' in op, `${method} ${path} is public`)
  }
})

t.test('the filters of GET /, /count/ and DELETE /: operators and match types as enums', async (t) => {
  const app = await twoTables(t)
  const doc = documentOf(app)
  const filmFields = [
    'id', 'name', 'rating', 'director', 'director.id', 'director.name', 'director.born', 'tags', 'released'
  ]
  const cases = [
    { op: doc.paths['/api/directors/'].get, fields: ['id', 'name', 'born'], filters: { id: ORDERED, name: TEXT, born: ORDERED }, text: ['name'], page: 1000 },
    { op: doc.paths['/api/directors/count/'].get, fields: ['id', 'name', 'born'], filters: { id: ORDERED, name: TEXT, born: ORDERED }, text: ['name'], page: 1000 },
    { op: doc.paths['/api/admin/films/'].get, fields: filmFields, filters: { id: ORDERED, name: TEXT, rating: ORDERED, director: ORDERED, 'director.id': ORDERED, 'director.name': TEXT, 'director.born': ORDERED, tags: CONTAINS, released: UNORDERED }, text: ['name', 'director.name'], page: 1000 },
    { op: doc.paths['/api/admin/films/'].delete, fields: filmFields, filters: { id: ORDERED, name: TEXT, rating: ORDERED, director: ORDERED, 'director.id': ORDERED, 'director.name': TEXT, 'director.born': ORDERED, tags: CONTAINS, released: UNORDERED }, text: ['name', 'director.name'], page: 1000 }
  ]
  for (const { op, fields, filters, text, page } of cases) {
    const parameters = queryParameters(t, op)
    const expected: string[] = []
    for (const name of Object.keys(filters)) {
      expected.push(name, `${name}__operator`)
      if (text.includes(name)) expected.push(`${name}__match`)
    }
    expected.push('__order', '__visible_fields', '__page', '__page_size', '__readable', '__range_header', '__range_header_name')
    // GET `/` alone pages by cursor and exports (SPEC §7.1, §7.5).
    if (op === doc.paths['/api/admin/films/'].get || op === doc.paths['/api/directors/'].get) expected.push('__cursor', '__format')
    // Bulk DELETE may lower the affected-row limit (SPEC §8.5).
    if (op === doc.paths['/api/admin/films/'].delete) expected.push('__max_affected')
    t.strictSame([...parameters.keys()], expected, op.summary)
    for (const [name, operators] of Object.entries(filters)) {
      t.strictSame(parameters.get(`${name}__operator`)!.schema, { type: 'string', enum: operators }, `${name}__operator`)
      if (text.includes(name)) t.strictSame(parameters.get(`${name}__match`)!.schema, { type: 'string', enum: [...MATCH_TYPES] }, `${name}__match`)
    }
    // Each filter a list of its column's values, written exploded (issue 30).
    // Text: anything but NUL, which the server refuses.
    const textValue = { type: 'string', pattern: '^[^\\u0000]*$' }
    t.strictSame(parameters.get('tags')?.schema ?? { type: 'array', items: textValue },
      { type: 'array', items: textValue }, 'an array filter may be repeated')
    t.strictSame(parameters.get('name')!.schema, { type: 'array', items: textValue }, 'repeated with in and not_in')
    t.strictSame(parameters.get('id')!.schema, { type: 'array', items: { type: 'integer', minimum: -2147483648, maximum: 2147483647 } }, 'typed as the column')
    t.equal(parameters.get('id')!.explode, true)
    t.equal(parameters.get('id')!.style, 'form')
    t.strictSame(parameters.get('__visible_fields')!.schema, {
      anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string', enum: fields, description: 'A field name.' } }]
    })
    t.strictSame(parameters.get('__page')!.schema, { type: 'integer', minimum: 1, maximum: 2147483647 }, '__page to the int32 bound the server holds it to')
    t.strictSame(parameters.get('__page_size')!.schema, { type: 'integer', minimum: 1, maximum: page })
    t.strictSame(parameters.get('__readable')!.schema, { type: 'string', enum: [...BOOLEAN_SPELLINGS] })
    t.strictSame(parameters.get('__range_header')!.schema, { type: 'string', enum: [...BOOLEAN_SPELLINGS] })
    t.strictSame(parameters.get('__order')!.schema, { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] })
  }
  t.notOk(queryParameters(t, doc.paths['/api/directors/'].get).has('code'), 'a secret column has no filter')
})

t.test('the query strings of GET /{id}/ and /ids/', async (t) => {
  const app = await twoTables(t)
  const doc = documentOf(app)
  const single = queryParameters(t, doc.paths['/api/admin/films/{id}/'].get)
  t.strictSame([...single.keys()], ['__visible_fields', '__readable'])
  t.strictSame(single.get('__visible_fields')!.schema.anyOf[1].items.enum, ['id', 'name', 'rating', 'director', 'director.id', 'director.name', 'director.born', 'tags', 'released'])
  const ids = queryParameters(t, doc.paths['/api/directors/ids/'].get)
  t.strictSame([...ids.entries()].map(([name, p]) => [name, p.schema]), [
    ['search', { type: 'string', pattern: '^[^\\u0000]*$' }],
    // The bounds the server holds them to (a 400 past them): maxPageSize (1000) and a 32-bit offset.
    ['limit', { type: 'integer', minimum: 0, maximum: 1000 }],
    ['offset', { type: 'integer', minimum: 0, maximum: 2147483647 }]
  ])
  for (const path of ['/api/directors/new/', '/api/directors/schema/', '/api/directors/references/']) {
    t.equal(doc.paths[path].get.parameters, undefined, `${path} takes no parameters`)
  }
})

t.test('request bodies: the create, replace and patch schemas, as components', async (t) => {
  const app = await twoTables(t)
  const doc = documentOf(app)
  const films = doc.paths['/api/admin/films/']
  const one = doc.paths['/api/admin/films/{id}/']
  // POST takes one row or an array of 1 to maxPageSize rows (SPEC §7.4).
  const $ref = (name: string): Doc => ({ $ref: `#/components/schemas/${name}` })
  t.strictSame(films.post.requestBody, { required: true, content: { 'application/json': { schema: { anyOf: [$ref('OaFilmIn'), $ref('OaFilmInList')] } } } })
  t.strictSame(doc.components.schemas.OaFilmInList, { title: 'OaFilmInList', type: 'array', minItems: 1, maxItems: 1000, items: $ref('OaFilmIn') })
  t.strictSame(one.put.requestBody, { required: true, content: ref('OaFilmReplace') })
  t.strictSame(one.patch.requestBody, { required: true, content: ref('OaFilmPatch') })
  // The row schemas, with `extra` written as the vendor extension `x-extra` (issue 10).
  t.strictSame(doc.components.schemas.OaFilmIn, documented(vendorExtra(createSchema(film))))
  t.strictSame(doc.components.schemas.OaFilmReplace, documented(vendorExtra(replaceSchema(film))))
  t.strictSame(doc.components.schemas.OaFilmPatch, documented(vendorExtra(patchSchema(film))))
  t.ok(Object.values(doc.components.schemas.OaFilmIn.properties).every((p: any) => 'x-extra' in p && !('extra' in p)))
  t.strictSame(doc.components.schemas.OaFilmIn.required, ['name'])
  t.strictSame(doc.components.schemas.OaFilmReplace.required, ['name'])
  t.equal(doc.components.schemas.OaFilmPatch.required, undefined)
  for (const [path, method, op] of operations(doc)) {
    if (!['post', 'put', 'patch'].includes(method)) t.equal(op.requestBody, undefined, `${method} ${path} has no body`)
  }
})

const ETag = {
  schema: { type: 'string' },
  description: 'The strong entity tag of the row as served: send it back in If-Match to write only over this version, or in If-None-Match for a 304.'
}

t.test('responses: rows, one row, count, ids, schema, new, references, the error shape and the headers', async (t) => {
  const app = await twoTables(t)
  const doc = documentOf(app)
  const films = doc.paths['/api/admin/films/']
  const one = doc.paths['/api/admin/films/{id}/']
  t.strictSame(films.get.responses, {
    200: {
      description: 'A page of rows; every matching row with an export media type.',
      headers: {
        'Content-Range': {
          schema: { type: 'string' },
          description: 'Sent with `__range_header`: `<name> <first>-<last>/<total>`, from 0; `<total>` counts the rows matching the filters.'
        },
        Link: {
          schema: { type: 'string' },
          description: 'With `__cursor`, unless this is the last page: `<full URL of the next page>; rel="next"`.'
        }
      },
      content: { ...ref('OaFilmList'), ...EXPORTS }
    },
    ...errors(400, 401, 503)
  })
  const $ref = (name: string): Doc => ({ $ref: `#/components/schemas/${name}` })
  t.strictSame(films.post.responses, {
    200: {
      description: 'Upsert (`__on_conflict`) of an object whose row existed: the row as updated, with its ETag; of an array: `{"rows": [...]}`, every row as written.',
      headers: { ETag },
      content: { 'application/json': { schema: { anyOf: [$ref('OaFilmRow'), $ref('OaFilmCreatedList')] } } }
    },
    201: {
      description: 'Created: the row, with Location and ETag, for an object body; `{"rows": [...]}`, without them, for an array body.',
      headers: { Location: { schema: { type: 'string' }, description: 'The path of the created row: `<prefix>/<id>/` (not sent for an array body).' }, ETag },
      content: { 'application/json': { schema: { anyOf: [$ref('OaFilmRow'), $ref('OaFilmCreatedList')] } } }
    },
    ...errors(400, 401, 413, 415, 422, 503)
  })
  t.strictSame(doc.components.schemas.OaFilmCreatedList, {
    title: 'OaFilmCreatedList',
    description: 'An array body: the created rows, in the order sent.',
    type: 'object',
    required: ['rows'],
    properties: { rows: { type: 'array', items: $ref('OaFilmRow') } }
  })
  t.strictSame(films.delete.responses, {
    204: {
      description: 'Deleted; X-Deleted-Count says how many',
      headers: { 'X-Deleted-Count': { schema: { type: 'integer', minimum: 0 }, description: 'How many rows were deleted.' } }
    },
    ...errors(400, 401, 422, 503)
  })
  t.strictSame(one.delete.responses, { 204: { description: 'Deleted' }, ...errors(400, 401, 404, 412, 422, 503) })
  for (const method of ['get', 'put', 'patch']) {
    const notModified = method === 'get' ? { 304: { description: 'Not modified: If-None-Match holds the current ETag.', headers: { ETag } } } : {}
    const statuses = method === 'get' ? [400, 401, 404, 503] : [400, 401, 404, 412, 413, 415, 422, 503]
    const description = method === 'get' ? 'The row, with its ETag.' : 'The row as written, with its new ETag.'
    t.strictSame(one[method].responses, { 200: { description, headers: { ETag }, content: ref('OaFilmRow') }, ...notModified, ...errors(...statuses) }, method)
  }
  const ok = (path: string): Doc => doc.paths[path].get.responses['200'].content
  t.strictSame(ok('/api/admin/films/count/'), ref('CountResponse'))
  t.strictSame(ok('/api/admin/films/ids/'), ref('IdsResponse'))
  t.strictSame(ok('/api/admin/films/new/'), ref('OaFilmNew'))
  t.strictSame(ok('/api/admin/films/references/'), ref('ReferencesResponse'))
  t.strictSame(ok('/api/admin/films/schema/'), ref('SchemaDocument'))
  t.strictSame(ok('/api/directors/'), { ...ref('OaDirectorList'), ...EXPORTS })
  t.strictSame(ok('/api/directors/{id}/'), ref('OaDirectorRow'))

  const schemas = doc.components.schemas
  t.strictSame(Object.keys(schemas).sort(), [
    'CountResponse', 'ErrorResponse', 'IdsResponse', 'OaDirectorJoined', 'OaDirectorList', 'OaDirectorNew', 'OaDirectorRow',
    'OaFilmCreatedList', 'OaFilmIn', 'OaFilmInList', 'OaFilmList', 'OaFilmNew', 'OaFilmPatch', 'OaFilmReplace', 'OaFilmRow', 'ReferencesResponse',
    'SchemaDocument'
  ])
  t.strictSame(schemas.ErrorResponse, plain(ErrorResponse), 'the SPEC §1 error shape, once')
  t.strictSame(schemas.CountResponse, plain(CountResponse))
  t.strictSame(schemas.IdsResponse, plain(IdsResponse))
  t.strictSame(schemas.ReferencesResponse, plain(ReferencesResponse))
  const filmRow = documented(rowSchema(film, true, 1))
  t.strictSame(schemas.OaDirectorJoined, filmRow.properties.director.anyOf[1], 'a joined director, named')
  t.strictSame(schemas.OaDirectorJoined.properties.name.type, ['string', 'null'], 'served null through a NULL ForeignKey')
  filmRow.properties.director.anyOf[1] = { $ref: '#/components/schemas/OaDirectorJoined' }
  t.strictSame(schemas.OaFilmRow, filmRow, 'a film row refers to it')
  t.strictSame(schemas.OaFilmNew, documented(newRowSchema(film, true)))
  t.strictSame(schemas.OaDirectorRow, documented(rowSchema(director, true, 0)))
  t.strictSame(Object.keys(schemas.OaDirectorRow.properties), ['id', 'name', 'born'], 'no secret column in a row')
  const list = documented(listResponse(rowSchema(film, true, 1)))
  t.strictSame(schemas.OaFilmList, { ...list, properties: { ...list.properties, rows: { type: 'array', items: { $ref: '#/components/schemas/OaFilmRow' } } } }, 'a list refers to its row')
  t.strictSame(Object.keys(schemas.OaFilmList.properties), ['rows', 'next_cursor'], 'next_cursor documented (SPEC §7.1)')

  const helper = (path: string): Doc => doc.paths[path].get.responses
  for (const prefix of ['/api/directors/', '/api/admin/films/']) {
    const auth = prefix === '/api/directors/' ? [] : [401]
    t.strictSame(helper(`${prefix}count/`), { 200: helper(`${prefix}count/`)['200'], ...errors(400, ...auth, 503) }, `${prefix}count/`)
    t.strictSame(helper(`${prefix}ids/`), { 200: helper(`${prefix}ids/`)['200'], ...errors(400, ...auth, 503) }, `${prefix}ids/`)
    for (const name of ['new/', 'schema/', 'references/']) {
      // Nothing to refuse but credentials: no query string, no database (unless auth looks the user up).
      t.strictSame(helper(prefix + name), { 200: helper(prefix + name)['200'], ...(auth.length > 0 ? errors(401, 503) : {}) }, prefix + name)
    }
  }
  for (const [path, method, op] of operations(doc)) {
    t.notOk('4XX' in op.responses || '5XX' in op.responses, `${method} ${path}: one response per status, no range`)
  }
  const headers = operations(doc).flatMap(([path, method, op]) =>
    Object.entries(op.responses as Doc).flatMap(([status, response]) => Object.keys(response.headers ?? {}).map((h) => `${method} ${path} ${status} ${h}`)))
  t.strictSame(headers.filter((h) => !h.endsWith(' 503 Retry-After') && !h.endsWith(' 401 WWW-Authenticate')).sort(), [
    'delete /api/admin/films/ 204 X-Deleted-Count',
    'get /api/admin/films/ 200 Content-Range',
    'get /api/admin/films/ 200 Link',
    'get /api/admin/films/{id}/ 200 ETag',
    'get /api/admin/films/{id}/ 304 ETag',
    'get /api/directors/ 200 Content-Range',
    'get /api/directors/ 200 Link',
    'get /api/directors/{id}/ 200 ETag',
    'get /api/directors/{id}/ 304 ETag',
    'patch /api/admin/films/{id}/ 200 ETag',
    'post /api/admin/films/ 200 ETag',
    'post /api/admin/films/ 201 ETag',
    'post /api/admin/films/ 201 Location',
    'put /api/admin/films/{id}/ 200 ETag'
  ])
  t.equal(headers.filter((h) => h.endsWith(' 401 WWW-Authenticate')).length, operations(doc).filter(([path]) => path.startsWith('/api/admin/')).length, 'WWW-Authenticate on the 401 of every protected route')
  t.equal(headers.filter((h) => h.endsWith(' 503 Retry-After')).length, operations(doc).filter(([, , op]) => '503' in op.responses).length, 'Retry-After on every 503')
})

t.test('a title shared by different schemas, or already a component, stays inline', async (t) => {
  const taken = { type: 'object' as const, title: 'CountResponse', properties: { mine: { type: 'string' as const } } }
  const app = await build(t, async (app) => {
    await app.register(openApi, { swagger: { openapi: { components: { schemas: { CountResponse: taken } } } } })
    await app.register(tableCrud, { table: film, prefix: '/films' })
    await app.register(tableCrud, { table: film, prefix: '/joined', maxJoins: 1 })
  })
  const doc = documentOf(app)
  const body = (path: string): Doc => doc.paths[path].get.responses['200'].content['application/json'].schema
  t.strictSame(body('/films/{id}/'), documented(rowSchema(film, true, 0)))
  const joined = documented(rowSchema(film, true, 1))
  t.strictSame(doc.components.schemas.OaDirectorJoined, joined.properties.director.anyOf[1], 'the joined director has one shape: a component')
  joined.properties.director.anyOf[1] = { $ref: '#/components/schemas/OaDirectorJoined' }
  t.strictSame(body('/joined/{id}/'), joined)
  t.strictSame(body('/films/count/'), plain(CountResponse))
  t.strictSame(doc.components.schemas.CountResponse, taken)
  t.notOk('OaFilmRow' in doc.components.schemas)
  t.strictSame(doc.paths['/films/'].get.responses['400'].content, ref('ErrorResponse'))
  await t.resolves(SwaggerParser.validate(structuredClone(doc) as never))
})

t.test('paths given by the integrator: a shared titled schema becomes one component', async (t) => {
  const detail = { title: 'Detail', type: 'object' as const, properties: { at: { type: 'string' as const } } }
  // One object in two operations, holding a schema that becomes a component itself.
  const shared = { title: 'Health', type: 'object' as const, properties: { ok: { type: 'boolean' as const }, detail: structuredClone(detail) } }
  const app = await build(t, async (app) => {
    await app.register(openApi, {
      swagger: {
        openapi: {
          paths: {
            '/health': {
              summary: 'Health',
              parameters: [],
              get: { responses: { 200: { description: 'Up', content: { 'application/json': { schema: shared } } } } },
              head: { responses: { 200: { description: 'Up', content: { 'application/json': { schema: shared } } } } },
              post: { responses: { 200: { description: 'Detail', content: { 'application/json': { schema: structuredClone(detail) } } } } },
              options: { description: 'no responses given' } as never
            }
          }
        }
      }
    })
    await app.register(tableCrud, { table: director, prefix: '/directors' })
  })
  const doc = documentOf(app)
  t.strictSame(doc.components.schemas.Health, { ...shared, properties: { ok: { type: 'boolean' }, detail: { $ref: '#/components/schemas/Detail' } } })
  t.strictSame(doc.components.schemas.Detail, detail)
  t.strictSame(doc.paths['/health'].post.responses['200'].content, ref('Detail'))
  t.strictSame(doc.paths['/health'].get.responses['200'].content, ref('Health'))
  t.strictSame(doc.paths['/health'].head.responses['200'].content, ref('Health'))
  t.strictSame(doc.paths['/directors/{id}/'].get.responses['200'].content, ref('OaDirectorRow'))
})

t.test('the JSON document and Swagger UI at /docs, its assets served by the application', async (t) => {
  const app = await twoTables(t)
  const document = await app.inject('/docs/json')
  t.equal(document.statusCode, 200)
  t.strictSame(document.json(), plain(app.swagger()))
  const yaml = await app.inject('/docs/yaml')
  t.equal(yaml.statusCode, 200)
  t.match(yaml.body, /^openapi: 3\.1\.0$/m)
  const page = await app.inject('/docs/')
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
  t.ok(sources.includes('./static/swagger-ui-bundle.js'), 'the bundle is local')
  t.strictSame(sources.filter((s) => /^(https?:)?\/\//.test(s)), [], 'nothing from a CDN')
  for (const source of sources) {
    const asset = await app.inject(new URL(source, 'http://x/docs/').pathname)
    t.equal(asset.statusCode, 200, source)
  }
  const initializer = await app.inject('/docs/static/swagger-initializer.js')
  t.match(initializer.body, /validatorUrl: null/, 'no call to the online validator')
  t.equal((await app.inject('/docs')).statusCode, 200)
  t.equal((await app.inject('/documentation/json')).statusCode, 404)
})

t.test('without an auth plugin nothing is protected and no scheme is declared', async (t) => {
  const app = await build(t, async (app) => {
    await app.register(openApi)
    await app.register(tableCrud, { table: director, prefix: '/directors' })
  })
  const doc = documentOf(app)
  t.strictSame(doc.components.securitySchemes, {})
  t.strictSame(Object.keys(doc.paths), ['/directors/', '/directors/{id}/', ...HELPERS.map((h) => `/directors/${h}`)])
  for (const [path, method, op] of operations(doc)) t.notOk('security' in op, `${method} ${path}`)
  t.strictSame(doc.tags, [{ name: 'oa_director' }])
  t.equal(doc.openapi, '3.1.0')
  t.type(doc.info.title, 'string', 'the default info is the package.json of the working directory')
  await t.resolves(SwaggerParser.validate(structuredClone(doc) as never))
})

t.test('an auth plugin registered before openApi, or excluding paths, is seen all the same', async (t) => {
  const app = await build(t, async (app) => {
    await app.register(async (api) => {
      await api.register(tokenAuth, { provider: staticTokenProvider(['t1']), excludedPaths: ['/api/directors/new/'] })
      await api.register(openApi, { routePrefix: '/docs' })
      await api.register(tableCrud, { table: director, prefix: '/directors' })
    }, { prefix: '/api' })
  })
  t.equal((await app.inject('/api/docs/json')).statusCode, 401, 'routePrefix is under the prefix of the context, and so under its token')
  const response = await app.inject({ url: '/api/docs/json', headers: { authorization: 'Bearer t1' } })
  t.equal(response.statusCode, 200)
  const doc = response.json()
  t.strictSame(doc.components.securitySchemes, { bearerAuth: plain(BEARER_SECURITY_SCHEME) })
  t.strictSame(doc.paths['/api/directors/'].get.security, [{ bearerAuth: [] }])
  t.notOk('security' in doc.paths['/api/directors/new/'].get, 'an excluded path is public')
  await t.resolves(SwaggerParser.validate(structuredClone(doc) as never))
})

t.test('routePrefix, info and servers; swagger and ui options passed through', async (t) => {
  const seen: string[] = []
  const app = await twoTables(t, {
    routePrefix: '/reference',
    info: { title: 'Films', version: '3.0.0', description: 'The films API' },
    servers: [{ url: 'http://127.0.0.1:3000', description: 'local' }],
    swagger: {
      openapi: {
        tags: [{ name: 'oa_film', description: 'Films, for admins' }, { name: 'extra' }],
        components: { securitySchemes: { apiKey: { type: 'apiKey', name: 'x-key', in: 'header' } } },
        externalDocs: { url: 'https://example.org/films' }
      },
      transform: ({ schema, url }) => {
        seen.push(url)
        return { schema: { ...schema, description: 'documented' }, url }
      },
      transformObject: (document) => ({ ...(document as { openapiObject: Doc }).openapiObject, 'x-films': true }) as Doc
    },
    ui: { uiConfig: { docExpansion: 'none' } }
  })
  const doc = documentOf(app)
  t.strictSame(doc.info, { title: 'Films', version: '3.0.0', description: 'The films API' })
  t.strictSame(doc.servers, [{ url: 'http://127.0.0.1:3000', description: 'local' }])
  t.strictSame(doc.tags, [{ name: 'oa_film', description: 'Films, for admins' }, { name: 'extra' }, { name: 'oa_director' }])
  t.strictSame(Object.keys(doc.components.securitySchemes), ['bearerAuth', 'apiKey'])
  t.strictSame(doc.externalDocs, { url: 'https://example.org/films' })
  t.equal(doc['x-films'], true)
  t.equal(doc.paths['/api/directors/'].get.description, 'documented')
  t.ok(seen.includes('/api/directors/'), 'the integrator\'s transform sees the routes')
  t.notOk('/api/directors' in doc.paths, 'a route without its trailing slash stays hidden')
  t.strictSame(Object.keys(doc.paths).sort(), Object.keys(PATHS).sort())
  await t.resolves(SwaggerParser.validate(structuredClone(doc) as never))
  t.equal((await app.inject('/reference/json')).statusCode, 200)
  t.equal((await app.inject('/docs/json')).statusCode, 404)
  t.match((await app.inject('/reference/static/swagger-initializer.js')).body, /"docExpansion":"none"/)
})

t.test('a route only without a trailing slash is documented as it is', async (t) => {
  const app = await build(t, async (app) => {
    await app.register(openApi)
    app.get('/health', { schema: { tags: ['ops'], response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, async () => ({ ok: true }))
    app.get('/both', async () => 'no slash')
    app.get('/both/', async () => 'slash')
    app.route({ method: ['GET', 'POST'], url: '/mixed', handler: async () => 'x' })
    app.get('/mixed/', async () => 'x')
  })
  const doc = documentOf(app)
  t.strictSame(Object.fromEntries(Object.entries(doc.paths as Doc).map(([path, item]) => [path, Object.keys(item as Doc)])), {
    '/health': ['get'],
    '/both/': ['get'],
    '/mixed': ['get', 'post'],
    '/mixed/': ['get']
  })
})

t.test('invalid options are refused at registration', async (t) => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['routePrefix', { routePrefix: 'docs' }, /openApi: the option routePrefix must be a path such as \/docs/],
    ['routePrefix', { routePrefix: '/docs/' }, /openApi: the option routePrefix must be a path/],
    ['routePrefix', { routePrefix: 7 }, /openApi: the option routePrefix must be a path/],
    ['info', { info: { title: 'x' } }, /openApi: the option info must be an object with a string title and a string version/],
    ['info', { info: 'x' }, /openApi: the option info must be an object/],
    ['servers', { servers: { url: '/' } }, /openApi: the option servers must be an array of objects with a string url/],
    ['servers', { servers: [{ url: 1 }] }, /openApi: the option servers must be an array/],
    ['swagger', { swagger: [] }, /openApi: the option swagger must be an object/],
    ['swagger', { swagger: { mode: 'static' } }, /openApi: the option swagger cannot set mode/],
    ['ui', { ui: 'x' }, /openApi: the option ui must be an object/]
  ]
  const register = async (options: unknown): Promise<void> => {
    const app = Fastify()
    try {
      await app.register(openApi, options as OpenApiOptions)
      await app.ready()
    } finally {
      await app.close()
    }
  }
  for (const [name, options, message] of cases) await t.rejects(register(options), message, name)
  await t.resolves(register({ swagger: { mode: 'dynamic' } }), 'mode: dynamic is what it is anyway')
})
