import t from 'tap'
import Fastify from 'fastify'
import fastifyJwt from '@fastify/jwt'
import { column, defineTable } from '../../../lib/table/index.js'
import { createTables } from '../../../lib/db/index.js'
import { createUser } from '../../../lib/auth/users.js'
import { securitySchemesOf } from '../../../lib/auth/security.js'
import { staticTokenProvider } from '../../../lib/auth/providers.js'
import { jwtAuth } from '../../../plugins/auth/jwt-auth.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { tokenAuth } from '../../../plugins/auth/token-auth.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, b64, craftJwt, createAuthTables, unreachableApp } from './auth-app.js'

const db = await testDatabase(t)
await createAuthTables(db)

const SECRET = 'the-jwt-secret-of-this-test'
const HS256 = { alg: 'HS256', typ: 'JWT' }
const now = (): number => Math.floor(Date.now() / 1000)
const unauthorized = (code: string, message: string): object => ({ statusCode: 401, code, error: 'Unauthorized', message })
const NOT_FOUND = unauthorized('TABLECRUD_ERR_AUTH_TOKEN_NOT_FOUND', 'Token not found')
const REVOKED = unauthorized('TABLECRUD_ERR_AUTH_TOKEN_REVOKED', 'Token revoked')
const EXPIRED = unauthorized('TABLECRUD_ERR_AUTH_TOKEN_EXPIRED', 'Token has expired')
const INVALID = unauthorized('TABLECRUD_ERR_AUTH_TOKEN_INVALID', 'Token is invalid')
const NO_USER = unauthorized('TABLECRUD_ERR_AUTH_USER_NOT_FOUND', 'User not found')

/** A user table keyed by a varchar. */
const member = defineTable('member', {
  username: column.varchar({ length: 50, primaryKey: true }),
  password: column.varchar({ length: 255, secret: true }),
  active: column.boolean({ default: true }),
  admin: column.boolean(),
  superuser: column.boolean(),
  last_login: column.timestamp({ null: true })
})

const revoked = new Set<string>()
let theirs = ''
const app = await authApp(t, db, (app) => {
  app.register(async (mixed) => {
    await mixed.register(fastifyJwt, { secret: 'integrator-secret' })
    theirs = mixed.jwt.sign({ me: 'integrator' })
    mixed.get('/theirs', async (request) => await request.jwtVerify())
    mixed.register(jwtLogin, { prefix: '/login', secret: SECRET })
    mixed.register(async (outer) => {
      await outer.register(jwtAuth, { secret: SECRET })
      outer.get('/', async (request) => request.user)
      outer.register(jwtLogin, { prefix: '/login', secret: 'inner-secret' })
      outer.register(async (inner) => {
        await inner.register(jwtAuth, { secret: SECRET, allowUnauthenticated: true })
        await inner.register(tokenAuth, { provider: staticTokenProvider(['svc']) })
        inner.get('/inner', async (request) => ({ user: request.user, jwtError: request.jwtError }))
      })
    }, { prefix: '/outer' })
  }, { prefix: '/mixed' })
  app.get('/open', async (request) => ({ user: request.user ?? 'undecorated' }))
  app.register(jwtLogin, { prefix: '/login', secret: SECRET })
  app.register(async (api) => {
    await api.register(jwtAuth, { secret: SECRET, blacklist: (token) => revoked.has(token) })
    api.get('/me', async (request) => ({ user: request.user, jwtError: request.jwtError }))
    api.post('/me', async (request) => ({ user: request.user }))
  }, { prefix: '/api' })
  app.register(async (maybe) => {
    await maybe.register(jwtAuth, { secret: SECRET, allowUnauthenticated: true, blacklist: async (token) => revoked.has(token) })
    maybe.get('/me', async (request) => ({ user: request.user, jwtError: request.jwtError }))
  }, { prefix: '/maybe' })
  app.register(async (members) => {
    await members.register(jwtAuth, { secret: SECRET, authTable: member })
    members.get('/me', async (request) => ({ user: request.user }))
  }, { prefix: '/members' })
})
const bob = await createUser(app.pg, { username: 'bob', password: 'bob-password', admin: true })
const idle = await createUser(app.pg, { username: 'idle', password: 'idle-password', active: false })
const gone = await createUser(app.pg, { username: 'gone', password: 'gone-password' })
await app.pg.query('DELETE FROM auth_user WHERE id = $1', [gone.id])
await createTables(app.pg, [member])
await app.pg.query("INSERT INTO member (username, password) VALUES ('ann', 'x'), ('zed', 'x')")
await app.pg.query("UPDATE member SET active = false WHERE username = 'zed'")

