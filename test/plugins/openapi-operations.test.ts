import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { buildDemo } from '../../examples/movies/app.js'
import { column, defineTable } from '../../lib/table/index.js'
import { createTables } from '../../lib/db/index.js'
import { openApi } from '../../plugins/openapi.js'
import { pathName } from '../../plugins/operation-ids.js'
import { documentResponses } from '../../plugins/route-responses.js'
import { errorResponse } from '../../schemas/responses.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { jwtAuth } from '../../plugins/auth/jwt-auth.js'
import { jwtLogin } from '../../plugins/auth/jwt-login.js'
import { tokenLogin } from '../../plugins/auth/token-login.js'
import { sessionAuth } from '../../plugins/auth/session-auth.js'
import { register } from '../../plugins/auth/register.js'
import { changePassword } from '../../plugins/auth/change-password.js'
import { appPool, testDatabase } from '../helpers/db.js'

/*
 * What a typed client relies on (docs/openapi.md): a stable, unique operationId per operation,
 * and one response per error status a route can answer, each with the error shape.
 */

/** No database: TableCRUD and the auth plugins do not query while registering (SPEC §6.17). */
const NOWHERE = 'postgres://postgres@127.0.0.1:1/none'

type Doc = Record<string, any>

const author = defineTable('op_author', { name: column.varchar({ length: 50 }) })
const code = defineTable('op_code', { code: column.varchar({ length: 1, primaryKey: true }), label: column.text() })
const guid = defineTable('op_guid', { key: column.uuid({ primaryKey: true }), label: column.text() })
const note = defineTable('op_note', { slug: column.text({ primaryKey: true }) })

async function documentOf (t: Test, setup: (app: FastifyInstance) => Promise<void>): Promise<Doc> {
  const app = Fastify()
  t.teardown(async () => await app.close())
  await app.register(fastifyPostgres, { connectionString: NOWHERE })
  await app.register(openApi)
  await setup(app)
  await app.ready()
  return JSON.parse(JSON.stringify(app.swagger()))
}

function operations (doc: Doc): Array<[string, string, Doc]> {
  return Object.entries(doc.paths as Doc).flatMap(([path, item]) => Object.entries(item as Doc).map(([method, op]) => [path, method, op as Doc] as [string, string, Doc]))
}

const idsOf = (doc: Doc): Record<string, string> =>
  Object.fromEntries(operations(doc).map(([path, method, op]) => [`${method.toUpperCase()} ${path}`, op.operationId]))

const statusesOf = (op: Doc): number[] => Object.keys(op.responses).map(Number).filter((s) => s >= 400)

const writable = { readOnly: false, allowBulkDelete: true }

t.test('the operationIds of a table: <table>.<operation>', async (t) => {
  const doc = await documentOf(t, async (app) => {
    await app.register(tableCrud, { table: author, prefix: '/authors', ...writable })
  })
  t.strictSame(idsOf(doc), {
    'GET /authors/': 'op_author.list',
    'POST /authors/': 'op_author.create',
    'DELETE /authors/': 'op_author.bulkDelete',
    'GET /authors/{id}/': 'op_author.get',
    'PUT /authors/{id}/': 'op_author.replace',
    'PATCH /authors/{id}/': 'op_author.patch',
    'DELETE /authors/{id}/': 'op_author.delete',
    'GET /authors/count/': 'op_author.count',
    'GET /authors/ids/': 'op_author.ids',
    'GET /authors/new/': 'op_author.new',
    'GET /authors/schema/': 'op_author.schema',
    'GET /authors/references/': 'op_author.references'
  })
})

