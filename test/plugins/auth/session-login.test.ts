import t from 'tap'
import { createUser } from '../../../lib/auth/users.js'
import { hashSessionToken } from '../../../lib/auth/sessions.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { createTables } from '../../../lib/db/index.js'
import { userTable } from '../../../lib/table/auth-tables.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import type { MfaProvider } from '../../../plugins/auth/extensions.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, unreachableApp } from './auth-app.js'
import { createSessionTables, FORM, form, JSON_TYPE, tokenOf } from './session-app.js'

const db = await testDatabase(t)
await createSessionTables(db)

const body = (statusCode: number, code: string, message: string): object =>
  ({ statusCode, code, error: statusCode === 401 ? 'Unauthorized' : statusCode === 422 ? 'Unprocessable Entity' : 'Unsupported Media Type', message })
const MISSING = body(422, 'TABLECRUD_ERR_AUTH_MISSING_FIELDS', 'Missing username or password')
const FAILED = body(401, 'TABLECRUD_ERR_AUTH_LOGIN_FAILED', 'Login failed')
const refused = (reason: string): object => body(401, 'TABLECRUD_ERR_AUTH_LOGIN_REFUSED', `Login failed: ${reason}`)

/** What the hooks saw, in order. */
const calls: string[] = []

/** A second factor that takes the code "123456" from users whose name starts with "mfa". */
const codes = (name: string): MfaProvider => ({
  name,
  isEnrolled: async (userId, context) => {
    const { rows } = await context.db.query('SELECT username FROM auth_user WHERE id = $1', [userId])
    return rows[0].username.startsWith(`mfa-${name}`)
  },
  verifyCode: async (_userId, code) => code === `${name}-123456`
})

const captchaTokens: string[] = []

const app = await authApp(t, db, (app) => {
  app.register(sessionLogin, { prefix: '/login' })
  app.register(sessionLogin, {
    prefix: '/hooked',
    redirectTo: '/welcome/',
    cookieName: 'sid',
    sessionExpiry: 60,
    maxSessionExpiry: '2h',
    production: true,
    hooks: {
      preLogin: [(username) => { calls.push(`pre ${username}`) }, async (username) => username === 'banned' ? 'banned user' : undefined],
      loginFailure: [(username) => { calls.push(`failure ${username}`); return username === 'carol' ? 'try again later' : null }],
      loginSuccess: [async (username, userId) => { calls.push(`success ${username} ${String(userId)}`); return username === 'dave' ? 'not today' : undefined }]
    }
  })
  app.register(sessionLogin, {
    prefix: '/captcha',
    captcha: {
      field: 'h-captcha-response',
      verify: async (token, request) => {
        captchaTokens.push(`${token} ${request.url}`)
        if (token === 'explode') throw new Error('provider down')
        return token === 'good'
      }
    }
  })
  app.register(sessionLogin, { prefix: '/mfa', mfaProviders: [codes('totp')] })
  app.register(sessionLogin, { prefix: '/mfa2', mfaProviders: [codes('totp'), codes('email')] })
})
const bob = await createUser(app.pg, { username: 'bob', password: 'bob-password', admin: true })
await createUser(app.pg, { username: 'idle', password: 'idle-password', active: false })
await createUser(app.pg, { username: 'carol', password: 'carol-password' })
await createUser(app.pg, { username: 'dave', password: 'dave-password' })
const mfaUser = await createUser(app.pg, { username: 'mfa-totp', password: 'mfa-password' })
await createUser(app.pg, { username: 'mfa-email', password: 'mfa-password' })

const sessionsOf = async (userId: number): Promise<any[]> =>
  (await app.pg.query('SELECT * FROM auth_session WHERE "user" = $1 ORDER BY id', [userId])).rows

const post = async (url: string, payload: string, headers: Record<string, string> = JSON_TYPE, cookies?: Record<string, string>) =>
  await app.inject({ method: 'POST', url, headers, payload, ...(cookies === undefined ? {} : { cookies }) })

