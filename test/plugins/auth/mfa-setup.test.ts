import t from 'tap'
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import { createTables } from '../../../lib/db/index.js'
import { authenticatorProvider } from '../../../lib/auth/mfa.js'
import { decryptSecret, parseKeys } from '../../../lib/auth/mfa-crypto.js'
import { stepAt, totpCode } from '../../../lib/auth/totp.js'
import { createUser } from '../../../lib/auth/users.js'
import { mfaSecretTable } from '../../../lib/table/auth-tables.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { mfaSetup } from '../../../plugins/auth/mfa-setup.js'
import { sessionAuth } from '../../../plugins/auth/session-auth.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { testDatabase } from '../../helpers/db.js'
import { freshCode } from '../../helpers/totp.js'
import { authApp } from './auth-app.js'
import { createSessionTables, FORM, form, JSON_TYPE, tokenOf } from './session-app.js'

const db = await testDatabase(t)
await createSessionTables(db)

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 409: 'Conflict', 422: 'Unprocessable Entity' }
const error = (statusCode: number, code: string, message: string): object => ({ statusCode, code, error: STATUS_TEXT[statusCode], message })
const BAD_PASSWORD = error(401, 'TABLECRUD_ERR_AUTH_BAD_PASSWORD', 'Incorrect password')
const ENROLLED = error(409, 'TABLECRUD_ERR_MFA_STATE', 'MFA is already set up')
const NOT_SET_UP = error(409, 'TABLECRUD_ERR_MFA_STATE', 'MFA is not set up')
const INVALID_CODE = error(422, 'TABLECRUD_ERR_MFA_INVALID_CODE', 'Invalid MFA code.')
const UNKNOWN_ACTION = error(400, 'TABLECRUD_ERR_MFA_UNKNOWN_ACTION', 'Unknown action.')
const REQUIRED = error(401, 'TABLECRUD_ERR_MFA_REQUIRED', 'MFA code required')
const FAILED = error(401, 'TABLECRUD_ERR_MFA_FAILED', 'MFA failed')
const USED = error(401, 'TABLECRUD_ERR_MFA_CODE_USED', 'This code was just used; wait for the next one')

const oldKey = randomBytes(32)
const newKey = randomBytes(32)
const totp = authenticatorProvider({ encryptionKey: [newKey, oldKey], issuer: 'Test Site' })

const app = await authApp(t, db, async (app) => {
  await createTables(app.pg, [mfaSecretTable])
  app.register(sessionLogin, { prefix: '/login', mfaProviders: [totp] })
  app.register(jwtLogin, { prefix: '/jwt', secret: 'jwt-secret', mfaProviders: [totp] })
  app.register(async (me) => {
    await me.register(sessionAuth)
    await me.register(mfaSetup, { prefix: '/mfa', provider: totp })
  })
  app.register(async (open) => {
    await open.register(sessionAuth, { allowUnauthenticated: true })
    await open.register(mfaSetup, { prefix: '/open', provider: totp })
  })
  app.register(async (csrf) => {
    csrf.addHook('onRequest', async (request) => { request.csrfToken = 'c<s>rf' })
    await csrf.register(sessionAuth)
    await csrf.register(mfaSetup, { prefix: '/csrf', provider: totp })
  })
})

let n = 0
const newUser = async (): Promise<{ id: number, username: string }> => await createUser(app.pg, { username: `mfa${++n}`, password: 'user-password' })
const loginAs = async (username: string, extra: Record<string, unknown> = {}) =>
  await app.inject({ method: 'POST', url: '/login', headers: JSON_TYPE, payload: JSON.stringify({ username, password: 'user-password', ...extra }) })
const sessionOf = async (username: string): Promise<string> => tokenOf((await loginAs(username)).headers['set-cookie'])
const mfa = async (token: string | null, payload: unknown, url = '/mfa', headers: Record<string, string> = JSON_TYPE) =>
  await app.inject({ method: 'POST', url, headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload), ...(token === null ? {} : { cookies: { id: token } }) })