t.test('a table mounted again: its mount path, or operationIdPrefix; a name taken twice is refused', async (t) => {
  const doc = await documentOf(t, async (app) => {
    await app.register(tableCrud, { table: author, prefix: '/authors' })
    await app.register(async (admin) => {
      await admin.register(tableCrud, { table: author, prefix: '/authors', ...writable })
    }, { prefix: '/api/v-2' })
    await app.register(tableCrud, { table: author, prefix: '/writers', operationIdPrefix: 'writers.op_author' })
  })
  const ids = idsOf(doc)
  t.equal(ids['GET /authors/'], 'op_author.list', 'the first mount: the table name')
  t.equal(ids['PATCH /api/v-2/authors/{id}/'], 'api.v_2.authors.patch', 'the next: its path, in words')
  t.equal(ids['GET /writers/count/'], 'writers.op_author.count', 'operationIdPrefix')
  t.equal(new Set(Object.values(ids)).size, Object.keys(ids).length, 'all unique')
  t.equal(pathName('/a/b-c/'), 'a.b_c')

  const refused = async (register: (app: FastifyInstance) => Promise<void>, message: string): Promise<void> => {
    const app = Fastify()
    t.teardown(async () => await app.close())
    await app.register(fastifyPostgres, { connectionString: NOWHERE })
    await t.rejects(register(app).then(async () => await app.ready()), { code: 'TABLECRUD_ERR_OPTIONS', message })
  }
  const taken = 'tableCrud: the option operationIdPrefix must tell this mount apart: the operationIds '
  await refused(async (app) => {
    await app.register(tableCrud, { table: author, prefix: '/authors' })
    await app.register(tableCrud, { table: code, prefix: '/codes', operationIdPrefix: 'op_author' })
  }, `${taken}op_author.* are another mount's`)
  await refused(async (app) => {
    // Mounted again at the root, the second mount has no path to be named by.
    await app.register(tableCrud, { table: author, prefix: '/authors' })
    await app.register(async (root) => { await root.register(tableCrud, { table: author }) })
  }, `${taken}op_author.* are another mount's`)
  for (const bad of ['', 'two words', '.admin', 'admin.', 7]) {
    await refused(async (app) => {
      await app.register(tableCrud, { table: author, prefix: '/authors', operationIdPrefix: bad as string })
    }, 'tableCrud: the option operationIdPrefix must be a name such as admin or api.admin: letters, digits and _, words joined by dots')
  }
})

t.test('an error response per status a route can answer: If-Match required, validators, auth', async (t) => {
  const guard = (): void => {}
  const doc = await documentOf(t, async (app) => {
    await app.register(tableCrud, { table: author, prefix: '/authors', validators: { getAll: [guard] } })
    await app.register(tableCrud, { table: code, prefix: '/codes', ...writable, requireIfMatch: true, validators: { every: [guard] } })
    await app.register(async (api) => {
      await api.register(jwtAuth, { secret: 'openapi-operations-secret', allowUnauthenticated: true })
      await api.register(tableCrud, { table: guid, prefix: '/guids' })
    })
    await app.register(tableCrud, { table: note, prefix: '/notes' })
  })
  const op = (method: string, path: string): Doc => doc.paths[path][method]
  t.strictSame(statusesOf(op('get', '/authors/')), [400, 403, 503], 'a validator of getAll: 403')
  t.strictSame(statusesOf(op('get', '/authors/{id}/')), [400, 404, 503], 'not on getSingle')
  t.strictSame(statusesOf(op('get', '/authors/new/')), [], '/new/ refuses nothing')
  t.strictSame(statusesOf(op('put', '/codes/{id}/')), [400, 403, 404, 412, 413, 415, 422, 428, 503], 'requireIfMatch: 428')
  t.strictSame(statusesOf(op('delete', '/codes/{id}/')), [400, 403, 404, 412, 422, 428, 503])
  t.strictSame(statusesOf(op('get', '/codes/new/')), [400, 403], '`every` guards every operation')
  t.strictSame(statusesOf(op('get', '/guids/new/')), [503], 'allowUnauthenticated: no 401, the user still looked up')
  t.strictSame(op('get', '/codes/{id}/').parameters.find((p: Doc) => p.in === 'path').example, 'W', 'a text key: a code as long as the key')
  t.strictSame(op('get', '/guids/{id}/').parameters.find((p: Doc) => p.in === 'path').example, '3fa85f64-5717-4562-b3fc-2c963f66afa6', 'a UUID key: a UUID')
  t.strictSame(op('get', '/notes/{id}/').parameters.find((p: Doc) => p.in === 'path').example, 'WB', 'a text key of any length: a short code')
  t.strictSame(op('get', '/authors/{id}/').parameters.find((p: Doc) => p.in === 'path').example, 1, 'a serial key: 1')
  t.equal(op('get', '/authors/{id}/').summary, 'Get an op_author row')
})

