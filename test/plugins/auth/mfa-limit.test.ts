import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createTables } from '../../../lib/db/index.js'
import { authenticatorProvider } from '../../../lib/auth/mfa.js'
import { createUser } from '../../../lib/auth/users.js'
import { mfaSecretTable } from '../../../lib/table/auth-tables.js'
import { mfaSetup } from '../../../plugins/auth/mfa-setup.js'
import { sessionAuth } from '../../../plugins/auth/session-auth.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { rateLimit } from '../../../plugins/web/rate-limit.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp } from './auth-app.js'
import { createSessionTables, FORM, JSON_TYPE, tokenOf } from './session-app.js'

// Issue 28: over the login limit a browser gets the MFA page with the message and when to try
// again (a 429 still), as the login and sign-up pages do; a request without a user has no MFA
// page to show, and gets the JSON 429.

const db = await testDatabase(t)
await createSessionTables(db)
const totp = authenticatorProvider({ encryptionKey: randomBytes(32) })
const app = await authApp(t, db, async (app) => {
  await createTables(app.pg, [mfaSecretTable])
  await app.register(rateLimit, { max: 1000, login: { max: 2, timeWindow: '1m' } })
  app.register(sessionLogin, { prefix: '/login' })
  app.register(async (open) => {
    await open.register(sessionAuth, { allowUnauthenticated: true })
    await open.register(mfaSetup, { prefix: '/mfa', provider: totp })
  })
})
await createUser(app.pg, { username: 'limited', password: 'user-password' })

const BROWSER = { ...FORM, accept: 'text/html' }
const attempt = async (remoteAddress: string, cookies: Record<string, string> = {}) =>
  await app.inject({ method: 'POST', url: '/mfa/', remoteAddress, headers: BROWSER, cookies, payload: 'action=register&password=wrong-password' })

t.test('a logged-in browser over the limit: the MFA page with the message, a 429', async (t) => {
  const login = await app.inject({ method: 'POST', url: '/login/', remoteAddress: '10.1.1.1', headers: JSON_TYPE, payload: JSON.stringify({ username: 'limited', password: 'user-password' }) })
  const id = tokenOf(login.headers['set-cookie'])
  for (let i = 1; i <= 2; i++) t.equal((await attempt('10.1.1.1', { id })).statusCode, 401, `attempt ${i}`)
  const limited = await attempt('10.1.1.1', { id })
  t.equal(limited.statusCode, 429)
  t.equal(limited.headers['content-type'], 'text/html; charset=utf-8')
  t.equal(limited.headers['retry-after'], '60')
  t.match(limited.body, /Two-factor authentication<\/h1>[\s\S]*Too many requests\. Try again in 1 minute\./)
})

t.test('a browser without a user over the limit: the JSON 429', async (t) => {
  for (let i = 1; i <= 2; i++) t.equal((await attempt('10.2.2.2')).statusCode, 401, `attempt ${i}`)
  const limited = await attempt('10.2.2.2')
  t.equal(limited.statusCode, 429)
  t.equal(limited.json().code, 'TABLECRUD_ERR_RATE_LIMITED')
})