const BOB = { id: bob.id, username: 'bob', active: true, admin: true, superuser: false }
const valid = (claims: Record<string, unknown> = {}): string => craftJwt(HS256, { user_id: bob.id, iat: now(), exp: now() + 300, ...claims }, SECRET)

const me = async (authorization?: string, prefix = '/api'): Promise<{ statusCode: number, body: any, headers: Record<string, unknown> }> => {
  const res = await app.inject({ url: `${prefix}/me`, headers: authorization === undefined ? {} : { authorization } })
  return { statusCode: res.statusCode, body: res.json(), headers: res.headers }
}

t.test('a valid token sets request.user and clears request.jwtError', async (t) => {
  t.same(securitySchemesOf(app.server), { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'API token or JWT', description: '`Authorization: Bearer <token>`, the token from token login or JWT login. Paste the token alone: Swagger UI adds `Bearer `.' } })
  const res = await me(`Bearer ${valid()}`)
  t.same([res.statusCode, res.body], [200, { user: BOB, jwtError: null }])
  t.same((await me(`bearer ${valid({ iat: undefined })}`)).body, { user: BOB, jwtError: null }, 'iat is optional; the scheme any case')
  t.same((await me(`Bearer ${valid({ nbf: now() - 10, extra: 'claims are ignored' })}`)).body.user, BOB, 'a past nbf')
  const login = await app.inject({ method: 'POST', url: '/login', payload: { username: 'bob', password: 'bob-password' } })
  t.same((await me(`Bearer ${login.json().token}`)).body.user, BOB, 'a token of jwtLogin')
})

t.test('no token: "Token not found"', async (t) => {
  for (const header of [undefined, '', 'Bearer', 'Bearer ', `Basic ${valid()}`, `Token ${valid()}`, valid(), `Bearer:${valid()}`]) {
    const res = await me(header)
    t.same([res.statusCode, res.body], [401, NOT_FOUND], String(header).slice(0, 12))
    t.equal(res.headers['www-authenticate'], 'Bearer')
  }
})