t.test('auth routes: their operationIds, and the errors of options that add some', async (t) => {
  const captcha = { field: 'captcha', verify: () => true }
  const doc = await documentOf(t, async (app) => {
    await app.register(jwtLogin, { prefix: '/login', secret: 'openapi-operations-secret' })
    await app.register(jwtLogin, { prefix: '/login/again', secret: 'openapi-operations-secret' })
    await app.register(tokenLogin, { prefix: '/token' })
    await app.register(register, { prefix: '/register', readOnly: true, captcha })
    await app.register(register, { prefix: '/sign-up' })
    await app.register(async (me) => {
      await me.register(sessionAuth, { activeOnly: false, allowUnauthenticated: true })
      await me.register(changePassword, { prefix: '/change-password', readOnly: true })
    })
  })
  t.strictSame(idsOf(doc), {
    'POST /login/': 'jwtLogin',
    'POST /login/again/': 'login.again',
    'POST /token/': 'tokenLogin',
    'GET /register/': 'register.page',
    'POST /register/': 'register',
    'GET /sign-up/': 'sign_up.page',
    'POST /sign-up/': 'sign_up',
    'GET /change-password/': 'changePassword.page',
    'POST /change-password/': 'changePassword'
  })
  t.strictSame(statusesOf(doc.paths['/register/'].post), [400, 401, 405, 413, 415, 422, 503], 'a CAPTCHA: 401; read-only: 405')
  t.strictSame(statusesOf(doc.paths['/sign-up/'].post), [400, 413, 415, 422, 503])
  t.strictSame(statusesOf(doc.paths['/change-password/'].post), [400, 401, 405, 413, 415, 422, 503], 'no 403: no rule of sessionAuth on')
  t.strictSame(statusesOf(doc.paths['/change-password/'].get), [503], 'the page: the session is looked up, nothing refused')
})

t.test('a plugin documents its refusals on the routes it guards; a route keeps what it says of a status', async (t) => {
  const doc = await documentOf(t, async (app) => {
    await app.register(async (guarded) => {
      documentResponses(guarded, { 418: errorResponse('Refused by the plugin.'), 429: errorResponse('Too many.') }, (route) => route.url !== '/skipped')
      const ok = { type: 'object', properties: {} }
      guarded.get('/plain', { schema: { response: { 200: ok } } }, async () => ({}))
      guarded.get('/own', { schema: { response: { 200: ok, 418: { ...ok, description: 'Its own, kept.' }, 429: errorResponse('Too many.') } } }, async () => ({}))
      guarded.get('/joined', { schema: { response: { 200: ok, 418: errorResponse('Refused by the route.') } } }, async () => ({}))
      guarded.get('/skipped', { schema: { response: { 200: ok } } }, async () => ({}))
      guarded.get('/undocumented', async () => ({}))
    })
  })
  const described = (path: string): Record<string, string> =>
    Object.fromEntries(Object.entries(doc.paths[path].get.responses as Doc).map(([status, r]) => [status, r.description]))
  t.strictSame(described('/plain'), { 200: 'Default Response', 418: 'Refused by the plugin.', 429: 'Too many.' })
  t.strictSame(described('/own'), { 200: 'Default Response', 418: 'Its own, kept.', 429: 'Too many.' })
  t.strictSame(described('/joined'), { 200: 'Default Response', 418: 'Refused by the route. Or: Refused by the plugin.', 429: 'Too many.' })
  t.strictSame(described('/skipped'), { 200: 'Default Response' }, 'a route the plugin does not guard')
  t.strictSame(described('/undocumented'), { 200: 'Default Response' }, 'a route without responses: left as it is')
})

/** What each TableCRUD operation of the demo can answer besides auth (SPEC §1, §7.3). */
const CRUD_ERRORS: Record<string, number[]> = {
  list: [400, 503],
  get: [400, 404, 503],
  create: [400, 413, 415, 422, 503],
  replace: [400, 404, 412, 413, 415, 422, 503],
  patch: [400, 404, 412, 413, 415, 422, 503],
  delete: [400, 404, 412, 422, 503],
  bulkDelete: [400, 422, 503],
  count: [400, 503],
  ids: [400, 503],
  new: [],
  schema: [],
  references: [],
  mediaUpload: [400, 413, 415],
  mediaUrl: [400]
}

/**
 * The demo's other routes: the logins, and the site under csrf (403 on its POSTs); behind
 * sessionAuth, 401 without a session, 403 for an inactive user and 503.
 */
const OTHER_ERRORS: Record<string, number[]> = {
  jwtLogin: [400, 401, 413, 415, 503],
  tokenLogin: [400, 401, 413, 415, 503],
  'sessionLogin.page': [],
  sessionLogin: [400, 401, 403, 413, 415, 422, 503],
  'sessionLogout.page': [],
  sessionLogout: [400, 401, 403, 413, 415, 503],
  'register.page': [],
  register: [400, 403, 413, 415, 422, 503],
  'changePassword.page': [401, 403, 503],
  changePassword: [400, 401, 403, 413, 415, 422, 503],
  'mfaSetup.page': [401, 403, 503],
  mfaSetup: [400, 401, 403, 409, 413, 415, 422, 503],
  'mfaSetup.qrCode': [401, 403, 404, 503],
  me: [401, 403, 503]
}

