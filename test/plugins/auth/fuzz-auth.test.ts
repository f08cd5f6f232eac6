import t, { type Test } from 'tap'
import fc from 'fast-check'
import { randomBytes } from 'node:crypto'
import type { FastifyRequest, LightMyRequestResponse } from 'fastify'
import { createTables } from '../../../lib/db/index.js'
import { authenticatorProvider } from '../../../lib/auth/mfa.js'
import { createSession, hashSessionToken } from '../../../lib/auth/sessions.js'
import { totpCode } from '../../../lib/auth/totp.js'
import { createToken, createUser } from '../../../lib/auth/users.js'
import { mfaSecretTable } from '../../../lib/table/auth-tables.js'
import { changePassword } from '../../../plugins/auth/change-password.js'
import { jwtAuth } from '../../../plugins/auth/jwt-auth.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { mfaSetup } from '../../../plugins/auth/mfa-setup.js'
import { register } from '../../../plugins/auth/register.js'
import { sessionAuth } from '../../../plugins/auth/session-auth.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { sessionLogout } from '../../../plugins/auth/session-logout.js'
import { tokenAuth } from '../../../plugins/auth/token-auth.js'
import { tokenLogin } from '../../../plugins/auth/token-login.js'
import { csrf } from '../../../plugins/web/csrf.js'
import { contractProblem } from '../../helpers/contract.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, craftJwt, readJwt } from './auth-app.js'
import { createSessionTables } from './session-app.js'

/*
 * Property test, the auth sibling of crud/fuzz.test.ts and crud/fuzz-writes.test.ts: random and
 * hostile requests to the login, sign-up, password, logout and MFA routes, and hostile
 * credentials on the routes token, JWT and session auth protect, never get a 5xx (SPEC §1), every
 * answer is JSON in the SPEC shape or, where SPEC §5 says so, the form's page (a body with
 * `format=html`) or a 303 to a path of this site, and a refused request changes nothing: no user
 * created, no password changed, no token, session or MFA secret issued.
 */

const db = await testDatabase(t)
await createSessionTables(db)

/** Runs per property; FUZZ_RUNS raises it for a longer hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 100)

const SECRET = 'fuzz-auth-jwt-secret'
// Recovery codes enough for the valid MFA logins, a window of one step so that a code computed
// here is still good when the server checks it, and a lockout no run reaches (its counter is
// left out of the snapshot, below).
const totp = authenticatorProvider({ encryptionKey: randomBytes(32), recoveryCodeCount: 100, validWindow: 1, maxFailures: 1000 })

const me = async (request: FastifyRequest): Promise<{ username: string | null }> => ({ username: request.user?.username ?? null })
const ME = { method: ['GET', 'POST', 'DELETE'] as Array<'GET' | 'POST' | 'DELETE'>, url: '/me', handler: me }

const app = await authApp(t, db, async (app) => {
  await createTables(app.pg, [mfaSecretTable])
  app.register(tokenLogin, { prefix: '/token-login' })
  app.register(jwtLogin, { prefix: '/jwt-login', secret: SECRET, mfaProviders: [totp] })
  app.register(register, { prefix: '/register', userDefaults: { active: true } })
  app.register(async (api) => {
    await api.register(tokenAuth)
    api.route(ME)
  }, { prefix: '/token' })
  app.register(async (api) => {
    await api.register(jwtAuth, { secret: SECRET })
    api.route(ME)
  }, { prefix: '/jwt' })
  // The session routes, once as they are and once behind the csrf plugin.
  for (const prefix of ['/s', '/c']) {
    app.register(async (site) => {
      if (prefix === '/c') await site.register(csrf)
      await site.register(sessionLogin, { prefix: '/login', redirectTo: '/home/', mfaProviders: [totp] })
      await site.register(sessionLogout, { prefix: '/logout', redirectTo: '/bye/' })
      await site.register(register, { prefix: '/register', userDefaults: { active: true } })
      await site.register(async (account) => {
        await account.register(sessionAuth)
        account.route(ME)
        await account.register(changePassword, { prefix: '/change-password' })
        await account.register(mfaSetup, { prefix: '/mfa', provider: totp })
      })
    }, { prefix })
  }
})

const PASSWORDS = { ann: 'ann-password-1', bob: 'bob-password-1', idle: 'idle-password-1', mfa: 'mfa-password-1', setup: 'setup-password-1', cat: 'cat-password-1' } as const
type Person = keyof typeof PASSWORDS
const users = new Map<string, number>()
for (const [username, password] of Object.entries(PASSWORDS)) {
  const user = await createUser(app.pg, { username, password, email: `${username}@example.org`, active: username !== 'idle' })
  users.set(username, user.id)
}
const changer = await createUser(app.pg, { username: 'changer', password: 'changer-password-0' })
/** The changer's password as it stands: a change that succeeds moves it on. */
let changerPassword = 'changer-password-0'

/** The newest token of each user that has one: what token login answers. */
const TOKENS = new Map<string, string>()
for (const name of ['ann', 'bob']) {
  // Two tokens each: token login answers the newest (docs/auth.md).
  await createToken(app.pg, users.get(name)!)
  TOKENS.set(name, await createToken(app.pg, users.get(name)!))
}
const ANN_TOKEN = TOKENS.get('ann')!

// The MFA user, enrolled: the recovery codes are spent by the valid logins, one each.
const mfaEnrollment = (await totp.register({ id: users.get('mfa')!, username: 'mfa' }, { db: app.pg }))!
if (await totp.confirm(users.get('mfa')!, totpCode(mfaEnrollment.secret), { db: app.pg }) !== 'enabled') throw new Error('the MFA user could not enroll')
const recoveryCodes = [...mfaEnrollment.recovery_codes]

const jwtOf = async (username: Person): Promise<string> => {
  const response = await app.inject({ method: 'POST', url: '/jwt-login', payload: { username, password: PASSWORDS[username] } })
  return response.json().token
}
const ANN_JWT = await jwtOf('ann')
const BOB_JWT = await jwtOf('bob')

