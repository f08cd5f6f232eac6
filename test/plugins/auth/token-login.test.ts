import t from 'tap'
import Fastify from 'fastify'
import { createToken, createUser } from '../../../lib/auth/users.js'
import { tokenLogin } from '../../../plugins/auth/token-login.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, createAuthTables, unreachableApp } from './auth-app.js'

const db = await testDatabase(t)
await createAuthTables(db)

const login = async (app: Awaited<ReturnType<typeof authApp>>, payload: unknown, url = '/login'): Promise<{ statusCode: number, body: any, headers: Record<string, unknown> }> => {
  const res = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
  return { statusCode: res.statusCode, body: res.json(), headers: res.headers }
}

const NO_CREDENTIALS = { statusCode: 401, code: 'TABLECRUD_ERR_AUTH_NO_CREDENTIALS', error: 'Unauthorized', message: 'No credentials were found.' }
const INCORRECT = { statusCode: 401, code: 'TABLECRUD_ERR_AUTH_BAD_CREDENTIALS', error: 'Unauthorized', message: 'The credentials were incorrect' }

const app = await authApp(t, db, (app) => {
  app.register(tokenLogin, { prefix: '/login' })
  // At cost 10 a bcrypt check takes tens of milliseconds, far above a request's own time.
  app.register(tokenLogin, { prefix: '/timed-login', bcryptCost: 10 })
})
const bob = await createUser(app.pg, { username: 'bob', password: 'bob-password' })
await createToken(app.pg, bob.id)
const newest = await createToken(app.pg, bob.id)
await createUser(app.pg, { username: 'tokenless', password: 'tokenless-pw' })
const idle = await createUser(app.pg, { username: 'idle', password: 'idle-password', active: false })
await createToken(app.pg, idle.id)

t.test('the right username and password give the newest token and set last_login', async (t) => {
  const res = await login(app, { username: 'bob', password: 'bob-password' })
  t.equal(res.statusCode, 200)
  t.same(res.body, { token: newest })
  const { rows } = await app.pg.query("SELECT last_login, now() AT TIME ZONE 'utc' - last_login < interval '1 minute' AS recent FROM auth_user WHERE username = 'bob'")
  t.equal(rows[0].recent, true)
  t.equal((await login(app, { username: 'bob', password: 'bob-password' }, '/login/')).statusCode, 200, 'with a trailing slash too')
})

t.test('login answers, a token or a refusal, carry Cache-Control: no-store', async (t) => {
  for (const [body, status] of [[{ username: 'bob', password: 'bob-password' }, 200], [{ username: 'bob', password: 'nope-nope' }, 401], [{}, 401]] as const) {
    const res = await login(app, body)
    t.equal(res.statusCode, status, JSON.stringify(body))
    t.equal(res.headers['cache-control'], 'no-store', JSON.stringify(body))
  }
})

t.test('missing or empty fields are "No credentials were found."', async (t) => {
  for (const body of [{}, { username: 'bob' }, { password: 'bob-password' }, { username: '', password: 'bob-password' },
    { username: 'bob', password: '' }, { username: 42, password: 'bob-password' }, { username: 'bob', password: ['bob-password'] },
    [], ['bob', 'bob-password'], 'bob', null]) {
    const res = await login(app, body)
    t.same([res.statusCode, res.body], [401, NO_CREDENTIALS], JSON.stringify(body))
  }
  const empty = await app.inject({ method: 'POST', url: '/login' })
  t.same([empty.statusCode, empty.json()], [401, NO_CREDENTIALS], 'no body at all')
})

t.test('a wrong password, an unknown or inactive user, a user without a token: "The credentials were incorrect"', async (t) => {
  for (const [what, body] of [
    ['wrong password', { username: 'bob', password: 'not-bobs-password' }],
    ['other case', { username: 'BOB', password: 'bob-password' }],
    ['unknown user', { username: 'nobody', password: 'bob-password' }],
    ['inactive user', { username: 'idle', password: 'idle-password' }],
    ['no token', { username: 'tokenless', password: 'tokenless-pw' }],
    ['too short to be anyone\'s', { username: 'bob', password: 'bob' }],
    ['too long to be anyone\'s', { username: 'bob', password: 'x'.repeat(129) }],
    ['NUL in the username', { username: 'bob\u0000', password: 'bob-password' }]
  ] as const) {
    const res = await login(app, body)
    t.same([res.statusCode, res.body], [401, INCORRECT], what)
    t.notOk(res.headers['www-authenticate'], 'a login form is no bearer challenge')
  }
})

t.test('a body that is not JSON is a 400, one of another media type a 415', async (t) => {
  const broken = await app.inject({ method: 'POST', url: '/login', headers: { 'content-type': 'application/json' }, payload: '{"username": "bob",' })
  t.equal(broken.statusCode, 400)
  t.same(broken.json(), { statusCode: 400, code: 'TABLECRUD_ERR_BODY_NOT_JSON', error: 'Bad Request', message: 'The body is not valid JSON.' })
  const text = await app.inject({ method: 'POST', url: '/login', headers: { 'content-type': 'text/plain' }, payload: 'bob:bob-password' })
  t.equal(text.statusCode, 415)
  t.equal(text.json().code, 'TABLECRUD_ERR_BODY_MEDIA_TYPE')
})

