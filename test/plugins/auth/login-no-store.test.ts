import t from 'tap'
import type { InjectOptions } from 'fastify'
import { HttpError } from '../../../lib/errors.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { tokenLogin } from '../../../plugins/auth/token-login.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, createAuthTables } from './auth-app.js'

// Issue 27 point 7: every answer of a login carries Cache-Control: no-store, the refusals of a
// body that was never read (400, 415, 413) and a 405 included, not only the handler's.
const db = await testDatabase(t)
await createAuthTables(db)
const app = await authApp(t, db, (app) => {
  // A hook of the enclosing context that refuses, as CSRF's or sessionAuth's do around a form:
  // it runs before the login context's own onRequest hooks.
  app.addHook('onRequest', async (request) => {
    if (request.headers['x-refuse'] !== undefined) throw new HttpError(403, 'Refused around the login')
  })
  app.register(tokenLogin, { prefix: '/login/token' })
  app.register(jwtLogin, { prefix: '/login/jwt', secret: 'a-secret-long-enough-for-the-no-store-test-0123' })
})

t.test('400, 415, 413, 405 and 401 of /login/jwt and /login/token: no-store', async (t) => {
  for (const prefix of ['/login/jwt/', '/login/token/']) {
    const cases: Array<[number, InjectOptions]> = [
      [400, { method: 'POST', url: prefix, headers: { 'content-type': 'application/json' }, payload: '{"username":' }],
      [415, { method: 'POST', url: prefix, headers: { 'content-type': 'text/plain' }, payload: 'username=a' }],
      [413, { method: 'POST', url: prefix, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ username: 'x'.repeat(2_000_000) }) }],
      [405, { method: 'GET', url: prefix }],
      [401, { method: 'POST', url: prefix, payload: { username: 'nobody', password: 'wrong-password' } }]
    ]
    for (const [status, options] of cases) {
      const res = await app.inject(options)
      t.equal(res.statusCode, status, `${String(options.method)} ${prefix} ${status}`)
      t.equal(res.headers['cache-control'], 'no-store', `${prefix} ${status}: no-store`)
      t.equal(res.json().statusCode, status)
    }
  }
})

t.test('a refusal by a hook around the login, before its own hooks: no-store too', async (t) => {
  for (const prefix of ['/login/jwt/', '/login/token/']) {
    const res = await app.inject({ method: 'POST', url: prefix, headers: { 'x-refuse': '1' }, payload: { username: 'a', password: 'b' } })
    t.equal(res.statusCode, 403, prefix)
    t.equal(res.headers['cache-control'], 'no-store', `${prefix}: no-store`)
  }
})
