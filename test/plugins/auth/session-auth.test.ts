import t from 'tap'
import type { FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import { createUser } from '../../../lib/auth/users.js'
import { createSession, hashSessionToken } from '../../../lib/auth/sessions.js'
import { securitySchemesOf } from '../../../lib/auth/security.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { createTables } from '../../../lib/db/index.js'
import { userTable } from '../../../lib/table/auth-tables.js'
import { sessionAuth } from '../../../plugins/auth/session-auth.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, unreachableApp } from './auth-app.js'
import { createSessionTables, tokenOf } from './session-app.js'

const db = await testDatabase(t)
await createSessionTables(db)

const SESSION = (message: string): object => ({ statusCode: 401, code: 'TABLECRUD_ERR_AUTH_SESSION', error: 'Unauthorized', message })
const NO_COOKIE = SESSION('No session cookie found.')
const NO_MATCH = SESSION('No matching session found.')
const GONE = SESSION("That user doesn't exist anymore")
const FORBIDDEN = (message: string): object => ({ statusCode: 403, code: 'TABLECRUD_ERR_AUTH_FORBIDDEN', error: 'Forbidden', message })

/** Routes that answer who asked. */
function whoami (api: FastifyInstance): void {
  api.get('/me', async (request) => ({ user: request.user }))
  api.post('/me', async (request) => ({ user: request.user }))
  api.get('/health', async (request) => ({ user: request.user }))
  api.get('/docs/*', async (request) => ({ user: request.user }))
}

/** Sessions whose user is not a foreign key: the user can go while the session stays. */
const looseSessions = defineTable('loose_session', {
  token_hash: column.varchar({ length: 64, unique: true, secret: true }),
  user: column.integer(),
  expiry_date: column.timestamp(),
  max_expiry_date: column.timestamp()
})

const routeSchemas = new Map<string, any>()
const app = await authApp(t, db, (app) => {
  app.register(sessionLogin, { prefix: '/login' })
  app.register(async (site) => {
    await site.register(sessionAuth, { excludedPaths: ['/site/health', '/site/docs/*'] })
    site.addHook('onRoute', (route) => { routeSchemas.set(`${String(route.method)} ${route.url}`, JSON.parse(JSON.stringify(route.schema ?? {}))) })
    whoami(site)
  }, { prefix: '/site' })
  app.register(async (site) => { await site.register(sessionAuth, { allowUnauthenticated: true, adminOnly: true }); whoami(site) }, { prefix: '/maybe' })
  app.register(async (site) => { await site.register(sessionAuth, { adminOnly: true }); whoami(site) }, { prefix: '/admin' })
  app.register(async (site) => { await site.register(sessionAuth, { superuserOnly: true }); whoami(site) }, { prefix: '/super' })
  app.register(async (site) => { await site.register(sessionAuth, { activeOnly: false }); whoami(site) }, { prefix: '/anyone' })
  app.register(async (site) => { await site.register(sessionAuth, { increaseExpiry: '30m' }); whoami(site) }, { prefix: '/slide' })
  app.register(async (site) => { await site.register(sessionAuth, { sessionTable: looseSessions }); whoami(site) }, { prefix: '/loose' })
  app.register(async (site) => {
    // The integrator's own @fastify/cookie, and a cookie name of their choosing.
    await site.register(fastifyCookie)
    await site.register(sessionAuth, { cookieName: 'sid' })
    whoami(site)
  }, { prefix: '/sid' })
})
await createTables(app.pg, [looseSessions])
const bob = await createUser(app.pg, { username: 'bob', password: 'bob-password', admin: true })
const root = await createUser(app.pg, { username: 'root', password: 'root-password', superuser: true })
const idle = await createUser(app.pg, { username: 'idle', password: 'idle-password', active: false, admin: true })
const BOB = { id: bob.id, username: 'bob', active: true, admin: true, superuser: false }

const get = async (url: string, cookies: Record<string, string> = {}): Promise<{ statusCode: number, body: any, headers: Record<string, unknown> }> => {
  const res = await app.inject({ method: 'GET', url, cookies })
  return { statusCode: res.statusCode, body: res.json(), headers: res.headers }
}

const bobToken = (await createSession(app.pg, bob.id)).token
const rootToken = (await createSession(app.pg, root.id)).token
const idleToken = (await createSession(app.pg, idle.id)).token

t.test('a live session sets request.user', async (t) => {
  const res = await get('/site/me', { id: bobToken })
  t.same([res.statusCode, res.body], [200, { user: BOB }])
  t.equal(res.headers['www-authenticate'], undefined, 'no Bearer challenge for a cookie')
  const post = await app.inject({ method: 'POST', url: '/site/me', cookies: { id: bobToken }, headers: { 'content-type': 'application/json' }, payload: '{oops' })
  t.equal(post.statusCode, 400, 'a POST passes auth, then its body is read')
  const refused = await app.inject({ method: 'POST', url: '/site/me', headers: { 'content-type': 'application/json' }, payload: '{oops' })
  t.same([refused.statusCode, refused.json()], [401, NO_COOKIE], 'auth comes before the body is read')
})

t.test('a session from the login plugin works', async (t) => {
  const login = await app.inject({ method: 'POST', url: '/login', payload: { username: 'root', password: 'root-password' } })
  const res = await get('/site/me', { id: tokenOf(login.headers['set-cookie']) })
  t.same([res.statusCode, res.body.user.username], [200, 'root'])
})

t.test('no cookie, an empty one, garbage, 4 KB, a forged or unknown token: 401s, never a 500', async (t) => {
  t.same(await get('/site/me'), { statusCode: 401, body: NO_COOKIE, headers: (await get('/site/me')).headers })
  t.same((await get('/site/me', { id: '' })).body, NO_COOKIE)
  t.same((await get('/site/me', { other: bobToken })).body, NO_COOKIE, 'another cookie name')
  const cases: Record<string, string> = {
    garbage: '%E0%A4%A;\u0000<>"',
    '4 KB': 'a'.repeat(4096),
    'a hash instead of the token': hashSessionToken(bobToken),
    'the user id': String(bob.id),
    'a token of the right shape': 'A'.repeat(43),
    'a token with a NUL': `${bobToken.slice(0, 42)}\u0000`
  }
  for (const [name, value] of Object.entries(cases)) {
    const res = await app.inject({ method: 'GET', url: '/site/me', headers: { cookie: `id=${encodeURIComponent(value)}` } })
    t.same([res.statusCode, res.json()], [401, NO_MATCH], name)
  }
  const raw = await app.inject({ method: 'GET', url: '/site/me', headers: { cookie: 'id=%E0%A4%A' } })
  t.same([raw.statusCode, raw.json()], [401, NO_MATCH], 'a cookie that does not decode')
})

t.test('expired by expiry_date, or by max_expiry_date: No matching session found.', async (t) => {
  const a = (await createSession(app.pg, bob.id)).token
  const b = (await createSession(app.pg, bob.id)).token
  await app.pg.query("UPDATE auth_session SET expiry_date = (now() AT TIME ZONE 'utc') - interval '1 second' WHERE token_hash = $1", [hashSessionToken(a)])
  await app.pg.query("UPDATE auth_session SET max_expiry_date = (now() AT TIME ZONE 'utc') - interval '1 second' WHERE token_hash = $1", [hashSessionToken(b)])
  t.same((await get('/site/me', { id: a })).body, NO_MATCH, 'expiry_date')
  t.same((await get('/site/me', { id: b })).body, NO_MATCH, 'max_expiry_date')
  t.same((await get('/maybe/me', { id: a })).body, { user: null }, 'allowUnauthenticated lets it through')
})

t.test('a deleted user: the session goes with it, and a session table without the foreign key says the user is gone', async (t) => {
  const gone = await createUser(app.pg, { username: 'gone', password: 'gone-password' })
  const token = (await createSession(app.pg, gone.id)).token
  const loose = 'L'.repeat(43)
  await app.pg.query("INSERT INTO loose_session (token_hash, \"user\", expiry_date, max_expiry_date) VALUES ($1, $2, (now() AT TIME ZONE 'utc') + interval '1 hour', (now() AT TIME ZONE 'utc') + interval '1 day')",
    [hashSessionToken(loose), gone.id])
  t.same((await get('/loose/me', { id: loose })).body, { user: { id: gone.id, username: 'gone', active: true, admin: false, superuser: false } })
  await app.pg.query('DELETE FROM auth_user WHERE id = $1', [gone.id])
  t.same((await get('/site/me', { id: token })).body, NO_MATCH, 'cascade: the session is gone')
  t.same((await get('/loose/me', { id: loose })).body, GONE)
})

t.test('adminOnly, superuserOnly, activeOnly (on by default) refuse with 403s', async (t) => {
  t.same(await get('/admin/me', { id: rootToken }).then((r) => [r.statusCode, r.body]), [403, FORBIDDEN('Admin users only')])
  t.same((await get('/admin/me', { id: bobToken })).body, { user: BOB })
  t.same(await get('/super/me', { id: bobToken }).then((r) => [r.statusCode, r.body]), [403, FORBIDDEN('Superusers only')])
  t.same((await get('/super/me', { id: rootToken })).statusCode, 200)
  t.same(await get('/site/me', { id: idleToken }).then((r) => [r.statusCode, r.body]), [403, FORBIDDEN('Active users only')], 'an inactive user, activeOnly on')
  t.same((await get('/anyone/me', { id: idleToken })).body, { user: { id: idle.id, username: 'idle', active: false, admin: true, superuser: false } }, 'activeOnly off')
  t.same((await get('/admin/me', { id: idleToken })).body, FORBIDDEN('Active users only'), 'an inactive admin passes adminOnly, then fails activeOnly')
  const lazy = await createUser(app.pg, { username: 'lazy', password: 'lazy-password', active: false })
  const lazyToken = (await createSession(app.pg, lazy.id)).token
  t.same((await get('/admin/me', { id: lazyToken })).body, FORBIDDEN('Admin users only'), 'adminOnly is checked before activeOnly')
})

t.test('allowUnauthenticated: the 401 cases go on with request.user = null, the 403 checks still apply', async (t) => {
  t.same(await get('/maybe/me'), { statusCode: 200, body: { user: null }, headers: (await get('/maybe/me')).headers })
  t.same((await get('/maybe/me', { id: 'garbage' })).body, { user: null })
  t.same((await get('/maybe/me', { id: bobToken })).body, { user: BOB })
  t.same(await get('/maybe/me', { id: rootToken }).then((r) => [r.statusCode, r.body]), [403, FORBIDDEN('Admin users only')])
})

t.test('excluded paths pass without a session, with request.user null (SPEC §3.1 rules)', async (t) => {
  t.same(await get('/site/health').then((r) => [r.statusCode, r.body]), [200, { user: null }])
  t.same(await get('/site/health?x=1').then((r) => [r.statusCode, r.body]), [200, { user: null }], 'without the query string')
  t.same(await get('/site/docs/x').then((r) => [r.statusCode, r.body]), [200, { user: null }])
  t.same(await get('/site/docs/').then((r) => [r.statusCode, r.body]), [200, { user: null }])
  t.same((await get('/site/health', { id: bobToken })).body, { user: null }, 'not looked up on an excluded path')
  t.equal((await get('/site/me?/site/health')).statusCode, 401)
})

t.test('the cookie name is an option, and an integrator\'s @fastify/cookie is used, not registered again', async (t) => {
  t.same((await get('/sid/me', { sid: bobToken })).body, { user: BOB })
  t.same((await get('/sid/me', { id: bobToken })).body, NO_COOKIE)
})

t.test('increaseExpiry slides the expiry when less is left, never past the max', async (t) => {
  const expiryOf = async (token: string): Promise<{ left: number, max: number }> => {
    const { rows } = await app.pg.query(
      `SELECT extract(epoch FROM expiry_date - (now() AT TIME ZONE 'utc'))::float8 AS left,
              extract(epoch FROM max_expiry_date - (now() AT TIME ZONE 'utc'))::float8 AS max FROM auth_session WHERE token_hash = $1`, [hashSessionToken(token)])
    return rows[0]
  }
  const fresh = (await createSession(app.pg, bob.id, { expiry: '1h', maxExpiry: '7d' })).token
  t.equal((await get('/slide/me', { id: fresh })).statusCode, 200)
  t.ok(Math.abs((await expiryOf(fresh)).left - 3600) < 5, 'an hour left: more than 30 minutes, unchanged')
  t.equal((await get('/site/me', { id: fresh })).statusCode, 200)

  const short = (await createSession(app.pg, bob.id, { expiry: 60, maxExpiry: '7d' })).token
  t.ok(Math.abs((await expiryOf(short)).left - 60) < 5)
  await get('/site/me', { id: short })
  t.ok(Math.abs((await expiryOf(short)).left - 60) < 5, 'without increaseExpiry nothing slides')
  await get('/slide/me', { id: short })
  t.ok(Math.abs((await expiryOf(short)).left - 1800) < 5, 'a minute left: now + 30 minutes')

  const capped = (await createSession(app.pg, bob.id, { expiry: 60, maxExpiry: 600 })).token
  await get('/slide/me', { id: capped })
  const after = await expiryOf(capped)
  t.ok(Math.abs(after.left - after.max) < 0.001 && Math.abs(after.max - 600) < 5, `capped at the max: ${after.left} of ${after.max}`)
  for (let i = 0; i < 3; i++) await get('/slide/me', { id: capped })
  const again = await expiryOf(capped)
  t.ok(again.left <= again.max, 'never past the max')
})

t.test('routes of a sessionAuth context carry cookieAuth; excluded ones do not; the scheme is recorded', async (t) => {
  t.same(routeSchemas.get('GET /site/me').security, [{ cookieAuth: [] }])
  t.equal(routeSchemas.get('GET /site/health').security, undefined)
  t.same(securitySchemesOf(app.server), {
    cookieAuth: { type: 'apiKey', in: 'cookie', name: 'id', description: 'The session cookie id, from session login' },
    cookieAuth_sid: { type: 'apiKey', in: 'cookie', name: 'sid', description: 'The session cookie sid, from session login' }
  })
})

t.test('an unreachable database is a 503', async (t) => {
  const down = await unreachableApp(t, (app) => {
    app.register(async (site) => { await site.register(sessionAuth); whoami(site) })
  })
  const res = await down.inject({ method: 'GET', url: '/me', cookies: { id: bobToken } })
  t.same([res.statusCode, res.json().code], [503, 'TABLECRUD_ERR_DB_UNAVAILABLE'])
  t.same((await down.inject({ method: 'GET', url: '/me' })).json(), NO_COOKIE, 'no cookie: no query')
  t.same(userTable.name, 'auth_user')
})
