import t from 'tap'
import Fastify from 'fastify'
import { checkLogin, createUser } from '../../../lib/auth/users.js'
import { userTable } from '../../../lib/table/auth-tables.js'
import { changePassword } from '../../../plugins/auth/change-password.js'
import { sessionAuth } from '../../../plugins/auth/session-auth.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, unreachableApp } from './auth-app.js'
import { createSessionTables, FORM, form, JSON_TYPE, tokenOf } from './session-app.js'

const db = await testDatabase(t)
await createSessionTables(db)

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 405: 'Method Not Allowed', 422: 'Unprocessable Entity' }
const error = (statusCode: number, code: string, message: string): object => ({ statusCode, code, error: STATUS_TEXT[statusCode], message })
const MISSING = error(422, 'TABLECRUD_ERR_FORM_MISSING_FIELDS', 'Form is invalid. Missing one or more fields.')
const invalid = (message: string): object => error(422, 'TABLECRUD_ERR_FORM_INVALID', message)

const app = await authApp(t, db, async (app) => {
  app.register(sessionLogin, { prefix: '/login' })
  app.register(async (me) => {
    await me.register(sessionAuth)
    await me.register(changePassword, { prefix: '/change-password' })
    await me.register(changePassword, { prefix: '/strict', minPasswordLength: 13, loginUrl: '/signin/' })
    await me.register(changePassword, { prefix: '/ro', readOnly: true })
  })
  app.register(async (open) => {
    await open.register(sessionAuth, { allowUnauthenticated: true })
    await open.register(changePassword, { prefix: '/open' })
  })
  app.register(async (csrf) => {
    csrf.addHook('onRequest', async (request) => { request.csrfToken = 'tok"en' })
    await csrf.register(sessionAuth)
    await csrf.register(changePassword, { prefix: '/csrf' })
  })
})

let n = 0
const newUser = async (password = 'old-password'): Promise<{ id: number, username: string }> =>
  await createUser(app.pg, { username: `changer${++n}`, password })
const login = async (username: string, password = 'old-password'): Promise<string> => {
  const res = await app.inject({ method: 'POST', url: '/login', headers: JSON_TYPE, payload: JSON.stringify({ username, password }) })
  t.equal(res.statusCode, 200, `${username} logs in`)
  return tokenOf(res.headers['set-cookie'])
}
const change = async (url: string, token: string | null, payload: unknown, headers: Record<string, string> = JSON_TYPE) =>
  await app.inject({ method: 'POST', url, headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload), ...(token === null ? {} : { cookies: { id: token } }) })
const body = (extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ current_password: 'old-password', new_password: 'new-password', confirm_new_password: 'new-password', ...extra })
const sessions = async (userId: number): Promise<number> =>
  (await app.pg.query('SELECT count(*)::int AS n FROM auth_session WHERE "user" = $1', [userId])).rows[0].n
const hashOf = async (userId: number): Promise<string> => (await app.pg.query('SELECT password FROM auth_user WHERE id = $1', [userId])).rows[0].password

t.test('GET: the page for a user, a 303 to loginUrl without one', async (t) => {
  const user = await newUser()
  const token = await login(user.username)
  const page = await app.inject({ url: '/change-password/', cookies: { id: token } })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  for (const name of ['current_password', 'new_password', 'confirm_new_password']) t.match(page.body, new RegExp(`name="${name}"`))
  t.match(page.body, /action="\/change-password\/"/)
  t.notMatch(page.body, /csrftoken|<script|<style|style=/)
  const anonymous = await app.inject('/open/')
  t.same([anonymous.statusCode, anonymous.headers.location], [303, '/login/'])
  const csrf = await app.inject({ url: '/csrf/', cookies: { id: token } })
  t.match(csrf.body, /<input type="hidden" name="csrftoken" value="tok&quot;en">/)
  const guarded = await app.inject('/change-password/')
  t.equal(guarded.statusCode, 401, 'sessionAuth answers first without a session')
})

t.test('a JSON change: 200 Password changed, the hash replaced, every session of the user ended, the cookie cleared', async (t) => {
  const user = await newUser()
  const other = await newUser()
  const first = await login(user.username)
  await login(user.username)
  const bystander = await login(other.username)
  t.equal(await sessions(user.id), 2)
  const res = await change('/change-password', first, body())
  t.equal(res.statusCode, 200)
  t.same(res.json(), { message: 'Password changed' })
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(res.headers['set-cookie'], 'id=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax')
  t.equal(await sessions(user.id), 0, 'every session of the user is gone')
  t.equal(await sessions(other.id), 1, "another user's is not")
  t.equal((await app.inject({ url: '/change-password/', cookies: { id: first } })).statusCode, 401, 'the old session no longer works')
  t.equal((await app.inject({ url: '/change-password/', cookies: { id: bystander } })).statusCode, 200)
  t.equal(await checkLogin(app.pg, userTable, user.username, 'old-password'), null)
  t.ok(await checkLogin(app.pg, userTable, user.username, 'new-password'))
})

t.test('a form change is a 303 to loginUrl', async (t) => {
  const user = await newUser()
  const token = await login(user.username)
  const res = await change('/strict', token, form([['current_password', 'old-password'], ['new_password', 'a-long-new-password'], ['confirm_new_password', 'a-long-new-password']]), FORM)
  t.same([res.statusCode, res.headers.location], [303, '/signin/'])
  t.equal(await sessions(user.id), 0)
})