/** Sessions whose token a cookie may carry, and whose they are. */
const sessionOwners = new Map<string, string>()
const newSession = async (username: string): Promise<string> => {
  const { token } = await createSession(app.pg, username === 'changer' ? changer.id : users.get(username)!)
  sessionOwners.set(token, username)
  return token
}
const EXPIRED_SESSION = await newSession('ann')
await app.pg.query('UPDATE auth_session SET expiry_date = expiry_date - interval \'2 hours\', max_expiry_date = max_expiry_date - interval \'8 days\' WHERE token_hash = $1', [hashSessionToken(EXPIRED_SESSION)])
sessionOwners.delete(EXPIRED_SESSION)
const setupSession = await newSession('setup')
let changerSession: string | null = null

/**
 * Row counts and checksums of the auth tables, in one statement through the app's own pool.
 * The MFA lockout's counter (`failed_count`, `failed_since`) is left out: docs/auth.md counts every
 * authenticator code tried at login in the database, a refused one included, by design.
 */
async function snapshot (): Promise<Record<string, string>> {
  const sum = (table: string, row = 't'): string => `(SELECT count(*) || ':' || md5(coalesce(string_agg(${row}::text, '|' ORDER BY t.id), '')) FROM ${table} AS t) AS ${table}`
  const { rows } = await app.pg.query(`SELECT ${sum('auth_user')}, ${sum('auth_token')}, ${sum('auth_session')},
    ${sum('auth_mfa_secret', 'row(t.id, t."user", t.secret, t.recovery_codes, t.created_at, t.confirmed_at, t.revoked_at, t.last_used_at, t.last_used_step)')}`)
  return rows[0]
}

const changedTables = (before: Record<string, string>, after: Record<string, string>): string[] => Object.keys(before).filter((k) => before[k] !== after[k])

/** One request as sent. */
interface Sent {
  readonly method: 'GET' | 'HEAD' | 'POST' | 'DELETE'
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly payload?: string
  /** The route answers every request with `Cache-Control: no-store` (login and form routes, SPEC §3.2). */
  readonly noStore: boolean
  /** A page may answer (GET of a form route): HTML, its stylesheet or the MFA QR code. */
  readonly page?: boolean
}

/** What a property sends in one run, and what its success must look like. */
interface Case {
  readonly sent: Sent
  /** Why a 2xx JSON body is wrong, or null. */
  readonly ok: (body: any) => string | null
  /** Why a success (2xx or 303) did not do what it should, read from the tables; or null. */
  readonly success?: (response: LightMyRequestResponse, before: Record<string, string>, after: Record<string, string>) => string | null | Promise<string | null>
  /** Why any answer is not the one this request must get, or null. */
  readonly expect?: (response: LightMyRequestResponse) => string | null
}

const FORM_TYPE = 'application/x-www-form-urlencoded'
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const jsonOf = (text: string | undefined): unknown => {
  try {
    return JSON.parse(text ?? '')
  } catch {
    return undefined
  }
}

/**
 * Why an answer breaks the contract, or null: a 303 (a form's success) goes to a path of this
 * site, never elsewhere (SPEC §5: no open redirect); a page is the answer to a body asking for
 * one (`format=html`, SPEC §5), with a status `allowed`; anything else is held to contractProblem.
 */
function answerProblem (response: LightMyRequestResponse, sent: Sent, allowed: readonly number[], ok: (body: any) => string | null): string | null {
  if (response.statusCode >= 500) return `a ${response.statusCode}: ${response.body}`
  if (sent.noStore && response.headers['cache-control'] !== 'no-store') return `Cache-Control ${String(response.headers['cache-control'])} on a ${response.statusCode}`
  if (response.statusCode === 303 && allowed.includes(303)) {
    const location = String(response.headers.location)
    return /^\/(?![/\\])[\x21-\x7e]*$/.test(location) ? null : `a 303 to ${location}`
  }
  // A HEAD answer has no body to judge: its status must be one a GET may get.
  if (sent.method === 'HEAD') return allowed.includes(response.statusCode) ? null : `status ${response.statusCode}`
  const type = String(response.headers['content-type'])
  if (sent.page === true && response.statusCode === 200 && /^(text\/css|image\/png)/.test(type)) return null
  if (type.startsWith('text/html')) {
    if (!allowed.includes(response.statusCode)) return `status ${response.statusCode} (a page)`
    if (sent.page === true) return /<script|javascript:/i.test(response.body) ? `markup of the request in the page: ${response.body.slice(0, 300)}` : null
    if (sent.payload === undefined || !/format/.test(sent.payload) || !/html/.test(sent.payload)) return `a page for a body that did not ask for one: ${response.body.slice(0, 200)}`
    return /<form/.test(response.body) ? null : `a page without a form: ${response.body.slice(0, 200)}`
  }
  return contractProblem(response, allowed, ok)
}

/**
 * Sends what `prepare` makes of each plan of `arbitrary`; a 5xx, an answer out of the contract, a
 * success that did not do its work, or a refusal that changed any auth table fails the property.
 */