const row = async (userId: number): Promise<Record<string, any>> => (await app.pg.query('SELECT * FROM auth_mfa_secret WHERE "user" = $1', [userId])).rows[0]
/** Makes the last used step one earlier: the next login need not wait 30 s for a fresh code. */
const rewind = async (userId: number): Promise<void> => { await app.pg.query('UPDATE auth_mfa_secret SET last_used_step = last_used_step - 1 WHERE "user" = $1', [userId]) }

t.test('the whole life of an enrollment, with codes computed from the returned secret', async (t) => {
  const user = await newUser()
  const token = await sessionOf(user.username)

  // register
  t.same((await mfa(token, { action: 'register' })).json(), BAD_PASSWORD, 'no password')
  t.same((await mfa(token, { action: 'register', password: 'wrong-password' })).json(), BAD_PASSWORD)
  t.same((await mfa(token, { action: 'confirm', code: '123456' })).json(), NOT_SET_UP, 'confirm before register: 409')
  t.same((await mfa(token, { action: 'revoke', password: 'user-password' })).json(), NOT_SET_UP)
  const res = await mfa(token, { action: 'register', password: 'user-password' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const enrollment = res.json()
  t.same(Object.keys(enrollment).sort(), ['otpauth_url', 'qrcode_image', 'recovery_codes', 'secret'])
  t.match(enrollment.qrcode_image, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/)
  t.match(enrollment.secret, /^[A-Z2-7]{32}$/)
  t.equal(enrollment.otpauth_url, `otpauth://totp/Test%20Site:${user.username}?issuer=Test%20Site&secret=${enrollment.secret}&algorithm=SHA1&digits=6&period=30`)
  t.equal(enrollment.recovery_codes.length, 8)
  for (const code of enrollment.recovery_codes) t.match(code, /^[a-z0-9]{6}-[a-z0-9]{6}$/)

  // the secret at rest
  const stored = await row(user.id)
  t.notMatch(JSON.stringify(stored), enrollment.secret, 'no base32 secret in clear anywhere in the row')
  t.notMatch(JSON.stringify(stored), enrollment.recovery_codes[0], 'nor a recovery code')
  t.match(stored.secret, /^v1:/)
  t.equal(decryptSecret(parseKeys(newKey)!, stored.secret, String(user.id)), enrollment.secret, 'encrypted with the first key')

  // pending: no code asked at login
  const pendingLogin = await loginAs(user.username)
  t.equal(pendingLogin.statusCode, 200, 'a pending enrollment asks for no code')
  t.equal((await app.inject({ method: 'POST', url: '/jwt', headers: JSON_TYPE, payload: JSON.stringify({ username: user.username, password: 'user-password' }) })).statusCode, 200)

  // confirm
  t.same((await mfa(token, { action: 'confirm', code: totpCode(enrollment.secret) === '000000' ? '111111' : '000000' })).json(), INVALID_CODE)
  t.same((await mfa(token, { action: 'confirm' })).json(), INVALID_CODE, 'no code')
  t.same((await mfa(token, { action: 'confirm', code: '9'.repeat(10_000) })).json(), INVALID_CODE, '10,000 digits')
  t.same((await mfa(token, { action: 'confirm', code: 123456 })).json(), INVALID_CODE, 'a number')
  t.equal((await row(user.id)).confirmed_at, null)
  const confirmed = await mfa(token, { action: 'confirm', code: await freshCode(enrollment.secret) })
  t.same([confirmed.statusCode, confirmed.json()], [200, { message: 'MFA enabled' }])
  t.same((await mfa(token, { action: 'confirm', code: totpCode(enrollment.secret) })).json(), ENROLLED, 'confirm again: 409')
  t.same((await mfa(token, { action: 'register', password: 'user-password' })).json(), ENROLLED)
  t.same((await mfa(token, { action: 'register', password: 'wrong-password' })).json(), BAD_PASSWORD, 'the password is checked first')

  // login with MFA: sessionLogin
  t.same((await loginAs(user.username)).json(), REQUIRED)
  t.same((await loginAs(user.username, { mfa_code: '' })).json(), REQUIRED)
  t.same((await loginAs(user.username, { mfa_code: '12345' })).json(), FAILED)
  t.same((await loginAs(user.username, { mfa_code: '9'.repeat(10_000) })).json(), FAILED, '10,000 digits: 401, not 500')
  t.same((await loginAs(user.username, { mfa_code: 123456 })).json(), REQUIRED, 'not a string: as missing')
  t.same((await loginAs(user.username, { mfa_code: totpCode(enrollment.secret) })).json(), USED, 'the confirming code is spent, and the user told to wait')
  await rewind(user.id)
  const code = await freshCode(enrollment.secret)
  const good = await loginAs(user.username, { mfa_code: code })
  t.same([good.statusCode, good.json()], [200, { message: 'logged in' }], 'the current code works')
  t.same((await loginAs(user.username, { mfa_code: code })).json(), USED, 'once: the same code again is refused')
  await app.pg.query('UPDATE auth_mfa_secret SET last_used_step = NULL WHERE "user" = $1', [user.id])
  t.same((await loginAs(user.username, { mfa_code: totpCode(enrollment.secret, Date.now() - 60_000) })).json(), FAILED, 'a code of two windows ago')
  t.same((await loginAs(user.username, { mfa_code: 'wrong-password' })).json(), FAILED)

  // jwtLogin
  const jwt = async (extra: Record<string, unknown>) =>
    await app.inject({ method: 'POST', url: '/jwt', headers: JSON_TYPE, payload: JSON.stringify({ username: user.username, password: 'user-password', ...extra }) })
  t.same((await jwt({})).json(), REQUIRED)
  t.same((await jwt({ mfa_code: totpCode(enrollment.secret) === '000000' ? '111111' : '000000' })).json(), FAILED)
  t.same((await jwt({ mfa_code: { $gt: '' } })).json(), REQUIRED, 'an object: as missing')
  t.equal((await jwt({ mfa_code: 'x'.repeat(10_000) })).statusCode, 401)
  await rewind(user.id)
  await app.pg.query('UPDATE auth_mfa_secret SET last_used_step = $2 WHERE "user" = $1', [user.id, stepAt(Date.now()) - 5])
  const jwtCode = await freshCode(enrollment.secret)
  const token2 = await jwt({ mfa_code: jwtCode })
  t.equal(token2.statusCode, 200)
  t.match(token2.json(), { token: /^eyJ/ })
  t.same((await jwt({ mfa_code: jwtCode })).json(), USED, 'replay through the other login too')
  const wrongPassword = await app.inject({ method: 'POST', url: '/jwt', headers: JSON_TYPE, payload: JSON.stringify({ username: user.username, password: 'nope-nope', mfa_code: jwtCode }) })
  t.same(wrongPassword.json().message, 'Login failed', 'the password is checked before the code')

  // recovery codes
  const [first, second] = enrollment.recovery_codes
  t.equal((await loginAs(user.username, { mfa_code: first })).statusCode, 200, 'a recovery code works')
  t.same((await loginAs(user.username, { mfa_code: first })).json(), FAILED, 'once')
  t.equal((await row(user.id)).recovery_codes.length, 7)
  t.equal((await jwt({ mfa_code: second.toUpperCase().replace('-', '') })).statusCode, 200, 'case and dash do not matter')

  // revoke
  t.same((await mfa(token, { action: 'revoke' })).json(), BAD_PASSWORD)
  t.same((await mfa(token, { action: 'revoke', password: 'wrong-password' })).json(), BAD_PASSWORD)
  const revoked = await mfa(token, { action: 'revoke', password: 'user-password' })
  t.same([revoked.statusCode, revoked.json()], [200, { message: 'MFA disabled' }])
  t.not((await row(user.id)).revoked_at, null)
  t.same((await mfa(token, { action: 'revoke', password: 'user-password' })).json(), NOT_SET_UP)
  t.equal((await loginAs(user.username)).statusCode, 200, 'after revoke: log in without a code')
  const again = await mfa(token, { action: 'register', password: 'user-password' })
  t.equal(again.statusCode, 200, 'and set up again')
  t.not(again.json().secret, enrollment.secret)
})

t.test('a row written under the old key works after rotation (the second key of the array)', async (t) => {
  const user = await newUser()
  const before = authenticatorProvider({ encryptionKey: oldKey.toString('base64') })
  const { secret } = (await before.register(user, { db: app.pg }))!
  t.equal(await before.confirm(user.id, await freshCode(secret), { db: app.pg }), 'enabled')
  await rewind(user.id)
  t.equal((await loginAs(user.username, { mfa_code: await freshCode(secret) })).statusCode, 200, 'the app, on [newKey, oldKey], reads it')
})

t.test('bad input to the set-up: 4xx in the §1 shape, never a 500, nothing half-written', async (t) => {
  const user = await newUser()
  const token = await sessionOf(user.username)
  const cases: Array<[unknown, object]> = [
    [{}, UNKNOWN_ACTION],
    [{ action: 'enable' }, UNKNOWN_ACTION],
    [{ action: 'REGISTER', password: 'user-password' }, UNKNOWN_ACTION],
    [{ action: ['register'], password: 'user-password' }, UNKNOWN_ACTION],
    [{ action: 5 }, UNKNOWN_ACTION],
    [{ action: 'constructor' }, UNKNOWN_ACTION],
    [[], UNKNOWN_ACTION],
    ['null', UNKNOWN_ACTION],
    [{ action: 'register', password: 'x'.repeat(200_000) }, BAD_PASSWORD],
    [{ action: 'register', password: 'user-password\u0000' }, BAD_PASSWORD],
    [{ action: 'register', password: 12345678 }, BAD_PASSWORD],
    [{ action: 'register', password: '🔑🔑🔑🔑🔑🔑' }, BAD_PASSWORD]
  ]
  for (const [payload, expected] of cases) {
    const res = await mfa(token, payload)
    t.same([res.statusCode, res.json()], [(expected as { statusCode: number }).statusCode, expected], JSON.stringify(payload).slice(0, 40))
  }
  t.equal(await row(user.id), undefined, 'no secret written')
  const bad = await mfa(token, '{"action":', '/mfa')
  t.same([bad.statusCode, bad.json().code], [400, 'TABLECRUD_ERR_BODY_NOT_JSON'])
  const text = await mfa(token, 'action=register', '/mfa', { 'content-type': 'text/plain' })
  t.equal(text.statusCode, 415)
  const put = await app.inject({ method: 'PUT', url: '/mfa/', cookies: { id: token } })
  t.same([put.statusCode, put.headers.allow], [405, 'GET, HEAD, POST'])
})

t.test('without a user: 401 Not logged in; sessionAuth answers first where it guards', async (t) => {
  const NOT_LOGGED_IN = { statusCode: 401, code: 'TABLECRUD_ERR_AUTH_NOT_LOGGED_IN', error: 'Unauthorized', message: 'Not logged in' }
  t.same((await mfa(null, { action: 'register', password: 'x' }, '/open')).json(), NOT_LOGGED_IN)
  t.same((await app.inject('/open/')).json(), NOT_LOGGED_IN)
  t.same((await app.inject('/open/qrcode.png')).json(), NOT_LOGGED_IN)
  t.equal((await mfa(null, { action: 'register' })).json().code, 'TABLECRUD_ERR_AUTH_SESSION')
})

t.test('the page: set-up form, then the QR code, key and codes, then the revoke form', async (t) => {
  const user = await newUser()
  const token = await sessionOf(user.username)
  const get = async (url = '/mfa/') => await app.inject({ url, cookies: { id: token } })
  const fresh = await get()
  t.equal(fresh.statusCode, 200)
  t.match(fresh.headers['content-type'], /^text\/html/)
  t.match(fresh.body, /<input type="hidden" name="action" value="register">/)
  t.match(fresh.body, /name="password" type="password"/)
  t.notMatch(fresh.body, /<script|<style|style=|data:|csrftoken/)
  t.equal((await get('/mfa/qrcode.png')).statusCode, 404, 'no QR code without a pending secret')

  const formBody = form([['action', 'register'], ['password', 'user-password'], ['format', 'html']])
  const registered = await mfa(token, formBody, '/mfa', FORM)
  t.equal(registered.statusCode, 200)
  t.match(registered.headers['content-type'], /^text\/html/)
  const secret = /<code id="secret">([A-Z2-7]{32})<\/code>/.exec(registered.body)?.[1]
  t.ok(secret, 'the key is on the page')
  t.match(registered.body, /<img id="qrcode" src="\/mfa\/qrcode.png"/)
  const codes = [...registered.body.matchAll(/<li><code>([a-z0-9]{6}-[a-z0-9]{6})<\/code><\/li>/g)].map((m) => m[1])
  t.equal(codes.length, 8, 'the recovery codes are on the page')
  t.match(registered.body, /<input type="hidden" name="action" value="confirm">/)
  t.notMatch(registered.body, /data:/, 'the image is a same-site URL: default-src \'self\' allows it')

  const png = await get('/mfa/qrcode.png')
  t.equal(png.statusCode, 200)
  t.equal(png.headers['content-type'], 'image/png')
  t.same([...png.rawPayload.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47])

  const pending = await get()
  t.match(pending.body, new RegExp(`<code id="secret">${secret!}</code>`), 'a pending secret is shown again')
  t.notMatch(pending.body, /recovery-codes/, 'recovery codes only once')

  const wrong = await mfa(token, form([['action', 'confirm'], ['code', 'abc<>'], ['format', 'html']]), '/mfa', FORM)
  t.equal(wrong.statusCode, 422)
  t.match(wrong.body, /<p class="message" id="form-message" role="alert">Invalid MFA code.<\/p>/)
  const enabled = await mfa(token, form([['action', 'confirm'], ['code', await freshCode(secret!)], ['format', 'html']]), '/mfa', FORM)
  t.equal(enabled.statusCode, 200)
  t.match(enabled.body, /<p class="notice" role="status">MFA enabled<\/p>/)
  t.match(enabled.body, /<input type="hidden" name="action" value="revoke">/)
  const enrolled = await get()
  t.match(enrolled.body, /value="revoke"/)
  t.notMatch(enrolled.body, /id="secret"/, 'no secret once enrolled')
  t.equal((await get('/mfa/qrcode.png')).statusCode, 404)

  const csrf = await app.inject({ url: '/csrf/', cookies: { id: token } })
  t.match(csrf.body, /<input type="hidden" name="csrftoken" value="c&lt;s&gt;rf">/)
  const refusedRevoke = await mfa(token, form([['action', 'revoke'], ['password', 'nope'], ['format', 'html']]), '/mfa', FORM)
  t.same([refusedRevoke.statusCode, /Incorrect password/.test(refusedRevoke.body)], [401, true])
  const disabled = await mfa(token, form([['action', 'revoke'], ['password', 'user-password'], ['format', 'html']]), '/mfa', FORM)
  t.match(disabled.body, /MFA disabled/)
  t.match(disabled.body, /value="register"/)
})

t.test('options are checked at registration', async (t) => {
  const attempt = async (options: object): Promise<void> => {
    const probe = Fastify()
    probe.decorate('pg', app.pg)
    try {
      await probe.register(mfaSetup, options as never)
      await probe.ready()
    } finally {
      await probe.close()
    }
  }
  const PROVIDER = { code: 'TABLECRUD_ERR_OPTIONS', message: 'mfaSetup: the option provider is required: a provider made by authenticatorProvider({ encryptionKey })' }
  await t.rejects(attempt({}), PROVIDER)
  await t.rejects(attempt({ provider: { name: 'x' } }), PROVIDER)
  await t.rejects(attempt({ provider: totp, authTable: 5 }), { message: /^mfaSetup: the option authTable / })
  await t.rejects(attempt({ provider: totp, template: 5 }), { message: /^mfaSetup: the option template / })
  await t.resolves(attempt({ provider: totp, template: () => 'page' }))
  await t.rejects(async () => { await Fastify().register(jwtLogin, { secret: 's', mfaProviders: [{}] as never }).ready() }, { message: /^jwtLogin: the option mfaProviders / })
})