t.test('the demo: every operation has a unique operationId and lists exactly the errors it can answer', async (t) => {
  const db = await testDatabase(t)
  const app = await buildDemo(appPool(db))
  t.teardown(async () => await app.close())
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  const all = operations(doc)
  const ids = all.map(([, , op]) => op.operationId as string)
  t.equal(ids.filter((id) => typeof id === 'string').length, all.length, 'every operation has one')
  t.equal(new Set(ids).size, ids.length, 'no two alike')
  const movies = idsOf(doc)
  t.equal(movies['GET /api/movies/'], 'movie.list')
  t.equal(movies['GET /api/movies/media/url/'], 'movie.mediaUrl')
  t.equal(movies['DELETE /api/admin/movies/'], 'admin.movie.bulkDelete')
  t.equal(movies['POST /api/token/movies/media/'], 'token.movie.mediaUpload')

  for (const [path, method, op] of all) {
    const id = op.operationId as string
    const crud = /^(?:(admin|token)\.)?(movie|director|studio|role)\.(\w+)$/.exec(id)
    let expected: number[]
    if (crud === null) {
      expected = [...OTHER_ERRORS[id]!, 429].sort((a, b) => a - b)
    } else {
      const [, mount, , name] = crud
      // Deletes on /api/admin are for superusers only (a validator: 400, 403).
      const guarded = mount === 'admin' && (name === 'delete' || name === 'bulkDelete') ? [400, 403] : []
      // rateLimit guards the whole demo: 429 everywhere.
      expected = [...new Set([...CRUD_ERRORS[name!]!, ...(mount === undefined ? [] : [401, 503]), ...guarded, 429])].sort((a, b) => a - b)
    }
    t.strictSame(statusesOf(op), expected, `${method} ${path} (${id})`)
    for (const status of statusesOf(op)) {
      const content = op.responses[status].content?.['application/json']?.schema
      t.strictSame(content, { $ref: '#/components/schemas/ErrorResponse' }, `${method} ${path} ${status}: the error shape`)
    }
    t.notOk('4XX' in op.responses || '5XX' in op.responses || 'default' in op.responses, `${method} ${path}: no blanket range`)
  }
  const retry = { schema: { type: 'integer', minimum: 0 }, description: 'Seconds to wait before trying again.' }
  t.strictSame(doc.paths['/api/movies/'].get.responses['429'].headers, { 'Retry-After': retry }, 'a 429 says when to retry')
  t.equal(doc.paths['/mfa/'].post.responses['403'].description,
    'The CSRF check failed: the token is missing or does not match the cookie, or the request is cross-site. Or: The user is not allowed here (inactive, or not an admin or superuser as the route requires).',
    'two plugins refusing with one status: one response, both meanings')
})

t.test('GET / documents the export media types, and still serialises its JSON page by the schema', async (t) => {
  const db = await testDatabase(t)
  const app = Fastify()
  t.teardown(async () => await app.close())
  await app.register(fastifyPostgres, appPool(db))
  await app.after()
  await createTables(app.pg, [author])
  await app.pg.query("INSERT INTO op_author (name) VALUES ('Le Guin')")
  await app.register(openApi)
  // A member the schema does not have: dropped only if the page goes through its serialiser.
  app.addHook('preSerialization', async (_request, _reply, payload) => ({ ...(payload as object), unknown: 1 }))
  await app.register(tableCrud, { table: author, prefix: '/authors' })
  await app.ready()
  const content = (app.swagger() as Doc).paths['/authors/'].get.responses['200'].content
  t.strictSame(Object.keys(content), ['application/json', 'application/x-ndjson', 'text/csv'])
  const schemas = (app.swagger() as Doc).components.schemas
  // SPEC §7.1 and §7.2: keyset paging and estimated counts are in the document too.
  t.strictSame(schemas.OpAuthorList.properties.next_cursor.anyOf, [{ type: 'string' }, { type: 'null' }])
  t.equal(schemas.CountResponse.properties.estimated.type, 'boolean')
  t.ok((app.swagger() as Doc).paths['/authors/'].get.parameters.some((p: Doc) => p.name === '__cursor'))
  const page = await app.inject('/authors/')
  t.equal(page.headers['content-type'], 'application/json; charset=utf-8')
  t.strictSame(page.json(), { rows: [{ id: 1, name: 'Le Guin' }] }, 'no unknown member: serialised by the schema')
  const csv = await app.inject({ url: '/authors/', headers: { accept: 'text/csv' } })
  t.equal(csv.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(csv.body, 'id,name\r\n1,Le Guin\r\n')
  const ndjson = await app.inject('/authors/?__format=ndjson')
  t.equal(ndjson.body, '{"id":1,"name":"Le Guin"}\n')
})