t.test('hand-made tokens that must be refused: "Token is invalid", never a 500', async (t) => {
  const exp = now() + 300
  const good = valid()
  const [h, p] = good.split('.')
  const cases: Array<[string, string]> = [
    ['alg none, no signature', `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ user_id: bob.id, exp })}.`],
    ['alg none, HS256 signature', craftJwt({ alg: 'none' }, { user_id: bob.id, exp }, SECRET)],
    ['HS512 with the secret', craftJwt({ alg: 'HS512', typ: 'JWT' }, { user_id: bob.id, exp }, SECRET, 'sha512')],
    ['HS384 with the secret', craftJwt({ alg: 'HS384', typ: 'JWT' }, { user_id: bob.id, exp }, SECRET, 'sha384')],
    ['RS256 claimed', craftJwt({ alg: 'RS256', typ: 'JWT' }, { user_id: bob.id, exp }, SECRET)],
    ['no alg', craftJwt({ typ: 'JWT' }, { user_id: bob.id, exp }, SECRET)],
    ['a wrong secret', craftJwt(HS256, { user_id: bob.id, exp }, 'not-the-secret')],
    ['a changed payload', `${h}.${b64({ user_id: bob.id + 1, exp })}.${good.split('.')[2]}`],
    ['no exp', craftJwt(HS256, { user_id: bob.id, iat: now() }, SECRET)],
    ['exp a string', craftJwt(HS256, { user_id: bob.id, exp: String(exp) }, SECRET)],
    ['exp null', craftJwt(HS256, { user_id: bob.id, exp: null }, SECRET)],
    ['exp an array', craftJwt(HS256, { user_id: bob.id, exp: [exp] }, SECRET)],
    ['a future nbf', craftJwt(HS256, { user_id: bob.id, exp, nbf: now() + 60 }, SECRET)],
    ['nbf a string', craftJwt(HS256, { user_id: bob.id, exp, nbf: 'now' }, SECRET)],
    ['iat a string', craftJwt(HS256, { user_id: bob.id, exp, iat: 'yesterday' }, SECRET)],
    ['an array payload', craftJwt(HS256, [bob.id, exp], SECRET)],
    ['a string payload', craftJwt(HS256, '"bob"', SECRET)],
    ['a number payload', craftJwt(HS256, '42', SECRET)],
    ['a null payload', craftJwt(HS256, 'null', SECRET)],
    ['a payload that is not JSON', craftJwt(HS256, '{user_id: 1', SECRET)],
    ['a header that is not JSON', craftJwt('{alg', { user_id: bob.id, exp }, SECRET)],
    ['an array header', craftJwt(['HS256'], { user_id: bob.id, exp }, SECRET)],
    ['an unknown crit header', craftJwt({ ...HS256, crit: ['x-custom'], 'x-custom': 1 }, { user_id: bob.id, exp }, SECRET)],
    ['an empty crit header', craftJwt({ ...HS256, crit: [] }, { user_id: bob.id, exp }, SECRET)],
    ['a signature with a trailing =', `${good}=`],
    ['a signature with two trailing =', `${good}==`],
    ['a padded payload', `${h}.${p}=.${good.split('.')[2]}`],
    ['broken base64', `${h}.${p!.slice(0, -1)}*.${good.split('.')[2]}`],
    ['base64 of garbage', `${h}.AAAA.${good.split('.')[2]}`],
    ['standard base64 (+ and /)', `${h}.${Buffer.from(JSON.stringify({ user_id: bob.id, exp, pad: '\u00fb\u00ff' })).toString('base64').replace(/=/g, '')}.${good.split('.')[2]}`],
    ['two segments', `${h}.${p}`],
    ['four segments', `${good}.${p}`],
    ['an empty segment', `${h}..${good.split('.')[2]}`],
    ['spaces inside', `${h}. ${p}.${good.split('.')[2]}`],
    ['a token and more', `${good} ${good}`],
    ['one word', 'garbage'],
    ['user_id missing', craftJwt(HS256, { exp }, SECRET)],
    ['user_id a string', craftJwt(HS256, { user_id: String(bob.id), exp }, SECRET)],
    ['user_id a fraction', craftJwt(HS256, { user_id: 1.5, exp }, SECRET)],
    ['user_id beyond integer', craftJwt(HS256, { user_id: 2 ** 31, exp }, SECRET)],
    ['user_id an object', craftJwt(HS256, { user_id: { id: bob.id }, exp }, SECRET)]
  ]
  for (const [what, token] of cases) {
    const res = await me(`Bearer ${token}`)
    t.same([res.statusCode, res.body], [401, INVALID], what)
    t.equal(res.headers['www-authenticate'], 'Bearer', `${what}: challenge`)
  }
})

