import t from 'tap'
import Fastify from 'fastify'
import { column, defineTable } from '../../../lib/table/index.js'
import { createTables } from '../../../lib/db/index.js'
import { hashPassword } from '../../../lib/auth/password.js'
import { userTable } from '../../../lib/table/auth-tables.js'
import { createUser } from '../../../lib/auth/users.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { jwtAuth } from '../../../plugins/auth/jwt-auth.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, createAuthTables, readJwt, unreachableApp } from './auth-app.js'

const db = await testDatabase(t)
await createAuthTables(db)

const SECRET = 'a-test-secret-of-some-length'
const FAILED = { statusCode: 401, code: 'TABLECRUD_ERR_AUTH_LOGIN_FAILED', error: 'Unauthorized', message: 'Login failed' }

/** A user table of our own, keyed by username. */
const staff = defineTable('staff', {
  username: column.varchar({ length: 50, primaryKey: true }),
  password: column.varchar({ length: 255, secret: true }),
  active: column.boolean({ default: true }),
  admin: column.boolean(),
  superuser: column.boolean(),
  last_login: column.timestamp({ null: true }),
  department: column.varchar({ length: 50, null: true })
})

const app = await authApp(t, db, (app) => {
  app.register(jwtLogin, { prefix: '/login', secret: SECRET })
  app.register(jwtLogin, { prefix: '/short-login', secret: 'another-secret', expiry: '15m' })
  app.register(jwtLogin, { prefix: '/minute-login', secret: SECRET, expiry: 60 })
  app.register(jwtLogin, { prefix: '/staff-login', secret: SECRET, authTable: staff })
  app.register(async (api) => {
    await api.register(jwtAuth, { secret: SECRET })
    api.get('/me', async (request) => ({ user: request.user, jwtError: request.jwtError }))
  }, { prefix: '/api' })
})
const bob = await createUser(app.pg, { username: 'bob', password: 'bob-password', superuser: true })
await createUser(app.pg, { username: 'idle', password: 'idle-password', active: false })
await createTables(app.pg, [staff])
await app.pg.query('INSERT INTO staff (username, password, admin) VALUES ($1, $2, true)', ['ann', await hashPassword('ann-password')])

const login = async (payload: unknown, url = '/login'): Promise<{ statusCode: number, body: any, headers: Record<string, unknown> }> => {
  const res = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
  return { statusCode: res.statusCode, body: res.json(), headers: res.headers }
}

t.test('login answers, a token or a refusal, carry Cache-Control: no-store', async (t) => {
  const ok = await login({ username: 'bob', password: 'bob-password' })
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers['cache-control'], 'no-store')
  const failed = await login({ username: 'bob', password: 'wrong-password' })
  t.equal(failed.statusCode, 401)
  t.equal(failed.headers['cache-control'], 'no-store')
})

t.test('a good login answers an HS256 JWT with user_id, iat and exp a day later, and sets last_login', async (t) => {
  const before = Math.floor(Date.now() / 1000)
  const res = await login({ username: 'bob', password: 'bob-password' })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.body), ['token'])
  const { header, payload } = readJwt(res.body.token)
  t.same(header, { alg: 'HS256', typ: 'JWT' })
  t.same(Object.keys(payload).sort(), ['exp', 'iat', 'user_id'])
  t.equal(payload.user_id, bob.id)
  t.ok(payload.iat >= before && payload.iat <= before + 5)
  t.equal(payload.exp - payload.iat, 86400)
  const { rows } = await app.pg.query("SELECT now() AT TIME ZONE 'utc' - last_login < interval '1 minute' AS recent FROM auth_user WHERE id = $1", [bob.id])
  t.equal(rows[0].recent, true)

  const me = await app.inject({ url: '/api/me', headers: { authorization: `Bearer ${res.body.token}` } })
  t.same(me.json(), { user: { id: bob.id, username: 'bob', active: true, admin: false, superuser: true }, jwtError: null }, 'jwtAuth takes it')
})

t.test('expiry: seconds or a duration string', async (t) => {
  const short = readJwt((await login({ username: 'bob', password: 'bob-password' }, '/short-login')).body.token).payload
  t.equal(short.exp - short.iat, 900)
  const minute = readJwt((await login({ username: 'bob', password: 'bob-password' }, '/minute-login')).body.token).payload
  t.equal(minute.exp - minute.iat, 60)
})