async function check<P> (t: Test, name: string, arbitrary: fc.Arbitrary<P>, prepare: (plan: P) => Promise<Case>, allowed: readonly number[]): Promise<void> {
  const statuses = new Map<number, number>()
  let runs = 0
  await fc.assert(fc.asyncProperty(arbitrary, async (plan) => {
    runs++
    const { sent, ok, success, expect } = await prepare(plan)
    const before = await snapshot()
    const response = await app.inject({ method: sent.method, url: sent.url, headers: sent.headers, ...(sent.payload === undefined ? {} : { payload: sent.payload }) })
    statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
    let found = answerProblem(response, sent, allowed, ok) ?? expect?.(response) ?? null
    if (found === null) {
      const after = await snapshot()
      if (response.statusCode >= 400) {
        const changed = changedTables(before, after)
        if (changed.length > 0) found = `a refused request (${response.statusCode}: ${response.body.slice(0, 200)}) changed ${changed.join(', ')}`
      } else if (success !== undefined) {
        found = await success(response, before, after)
      }
    }
    if (found !== null) {
      const headers = JSON.stringify(sent.headers, (_k, v: unknown) => typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}...(${v.length})` : v)
      throw new Error(`${sent.method} ${sent.url} ${headers} ${String(sent.payload?.slice(0, 300))}: ${found.slice(0, 500)}`)
    }
  }), { numRuns: RUNS })
  t.ok(runs >= RUNS, `${name}: ${runs} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  // The arbitraries reach valid requests too: not everything is refused.
  const succeeded = [...statuses].filter(([status]) => status < 400).reduce((n, [, count]) => n + count, 0)
  t.ok(succeeded >= RUNS / 20, `${name}: some requests succeed (${succeeded})`)
}

/** The row with `pairs` set as own keys, `__proto__` and `constructor` included (a literal would set the prototype). */
function withKeys (row: Record<string, unknown>, pairs: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const out = { ...row }
  for (const [key, value] of pairs) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  return out
}

/** Values of every wrong kind for a field: wrong JSON types, empty, control characters, lone surrogates, very long. */
const HOSTILE: readonly unknown[] = [
  null, 0, 42, -1, 1.5, 1e308, true, false, [], [''], ['ann', 'bob'], {}, { a: 1 }, [{}],
  '', ' ', '\t', '\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\udc00\ud800', '\uFEFF', '\u202e', 'é', '𝄞'.repeat(40), '𝄞'.repeat(129),
  'a'.repeat(5), 'a'.repeat(129), 'a'.repeat(10_000), 'b'.repeat(300_000), "' OR '1'='1", '"; DROP TABLE auth_user; --', '$1', '%', '%00', '%ud800',
  'null', 'undefined', '[object Object]', '__proto__', 'constructor', 'ann', 'ANN', ' ann', 'ann ', 'ann\u0000', 'html', '/x/', '//evil.example/', 'https://evil.example/'
]

/** Keys no route takes, or takes only from the built-in forms; names every object has. */
const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'format', 'next', 'mfa_code', 'mfa_provider', 'csrftoken', 'id', 'admin', 'active', 'superuser', 'USERNAME', 'username ', '']

const hostile = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) }
)

/** Bodies no route takes: not JSON, not an object, poisoned prototypes, duplicate keys, over the body limit. */
const ODD_BODIES = [
  '', ' ', 'null', '42', '"x"', 'true', '[]', '[{}]', '[{"username":"ann","password":"ann-password-1"}]', '{', '{"username":', "{'username':'ann'}",
  '{"username":"ann","password":"ann-password-1"}{}', '{"username":"ann","username":"bob","password":"ann-password-1"}',
  '{"__proto__":{"username":"ann","password":"ann-password-1"}}', '{"constructor":{"prototype":{"password":"x"}}}',
  '{"username":"\\ud800","password":"\\u0000"}', '\uFEFF{"username":"ann","password":"ann-password-1"}', 'username=ann&password=ann-password-1',
  '\u0000', '1e309', '{"username":1e309,"password":-1e309}', '['.repeat(10_000), `{"username":"${'x'.repeat(1_100_000)}","password":"p"}`
]

/** Raw tails of a urlencoded body: malformed escapes, empty names, repeats, prototype names. */
const FORM_TAILS = ['', '', '', '&', '&&=&', '&%zz=%', '&a=%ud800', '&%E0%A4%A=1', '&username', '&password=', '&__proto__[x]=1', '&constructor=1', '&format=html', '&format=html&format=html', '&=', `&pad=${'x'.repeat(2_000_000)}`]

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON']
const ODD_TYPES = ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/vnd.api+json', '', 'application/json; charset=utf-16',
  'application/json; charset=latin1', '*/*', 'text/html', `${FORM_TYPE}; charset=iso-8859-1`, 'application/x-www-form-urlencoded-x', 'none']

/** A urlencoded form of a record: arrays as repeated fields, other values as their text. */
function formOf (record: Record<string, unknown>): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(record)) {
    for (const one of Array.isArray(value) ? value : [value]) params.append(key, typeof one === 'string' ? one : JSON.stringify(one) ?? 'undefined')
  }
  return params.toString()
}

interface Body { payload: string | undefined, headers: Record<string, string> }

/**
 * Bodies for a route whose valid bodies are `valid`: those as JSON or as forms (`forms`, SPEC §5),
 * the same with fields dropped, hostile values or unknown keys, odd text, odd content types.
 */
function bodies (valid: fc.Arbitrary<Record<string, unknown>>, fields: readonly string[], forms: boolean): fc.Arbitrary<Body> {
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, { weight: 2, arbitrary: fc.constantFrom(...EXTRA_KEYS) })
  const dropped = fc.tuple(valid, fc.subarray([...fields], { minLength: 1 })).map(([row, gone]) => Object.fromEntries(Object.entries(row).filter(([k]) => !gone.includes(k))))
  const dirty = fc.tuple(valid, fc.array(fc.tuple(key, hostile), { minLength: 1, maxLength: 3 })).map(([row, pairs]) => withKeys(row, pairs))
  const record = fc.oneof({ weight: 5, arbitrary: valid }, { weight: 4, arbitrary: dirty }, { weight: 1, arbitrary: dropped })
  const json = fc.tuple(record, fc.constantFrom(...JSON_TYPES)).map(([row, type]): Body => ({ payload: JSON.stringify(row), headers: { 'content-type': type } }))
  const form = fc.tuple(record, fc.constantFrom(...FORM_TAILS)).map(([row, tail]): Body => ({ payload: formOf(row) + tail, headers: { 'content-type': FORM_TYPE } }))
  const odd = fc.tuple(fc.constantFrom(...ODD_BODIES), fc.constantFrom(...JSON_TYPES, FORM_TYPE)).map(([payload, type]): Body => ({ payload, headers: { 'content-type': type } }))
  const oddType = fc.tuple(valid, fc.constantFrom(...ODD_TYPES)).map(([row, type]): Body => ({ payload: JSON.stringify(row), headers: type === 'none' ? {} : { 'content-type': type } }))
  return fc.oneof(
    { weight: 6, arbitrary: json },
    { weight: forms ? 4 : 1, arbitrary: form },
    { weight: 1, arbitrary: odd },
    { weight: 1, arbitrary: oddType },
    { weight: 1, arbitrary: fc.constant<Body>({ payload: undefined, headers: {} }) }
  )
}

