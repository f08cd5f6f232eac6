import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { hcaptcha, recaptcha } from '../../../lib/auth/captcha.js'
import { checkLogin, createUser } from '../../../lib/auth/users.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { userTable } from '../../../lib/table/auth-tables.js'
import { register } from '../../../plugins/auth/register.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, unreachableApp } from './auth-app.js'
import { createSessionTables, FORM, form, JSON_TYPE } from './session-app.js'

const db = await testDatabase(t)
await createSessionTables(db)

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 405: 'Method Not Allowed', 422: 'Unprocessable Entity', 415: 'Unsupported Media Type', 400: 'Bad Request' }
const error = (statusCode: number, code: string, message: string): object => ({ statusCode, code, error: STATUS_TEXT[statusCode], message })
const MISSING = error(422, 'TABLECRUD_ERR_FORM_MISSING_FIELDS', 'Form is invalid. Missing one or more fields.')
const invalid = (message: string): object => error(422, 'TABLECRUD_ERR_FORM_INVALID', message)
const DUPLICATE = invalid('User with email or username already exists.')

// A loopback server that plays hCaptcha's siteverify: the token "human" passes.
const provider = createServer((request, response) => {
  let body = ''
  request.on('data', (chunk: Buffer) => { body += chunk.toString() })
  request.on('end', () => {
    const form = new URLSearchParams(body)
    const ok = form.get('response') === 'human' && form.get('secret') === 's'
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: ok }))
  })
})
await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve))
t.teardown(() => { provider.close() })
const verifyUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/siteverify`

const app = await authApp(t, db, (app) => {
  app.register(register, { prefix: '/register', userDefaults: { active: true } })
  app.register(register, { prefix: '/inactive', redirectTo: '/welcome/' })
  app.register(register, { prefix: '/ro', readOnly: true })
  app.register(register, { prefix: '/strict', minPasswordLength: 10, userDefaults: { active: true, first_name: 'New' } })
  app.register(register, { prefix: '/captcha', captcha: hcaptcha({ secret: 's', verifyUrl }), userDefaults: { active: true } })
  app.register(sessionLogin, { prefix: '/login', captcha: recaptcha({ secret: 's', verifyUrl }) })
  app.register(sessionLogin, { prefix: '/login-wrong-secret', captcha: recaptcha({ secret: 'not-s', verifyUrl }) })
  app.register(async (site) => {
    site.addHook('onRequest', async (request) => { request.csrfToken = 'csrf-<token>' })
    await site.register(register, { prefix: '/csrf' })
  })
})

const post = async (url: string, payload: unknown, headers: Record<string, string> = JSON_TYPE) =>
  await app.inject({ method: 'POST', url, headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) })
const users = async (): Promise<number> => (await app.pg.query('SELECT count(*)::int AS n FROM auth_user')).rows[0].n
let n = 0
const fields = (extra: Record<string, unknown> = {}): Record<string, unknown> => {
  n++
  return { username: `user${n}`, email: `user${n}@example.com`, password: 'secret-1', confirm_password: 'secret-1', ...extra }
}

t.test('GET is the sign-up page: a form that works without JavaScript, nothing from elsewhere', async (t) => {
  const res = await app.inject('/register/')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/html; charset=utf-8/)
  t.equal(res.headers['cache-control'], 'no-store')
  const page = res.body
  t.match(page, /<form method="post" action="\/register\/">/)
  for (const name of ['username', 'email', 'password', 'confirm_password']) t.match(page, new RegExp(`name="${name}"`))
  t.match(page, /<input type="hidden" name="format" value="html">/)
  t.match(page, /minlength="6"/)
  t.notMatch(page, /csrftoken|<script|style=|<style|https?:\/\//)
  t.match((await app.inject('/strict')).body, /minlength="10"/, 'the option, and the path without its slash')
  const csrf = (await app.inject('/csrf/')).body
  t.match(csrf, /<input type="hidden" name="csrftoken" value="csrf-&lt;token&gt;">/, 'the CSRF token, escaped')
})

t.test('a JSON sign-up is a 201 {id, username}; the user has the defaults and can log in', async (t) => {
  const body = fields({ email: 'Ann.Lee@Example.com' })
  const res = await post('/register', body)
  t.equal(res.statusCode, 201)
  t.same(Object.keys(res.json()), ['id', 'username'])
  t.match(res.json(), { id: Number, username: body.username })
  t.notOk(res.headers['set-cookie'], 'no session')
  const row = (await app.pg.query('SELECT * FROM auth_user WHERE id = $1', [res.json().id])).rows[0]
  t.match(row, { username: body.username, email: 'Ann.Lee@Example.com', active: true, admin: false, superuser: false, last_login: null })
  t.ok(await checkLogin(app.pg, userTable, body.username as string, 'secret-1'))
  const strict = await post('/strict', fields({ password: 'long-enough', confirm_password: 'long-enough' }))
  t.equal(strict.statusCode, 201)
  t.equal((await app.pg.query('SELECT first_name FROM auth_user WHERE id = $1', [strict.json().id])).rows[0].first_name, 'New')
})

t.test('without userDefaults the user is inactive; a form is a 303 to redirectTo', async (t) => {
  const body = fields()
  const res = await post('/inactive', form(Object.entries(body) as Array<[string, string]>), FORM)
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, '/welcome/')
  t.equal((await app.pg.query('SELECT active FROM auth_user WHERE username = $1', [body.username])).rows[0].active, false)
  t.equal(await checkLogin(app.pg, userTable, body.username as string, 'secret-1'), null)
  const html = await post('/register', { ...fields(), format: 'html' })
  t.same([html.statusCode, html.headers.location], [303, '/login/'], 'format=html in JSON: the default redirectTo')
})

t.test('the checks in SPEC order, each with its message', async (t) => {
  const before = await users()
  const cases: Array<[string, unknown, object]> = [
    ['nothing', {}, MISSING],
    ['no email', { ...fields(), email: undefined }, MISSING],
    ['an empty field', fields({ confirm_password: '' }), MISSING],
    ['a number', fields({ password: 12345678, confirm_password: 12345678 }), MISSING],
    ['an array', fields({ username: ['a', 'b'] }), MISSING],
    ['null', fields({ email: null }), MISSING],
    ['an object', fields({ username: { $ne: '' } }), MISSING],
    ['an array body', [], MISSING],
    ['a string body', '"x"', MISSING],
    ['missing fields before a bad email', { email: 'nope' }, MISSING],
    ['bad email', fields({ email: 'nope' }), invalid('Invalid email address.')],
    ['bad email before a short password', fields({ email: 'a@b', password: 'x', confirm_password: 'y' }), invalid('Invalid email address.')],
    ['short', fields({ password: 'abc12', confirm_password: 'abc12' }), invalid('Password must be at least 6 characters long.')],
    ['short before mismatch', fields({ password: 'abc12', confirm_password: 'zzz' }), invalid('Password must be at least 6 characters long.')],
    ['long', fields({ password: 'x'.repeat(129), confirm_password: 'x'.repeat(129) }), invalid('Password must be at most 128 characters long.')],
    ['200 KB', fields({ password: 'x'.repeat(200_000), confirm_password: 'x'.repeat(200_000) }), invalid('Password must be at most 128 characters long.')],
    ['129 emoji', fields({ password: '🔑'.repeat(129), confirm_password: '🔑'.repeat(129) }), invalid('Password must be at most 128 characters long.')],
    ['mismatch', fields({ confirm_password: 'secret-2' }), invalid('Passwords do not match.')],
    ['a NUL in the username', fields({ username: 'ann\u0000' }), invalid('Username must not contain control characters.')],
    ['a NUL in the email', fields({ email: 'ann\u0000@example.com' }), invalid('Invalid email address.')],
    ['a long username', fields({ username: 'u'.repeat(101) }), invalid('Username must be at most 100 characters long.')]
  ]
  for (const [name, body, expected] of cases) {
    if (name.includes('short') || name === 'mismatch') continue // /strict wants 10: its own case below
    const res = await post('/strict', body)
    t.equal(res.statusCode, (expected as { statusCode: number }).statusCode, name)
    t.same(res.json(), expected, name)
  }
  for (const [name, body, expected] of cases) {
    const res = await post('/register', body)
    t.same([res.statusCode, res.json()], [(expected as { statusCode: number }).statusCode, expected], `/register: ${name}`)
  }
  const ten = await post('/strict', fields({ password: 'nine-char', confirm_password: 'nine-char' }))
  t.same(ten.json(), invalid('Password must be at least 10 characters long.'))
  t.equal(await users(), before, 'no user written')
  const emoji = await post('/register', fields({ username: '🦊 fox', password: '🔑'.repeat(128), confirm_password: '🔑'.repeat(128) }))
  t.equal(emoji.statusCode, 201, 'emoji are characters like any other')
  t.ok(await checkLogin(app.pg, userTable, '🦊 fox', '🔑'.repeat(128)))
})

t.test('a taken username or email (any case) is a 422, racing or not', async (t) => {
  await createUser(app.pg, { username: 'taken', password: 'secret-1', email: 'Taken@Example.com' })
  t.same((await post('/register', fields({ username: 'taken' }))).json(), DUPLICATE)
  t.same((await post('/register', fields({ email: 'taken@example.COM' }))).json(), DUPLICATE)
  const before = await users()
  const racers = await Promise.all(['Race@x.org', 'race@x.org', 'RACE@X.ORG', 'race@X.org', 'rAce@x.org'].map(async (email, i) =>
    await post('/register', fields({ email, username: i % 2 === 0 ? 'racer' : `racer${i}` }))))
  t.same(racers.map((r) => r.statusCode).sort(), [201, 422, 422, 422, 422])
  for (const r of racers.filter((r) => r.statusCode === 422)) t.same(r.json(), DUPLICATE)
  t.equal(await users(), before + 1)
})

t.test('a built-in form that is refused gets the page again, with the message escaped and the fields kept', async (t) => {
  const body = fields({ username: '<b>ann</b>', email: 'bad"email', format: 'html' })
  const res = await post('/register', form(Object.entries(body) as Array<[string, string]>), FORM)
  t.equal(res.statusCode, 422)
  t.match(res.headers['content-type'], /^text\/html/)
  t.match(res.body, /<p class="message" id="form-message" role="alert">Invalid email address.<\/p>/)
  t.match(res.body, /value="&lt;b&gt;ann&lt;\/b&gt;"/)
  t.match(res.body, /value="bad&quot;email"/)
  t.notMatch(res.body, /secret-1/, 'passwords are not shown again')
  const repeated = await post('/register', form([['username', 'a'], ['username', 'b'], ['email', 'a@b.co'], ['password', 'secret-1'], ['confirm_password', 'secret-1']]), FORM)
  t.same(repeated.json(), MISSING, 'a repeated form field is refused, not one of its values picked')
})

t.test('a refused built-in form without the fields shows them empty', async (t) => {
  const res = await post('/register', form([['format', 'html']]), FORM)
  t.equal(res.statusCode, 422)
  t.match(res.body, /Form is invalid. Missing one or more fields./)
  t.match(res.body, /name="username" autocomplete="username" required value=""/)
  t.match(res.body, /name="email" type="email" autocomplete="email" required value=""/)
})

t.test('the database down: 503, the process up', async (t) => {
  const down = await unreachableApp(t, (app) => { app.register(register, { prefix: '/register' }) })
  const res = await down.inject({ method: 'POST', url: '/register', headers: JSON_TYPE, payload: JSON.stringify(fields()) })
  t.equal(res.statusCode, 503)
  t.equal(res.json().code, 'TABLECRUD_ERR_DB_UNAVAILABLE')
  t.ok(res.headers['retry-after'])
})

t.test('readOnly: 405 Running in read only mode. with Allow, before anything else', async (t) => {
  const res = await post('/ro', {})
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, HEAD')
  t.same(res.json(), error(405, 'TABLECRUD_ERR_FORM_READ_ONLY', 'Running in read only mode.'))
  t.equal((await app.inject('/ro/')).statusCode, 200, 'the page is still shown')
})

t.test('CAPTCHA first: no token 401, a refused token 401, a good one passes', async (t) => {
  const before = await users()
  t.same((await post('/captcha', {})).json(), error(401, 'TABLECRUD_ERR_AUTH_CAPTCHA', 'Unable to find CAPTCHA token.'))
  t.same((await post('/captcha', fields({ 'h-captcha-response': 5 }))).json(), error(401, 'TABLECRUD_ERR_AUTH_CAPTCHA', 'Unable to find CAPTCHA token.'))
  t.same((await post('/captcha', { 'h-captcha-response': 'robot' })).json(), error(401, 'TABLECRUD_ERR_AUTH_CAPTCHA', 'CAPTCHA failed.'))
  t.same((await post('/captcha', { 'h-captcha-response': 'human' })).json(), MISSING, 'then the fields')
  t.equal(await users(), before)
  const page = await app.inject('/captcha/')
  t.equal(page.statusCode, 200, 'the page is there (the widget is the template\'s to add)')
  const ok = await post('/captcha', fields({ 'h-captcha-response': 'human' }))
  t.equal(ok.statusCode, 201)
})

t.test('sessionLogin takes recaptcha() the same way, before the password', async (t) => {
  await createUser(app.pg, { username: 'captcha-user', password: 'secret-1' })
  const login = async (url: string, extra: Record<string, unknown>) => await post(url, { username: 'captcha-user', password: 'secret-1', ...extra })
  t.same((await login('/login', {})).json(), error(401, 'TABLECRUD_ERR_AUTH_CAPTCHA', 'Unable to find CAPTCHA token.'))
  t.same((await login('/login', { 'g-recaptcha-response': 'robot' })).json(), error(401, 'TABLECRUD_ERR_AUTH_CAPTCHA', 'CAPTCHA failed.'))
  t.same((await login('/login', { 'h-captcha-response': 'human' })).json(), error(401, 'TABLECRUD_ERR_AUTH_CAPTCHA', 'Unable to find CAPTCHA token.'), "hCaptcha's field is not reCAPTCHA's")
  t.same((await login('/login-wrong-secret', { 'g-recaptcha-response': 'human' })).json(), error(401, 'TABLECRUD_ERR_AUTH_CAPTCHA', 'CAPTCHA failed.'), 'the secret is sent')
  const ok = await login('/login', { 'g-recaptcha-response': 'human' })
  t.same([ok.statusCode, ok.json()], [200, { message: 'logged in' }])
  const form = await post('/login', new URLSearchParams({ username: 'captcha-user', password: 'secret-1', 'g-recaptcha-response': 'human' }).toString(), FORM)
  t.equal(form.statusCode, 303, 'from a form too')
})

t.test('bodies: JSON or urlencoded only; bad JSON is a 400; other methods 405', async (t) => {
  const text = await post('/register', 'username=x', { 'content-type': 'text/plain' })
  t.equal(text.statusCode, 415)
  t.equal(text.json().code, 'TABLECRUD_ERR_FORM_MEDIA_TYPE')
  const bad = await post('/register', '{"username": ', JSON_TYPE)
  t.same([bad.statusCode, bad.json().code], [400, 'TABLECRUD_ERR_BODY_NOT_JSON'])
  const put = await app.inject({ method: 'PUT', url: '/register/' })
  t.same([put.statusCode, put.headers.allow], [405, 'GET, HEAD, POST'])
})

t.test('the POST route is marked for the login rate limit', async (t) => {
  const marked: string[] = []
  const probe = Fastify()
  probe.decorate('pg', app.pg)
  probe.addHook('onRoute', (route) => { if (route.config?.tablecrudLogin === true) marked.push(`${String(route.method)} ${route.url}`) })
  await probe.register(register, { prefix: '/r' })
  await probe.ready()
  t.same(marked, ['POST /r'], 'the POST only')
  await probe.close()
})

t.test('options are checked at registration', async (t) => {
  const attempt = async (options: object): Promise<void> => {
    const probe = Fastify()
    probe.decorate('pg', app.pg)
    try {
      await probe.register(register, options)
      await probe.ready()
    } finally {
      await probe.close()
    }
  }
  const problem = (option: string, text: string | RegExp): { code: string, message: string | RegExp } => ({ code: 'TABLECRUD_ERR_OPTIONS', message: typeof text === 'string' ? `register: the option ${option} ${text}` : text })
  const noEmail = defineTable('no_email_user', {
    username: column.varchar({ length: 50 }), password: column.varchar({ length: 255 }), active: column.boolean(), admin: column.boolean(), superuser: column.boolean(), last_login: column.timestamp({ null: true })
  })
  await t.rejects(attempt({ authTable: noEmail }), problem('authTable', 'cannot hold sign-ups: the table no_email_user has no email column'))
  await t.rejects(attempt({ userDefaults: 'x' }), problem('userDefaults', 'must be an object of column values'))
  await t.rejects(attempt({ userDefaults: [] }), problem('userDefaults', 'must be an object of column values'))
  await t.rejects(attempt({ userDefaults: { nope: 1 } }), problem('userDefaults', 'names nope, which is not a column of auth_user'))
  await t.rejects(attempt({ userDefaults: { password: 'x' } }), problem('userDefaults', 'cannot set password: the form gives it'))
  await t.rejects(attempt({ userDefaults: { id: 5 } }), problem('userDefaults', 'cannot set id: the form gives it'))
  await t.rejects(attempt({ minPasswordLength: 5 }), problem('minPasswordLength', 'must be an integer from 6 to 128'))
  await t.rejects(attempt({ minPasswordLength: 129 }), problem('minPasswordLength', 'must be an integer from 6 to 128'))
  await t.rejects(attempt({ minPasswordLength: '8' }), problem('minPasswordLength', 'must be an integer from 6 to 128'))
  await t.rejects(attempt({ captcha: { field: 'x' } }), { code: 'TABLECRUD_ERR_OPTIONS', message: /^register: the option captcha / })
  await t.rejects(attempt({ readOnly: 'yes' }), problem('readOnly', 'must be true or false'))
  await t.rejects(attempt({ redirectTo: '//evil.example' }), { message: /^register: the option redirectTo / })
  await t.rejects(attempt({ template: 'x' }), { message: /^register: the option template / })
  await t.rejects(attempt({ bcryptCost: 2 }), { message: /^register: the option bcryptCost / })
  const textName = defineTable('text_name_user', {
    username: column.text(), password: column.varchar({ length: 255 }), email: column.email({ null: true }), active: column.boolean(), admin: column.boolean(), superuser: column.boolean(), last_login: column.timestamp({ null: true })
  })
  await t.resolves(attempt({ authTable: textName, template: () => 'page' }))
  const noPg = Fastify()
  await t.rejects(async () => { await noPg.register(register).ready() }, /register: register @fastify\/postgres before this plugin/)
  await noPg.close()
})