t.test('a JSON login answers 200 {"message": "logged in"}, sets the cookie and last_login, stores only the hash', async (t) => {
  const before = (await sessionsOf(bob.id)).length
  const utcNow = "SELECT (clock_timestamp() AT TIME ZONE 'utc')::text AS at"
  const sent = (await app.pg.query(utcNow)).rows[0].at
  const res = await post('/login', JSON.stringify({ username: 'bob', password: 'bob-password' }))
  const answered = (await app.pg.query(utcNow)).rows[0].at
  t.equal(res.statusCode, 200)
  t.same(res.json(), { message: 'logged in' })
  t.equal(res.headers['cache-control'], 'no-store')
  const cookie = res.headers['set-cookie']
  t.match(cookie, /^id=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/)
  const token = tokenOf(cookie)
  const rows = await sessionsOf(bob.id)
  t.equal(rows.length, before + 1)
  const row = rows.at(-1)
  t.equal(row.token_hash, hashSessionToken(token))
  t.match(row.token_hash, /^[0-9a-f]{64}$/)
  const raw = await app.pg.query('SELECT count(*)::int AS n FROM auth_session WHERE position($1 IN row_to_json(auth_session)::text) > 0', [token])
  t.equal(raw.rows[0].n, 0, 'the raw token is in no column')
  const times = await app.pg.query(
    `SELECT extract(epoch FROM expiry_date - created_at) AS expiry, extract(epoch FROM max_expiry_date - created_at) AS max,
       created_at BETWEEN $2::timestamp - interval '1 second' AND $3::timestamp AS utc FROM auth_session WHERE id = $1`, [row.id, sent, answered])
  // created_at is UTC: between the server's UTC clock before the request and after it (a busy
  // machine can take seconds in between, so no fixed bound).
  t.same([Number(times.rows[0].expiry), Number(times.rows[0].max), times.rows[0].utc], [3600, 604800, true])
  const user = await app.pg.query('SELECT last_login FROM auth_user WHERE id = $1', [bob.id])
  t.not(user.rows[0].last_login, null)
})

t.test('a form login is a 303 to redirectTo; the cookie is Secure with production, Max-Age the max expiry', async (t) => {
  const res = await post('/hooked', form([['username', 'bob'], ['password', 'bob-password']]), FORM)
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, '/welcome/')
  t.match(res.headers['set-cookie'], /^sid=[A-Za-z0-9_-]{43}; Max-Age=7200; Path=\/; HttpOnly; Secure; SameSite=Lax$/)
  const row = (await sessionsOf(bob.id)).at(-1)
  const times = await app.pg.query('SELECT extract(epoch FROM expiry_date - created_at) AS e, extract(epoch FROM max_expiry_date - created_at) AS m FROM auth_session WHERE id = $1', [row.id])
  t.same([Number(times.rows[0].e), Number(times.rows[0].m)], [60, 7200])
  const plain = await post('/login', form([['username', 'bob'], ['password', 'bob-password']]), FORM)
  t.same([plain.statusCode, plain.headers.location], [303, '/'])
  const html = await post('/login', JSON.stringify({ username: 'bob', password: 'bob-password', format: 'html' }))
  t.same([html.statusCode, html.headers.location], [303, '/'], 'format=html in JSON is a form too')
})

t.test('every login has a fresh token; a session cookie sent along is ended first', async (t) => {
  const first = tokenOf((await post('/login', JSON.stringify({ username: 'bob', password: 'bob-password' }))).headers['set-cookie'])
  const count = (await sessionsOf(bob.id)).length
  const second = tokenOf((await post('/login', JSON.stringify({ username: 'bob', password: 'bob-password' }), JSON_TYPE, { id: first })).headers['set-cookie'])
  t.not(second, first)
  const hashes = (await sessionsOf(bob.id)).map((r) => r.token_hash)
  t.equal(hashes.length, count, 'one ended, one started')
  t.notOk(hashes.includes(hashSessionToken(first)))
  t.ok(hashes.includes(hashSessionToken(second)))
  const third = await post('/login', JSON.stringify({ username: 'bob', password: 'bob-password' }), JSON_TYPE, { id: 'garbage' })
  t.equal(third.statusCode, 200, 'a cookie of garbage ends nothing and does not stop the login')
})

