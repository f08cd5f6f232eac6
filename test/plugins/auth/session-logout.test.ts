import t from 'tap'
import { createUser } from '../../../lib/auth/users.js'
import { createSession, hashSessionToken } from '../../../lib/auth/sessions.js'
import { sessionLogout } from '../../../plugins/auth/session-logout.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, unreachableApp } from './auth-app.js'
import { createSessionTables, FORM, form, JSON_TYPE } from './session-app.js'

const db = await testDatabase(t)
await createSessionTables(db)

const NO_COOKIE = { statusCode: 401, code: 'TABLECRUD_ERR_AUTH_NO_SESSION_COOKIE', error: 'Unauthorized', message: "The session cookie wasn't found." }
const CLEARED = 'id=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax'

const app = await authApp(t, db, (app) => {
  app.register(sessionLogout, { prefix: '/logout' })
  app.register(sessionLogout, { prefix: '/bye', redirectTo: '/login/', cookieName: 'sid' })
  app.decorateRequest('csrfToken', null)
  app.addHook('onRequest', async (request) => { if (request.headers['x-csrf'] !== undefined) request.csrfToken = String(request.headers['x-csrf']) })
})
const bob = await createUser(app.pg, { username: 'bob', password: 'bob-password' })

const exists = async (token: string): Promise<boolean> =>
  (await app.pg.query('SELECT 1 FROM auth_session WHERE token_hash = $1', [hashSessionToken(token)])).rows.length === 1

t.test('POST with the cookie ends the session, clears the cookie, answers 200 JSON', async (t) => {
  const { token } = await createSession(app.pg, bob.id)
  const other = (await createSession(app.pg, bob.id)).token
  const res = await app.inject({ method: 'POST', url: '/logout', cookies: { id: token } })
  t.same([res.statusCode, res.json()], [200, { message: 'Successfully logged out' }])
  t.equal(res.headers['set-cookie'], CLEARED)
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(await exists(token), false)
  t.equal(await exists(other), true, 'only that session')
  const json = await app.inject({ method: 'POST', url: '/logout/', cookies: { id: other }, headers: JSON_TYPE, payload: '{}' })
  t.same([json.statusCode, json.json()], [200, { message: 'Successfully logged out' }])
  t.equal(await exists(other), false)
})

t.test('an unknown or garbage token deletes nothing and still succeeds', async (t) => {
  for (const value of ['A'.repeat(43), 'garbage', 'x'.repeat(4096)]) {
    const res = await app.inject({ method: 'POST', url: '/logout', cookies: { id: value } })
    t.same([res.statusCode, res.json()], [200, { message: 'Successfully logged out' }])
  }
})

t.test('without the cookie: 401 The session cookie wasn\'t found.', async (t) => {
  const res = await app.inject({ method: 'POST', url: '/logout' })
  t.same([res.statusCode, res.json()], [401, NO_COOKIE])
  const other = await app.inject({ method: 'POST', url: '/bye', cookies: { id: 'whatever' } })
  t.same([other.statusCode, other.json()], [401, NO_COOKIE], 'the cookie of another name')
  const page = await app.inject({ method: 'POST', url: '/logout', headers: FORM, payload: form([['format', 'html']]) })
  t.equal(page.statusCode, 401)
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8')
  t.match(page.body, '<p class="message" id="form-message" role="alert">The session cookie wasn&#39;t found.</p>')
})

t.test('a form: 303 to redirectTo when set; the page saying so for the built-in form otherwise', async (t) => {
  const { token } = await createSession(app.pg, bob.id)
  const res = await app.inject({ method: 'POST', url: '/bye', cookies: { sid: token }, headers: FORM, payload: form([['format', 'html']]) })
  t.same([res.statusCode, res.headers.location], [303, '/login/'])
  t.same(res.headers['set-cookie'], [CLEARED.replace('id=', 'sid='), 'tablecrud_notice=logged-out; Max-Age=60; Path=/; HttpOnly; SameSite=Lax'], 'a notice for the next page')
  t.equal(await exists(token), false)
  const json = await app.inject({ method: 'POST', url: '/bye', cookies: { sid: 'x' } })
  t.same([json.statusCode, json.json()], [200, { message: 'Successfully logged out' }], 'JSON is not redirected')
  const page = await app.inject({ method: 'POST', url: '/logout', cookies: { id: 'x' }, headers: FORM, payload: form([['format', 'html']]) })
  t.equal(page.statusCode, 200)
  t.match(page.body, 'Successfully logged out')
  t.notMatch(page.body, '<form')
  const plainForm = await app.inject({ method: 'POST', url: '/logout', cookies: { id: 'x' }, headers: FORM, payload: '' })
  t.same([plainForm.statusCode, plainForm.json()], [200, { message: 'Successfully logged out' }], 'no redirectTo, no format=html: JSON')
})

t.test('GET is a page with a logout button, the CSRF field when the csrf plugin set a token', async (t) => {
  const res = await app.inject({ method: 'GET', url: '/logout/' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8')
  t.match(res.body, '<form method="post" action="/logout/">')
  t.match(res.body, '<button type="submit">Log out</button>')
  t.notMatch(res.body, 'csrftoken')
  const csrf = await app.inject({ method: 'GET', url: '/logout/', headers: { 'x-csrf': 'tok"en<' } })
  t.match(csrf.body, '<input type="hidden" name="csrftoken" value="tok&quot;en&lt;">')
})

t.test('415 for other bodies, 405 for other methods', async (t) => {
  const res = await app.inject({ method: 'POST', url: '/logout', cookies: { id: 'x' }, headers: { 'content-type': 'text/plain' }, payload: 'hi' })
  t.same([res.statusCode, res.json().code], [415, 'TABLECRUD_ERR_FORM_MEDIA_TYPE'])
  const none = await app.inject({ method: 'POST', url: '/logout', cookies: { id: 'x' }, headers: { 'content-type': '' }, payload: 'hi' })
  t.equal(none.statusCode, 415)
  const del = await app.inject({ method: 'DELETE', url: '/logout' })
  t.same([del.statusCode, del.headers.allow], [405, 'GET, HEAD, POST'])
})

t.test('an unreachable database is a 503', async (t) => {
  const down = await unreachableApp(t, (app) => { app.register(sessionLogout, { prefix: '/logout' }) })
  const res = await down.inject({ method: 'POST', url: '/logout', cookies: { id: 'A'.repeat(43) } })
  t.same([res.statusCode, res.json().code], [503, 'TABLECRUD_ERR_DB_UNAVAILABLE'])
})
