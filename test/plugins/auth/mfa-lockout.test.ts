import t from 'tap'
import type { InjectOptions } from 'fastify'
import { randomBytes } from 'node:crypto'
import { authenticatorProvider } from '../../../lib/auth/mfa.js'
import { createUser } from '../../../lib/auth/users.js'
import { createTables } from '../../../lib/db/index.js'
import { mfaSecretTable } from '../../../lib/table/auth-tables.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { testDatabase } from '../../helpers/db.js'
import { freshCode } from '../../helpers/totp.js'
import { openApi } from '../../../plugins/openapi.js'
import { authApp } from './auth-app.js'
import { createSessionTables, FORM, form } from './session-app.js'

// Issue 27 point 5: wrong MFA codes are counted per account in the database; past the limit a
// login is a 429 with Retry-After and a clear body, on every login plugin and form.
const db = await testDatabase(t)
await createSessionTables(db)
const totp = authenticatorProvider({ encryptionKey: randomBytes(32), maxFailures: 2, failureWindow: '10m' })
const app = await authApp(t, db, async (app) => {
  await app.register(openApi, { info: { title: 'lockout', version: '1.0.0' } })
  await createTables(app.pg, [mfaSecretTable])
  app.register(sessionLogin, { prefix: '/login', mfaProviders: [totp] })
  app.register(jwtLogin, { prefix: '/jwt', secret: 'jwt-secret-for-the-lockout-test-0123456789', mfaProviders: [totp] })
})
const user = await createUser(app.pg, { username: 'guessed', password: 'guessed-password' })
const { secret, recovery_codes: codes } = (await totp.register(user, { db: app.pg }))!
await totp.confirm(user.id, await freshCode(secret), { db: app.pg })

const LOCKED = /^Too many wrong MFA codes: try again in (\d+) seconds, or use a recovery code\.$/
const login = (url: string, mfaCode: string): InjectOptions =>
  ({ method: 'POST', url, payload: { username: 'guessed', password: 'guessed-password', mfa_code: mfaCode } })

t.test('two wrong codes, then 429 with Retry-After on the JSON and form logins of both plugins; a recovery code still logs in', async (t) => {
  t.equal((await app.inject(login('/login/', '000000'))).json().code, 'TABLECRUD_ERR_MFA_FAILED')
  t.equal((await app.inject(login('/jwt/', '000001'))).json().code, 'TABLECRUD_ERR_MFA_FAILED', 'one count for both plugins')
  for (const url of ['/login/', '/jwt/']) {
    const locked = await app.inject(login(url, await freshCode(secret)))
    t.equal(locked.statusCode, 429, `${url}: even the right code`)
    const body = locked.json()
    t.same(Object.keys(body), ['statusCode', 'code', 'error', 'message'])
    t.match(body, { statusCode: 429, code: 'TABLECRUD_ERR_MFA_LOCKED', error: 'Too Many Requests', message: LOCKED })
    const seconds = Number(LOCKED.exec(body.message)![1])
    t.ok(seconds >= 1 && seconds <= 600)
    t.equal(locked.headers['retry-after'], String(seconds), 'Retry-After says the same')
  }
  const page = await app.inject({ method: 'POST', url: '/login/', headers: FORM, payload: form([['username', 'guessed'], ['password', 'guessed-password'], ['mfa_code', '123456'], ['format', 'html']]) })
  t.equal(page.statusCode, 429, 'the form page too')
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, 'Too many wrong MFA codes: try again in')
  t.match(page.headers['retry-after'], /^\d+$/)

  const recovered = await app.inject(login('/login/', codes[0]!))
  t.equal(recovered.statusCode, 200, 'a recovery code is never locked out')
  t.same(recovered.json(), { message: 'logged in' })
  t.equal((await app.inject(login('/login/', '000002'))).json().code, 'TABLECRUD_ERR_MFA_FAILED', 'the count started again')
})

t.test('the OpenAPI document gives the logins with MFA their 429 and its Retry-After', async (t) => {
  const doc = app.swagger() as any
  for (const path of ['/login/', '/jwt/']) {
    const locked = doc.paths[path].post.responses['429']
    t.match(locked.description, /Too many wrong MFA codes/, path)
    t.ok(locked.headers['Retry-After'], `${path}: Retry-After`)
  }
})