t.test('the checks in order, nothing changed on a refusal', async (t) => {
  const user = await newUser()
  const token = await login(user.username)
  const hash = await hashOf(user.id)
  const cases: Array<[string, unknown, object]> = [
    ['nothing', {}, MISSING],
    ['no confirmation', body({ confirm_new_password: undefined }), MISSING],
    ['empty current', body({ current_password: '' }), MISSING],
    ['a number', body({ new_password: 12345678, confirm_new_password: 12345678 }), MISSING],
    ['an array body', [], MISSING],
    ['a null body', 'null', MISSING],
    ['short', body({ new_password: 'abc', confirm_new_password: 'abc', current_password: 'wrong' }), invalid('Password must be at least 6 characters long.')],
    ['long', body({ new_password: 'x'.repeat(129), confirm_new_password: 'y' }), invalid('Password must be at most 128 characters long.')],
    ['200 KB', body({ new_password: 'x'.repeat(200_000), confirm_new_password: 'x'.repeat(200_000) }), invalid('Password must be at most 128 characters long.')],
    ['mismatch before the current password', body({ confirm_new_password: 'other-password', current_password: 'wrong' }), invalid('Passwords do not match.')],
    ['wrong current', body({ current_password: 'wrong-password' }), invalid('Incorrect password.')],
    ['a 200 KB current', body({ current_password: 'x'.repeat(200_000) }), invalid('Incorrect password.')],
    ['a NUL in the current', body({ current_password: 'old-password\u0000' }), invalid('Incorrect password.')]
  ]
  for (const [name, payload, expected] of cases) {
    const res = await change('/change-password', token, payload)
    t.same([res.statusCode, res.json()], [422, expected], name)
  }
  t.same((await change('/strict', token, body())).json(), invalid('Password must be at least 13 characters long.'))
  t.equal(await hashOf(user.id), hash, 'the hash is unchanged')
  t.equal(await sessions(user.id), 1, 'the session lives')
  const emoji = '🔐'.repeat(100)
  const ok = await change('/change-password', token, body({ new_password: emoji, confirm_new_password: emoji }))
  t.equal(ok.statusCode, 200, 'emoji and NUL-free long passwords are fine')
  t.ok(await checkLogin(app.pg, userTable, user.username, emoji))
})

t.test('a refused built-in form gets the page again with the message', async (t) => {
  const user = await newUser()
  const token = await login(user.username)
  const res = await change('/change-password', token, form([['current_password', 'wrong-password'], ['new_password', 'new-password'], ['confirm_new_password', 'new-password'], ['format', 'html']]), FORM)
  t.equal(res.statusCode, 422)
  t.match(res.body, /<p class="message" id="form-message" role="alert">Incorrect password.<\/p>/)
  t.notMatch(res.body, /wrong-password/, 'no password echoed')
})

t.test('no user: 401 Not logged in (before readOnly); readOnly: 405', async (t) => {
  t.same((await change('/open', null, body())).json(), error(401, 'TABLECRUD_ERR_AUTH_NOT_LOGGED_IN', 'Not logged in'))
  const user = await newUser()
  const token = await login(user.username)
  const ro = await change('/ro', token, body())
  t.same([ro.statusCode, ro.headers.allow, ro.json()], [405, 'GET, HEAD', error(405, 'TABLECRUD_ERR_FORM_READ_ONLY', 'Running in read only mode.')])
  t.equal(await sessions(user.id), 1)
  const put = await app.inject({ method: 'DELETE', url: '/change-password/', cookies: { id: token } })
  t.same([put.statusCode, put.headers.allow], [405, 'GET, HEAD, POST'])
})

t.test('the database down: 503, the process up', async (t) => {
  const down = await unreachableApp(t, async (app) => {
    app.decorateRequest('user', null)
    app.addHook('onRequest', async (request) => { request.user = { id: 1, username: 'x', active: true, admin: false, superuser: false } })
    await app.register(changePassword, { prefix: '/cp' })
  })
  const res = await down.inject({ method: 'POST', url: '/cp', headers: JSON_TYPE, payload: JSON.stringify(body()) })
  t.same([res.statusCode, res.json().code], [503, 'TABLECRUD_ERR_DB_UNAVAILABLE'])
})

t.test('options are checked at registration', async (t) => {
  const attempt = async (options: object): Promise<void> => {
    const probe = Fastify()
    probe.decorate('pg', app.pg)
    try {
      await probe.register(changePassword, options)
      await probe.ready()
    } finally {
      await probe.close()
    }
  }
  await t.rejects(attempt({ loginUrl: 'javascript:alert(1)' }), { code: 'TABLECRUD_ERR_OPTIONS', message: /^changePassword: the option redirectTo / })
  await t.rejects(attempt({ minPasswordLength: 4 }), { message: 'changePassword: the option minPasswordLength must be an integer from 6 to 128' })
  await t.rejects(attempt({ cookieName: 'a b' }), { message: /^changePassword: the option cookieName / })
  await t.rejects(attempt({ sessionTable: {} }), { message: /^changePassword: the option sessionTable / })
  await t.rejects(attempt({ authTable: {} }), { message: /^changePassword: the option authTable / })
  await t.rejects(attempt({ readOnly: 1 }), { message: /^changePassword: the option readOnly / })
  await t.resolves(attempt({ template: () => 'x', bcryptCost: 4 }))
})