const WRONG_PASSWORDS = ['wrong-password', 'ANN-PASSWORD-1', 'ann-password-1 ', 'ann-password-', 'a'.repeat(73), '𝄞'.repeat(20), 'pass\u0000word']

/** Credentials of a person: the right password mostly, sometimes another's or a wrong one; now and then a user that does not exist. */
const credentials = (people: readonly Person[]): fc.Arbitrary<{ username: string, password: string }> => fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...people).map((p) => ({ username: p as string, password: PASSWORDS[p] })) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom<string>(...people, 'nobody', 'ANN', 'idle'), fc.constantFrom<string>(...WRONG_PASSWORDS, ...Object.values(PASSWORDS))).map(([username, password]) => ({ username, password })) }
)

/** An MFA code: a recovery code of the MFA user (spent once), the current one, or a hostile one. */
const RECOVERY = 'recovery'
const CURRENT = 'current'
const MFA_CODES = ['000000', '123456', '1234567', '12345', ' 123456', '１２３４５６', '123 456', '12345a', 'abcdef-abcdef', 'ABCDEF-ABCDEF', 'abcdefabcdef', '9'.repeat(10_000), '\u0000'.repeat(6)]
const mfaCode = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(RECOVERY, CURRENT) }, { weight: 2, arbitrary: fc.constantFrom(...MFA_CODES) }, { weight: 1, arbitrary: hostile })

/** A plan's MFA code, made concrete: a recovery code is taken off the list, so it is sent once. */
const codeOf = (plan: unknown): unknown =>
  plan === RECOVERY ? recoveryCodes.shift() ?? 'spent-recovery' : plan === CURRENT ? totpCode(mfaEnrollment.secret) : plan

/** A login body of `people`, with now and then an MFA code and provider, `format=html` or a `next`. */
const loginRecord = (people: readonly Person[]): fc.Arbitrary<Record<string, unknown>> => fc.tuple(
  credentials(people),
  fc.option(mfaCode, { freq: 2 }),
  fc.option(fc.constantFrom('authenticator', 'sms', ''), { freq: 4 }),
  fc.option(fc.constant('html'), { freq: 4 }),
  fc.option(fc.constantFrom('/me/', '//evil.example/', 'https://evil.example/', '/\\evil', '/a\tb', 'javascript:alert(1)'), { freq: 6 })
).map(([creds, code, provider, format, next]) => ({
  ...creds,
  ...(code === null ? {} : { mfa_code: code }),
  ...(provider === null ? {} : { mfa_provider: provider }),
  ...(format === null ? {} : { format }),
  ...(next === null ? {} : { next })
}))

const LOGIN_FIELDS = ['username', 'password', 'mfa_code', 'mfa_provider']

/** Replaces the plan's MFA code by a real one in a body, JSON or form. */
function withCode (body: Body): Body {
  if (body.payload === undefined || (!body.payload.includes(RECOVERY) && !body.payload.includes(CURRENT))) return body
  const code = codeOf(body.payload.includes(RECOVERY) ? RECOVERY : CURRENT) as string
  return { ...body, payload: body.payload.replaceAll(RECOVERY, code).replaceAll(CURRENT, code) }
}

t.test('token login: hostile bodies never get a 5xx; a refusal issues nothing', async (t) => {
  const known = new Set(TOKENS.values())
  await check(t, 'POST /token-login', bodies(credentials(['ann', 'bob', 'idle', 'mfa']), ['username', 'password'], false), async (body) => ({
    sent: { method: 'POST', url: '/token-login', ...body, noStore: true },
    ok: (answer) => isObject(answer) && Object.keys(answer).join() === 'token' && known.has(answer.token as string) ? null : 'not the token of a user'
  }), [200, 400, 401, 413, 415])
})

t.test('JWT login, MFA codes included: no 5xx; a refusal issues nothing', async (t) => {
  const ids = new Set([users.get('ann'), users.get('bob'), users.get('mfa')])
  await check(t, 'POST /jwt-login', bodies(loginRecord(['ann', 'bob', 'idle', 'mfa']), LOGIN_FIELDS, false), async (body) => ({
    sent: { method: 'POST', url: '/jwt-login', ...withCode(body), noStore: true },
    ok: (answer) => {
      if (!isObject(answer) || Object.keys(answer).join() !== 'token' || typeof answer.token !== 'string') return 'not {token}'
      const { header, payload } = readJwt(answer.token)
      return header.alg === 'HS256' && ids.has(payload.user_id) ? null : `a JWT of ${JSON.stringify(payload)}`
    }
  }), [200, 400, 401, 413, 415, 429])
})

/** A session login's success: a cookie of a new session of the database, whose user logged in. */
async function loggedIn (response: LightMyRequestResponse): Promise<string | null> {
  const cookie = [response.headers['set-cookie']].flat().find((c) => c?.startsWith('id='))
  const token = cookie?.slice(3, cookie.indexOf(';'))
  if (token === undefined) return `no session cookie: ${String(response.headers['set-cookie'])}`
  const { rows } = await app.pg.query('SELECT u.username FROM auth_session s JOIN auth_user u ON u.id = s."user" WHERE s.token_hash = $1', [hashSessionToken(token)])
  return rows.length === 1 && ['ann', 'bob', 'mfa', 'cat'].includes(rows[0].username) ? null : `a session of ${JSON.stringify(rows)}`
}

/**
 * Cookies a request may carry: none, a live session of someone, an expired one, tampered and
 * malformed ones. `{ann}` stands for the token of a session of ann made for the request (a login
 * or logout ends the session of its cookie), `{ann:cut}` for it one character short, `{ann:flip}`
 * with its last character changed, `{ann:upper}` in capitals.
 */
const SESSION_COOKIES: readonly string[] = [
  'id={ann}', 'id={bob}', 'id={idle}', `id=${EXPIRED_SESSION}`, 'id={ann:cut}', 'id={ann}A', 'id={ann:flip}', 'id={ann:upper}', `id=${'A'.repeat(43)}`, 'id=', 'id', '=',
  'id="{ann}"', 'id={ann}%3D', 'ID={ann}', 'sid={ann}', 'id={bob}; id={ann}', 'id={ann};id={bob}', 'id=%', 'id=%zz', 'id=%00', 'id=\u00e9', `id=${'x'.repeat(10_000)}`,
  'id=null', 'id=undefined', 'id=__proto__', '__proto__={ann}', 'constructor=1; id={bob}', ';;;', 'id=a b', 'id={ann}\u0000', 'id={ann}; id=', 'id=; id={ann}'
]
const sessionCookie = fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: fc.constantFrom(...SESSION_COOKIES) })