t.test('missing or empty fields: 422 Missing username or password, no session', async (t) => {
  const before = (await app.pg.query('SELECT count(*)::int AS n FROM auth_session')).rows[0].n
  const cases: Array<[string, string, Record<string, string>]> = [
    ['{}', '{}', JSON_TYPE],
    ['no password', JSON.stringify({ username: 'bob' }), JSON_TYPE],
    ['empty password', JSON.stringify({ username: 'bob', password: '' }), JSON_TYPE],
    ['empty username', JSON.stringify({ username: '', password: 'bob-password' }), JSON_TYPE],
    ['a number', JSON.stringify({ username: 'bob', password: 12345678 }), JSON_TYPE],
    ['an array body', '[]', JSON_TYPE],
    ['a string body', '"bob"', JSON_TYPE],
    ['null', 'null', JSON_TYPE],
    ['form without password', form([['username', 'bob']]), FORM],
    ['empty form', '', FORM],
    ['repeated username', form([['username', 'bob'], ['username', 'eve'], ['password', 'bob-password']]), FORM],
    ['repeated password', form([['username', 'bob'], ['password', 'bob-password'], ['password', 'bob-password']]), FORM],
    ['constructor', '{"constructor": {"username": "bob", "password": "bob-password"}}', JSON_TYPE]
  ]
  for (const [name, payload, headers] of cases) {
    const res = await post('/login', payload, headers)
    t.same([res.statusCode, res.json()], [422, MISSING], name)
    t.equal(res.headers['set-cookie'], undefined, name)
  }
  const poisoned = await post('/login', '{"__proto__": {"username": "bob", "password": "bob-password"}}')
  t.same([poisoned.statusCode, poisoned.json().code], [400, 'TABLECRUD_ERR_BODY_NOT_JSON'], 'Fastify refuses __proto__ in JSON')
  const none = await app.inject({ method: 'POST', url: '/login' })
  t.same([none.statusCode, none.json()], [422, MISSING], 'no body at all')
  t.equal((await app.pg.query('SELECT count(*)::int AS n FROM auth_session')).rows[0].n, before)
})

t.test('unknown user, wrong password, inactive user, odd input: 401 Login failed', async (t) => {
  const cases = [
    { username: 'nobody', password: 'whatever-password' },
    { username: 'bob', password: 'wrong-password' },
    { username: 'idle', password: 'idle-password' },
    { username: 'x'.repeat(10 * 1024), password: 'whatever-password' },
    { username: 'bob\u0000', password: 'bob-password' },
    { username: 'bob', password: 'p'.repeat(200) },
    { username: 'bob', password: 'short' }
  ]
  for (const credentials of cases) {
    const res = await post('/login', JSON.stringify(credentials))
    t.same([res.statusCode, res.json()], [401, FAILED], credentials.username.slice(0, 20))
    t.equal(res.headers['set-cookie'], undefined)
    t.equal(res.headers['cache-control'], 'no-store')
  }
  const big = await post('/login', form([['username', 'y'.repeat(10 * 1024)], ['password', 'whatever-password']]), FORM)
  t.same([big.statusCode, big.json()], [401, FAILED], 'a 10 KB username in a form')
})

t.test('an unknown user takes as long as a known one (the dummy hash)', async (t) => {
  // At cost 10 a bcrypt check takes tens of milliseconds, far above a lookup: an unknown user
  // answered without the dummy hash would be several times faster.
  const timed = await authApp(t, db, (app) => { app.register(sessionLogin, { prefix: '/login', bcryptCost: 10 }) })
  await createUser(timed.pg, { username: 'slow', password: 'slow-password' }, { bcryptCost: 10 })
  const time = async (username: string): Promise<number> => {
    const start = process.hrtime.bigint()
    const res = await timed.inject({ method: 'POST', url: '/login', payload: { username, password: 'wrong-password' } })
    t.equal(res.statusCode, 401)
    return Number(process.hrtime.bigint() - start) / 1e6
  }
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 5; i++) {
    known.push(await time('slow'))
    unknown.push(await time(`nobody-${i}`))
  }
  const median = (xs: number[]): number => xs.sort((a, b) => a - b)[2]!
  const ratio = median(unknown) / median(known)
  t.ok(ratio > 0.5 && ratio < 2, `unknown ${median(unknown).toFixed(1)} ms, known ${median(known).toFixed(1)} ms`)
})