t.test('every failure is "Login failed"', async (t) => {
  for (const [what, body] of [
    ['wrong password', { username: 'bob', password: 'wrong-password' }],
    ['unknown user', { username: 'nobody', password: 'bob-password' }],
    ['inactive user', { username: 'idle', password: 'idle-password' }],
    ['no password', { username: 'bob' }],
    ['no username', { password: 'bob-password' }],
    ['empty', {}],
    ['not an object', ['bob', 'bob-password']],
    ['a user of another table', { username: 'ann', password: 'ann-password' }]
  ] as const) {
    const res = await login(body)
    t.same([res.statusCode, res.body], [401, FAILED], what)
  }
})

t.test('a body that is not JSON is a 400; other methods a 405', async (t) => {
  const broken = await app.inject({ method: 'POST', url: '/login', headers: { 'content-type': 'application/json' }, payload: '{' })
  t.same([broken.statusCode, broken.json().code], [400, 'TABLECRUD_ERR_BODY_NOT_JSON'])
  const get = await app.inject({ method: 'GET', url: '/login' })
  t.same([get.statusCode, get.headers.allow, get.json().message], [405, 'POST', 'GET is not allowed on /login.'])
})

t.test('authTable: users of another table, whatever its key', async (t) => {
  const res = await login({ username: 'ann', password: 'ann-password' }, '/staff-login')
  t.equal(res.statusCode, 200)
  t.equal(readJwt(res.body.token).payload.user_id, 'ann')
  const { rows } = await app.pg.query("SELECT last_login IS NOT NULL AS set FROM staff WHERE username = 'ann'")
  t.equal(rows[0].set, true)
  t.same((await login({ username: 'bob', password: 'bob-password' }, '/staff-login')).body, FAILED)
})

t.test('an unreachable database is a 503', async (t) => {
  const down = await unreachableApp(t, (app) => { app.register(jwtLogin, { prefix: '/login', secret: SECRET }) })
  const res = await down.inject({ method: 'POST', url: '/login', payload: { username: 'bob', password: 'bob-password' } })
  t.same([res.statusCode, res.json().code], [503, 'TABLECRUD_ERR_DB_UNAVAILABLE'])
})

t.test('options are checked at registration', async (t) => {
  const noPassword = defineTable('no_password', { username: column.varchar({ length: 10 }), active: column.boolean() })
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['secret missing', {}, /^jwtLogin: the option secret is required: a non-empty string or Buffer$/],
    ['secret empty', { secret: '' }, /^jwtLogin: the option secret is required/],
    ['secret number', { secret: 42 }, /^jwtLogin: the option secret is required/],
    ['authTable', { secret: SECRET, authTable: { name: 'auth_user' } }, /^jwtLogin: the option authTable must be a table made by defineTable$/],
    ['authTable columns', { secret: SECRET, authTable: noPassword }, /^jwtLogin: the option authTable cannot hold users: the table no_password has no password, admin, superuser, last_login columns$/],
    ['expiry zero', { secret: SECRET, expiry: 0 }, /^jwtLogin: the option expiry must be a positive number of seconds or a duration such as "15m", "12h", "7d"$/],
    ['expiry fraction', { secret: SECRET, expiry: 1.5 }, /^jwtLogin: the option expiry must be/],
    ['expiry unit', { secret: SECRET, expiry: '3y' }, /^jwtLogin: the option expiry must be/],
    ['expiry negative', { secret: SECRET, expiry: '-1' }, /^jwtLogin: the option expiry must be/],
    ['expiry type', { secret: SECRET, expiry: true }, /^jwtLogin: the option expiry must be/],
    ['bcryptCost', { secret: SECRET, bcryptCost: 32 }, /^jwtLogin: the option bcryptCost must be an integer from 4 to 31$/]
  ]
  for (const [name, options, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => await app.register(jwtLogin, options as any).ready(), message, name)
    await app.close()
  }
  const app = Fastify()
  await t.rejects(async () => await app.register(jwtLogin, { secret: SECRET }).ready(), /^jwtLogin: register @fastify\/postgres before this plugin/)
  await app.close()
  const one = defineTable('one_missing', { username: column.varchar({ length: 10 }), password: column.text(), active: column.boolean(), admin: column.boolean(), superuser: column.boolean() })
  const single = Fastify()
  await t.rejects(async () => await single.register(jwtLogin, { secret: SECRET, authTable: one }).ready(), /has no last_login column$/)
  await single.close()
  t.equal(userTable.name, 'auth_user')
})
