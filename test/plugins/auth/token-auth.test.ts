import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { createToken, createUser } from '../../../lib/auth/users.js'
import { staticTokenProvider } from '../../../lib/auth/providers.js'
import { securitySchemesOf } from '../../../lib/auth/security.js'
import { tokenAuth } from '../../../plugins/auth/token-auth.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, createAuthTables, unreachableApp } from './auth-app.js'

const db = await testDatabase(t)
await createAuthTables(db)

const unauthorized = (code: string, message: string): object => ({ statusCode: 401, code, error: 'Unauthorized', message })
const MISSING = unauthorized('TABLECRUD_ERR_AUTH_HEADER_MISSING', 'The Authorization header is missing.')
const FORMAT = unauthorized('TABLECRUD_ERR_AUTH_HEADER_FORMAT', 'The header is in the wrong format.')
const UNKNOWN = unauthorized('TABLECRUD_ERR_AUTH_TOKEN_UNKNOWN', 'Token not recognised')

/** Routes that answer who asked, and what a hook after auth saw. */
function whoami (api: FastifyInstance): void {
  api.addHook('preHandler', async (request, reply) => { reply.header('x-hook-user', String(request.user?.username ?? null)) })
  api.get('/me', async (request) => ({ user: request.user }))
  api.post('/me', async (request) => ({ user: request.user, body: request.body }))
  api.delete('/me', async (request) => ({ user: request.user }))
  api.get('/health', async (request) => ({ user: request.user }))
  api.get('/health/', async (request) => ({ user: request.user }))
  api.get('/docs', async (request) => ({ user: request.user }))
  api.get('/docs/*', async (request) => ({ user: request.user }))
}

/** Plain data: Fastify marks schemas it has seen with a symbol. */
const json = (value: unknown): unknown => value === undefined ? undefined : JSON.parse(JSON.stringify(value))

const routeSchemas = new Map<string, any>()
const app = await authApp(t, db, (app) => {
  app.get('/open', async () => ({ open: true }))
  app.register(async (api) => {
    await api.register(tokenAuth, { excludedPaths: ['/api/health', '/api/docs/*'] })
    // Added after tokenAuth, so it sees what tokenAuth's onRoute hook did.
    api.addHook('onRoute', (route) => { routeSchemas.set(`${String(route.method)} ${route.url}`, json(route.schema)) })
    whoami(api)
  }, { prefix: '/api' })
  app.register(async (svc) => {
    await svc.register(tokenAuth, { provider: staticTokenProvider(['service-token-1', 'service-token-2']) })
    whoami(svc)
  }, { prefix: '/svc' })
})
const bob = await createUser(app.pg, { username: 'bob', password: 'bob-password', admin: true })
const bobToken = await createToken(app.pg, bob.id)
const idle = await createUser(app.pg, { username: 'idle', password: 'idle-password', active: false })
const idleToken = await createToken(app.pg, idle.id)

const get = async (url: string, authorization?: string): Promise<{ statusCode: number, body: any, headers: Record<string, unknown> }> => {
  const res = await app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } })
  return { statusCode: res.statusCode, body: res.json(), headers: res.headers }
}

t.test('a token of the table sets request.user for handlers and hooks', async (t) => {
  const res = await get('/api/me', `Bearer ${bobToken}`)
  t.equal(res.statusCode, 200)
  t.same(res.body, { user: { id: bob.id, username: 'bob', active: true, admin: true, superuser: false } })
  t.equal(res.headers['x-hook-user'], 'bob')
  t.equal((await get('/api/me', `bearer  ${bobToken}`)).statusCode, 200, 'the scheme is case-insensitive')
})

t.test('every method needs the token, and auth comes before the body is read', async (t) => {
  for (const method of ['POST', 'DELETE'] as const) {
    const res = await app.inject({ method, url: '/api/me', headers: { 'content-type': 'application/json' }, payload: '{oops' })
    t.same([res.statusCode, res.json()], [401, MISSING], method)
  }
  const res = await app.inject({ method: 'POST', url: '/api/me', headers: { authorization: `Bearer ${bobToken}` }, payload: { a: 1 } })
  t.same(res.json(), { user: { id: bob.id, username: 'bob', active: true, admin: true, superuser: false }, body: { a: 1 } })
})