t.test('time claims are whole seconds and iat is not in the future: "Token is invalid" (SPEC §3.2 as amended)', async (t) => {
  const exp = now() + 300
  const cases: Array<[string, string]> = [
    ['exp 1e309 (Infinity once parsed)', craftJwt(HS256, `{"user_id":${bob.id},"exp":1e309}`, SECRET)],
    ['exp a float', craftJwt(HS256, { user_id: bob.id, exp: exp + 0.5 }, SECRET)],
    ['exp past 2^53', craftJwt(HS256, { user_id: bob.id, exp: 2 ** 53 }, SECRET)],
    ['exp a string of digits', craftJwt(HS256, `{"user_id":${bob.id},"exp":"${exp}"}`, SECRET)],
    ['iat in the future', craftJwt(HS256, { user_id: bob.id, exp, iat: now() + 60 }, SECRET)],
    ['iat 1e309', craftJwt(HS256, `{"user_id":${bob.id},"exp":${exp},"iat":1e309}`, SECRET)],
    ['iat a float', craftJwt(HS256, { user_id: bob.id, exp, iat: now() - 10.5 }, SECRET)],
    ['nbf a float in the past', craftJwt(HS256, { user_id: bob.id, exp, nbf: now() - 10.5 }, SECRET)],
    ['nbf 1e309', craftJwt(HS256, `{"user_id":${bob.id},"exp":${exp},"nbf":1e309}`, SECRET)]
  ]
  for (const [what, token] of cases) {
    const res = await me(`Bearer ${token}`)
    t.same([res.statusCode, res.body], [401, INVALID], what)
    t.equal(res.headers['www-authenticate'], 'Bearer', `${what}: challenge`)
    const maybe = await me(`Bearer ${token}`, '/maybe')
    t.same(maybe.body, { user: null, jwtError: 'Token is invalid' }, `${what}: allowUnauthenticated`)
  }
  t.same((await me(`Bearer ${valid({ iat: now() })}`)).body.user, BOB, 'an iat of this second is fine')
  t.same((await me(`Bearer ${valid({ iat: now() - 3600, nbf: now() - 3600 })}`)).body.user, BOB, 'a past iat and nbf in whole seconds')
})

t.test('an expired token: "Token has expired", with no clock tolerance', async (t) => {
  for (const token of [valid({ exp: now() - 1 }), valid({ exp: now() - 86400, iat: now() - 90000 }), valid({ exp: 0 })]) {
    const res = await me(`Bearer ${token}`)
    t.same([res.statusCode, res.body], [401, EXPIRED])
  }
})

t.test('a token of a deleted or inactive user: "User not found"', async (t) => {
  for (const [what, id] of [['deleted', gone.id], ['inactive', idle.id], ['never existed', 999999], ['negative', -1]] as const) {
    const res = await me(`Bearer ${valid({ user_id: id })}`)
    t.same([res.statusCode, res.body], [401, NO_USER], what)
  }
})

t.test('blacklist: a revoked token is "Token revoked", sync or async', async (t) => {
  const token = valid({ jti: 'revoke-me' })
  t.equal((await me(`Bearer ${token}`)).statusCode, 200)
  revoked.add(token)
  t.teardown(() => revoked.delete(token))
  t.same((await me(`Bearer ${token}`)).body, REVOKED)
  t.same((await me(`Bearer ${token}`, '/maybe')).body, { user: null, jwtError: 'Token revoked' })
})

t.test('allowUnauthenticated: the request goes on, with request.jwtError saying why', async (t) => {
  const cases: Array<[string | undefined, unknown]> = [
    [undefined, { user: null, jwtError: 'Token not found' }],
    ['Bearer nonsense', { user: null, jwtError: 'Token is invalid' }],
    [`Bearer ${valid({ exp: now() - 5 })}`, { user: null, jwtError: 'Token has expired' }],
    [`Bearer ${valid({ user_id: idle.id })}`, { user: null, jwtError: 'User not found' }],
    [`Bearer ${valid()}`, { user: BOB, jwtError: null }]
  ]
  for (const [header, body] of cases) {
    const res = await me(header, '/maybe')
    t.same([res.statusCode, res.body], [200, body], String(header).slice(0, 20))
  }
})

t.test('auth runs before the body is read, for every method; routes outside are open', async (t) => {
  const res = await app.inject({ method: 'POST', url: '/api/me', headers: { 'content-type': 'application/json' }, payload: '{' })
  t.same([res.statusCode, res.json()], [401, NOT_FOUND])
  t.same((await app.inject({ url: '/open' })).json(), { user: 'undecorated' })
})

t.test('authTable with a varchar key: user_id is the username', async (t) => {
  const ann = craftJwt(HS256, { user_id: 'ann', exp: now() + 60 }, SECRET)
  t.same((await me(`Bearer ${ann}`, '/members')).body, { user: { id: 'ann', username: 'ann', active: true, admin: false, superuser: false } })
  for (const [what, userId, expected] of [
    ['inactive', 'zed', NO_USER], ['unknown', 'bob', NO_USER], ['a number', 1, INVALID], ['NUL inside', 'a\u0000b', INVALID]
  ] as const) {
    const res = await me(`Bearer ${craftJwt(HS256, { user_id: userId, exp: now() + 60 }, SECRET)}`, '/members')
    t.same(res.body, expected, what)
  }
})