/** A cookie template made real: a new session for each user it names. */
async function liveCookie (template: string | null): Promise<string | null> {
  if (template === null) return null
  let out = template
  for (const who of ['ann', 'bob', 'idle']) {
    if (!out.includes(`{${who}`)) continue
    const token = await newSession(who)
    out = out.replaceAll(`{${who}}`, token).replaceAll(`{${who}:cut}`, token.slice(0, 42)).replaceAll(`{${who}:upper}`, token.toUpperCase())
      .replaceAll(`{${who}:flip}`, token.slice(0, 42) + (token.endsWith('A') ? 'B' : 'A'))
  }
  return out
}

/** The users a cookie header may name by a live session: a 200 must be one of theirs. */
const ownersIn = (cookie: string | null): string[] => [...sessionOwners].filter(([token]) => cookie?.includes(`id=${token}`) === true).map(([, owner]) => owner)

t.test('session login, JSON and forms: no 5xx, pages and redirects as SPEC §5 says; a refusal starts no session', async (t) => {
  const plans = fc.tuple(bodies(loginRecord(['ann', 'bob', 'idle', 'mfa']), LOGIN_FIELDS, true), sessionCookie)
  await check(t, 'POST /s/login', plans, async ([body, template]) => {
    const cookie = await liveCookie(template)
    return {
      sent: { method: 'POST', url: '/s/login', payload: withCode(body).payload, headers: { ...body.headers, ...(cookie === null ? {} : { cookie }) }, noStore: true },
      ok: (answer) => isObject(answer) && answer.message === 'logged in' ? null : 'not {"message": "logged in"}',
      success: loggedIn
    }
  }, [200, 303, 400, 401, 413, 415, 422, 429])
})

let registered = 0
/** Stands for a username no one has, made when the request is sent. */
const FRESH = 'fresh-user'

t.test('register: hostile sign-ups never get a 5xx; a refused one creates no user', async (t) => {
  const valid = fc.tuple(
    fc.oneof({ weight: 4, arbitrary: fc.constant(FRESH) }, { weight: 1, arbitrary: fc.constantFrom('ann', 'ANN', 'changer') }),
    fc.oneof({ weight: 4, arbitrary: fc.constant(`${FRESH}@example.org`) }, { weight: 1, arbitrary: fc.constantFrom('ann@example.org', 'ANN@EXAMPLE.ORG', 'no-at-sign', 'a@b', 'a b@c.org') }),
    fc.constantFrom('new-password-1', 'ab', '𝄞'.repeat(6), 'p'.repeat(128), 'p'.repeat(129)),
    fc.boolean()
  ).map(([username, email, password, same]) => ({ username, email, password, confirm_password: same ? password : `${password}x` }))
  const plans = bodies(valid, ['username', 'email', 'password', 'confirm_password'], true)
  await check(t, 'POST /register', plans, async (body) => {
    const name = `new${++registered}`
    return {
      sent: { method: 'POST', url: '/register', payload: body.payload?.replaceAll(FRESH, name), headers: body.headers, noStore: true },
      ok: (answer) => isObject(answer) && Object.keys(answer).sort().join() === 'id,username' && Number.isInteger(answer.id) ? null : 'not {id, username}',
      success: async (response, before, after) => {
        if (Number(after.auth_user!.split(':')[0]) !== Number(before.auth_user!.split(':')[0]) + 1) return 'no user created'
        if (response.statusCode !== 201) return null
        const created = response.json()
        const { rows } = await app.pg.query('SELECT username FROM auth_user WHERE id = $1', [created.id])
        return rows[0]?.username === created.username ? null : `answered ${JSON.stringify(created)}, stored ${JSON.stringify(rows)}`
      }
    }
  }, [201, 303, 400, 413, 415, 422])
})

t.test('change password: hostile bodies and cookies never get a 5xx; a refusal changes no password and ends no session', async (t) => {
  const NEW = ['changer-password-a', 'changer-password-b', '𝄞'.repeat(7), 'c'.repeat(128)]
  const CURRENT_PASSWORD = 'the-current-password'
  const valid = fc.tuple(
    fc.oneof({ weight: 4, arbitrary: fc.constant(CURRENT_PASSWORD) }, { weight: 1, arbitrary: fc.constantFrom(...WRONG_PASSWORDS) }),
    fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...NEW) }, { weight: 1, arbitrary: fc.constantFrom('short', 'c'.repeat(129), '') }),
    fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('other-password', '') })
  ).map(([current, next, confirm]) => ({ current_password: current, new_password: next, confirm_new_password: confirm ?? next }))
  const cookie = fc.oneof({ weight: 4, arbitrary: fc.constant('changer') }, { weight: 2, arbitrary: sessionCookie })
  const plans = fc.tuple(bodies(valid, ['current_password', 'new_password', 'confirm_new_password'], true), cookie)
  await check(t, 'POST /s/change-password', plans, async ([body, cookie]) => {
    changerSession ??= await newSession('changer')
    const cookieHeader = cookie === 'changer' ? `id=${changerSession}` : await liveCookie(cookie)
    return {
      sent: { method: 'POST', url: '/s/change-password', payload: body.payload?.replaceAll(CURRENT_PASSWORD, changerPassword), headers: { ...body.headers, ...(cookieHeader === null ? {} : { cookie: cookieHeader }) }, noStore: true },
      ok: (answer) => isObject(answer) && answer.message === 'Password changed' ? null : 'not {"message": "Password changed"}',
      success: async (response) => {
        if (cookie !== 'changer') return `a change with the cookie ${String(cookieHeader)}`
        const sent = body.headers['content-type'] === FORM_TYPE ? Object.fromEntries(new URLSearchParams(body.payload)) : jsonOf(body.payload) as Record<string, string>
        changerPassword = sent.new_password!
        changerSession = null
        const left = (await app.pg.query('SELECT count(*)::int AS n FROM auth_session WHERE "user" = $1', [changer.id])).rows[0].n
        if (left !== 0) return `${left} sessions of the user left`
        const login = await app.inject({ method: 'POST', url: '/s/login', payload: { username: 'changer', password: changerPassword } })
        return login.statusCode === 200 ? null : `the new password does not log in: ${login.body}`
      }
    }
  }, [200, 303, 400, 401, 403, 413, 415, 422])
})