t.test('no header: "The Authorization header is missing.", with the Bearer challenge', async (t) => {
  for (const header of [undefined, '', '   ']) {
    const res = await get('/api/me', header)
    t.same([res.statusCode, res.body], [401, MISSING], JSON.stringify(header))
    t.equal(res.headers['www-authenticate'], 'Bearer')
  }
})

t.test('a header that is not "Bearer <token>": "The header is in the wrong format."', async (t) => {
  for (const header of ['Bearer', 'Bearer ', `Token ${bobToken}`, `Basic ${bobToken}`, `${bobToken}`, `Bearer ${bobToken} extra`,
    'Bearer tok€n', 'Bearer a,b', `Bearer\t${bobToken}`]) {
    const res = await get('/api/me', header)
    t.same([res.statusCode, res.body], [401, FORMAT], header)
    t.equal(res.headers['www-authenticate'], 'Bearer')
  }
})

t.test('an unknown token, or one of an inactive or deleted user: "Token not recognised"', async (t) => {
  const gone = await createUser(app.pg, { username: 'gone', password: 'gone-password' })
  const goneToken = await createToken(app.pg, gone.id)
  t.equal((await get('/api/me', `Bearer ${goneToken}`)).statusCode, 200)
  await app.pg.query('DELETE FROM auth_user WHERE id = $1', [gone.id])
  for (const [what, token] of [['unknown', 'no-such-token'], ['prefix of a real one', bobToken.slice(0, -1)],
    ['inactive user', idleToken], ['deleted user', goneToken], ['padded', `${bobToken}=`]] as const) {
    const res = await get('/api/me', `Bearer ${token}`)
    t.same([res.statusCode, res.body], [401, UNKNOWN], what)
    t.equal(res.headers['www-authenticate'], 'Bearer')
  }
})

t.test('excludedPaths: exact entries and * prefixes on the full path, query string aside', async (t) => {
  const pass = { statusCode: 200, body: { user: null } }
  t.match(await get('/api/health'), pass, 'exact')
  t.match(await get('/api/health?verbose=1'), pass, 'exact, with a query string')
  t.match(await get('/api/docs/'), pass, 'prefix: the directory itself')
  t.match(await get('/api/docs/x/y'), pass, 'prefix: below it')
  t.match(await get('/api/docs'), { statusCode: 401, body: MISSING }, 'a prefix entry does not match the path without its /')
  t.match(await get('/api/health/'), { statusCode: 401, body: MISSING }, 'an exact entry does not match with a trailing slash')
  t.match(await get('/health'), { statusCode: 404 }, 'entries are full paths, prefix included')
  const withToken = await get('/api/health', `Bearer ${bobToken}`)
  t.same(withToken.body, { user: null }, 'an excluded path is not authenticated even with a token')
})

t.test('routes outside the context are not protected', async (t) => {
  t.same(await get('/open'), { statusCode: 200, body: { open: true }, headers: (await get('/open')).headers })
})

t.test('staticTokenProvider: a fixed list, and request.user without an id', async (t) => {
  for (const token of ['service-token-1', 'service-token-2']) {
    const res = await get('/svc/me', `Bearer ${token}`)
    t.same([res.statusCode, res.body], [200, { user: { id: null, username: null, active: true, admin: false, superuser: false } }], token)
  }
  t.same((await get('/svc/me', 'Bearer service-token-3')).body, UNKNOWN)
  t.same((await get('/svc/me', `Bearer ${bobToken}`)).body, UNKNOWN, 'table tokens are not in the list')
  t.same((await get('/api/me', 'Bearer service-token-1')).body, UNKNOWN, 'nor the list\'s in the table')
  t.same((await get('/svc/me')).body, MISSING)

  const noDatabase = Fastify()
  noDatabase.register(async (api) => {
    await api.register(tokenAuth, { provider: staticTokenProvider(['abc']) })
    api.get('/', async (request) => request.user)
  })
  t.teardown(() => noDatabase.close())
  t.equal((await noDatabase.inject({ url: '/', headers: { authorization: 'Bearer abc' } })).statusCode, 200, 'no database needed')
})