t.test('hooks: preLogin, loginFailure and loginSuccess refuse with "Login failed: <reason>", in order', async (t) => {
  calls.length = 0
  let res = await post('/hooked', JSON.stringify({ username: 'banned', password: 'whatever-password' }))
  t.same([res.statusCode, res.json()], [401, refused('banned user')])
  t.same(calls, ['pre banned'], 'preLogin refuses before the password is checked')

  calls.length = 0
  res = await post('/hooked', JSON.stringify({ username: 'carol', password: 'wrong-password' }))
  t.same([res.statusCode, res.json()], [401, refused('try again later')])
  t.same(calls, ['pre carol', 'failure carol'])

  calls.length = 0
  res = await post('/hooked', JSON.stringify({ username: 'bob', password: 'wrong-password' }))
  t.same([res.statusCode, res.json()], [401, FAILED], 'a failure hook that returns nothing leaves the plain refusal')
  t.same(calls, ['pre bob', 'failure bob'])

  calls.length = 0
  const dave = (await app.pg.query("SELECT id FROM auth_user WHERE username = 'dave'")).rows[0].id
  res = await post('/hooked', JSON.stringify({ username: 'dave', password: 'dave-password' }))
  t.same([res.statusCode, res.json()], [401, refused('not today')])
  t.same(calls, ['pre dave', `success dave ${String(dave)}`])
  t.same(await sessionsOf(dave), [], 'no session after a refusal')

  calls.length = 0
  res = await post('/hooked', JSON.stringify({ username: 'bob', password: 'bob-password' }))
  t.equal(res.statusCode, 200)
  t.same(calls, ['pre bob', `success bob ${String(bob.id)}`])

  calls.length = 0
  res = await post('/hooked', JSON.stringify({ username: '', password: 'x' }))
  t.same([res.statusCode, calls], [422, []], 'missing fields come before every hook')
})

t.test('CAPTCHA: checked after preLogin and before the password', async (t) => {
  captchaTokens.length = 0
  const CAPTCHA = (message: string): object => body(401, 'TABLECRUD_ERR_AUTH_CAPTCHA', message)
  let res = await post('/captcha', JSON.stringify({ username: 'bob', password: 'bob-password' }))
  t.same([res.statusCode, res.json()], [401, CAPTCHA('Unable to find CAPTCHA token.')])
  res = await post('/captcha', JSON.stringify({ username: 'bob', password: 'bob-password', 'h-captcha-response': '' }))
  t.same([res.statusCode, res.json()], [401, CAPTCHA('Unable to find CAPTCHA token.')])
  res = await post('/captcha', JSON.stringify({ username: 'bob', password: 'bob-password', 'h-captcha-response': 'bad' }))
  t.same([res.statusCode, res.json()], [401, CAPTCHA('CAPTCHA failed.')])
  res = await post('/captcha', JSON.stringify({ username: 'bob', password: 'bob-password', 'h-captcha-response': 'explode' }))
  t.same([res.statusCode, res.json()], [401, CAPTCHA('CAPTCHA failed.')], 'a provider that throws fails the CAPTCHA')
  res = await post('/captcha', JSON.stringify({ username: 'nobody', password: 'bob-password', 'h-captcha-response': 'bad' }))
  t.same([res.statusCode, res.json()], [401, CAPTCHA('CAPTCHA failed.')], 'before the password is checked')
  res = await post('/captcha', form([['username', 'bob'], ['password', 'bob-password'], ['h-captcha-response', 'good']]), FORM)
  t.equal(res.statusCode, 303)
  res = await post('/captcha', JSON.stringify({ username: 'bob', password: 'wrong-password', 'h-captcha-response': 'good' }))
  t.same([res.statusCode, res.json()], [401, FAILED])
  t.same(captchaTokens, ['bad /captcha', 'explode /captcha', 'bad /captcha', 'good /captcha', 'good /captcha'])
  res = await post('/captcha', JSON.stringify({ username: '', password: 'x', 'h-captcha-response': 'good' }))
  t.equal(res.statusCode, 422, 'missing fields first')
})