t.test('other methods are a 405 with Allow: POST, before the body is read', async (t) => {
  for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'] as const) {
    const res = await app.inject({ method, url: '/login?x=1', headers: { 'content-type': 'application/json' }, payload: method === 'GET' || method === 'HEAD' ? undefined : '{oops' })
    t.equal(res.statusCode, 405, method)
    t.equal(res.headers.allow, 'POST')
    if (method !== 'HEAD') {
      t.same(res.json(), { statusCode: 405, code: 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', error: 'Method Not Allowed', message: `${method} is not allowed on /login.` })
    }
  }
})

t.test('the route documents its body and response', async (t) => {
  const seen: any[] = []
  const app = Fastify()
  app.addHook('onRoute', (route) => { if (route.method === 'POST') seen.push(route.schema) })
  await app.register(tokenLogin, { prefix: '/login', provider: { usesDatabase: false, login: async () => null } })
  await app.ready()
  t.teardown(() => app.close())
  t.match(seen[0], { body: { required: ['username', 'password'] }, response: { 200: { properties: { token: { type: 'string' } } } } })
})

t.test('a provider of our own; no database needed when it says so', async (t) => {
  const app = Fastify()
  const calls: unknown[] = []
  await app.register(tokenLogin, {
    prefix: '/login',
    provider: { usesDatabase: false, login: async (username, password, context) => { calls.push([username, password, context.db]); return username === 'svc' ? 'svc-token' : null } }
  })
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'POST', url: '/login', payload: { username: 'svc', password: 'secret' } })).json(), { token: 'svc-token' })
  t.equal((await app.inject({ method: 'POST', url: '/login', payload: { username: 'x', password: 'secret' } })).statusCode, 401)
  t.same(calls[0], ['svc', 'secret', null])
})

t.test('an error of the provider is a 500 without detail; an unreachable database a 503', async (t) => {
  const broken = Fastify({ logger: false })
  await broken.register(tokenLogin, { prefix: '/login', provider: { usesDatabase: false, login: async () => { throw new Error('secret detail') } } })
  t.teardown(() => broken.close())
  const res = await broken.inject({ method: 'POST', url: '/login', payload: { username: 'a', password: 'bbbbbb' } })
  t.same([res.statusCode, res.json().message], [500, 'Internal Server Error'])

  const down = await unreachableApp(t, (app) => { app.register(tokenLogin, { prefix: '/login' }) })
  const unavailable = await down.inject({ method: 'POST', url: '/login', payload: { username: 'bob', password: 'bob-password' } })
  t.equal(unavailable.statusCode, 503)
  t.equal(unavailable.json().code, 'TABLECRUD_ERR_DB_UNAVAILABLE')
  t.equal(unavailable.headers['retry-after'], '5')
})

t.test('an unknown user takes as long as a known one with a wrong password', async (t) => {
  await createUser(app.pg, { username: 'timed', password: 'timed-password' }, { bcryptCost: 10 })
  const time = async (username: string): Promise<number> => {
    const start = process.hrtime.bigint()
    const res = await app.inject({ method: 'POST', url: '/timed-login', payload: { username, password: 'wrong-password' } })
    t.equal(res.statusCode, 401)
    return Number(process.hrtime.bigint() - start)
  }
  const median = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  await time('nobody') // the dummy hash is made on first use
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 7; i++) {
    known.push(await time('timed'))
    unknown.push(await time(`nobody${i}`))
  }
  // Without the dummy hash the ratio is about 0.05; the margin is for a busy machine.
  const ratio = median(unknown) / median(known)
  t.ok(ratio > 0.5 && ratio < 2, `unknown/known time ratio ${ratio.toFixed(2)}`)
})

t.test('options are checked at registration', async (t) => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['provider', { provider: {} }, /^tokenLogin: the option provider must have a login\(username, password, context\) method$/],
    ['provider without login', { provider: { login: 'yes' } }, /^tokenLogin: the option provider must have a login/],
    ['bcryptCost', { bcryptCost: 3 }, /^tokenLogin: the option bcryptCost must be an integer from 4 to 31$/],
    ['bcryptCost type', { bcryptCost: '10' }, /^tokenLogin: the option bcryptCost must be an integer/]
  ]
  for (const [name, options, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => await app.register(tokenLogin, { prefix: '/login', ...options } as any).ready(), message, name)
    await app.close()
  }
  const app = Fastify()
  await t.rejects(async () => await app.register(tokenLogin, { prefix: '/login' }).ready(), /^tokenLogin: register @fastify\/postgres before this plugin/)
  await app.close()
})