t.test('OpenAPI: the context\'s routes carry bearerAuth, excluded ones and others do not', async (t) => {
  t.same(routeSchemas.get('GET /api/me'), { security: [{ bearerAuth: [] }] })
  t.same(routeSchemas.get('POST /api/me'), { security: [{ bearerAuth: [] }] })
  t.same(routeSchemas.get('GET /api/health'), undefined)
  t.same(routeSchemas.get('GET /api/docs/*'), undefined)
  t.same(securitySchemesOf(app.server), { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'API token or JWT', description: '`Authorization: Bearer <token>`, the token from token login or JWT login. Paste the token alone: Swagger UI adds `Bearer `.' } })
  const plain = Fastify()
  t.teardown(() => plain.close())
  t.same(securitySchemesOf(plain.server), {}, 'an application without auth declares no scheme')

  const seen: any[] = []
  const shared = { querystring: { type: 'object' } }
  const other = Fastify()
  other.get('/before', { schema: shared }, async () => 'x')
  other.register(async (api) => {
    await api.register(tokenAuth, { provider: staticTokenProvider(['abc']) })
    api.addHook('onRoute', (route) => { seen.push([route.method, route.url, json(route.schema)]) })
    api.get('/mine', { schema: shared }, async () => 'x')
    api.get('/own', { schema: { security: [] } }, async () => 'x')
  })
  await other.ready()
  t.teardown(() => other.close())
  const mine = { querystring: { type: 'object' }, security: [{ bearerAuth: [] }] }
  t.same(seen, [['GET', '/mine', mine], ['HEAD', '/mine', mine], ['GET', '/own', { security: [] }], ['HEAD', '/own', { security: [] }]])
  t.same(json(shared), { querystring: { type: 'object' } }, 'a shared schema object is not changed')
})

t.test('two tokenAuth contexts, one inside the other, both apply', async (t) => {
  const nested = Fastify()
  nested.register(async (outer) => {
    await outer.register(tokenAuth, { provider: staticTokenProvider(['outer', 'both']) })
    outer.get('/', async (request) => request.user)
    outer.register(async (inner) => {
      await inner.register(tokenAuth, { provider: staticTokenProvider(['inner', 'both']) })
      inner.get('/inner', async (request) => request.user)
    })
  })
  t.teardown(() => nested.close())
  const status = async (url: string, token: string): Promise<number> => (await nested.inject({ url, headers: { authorization: `Bearer ${token}` } })).statusCode
  t.same([await status('/', 'outer'), await status('/', 'inner'), await status('/inner', 'inner'), await status('/inner', 'both')], [200, 401, 401, 200])
})

t.test('a database that cannot be reached is a 503, not a 500', async (t) => {
  const down = await unreachableApp(t, (app) => {
    app.register(async (api) => {
      await api.register(tokenAuth)
      api.get('/', async () => 'x')
    })
  })
  const res = await down.inject({ url: '/', headers: { authorization: 'Bearer abc' } })
  t.equal(res.statusCode, 503)
  t.equal(res.json().code, 'TABLECRUD_ERR_DB_UNAVAILABLE')
})

t.test('options are checked at registration', async (t) => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['provider', { provider: { authenticate: 1 } }, /^tokenAuth: the option provider must have an authenticate\(token, context\) method$/],
    ['provider type', { provider: 'table' }, /^tokenAuth: the option provider must have/],
    ['excludedPaths', { excludedPaths: '/docs' }, /^tokenAuth: the option excludedPaths must be an array of paths$/],
    ['excludedPaths entry', { excludedPaths: ['docs'] }, /^tokenAuth: the option excludedPaths has "docs", which is not a path starting with \/$/],
    ['excludedPaths star', { excludedPaths: ['/a/*/b'] }, /^tokenAuth: the option excludedPaths has "\/a\/\*\/b": \* is allowed only at the end$/]
  ]
  for (const [name, options, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => await app.register(tokenAuth, options as any).ready(), message, name)
    await app.close()
  }
  const app = Fastify()
  await t.rejects(async () => await app.register(tokenAuth).ready(), /^tokenAuth: register @fastify\/postgres before this plugin/, 'the table provider needs @fastify/postgres')
  await app.close()
  t.throws(() => staticTokenProvider([]), /^staticTokenProvider: tokens must be a non-empty array of strings$/)
  t.throws(() => staticTokenProvider('abc' as any), /^staticTokenProvider: tokens must be a non-empty array/)
  t.throws(() => staticTokenProvider(['ok', 'not ok']), /^staticTokenProvider: each token must be/)
  t.throws(() => staticTokenProvider([''] as any), /^staticTokenProvider: each token must be/)
})