t.test('logout: hostile cookies and bodies never get a 5xx; a refusal ends no session', async (t) => {
  const FRESH_SESSION = 'fresh-session'
  const cookie = fc.oneof({ weight: 3, arbitrary: fc.constant(FRESH_SESSION) }, { weight: 2, arbitrary: sessionCookie })
  const body = fc.oneof(
    { weight: 2, arbitrary: fc.constant<Body>({ payload: undefined, headers: {} }) },
    { weight: 3, arbitrary: bodies(fc.option(fc.constant({ format: 'html' }), { freq: 3, nil: {} }), ['format'], true) }
  )
  await check(t, 'POST /s/logout', fc.tuple(body, cookie), async ([body, cookie]) => {
    const token = cookie === FRESH_SESSION ? await newSession('bob') : null
    const header = token === null ? await liveCookie(cookie) : `id=${token}`
    return {
      sent: { method: 'POST', url: '/s/logout', payload: body.payload, headers: { ...body.headers, ...(header === null ? {} : { cookie: header }) }, noStore: true },
      ok: (answer) => isObject(answer) && answer.message === 'Successfully logged out' ? null : 'not {"message": "Successfully logged out"}',
      success: async (response) => {
        if (![response.headers['set-cookie']].flat().some((c) => c?.startsWith('id=; Max-Age=0;'))) return 'the cookie is not cleared'
        if (token === null) return null
        sessionOwners.delete(token)
        const { rows } = await app.pg.query('SELECT 1 FROM auth_session WHERE token_hash = $1', [hashSessionToken(token)])
        return rows.length === 0 ? null : 'the session is still there'
      }
    }
  }, [200, 303, 400, 401, 413, 415])
})

t.test('MFA set-up: hostile actions, passwords and codes never get a 5xx; a refusal changes no secret', async (t) => {
  const setupUser = { id: users.get('setup')!, username: 'setup' }
  const PENDING_CODE = 'pending-code'
  const valid = fc.tuple(
    fc.oneof({ weight: 6, arbitrary: fc.constantFrom('register', 'confirm', 'revoke') }, { weight: 1, arbitrary: fc.constantFrom('Register', 'delete', '') }),
    fc.oneof({ weight: 4, arbitrary: fc.constant(PASSWORDS.setup) }, { weight: 1, arbitrary: fc.constantFrom(...WRONG_PASSWORDS) }),
    fc.oneof({ weight: 3, arbitrary: fc.constant(PENDING_CODE) }, { weight: 2, arbitrary: fc.constantFrom(...MFA_CODES) })
  ).map(([action, password, code]) => ({ action, password, code }))
  const cookie = fc.oneof({ weight: 5, arbitrary: fc.constant('setup') }, { weight: 1, arbitrary: sessionCookie })
  const plans = fc.tuple(bodies(valid, ['action', 'password', 'code'], true), cookie)
  await check(t, 'POST /s/mfa', plans, async ([body, cookie]) => {
    const pending = await totp.pending(setupUser, { db: app.pg })
    const code = pending === null ? '000000' : totpCode(pending.secret)
    const header = cookie === 'setup' ? `id=${setupSession}` : await liveCookie(cookie)
    return {
      sent: { method: 'POST', url: '/s/mfa', payload: body.payload?.replaceAll(PENDING_CODE, code), headers: { ...body.headers, ...(header === null ? {} : { cookie: header }) }, noStore: true },
      ok: (answer) => {
        if (!isObject(answer)) return 'not an object'
        if (Object.keys(answer).sort().join() === 'otpauth_url,qrcode_image,recovery_codes,secret') return null
        return ['MFA enabled', 'MFA disabled'].includes(answer.message as string) ? null : `not an MFA answer: ${JSON.stringify(answer).slice(0, 200)}`
      }
    }
  }, [200, 400, 401, 403, 409, 413, 415, 422])
})