t.test('MFA: asked after the password of an enrolled user only', async (t) => {
  const REQUIRED = body(401, 'TABLECRUD_ERR_MFA_REQUIRED', 'MFA code required')
  const MFA_FAILED = body(401, 'TABLECRUD_ERR_MFA_FAILED', 'MFA failed')
  const login = async (url: string, extra: object): Promise<{ statusCode: number, body: any }> => {
    const res = await post(url, JSON.stringify({ username: 'mfa-totp', password: 'mfa-password', ...extra }))
    return { statusCode: res.statusCode, body: res.json() }
  }
  t.same(await login('/mfa', {}), { statusCode: 401, body: REQUIRED })
  t.same(await login('/mfa', { mfa_code: '' }), { statusCode: 401, body: REQUIRED })
  t.same(await login('/mfa', { mfa_code: 'wrong' }), { statusCode: 401, body: MFA_FAILED })
  t.same(await login('/mfa', { password: 'wrong-password', mfa_code: 'totp-123456' }), { statusCode: 401, body: FAILED }, 'the password first')
  t.same(await login('/mfa', { mfa_code: 'totp-123456' }), { statusCode: 200, body: { message: 'logged in' } })
  t.equal((await sessionsOf(mfaUser.id)).length, 1)
  const plain = await post('/mfa', JSON.stringify({ username: 'bob', password: 'bob-password' }))
  t.equal(plain.statusCode, 200, 'a user not enrolled logs in without a code')

  const PROVIDER = (message: string): object => body(401, 'TABLECRUD_ERR_MFA_PROVIDER', message)
  t.same(await login('/mfa2', { mfa_code: 'totp-123456' }), { statusCode: 401, body: PROVIDER('MFA provider must be specified') })
  t.same(await login('/mfa2', { mfa_provider: 'sms', mfa_code: 'totp-123456' }), { statusCode: 401, body: PROVIDER('MFA provider not recognised.') })
  t.same(await login('/mfa2', { mfa_provider: 'email', mfa_code: 'email-123456' }), { statusCode: 401, body: MFA_FAILED }, 'a provider the user is not enrolled with')
  t.same(await login('/mfa2', { mfa_provider: 'totp' }), { statusCode: 401, body: REQUIRED })
  t.same(await login('/mfa2', { mfa_provider: 'totp', mfa_code: 'totp-123456' }), { statusCode: 200, body: { message: 'logged in' } })
  const other = await post('/mfa2', JSON.stringify({ username: 'bob', password: 'bob-password' }))
  t.equal(other.statusCode, 200, 'no provider is asked of a user enrolled with none')
})