t.test('jwtLogin, jwtAuth, tokenAuth and the integrator\'s own @fastify/jwt live in one app, nested', async (t) => {
  const inject = async (url: string, authorization: string, payload?: object): Promise<any> =>
    (await app.inject({ method: payload === undefined ? 'GET' : 'POST', url: `/mixed${url}`, headers: { authorization }, payload })).json()
  const token = (await app.inject({ method: 'POST', url: '/mixed/login', payload: { username: 'bob', password: 'bob-password' } })).json().token
  t.same(await inject('/outer', `Bearer ${token}`), BOB)
  // The inner route needs the outer JWT, then tokenAuth wants its own token in the same header.
  t.same((await inject('/outer/inner', `Bearer ${token}`)).message, 'Token not recognised')
  const innerLogin = await inject('/outer/login', `Bearer ${token}`, { username: 'bob', password: 'bob-password' })
  t.type(innerLogin.token, 'string', 'a login inside a protected context is protected too')
  t.same((await inject('/outer', `Bearer ${innerLogin.token}`)).message, 'Token is invalid', 'each registration keeps its own secret')
  t.same((await inject('/outer/login', `Bearer ${innerLogin.token}`, {})).message, 'Token is invalid')
  t.match(await inject('/theirs', `Bearer ${theirs}`), { me: 'integrator' })
})

t.test('an error of the blacklist or the database is answered as the error handler would: 500 without detail, 503', async (t) => {
  const broken = await authApp(t, db, (app) => {
    app.register(async (api) => {
      await api.register(jwtAuth, { secret: SECRET, blacklist: () => { throw new Error('blacklist store: secret detail') } })
      api.get('/', async () => 'x')
    })
  })
  const res = await broken.inject({ url: '/', headers: { authorization: `Bearer ${valid()}` } })
  t.same([res.statusCode, res.json()], [500, { statusCode: 500, code: 'TABLECRUD_ERR_INTERNAL', error: 'Internal Server Error', message: 'Internal Server Error' }])
  const down = await unreachableApp(t, (app) => {
    app.register(async (api) => {
      await api.register(jwtAuth, { secret: SECRET })
      api.get('/', async () => 'x')
    })
  })
  const unavailable = await down.inject({ url: '/', headers: { authorization: `Bearer ${valid()}` } })
  t.same([unavailable.statusCode, unavailable.json().code], [503, 'TABLECRUD_ERR_DB_UNAVAILABLE'])
})

t.test('options are checked at registration', async (t) => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['secret missing', {}, /^jwtAuth: the option secret is required: a non-empty string or Buffer$/],
    ['secret empty buffer', { secret: Buffer.alloc(0) }, /^jwtAuth: the option secret is required/],
    ['authTable', { secret: SECRET, authTable: 'auth_user' }, /^jwtAuth: the option authTable must be a table made by defineTable$/],
    ['authTable columns', { secret: SECRET, authTable: defineTable('jwt_no_user', { name: column.text() }) }, /^jwtAuth: the option authTable cannot hold users: the table jwt_no_user has no username, password, active, admin, superuser, last_login columns$/],
    ['blacklist', { secret: SECRET, blacklist: ['token'] }, /^jwtAuth: the option blacklist must be a function \(token\) => boolean \| Promise<boolean>$/],
    ['allowUnauthenticated', { secret: SECRET, allowUnauthenticated: 'yes' }, /^jwtAuth: the option allowUnauthenticated must be true or false$/]
  ]
  for (const [name, options, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => await app.register(jwtAuth, options as any).ready(), message, name)
    await app.close()
  }
  const app = Fastify()
  await t.rejects(async () => await app.register(jwtAuth, { secret: Buffer.from(SECRET) }).ready(), /^jwtAuth: register @fastify\/postgres before this plugin/, 'a Buffer secret passes; the database is missing')
  await app.close()
})