/** Authorization headers: none, empty, other schemes, junk, very long, non-ASCII, several; the right token or JWT, and near misses of them. */
function authorization (good: readonly string[]): fc.Arbitrary<string | null> {
  const JUNK = [
    '', ' ', 'Bearer', 'Bearer ', 'bearer', 'Basic YWxhZGRpbjpvcGVuc2VzYW1l', 'Token abc', 'Bearer  ', 'Bearer a b', 'Bearer \u0000', 'Bearer é', 'Bearer 日本',
    `Bearer ${'a'.repeat(10_000)}`, `Bearer ${'a.'.repeat(20_000)}a`, 'Bearer %00', 'Bearer ..', 'Bearer a.b.c', 'Bearer eyJ.eyJ.sig', 'Bearer ====', 'Bearer =a',
    'Bearer \t x', 'Bearer\tx', 'Bearer null', 'Bearer undefined', '\u0000', 'é', 'Bearer __proto__',
    `Bearer ${craftJwt({ alg: 'none', typ: 'JWT' }, { user_id: users.get('ann'), exp: 9e9 }, '')}`,
    `Bearer ${craftJwt({ alg: 'HS256', typ: 'JWT' }, { user_id: users.get('ann'), exp: 9e9 }, 'not-the-secret')}`,
    `Bearer ${craftJwt({ alg: 'HS256', typ: 'JWT' }, { user_id: users.get('ann'), exp: 1 }, SECRET)}`,
    `Bearer ${craftJwt({ alg: 'HS256', typ: 'JWT' }, { user_id: 'ann', exp: 9e9 }, SECRET)}`,
    `Bearer ${craftJwt({ alg: 'HS256', typ: 'JWT' }, { user_id: users.get('idle'), exp: 9e9 }, SECRET)}`,
    `Bearer ${craftJwt({ alg: 'HS256', typ: 'JWT' }, { user_id: 99999, exp: 9e9 }, SECRET)}`,
    `Bearer ${craftJwt({ alg: 'HS256', typ: 'JWT' }, `{"user_id":${users.get('ann')!},"exp":1e400}`, SECRET)}`,
    `Bearer ${craftJwt({ alg: 'HS256', typ: 'JWT' }, [users.get('ann')], SECRET)}`,
    `Bearer ${craftJwt({ alg: 'HS256', typ: 'JWT', crit: ['x'] }, { user_id: users.get('ann'), exp: 9e9 }, SECRET)}`,
    `Bearer ${craftJwt('not json', 'not json', SECRET)}`
  ]
  const near = fc.tuple(fc.constantFrom(...good), fc.nat(200), fc.constantFrom('A', '.', '=', '\u0000', 'é', ' ', '')).map(([token, at, c]) => {
    const i = at % token.length
    return `Bearer ${token.slice(0, i)}${c}${token.slice(i + 1)}`
  })
  const scheme = fc.tuple(fc.constantFrom('Bearer ', 'bearer ', 'BEARER   ', 'Bearer', 'Bearer: ', 'Basic ', ''), fc.constantFrom(...good), fc.constantFrom('', ' ', '  ', ',', '\t'))
    .map(([s, token, tail]) => `${s}${token}${tail}`)
  const several = fc.array(fc.oneof(fc.constantFrom(...good).map((g) => `Bearer ${g}`), fc.constantFrom(...JUNK)), { minLength: 2, maxLength: 3 }).map((all) => all.join(', '))
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...good).map((g) => `Bearer ${g}`) },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 3, arbitrary: fc.constantFrom(...JUNK) },
    { weight: 2, arbitrary: near },
    { weight: 2, arbitrary: scheme },
    { weight: 1, arbitrary: several }
  )
}

/** A JWT of ann, signed with the secret, its payload carrying a `__proto__` key: ann's, and no more. */
const POISONED_JWT = craftJwt({ alg: 'HS256', typ: 'JWT' }, `{"user_id":${users.get('ann')!},"exp":9000000000,"__proto__":{"admin":true,"user_id":"x"}}`, SECRET)

/** The user a 200 of `/me` may name: the owner of the one credential the header carries, exactly. */
function bearerOwner (header: string | null, owners: ReadonlyMap<string, string>): string | null {
  // Spaces and tabs around a header's value are not part of it (RFC 9110 §5.5): Node strips them off the wire.
  const match = /^Bearer +(\S+)[ \t]*$/i.exec(header ?? '')
  return match === null ? null : owners.get(match[1]!) ?? null
}

for (const [prefix, good] of [['/token', new Map([[ANN_TOKEN, 'ann'], [TOKENS.get('bob')!, 'bob']])], ['/jwt', new Map([[ANN_JWT, 'ann'], [BOB_JWT, 'bob'], [POISONED_JWT, 'ann']])]] as const) {
  t.test(`${prefix === '/token' ? 'token' : 'JWT'} auth: hostile Authorization headers get a 401, the right credential its user`, async (t) => {
    const plans = fc.tuple(authorization([...good.keys()]), fc.constantFrom('GET', 'POST', 'DELETE') as fc.Arbitrary<'GET' | 'POST' | 'DELETE'>)
    await check(t, `${prefix}/me`, plans, async ([header, method]) => ({
      sent: { method, url: `${prefix}/me`, headers: header === null ? {} as Record<string, string> : { authorization: header }, noStore: false },
      ok: (answer) => isObject(answer) && answer.username === bearerOwner(header, good) && answer.username !== null ? null : `answered ${JSON.stringify(answer)}`
    }), [200, 401])
  })
}

t.test('session auth: missing, tampered, truncated, expired cookies get a 401, a live one its own user', async (t) => {
  const plans = fc.tuple(sessionCookie, fc.constantFrom('GET', 'POST', 'DELETE') as fc.Arbitrary<'GET' | 'POST' | 'DELETE'>)
  await check(t, '/s/me', plans, async ([template, method]) => {
    const cookie = await liveCookie(template)
    return {
      sent: { method, url: '/s/me', headers: cookie === null ? {} as Record<string, string> : { cookie }, noStore: false },
      // @fastify/cookie takes the first of two cookies of one name: the answer names one of them.
      ok: (answer) => isObject(answer) && ownersIn(cookie).includes(answer.username as string) ? null : `answered ${JSON.stringify(answer)} for the cookie ${String(cookie)}`
    }
  }, [200, 401, 403])
})

/** The CSRF tokens of the CSRF property: T in the cookie is the one that matches. */
const T = randomBytes(32).toString('base64url')
const U = randomBytes(32).toString('base64url')
const CSRF_COOKIES = [T, T, T, U, '', 'short', 'x'.repeat(5000), '<script>', '%41', `${T}%00`, 'é']
const CSRF_TOKENS = [T, T, T, U, '', 'short', `${T}x`, T.toLowerCase(), ` ${T}`, 'x'.repeat(5000), '%41', 'é']

interface CsrfPlan { route: 'login' | 'logout' | 'register' | 'change-password', cookie: string | null, header: string | null, field: string | null | readonly string[], asForm: boolean, site: string | null, origin: string | null, authorization: string | null, body: Body }

/** Whether the csrf plugin must refuse (403), must pass, or either (an Origin or a cookie value whose reading is not modelled here). */
function csrfVerdict (plan: CsrfPlan): 'refuse' | 'pass' | 'either' {
  if (plan.authorization !== null) return 'either'
  if (plan.site === 'cross-site' || plan.site === 'same-site') return 'refuse'
  if (plan.cookie === null || plan.cookie === '') return 'refuse'
  if (!/^[A-Za-z0-9_-]+$/.test(plan.cookie) || plan.origin !== null) return 'either'
  if (plan.header !== null && plan.header !== '') return plan.header === plan.cookie ? 'pass' : 'refuse'
  if (!plan.asForm) return 'refuse'
  return plan.field === plan.cookie ? 'pass' : 'refuse'
}