t.test('the login page: a form that posts here, with format=html, and the CSRF field only when set', async (t) => {
  const res = await app.inject({ method: 'GET', url: '/login/' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8')
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.body, /^<!doctype html>/)
  t.match(res.body, '<form method="post" action="/login/">')
  t.match(res.body, '<input type="hidden" name="format" value="html">')
  t.match(res.body, 'name="username"')
  t.match(res.body, 'name="password" type="password"')
  t.notMatch(res.body, 'csrftoken')
  t.notMatch(res.body, 'mfa_code')
  t.notMatch(res.body, /<script|<style|style=|https?:\/\//, 'no script, no inline style, nothing from elsewhere')
  const head = await app.inject({ method: 'HEAD', url: '/login' })
  t.equal(head.statusCode, 200)

  const mfa = await app.inject({ method: 'GET', url: '/mfa2' })
  t.match(mfa.body, 'name="mfa_code"')
  t.match(mfa.body, '<option value="totp">totp</option><option value="email">email</option>')
  t.match((await app.inject({ method: 'GET', url: '/mfa' })).body, 'name="mfa_code"')
  t.notMatch((await app.inject({ method: 'GET', url: '/mfa' })).body, 'mfa_provider')
})

t.test('a refused built-in form gets the page again, the same status, the message escaped', async (t) => {
  let res = await post('/login', form([['username', '<b>bob</b>'], ['password', 'nope-nope'], ['format', 'html']]), FORM)
  t.equal(res.statusCode, 401)
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8')
  t.match(res.body, '<p class="message" id="form-message" role="alert">Login failed</p>')
  t.match(res.body, 'value="&lt;b&gt;bob&lt;/b&gt;"', 'the username is shown again, escaped')
  res = await post('/login', form([['username', 'bob'], ['format', 'html']]), FORM)
  t.equal(res.statusCode, 422)
  t.match(res.body, 'Missing username or password')
  res = await post('/hooked', form([['username', 'banned'], ['password', 'whatever'], ['format', 'html']]), FORM)
  t.equal(res.statusCode, 401)
  t.match(res.body, 'Login failed: banned user')
  res = await post('/hooked', form([['username', '"><script>alert(1)</script>'], ['password', 'whatever-pw'], ['format', 'html']]), FORM)
  t.notMatch(res.body, '<script>')
  t.match(res.body, '&quot;&gt;&lt;script&gt;')
  res = await post('/login', form([['username', 'bob'], ['password', 'nope-nope']]), FORM)
  t.same([res.statusCode, res.json()], [401, FAILED], 'a form without format=html gets JSON errors')
})

t.test('a body that is neither JSON nor a form is a 415; a broken JSON body a 400; other methods a 405', async (t) => {
  const MEDIA = (type: string): object => body(415, 'TABLECRUD_ERR_FORM_MEDIA_TYPE', `The body must be application/json or application/x-www-form-urlencoded, not ${type}.`)
  for (const type of ['text/plain', 'multipart/form-data; boundary=x', 'application/xml']) {
    const res = await post('/login', 'username=bob&password=bob-password', { 'content-type': type })
    t.same([res.statusCode, res.json()], [415, MEDIA(JSON.stringify(type))], type)
  }
  const broken = await post('/login', '{"username": ', JSON_TYPE)
  t.same([broken.statusCode, broken.json().code], [400, 'TABLECRUD_ERR_BODY_NOT_JSON'])
  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    const res = await app.inject({ method, url: '/login/' })
    t.same([res.statusCode, res.headers.allow, res.json().code], [405, 'GET, HEAD, POST', 'TABLECRUD_ERR_METHOD_NOT_ALLOWED'], method)
  }
})

t.test('a user table of our own, and a hook that throws is a 500 without detail', async (t) => {
  const staff = defineTable('staff_user', {
    username: column.varchar({ length: 50, unique: true }),
    password: column.varchar({ length: 255, secret: true }),
    active: column.boolean({ default: true }),
    admin: column.boolean(),
    superuser: column.boolean(),
    last_login: column.timestamp({ null: true })
  })
  const staffSessions = defineTable('staff_session', {
    token_hash: column.varchar({ length: 64, unique: true, secret: true }),
    user: column.foreignKey(staff, { onDelete: 'cascade' }),
    expiry_date: column.timestamp(),
    max_expiry_date: column.timestamp()
  })
  const own = await authApp(t, db, (app) => {
    app.register(sessionLogin, { prefix: '/login', authTable: staff, sessionTable: staffSessions })
    app.register(sessionLogin, { prefix: '/boom', hooks: { preLogin: [() => { throw new Error('secret detail') }] } })
  })
  await createTables(own.pg, [staff, staffSessions])
  await own.pg.query("INSERT INTO staff_user (username, password) VALUES ('ann', $1)", [(await own.pg.query('SELECT password FROM auth_user WHERE id = $1', [bob.id])).rows[0].password])
  const res = await own.inject({ method: 'POST', url: '/login', payload: { username: 'ann', password: 'bob-password' } })
  t.equal(res.statusCode, 200)
  t.equal((await own.pg.query('SELECT count(*)::int AS n FROM staff_session')).rows[0].n, 1)
  t.not((await own.pg.query('SELECT last_login FROM staff_user')).rows[0].last_login, null)
  const boom = await own.inject({ method: 'POST', url: '/boom', payload: { username: 'ann', password: 'bob-password' } })
  t.same([boom.statusCode, boom.json().message], [500, 'Internal Server Error'])
  t.same(userTable.name, 'auth_user')
})

t.test('an unreachable database is a 503', async (t) => {
  const down = await unreachableApp(t, (app) => { app.register(sessionLogin, { prefix: '/login' }) })
  const res = await down.inject({ method: 'POST', url: '/login', payload: { username: 'bob', password: 'bob-password' } })
  t.same([res.statusCode, res.json().code], [503, 'TABLECRUD_ERR_DB_UNAVAILABLE'])
})