t.test('CSRF: missing, wrong and malformed tokens and cookies are a 403 and change nothing; the right pair passes', async (t) => {
  const loginBody = fc.tuple(credentials(['cat']), fc.option(fc.constant('html'), { freq: 4 })).map(([c, f]) => f === null ? c : { ...c, format: f })
  const registerBody = fc.constant({ username: FRESH, email: `${FRESH}@example.org`, password: 'new-password-1', confirm_password: 'new-password-1' })
  const changeBody = fc.constant({ current_password: 'not-the-password', new_password: 'changed-password', confirm_new_password: 'changed-password' })
  const route = fc.constantFrom('login', 'login', 'logout', 'register', 'change-password') as fc.Arbitrary<CsrfPlan['route']>
  const plans = route.chain((route) => fc.record({
    route: fc.constant(route),
    cookie: fc.option(fc.constantFrom(...CSRF_COOKIES), { freq: 6 }),
    header: fc.option(fc.constantFrom(...CSRF_TOKENS), { freq: 2 }),
    field: fc.option(fc.oneof(fc.constantFrom(...CSRF_TOKENS), fc.constant([T, T])), { freq: 2 }),
    asForm: fc.boolean(),
    site: fc.option(fc.constantFrom('same-origin', 'cross-site', 'same-site', 'none'), { freq: 3 }),
    origin: fc.option(fc.constantFrom('http://localhost', 'http://localhost:80', 'https://evil.example', 'null'), { freq: 5 }),
    authorization: fc.option(fc.constantFrom('Bearer x', 'Basic YTpi', ''), { freq: 8 }),
    body: route === 'logout' ? fc.constant<Body>({ payload: undefined, headers: {} }) : bodies(route === 'login' ? loginBody : route === 'register' ? registerBody : changeBody, ['username', 'password', 'format'], true)
  }))
  await check(t, 'CSRF', plans, async (plan) => {
    const session = plan.route === 'logout' || plan.route === 'change-password' ? await newSession('cat') : null
    const cookies = [plan.cookie === null ? null : `csrftoken=${plan.cookie}`, session === null ? null : `id=${session}`].filter((c) => c !== null)
    const fields = plan.field === null ? [] : [plan.field].flat().map((f) => `csrftoken=${encodeURIComponent(f)}`)
    let payload = plan.body.payload?.replaceAll(FRESH, `csrf${++registered}`)
    let headers: Record<string, string> = plan.body.headers
    if (plan.asForm) {
      const form = isObject(jsonOf(payload)) ? formOf(jsonOf(payload) as Record<string, unknown>) : payload ?? ''
      payload = [form, ...fields].filter((p) => p !== '').join('&')
      headers = { 'content-type': FORM_TYPE }
    }
    const extra = { cookie: cookies.join('; '), 'x-csrftoken': plan.header, 'sec-fetch-site': plan.site, origin: plan.origin, authorization: plan.authorization }
    const sent: Sent = {
      method: 'POST',
      url: `/c/${plan.route}`,
      payload,
      headers: { ...headers, ...Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== null && v !== '')) as Record<string, string> },
      // A csrf refusal comes from the hook of the enclosing context, and carries no-store too.
      noStore: true
    }
    const verdict = csrfVerdict(plan)
    return {
      sent,
      ok: () => null,
      expect: (response) => {
        const refused = response.statusCode === 403 && jsonOf(response.body) !== undefined && (jsonOf(response.body) as Record<string, unknown>).code === 'TABLECRUD_ERR_CSRF'
        // A form's token is in its body, checked once the body is parsed: a body over the limit or malformed is refused before.
        if (verdict === 'refuse' && !refused && !(plan.asForm && [400, 413].includes(response.statusCode))) return `not refused by the CSRF check: ${response.statusCode} ${response.body.slice(0, 200)}`
        if (verdict === 'pass' && refused) return `refused by the CSRF check: ${response.body}`
        return null
      }
    }
  }, [200, 201, 303, 400, 401, 403, 413, 415, 422])
})

t.test('pages: GET and HEAD of the form routes with hostile queries and cookies never get a 5xx, echo no markup, change nothing', async (t) => {
  const PAGES = ['/s/login', '/s/login/', '/c/login/', '/s/logout/', '/s/register/', '/c/register/', '/s/change-password/', '/c/change-password/', '/s/mfa/', '/s/mfa/qrcode.png', '/s/login/style.css', '/s/me']
  const next = fc.constantFrom('/me/', '//evil.example/', 'https://evil.example/', '"><script>alert(1)</script>', 'javascript:alert(1)', '/\\evil', '%2F%2Fevil', '/a%09b', '%zz', '%00', 'x'.repeat(3000), '/ok?a=1&b=<i>')
  const query = fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 3, arbitrary: next.map((n) => `?next=${encodeURIComponent(n)}`) }, { weight: 1, arbitrary: next.map((n) => `?next=${n}&next=/x/`) })
  const notice = fc.option(fc.constantFrom('tablecrud_notice=registered', 'tablecrud_notice=<script>', 'tablecrud_notice=%zz', 'csrftoken=<script>alert(1)</script>', `csrftoken=${T}`), { freq: 3 })
  const plans = fc.tuple(fc.constantFrom(...PAGES), query, fc.oneof({ weight: 2, arbitrary: fc.constant('setup') }, { weight: 2, arbitrary: sessionCookie }), notice,
    fc.constantFrom('GET', 'GET', 'HEAD') as fc.Arbitrary<'GET' | 'HEAD'>, fc.constantFrom('text/html', '*/*', 'application/json'))
  await check(t, 'GET pages', plans, async ([page, query, template, notice, method, accept]) => {
    const cookie = template === 'setup' ? `id=${setupSession}` : await liveCookie(template)
    const cookies = [cookie, notice].filter((c) => c !== null).join('; ')
    return {
      sent: { method, url: `${page}${query}`, headers: { accept, ...(cookies === '' ? {} : { cookie: cookies }) }, noStore: false, page: true },
      ok: (answer) => isObject(answer) && typeof answer.username === 'string' ? null : `answered ${JSON.stringify(answer)}`
    }
  }, [200, 303, 401, 403, 404])
})
