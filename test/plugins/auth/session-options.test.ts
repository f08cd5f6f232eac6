import t from 'tap'
import Fastify from 'fastify'
import fastifyFormbody from '@fastify/formbody'
import fastifyPostgres from '@fastify/postgres'
import { column, defineTable } from '../../../lib/table/index.js'
import { sessionAuth } from '../../../plugins/auth/session-auth.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { sessionLogout } from '../../../plugins/auth/session-logout.js'
import { html, layout, loginForm } from '../../../lib/html/index.js'

const noSession = defineTable('no_session', { token_hash: column.text() })
const provider = { name: 'totp', isEnrolled: async () => false, verifyCode: async () => false }

/** Registers a plugin with options on an app without a reachable database (nothing is queried). */
async function refused (plugin: any, options: unknown): Promise<unknown> {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none' })
  try {
    await app.register(plugin, options as any).ready()
    return null
  } catch (error) {
    return error
  } finally {
    await app.close()
  }
}

const OPTION = (plugin: string, option: string, problem: string): object =>
  ({ code: 'TABLECRUD_ERR_OPTIONS', message: `${plugin}: the option ${option} ${problem}` })

t.test('sessionLogin options are checked at registration, each naming the option', async (t) => {
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ authTable: 'auth_user' }, 'authTable', 'must be a table made by defineTable'],
    [{ sessionTable: 'auth_session' }, 'sessionTable', 'must be a table made by defineTable'],
    [{ sessionTable: noSession }, 'sessionTable', 'cannot hold sessions: the table no_session has no user, expiry_date, max_expiry_date columns'],
    [{ sessionExpiry: 0 }, 'sessionExpiry', 'must be a positive number of seconds or a duration such as "15m", "12h", "7d"'],
    [{ maxSessionExpiry: '1 year' }, 'maxSessionExpiry', 'must be a positive number of seconds or a duration such as "15m", "12h", "7d"'],
    [{ redirectTo: '//evil.example' }, 'redirectTo', 'must be a path starting with / or an http(s) URL'],
    [{ redirectTo: 'javascript:alert(1)' }, 'redirectTo', 'must be a path starting with / or an http(s) URL'],
    [{ redirectTo: '/\\evil.example' }, 'redirectTo', 'must be a path starting with / or an http(s) URL'],
    [{ redirectTo: null }, 'redirectTo', 'must be a path starting with / or an http(s) URL'],
    [{ production: 'yes' }, 'production', 'must be true or false'],
    [{ cookieName: 'my id' }, 'cookieName', 'must be a cookie name: letters, digits and !#$%&\'*+-.^_`|~'],
    [{ cookieName: '' }, 'cookieName', 'must be a cookie name: letters, digits and !#$%&\'*+-.^_`|~'],
    [{ hooks: [] }, 'hooks', 'must be an object { preLogin, loginSuccess, loginFailure } of lists of functions'],
    [{ hooks: null }, 'hooks', 'must be an object { preLogin, loginSuccess, loginFailure } of lists of functions'],
    [{ hooks: { onLogin: [] } }, 'hooks', 'has onLogin: only preLogin, loginSuccess, loginFailure are hooks'],
    [{ hooks: { preLogin: () => {} } }, 'hooks', 'preLogin must be a list of functions'],
    [{ hooks: { loginSuccess: ['x'] } }, 'hooks', 'loginSuccess must be a list of functions'],
    [{ captcha: null }, 'captcha', 'must be an object { field, verify(token, request) }'],
    [{ captcha: { verify: () => true } }, 'captcha', 'must have a field: the non-empty name of the body field holding the token'],
    [{ captcha: { field: 'x' } }, 'captcha', 'must have a verify(token, request) method'],
    [{ mfaProviders: provider }, 'mfaProviders', 'must be an array of MFA providers'],
    [{ mfaProviders: [{ name: 'x' }] }, 'mfaProviders', 'must hold providers { name, isEnrolled(userId, context), verifyCode(userId, code, context) }'],
    [{ mfaProviders: [null] }, 'mfaProviders', 'must hold providers { name, isEnrolled(userId, context), verifyCode(userId, code, context) }'],
    [{ mfaProviders: [{ ...provider, name: '' }] }, 'mfaProviders', 'must hold providers { name, isEnrolled(userId, context), verifyCode(userId, code, context) }'],
    [{ mfaProviders: [provider, provider] }, 'mfaProviders', 'has two providers named totp'],
    [{ template: '<html>' }, 'template', 'must be a function (data) => string returning the page'],
    [{ bcryptCost: 99 }, 'bcryptCost', 'must be an integer from 4 to 31'],
    [{ links: { href: '/register/', text: 'Sign up' } }, 'links', 'must be an array of { href, text }: href must be a path starting with / or an http(s) URL, text not empty'],
    [{ links: [null] }, 'links', 'must be an array of { href, text }: href must be a path starting with / or an http(s) URL, text not empty'],
    [{ links: [{ href: '//evil.example', text: 'x' }] }, 'links', 'must be an array of { href, text }: href must be a path starting with / or an http(s) URL, text not empty'],
    [{ links: [{ href: '/register/', text: '' }] }, 'links', 'must be an array of { href, text }: href must be a path starting with / or an http(s) URL, text not empty']
  ]
  for (const [options, option, problem] of cases) {
    t.match(await refused(sessionLogin, options), OPTION('sessionLogin', option, problem), JSON.stringify(options))
  }
  t.equal(await refused(sessionLogin, { redirectTo: 'https://example.com/app/', hooks: { preLogin: [] }, mfaProviders: [provider], links: [{ href: '/register/', text: 'Sign up' }] }), null, 'good options pass')
})

t.test('sessionLogout and sessionAuth options', async (t) => {
  t.match(await refused(sessionLogout, { redirectTo: 'ftp://x' }), OPTION('sessionLogout', 'redirectTo', 'must be a path starting with / or an http(s) URL, or null'))
  t.match(await refused(sessionLogout, { cookieName: 'a;b' }), OPTION('sessionLogout', 'cookieName', 'must be a cookie name: letters, digits and !#$%&\'*+-.^_`|~'))
  t.match(await refused(sessionLogout, { template: {} }), OPTION('sessionLogout', 'template', 'must be a function (data) => string returning the page'))
  t.match(await refused(sessionLogout, { sessionTable: noSession }), OPTION('sessionLogout', 'sessionTable', 'cannot hold sessions: the table no_session has no user, expiry_date, max_expiry_date columns'))
  t.equal(await refused(sessionLogout, { redirectTo: null }), null)
  t.equal(await refused(sessionLogout, { redirectTo: '/login/' }), null)
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ authTable: defineTable('nobody', { name: column.text() }) }, 'authTable', 'cannot hold users: the table nobody has no username, password, active, admin, superuser, last_login columns'],
    [{ sessionTable: 1 }, 'sessionTable', 'must be a table made by defineTable'],
    [{ cookieName: 5 }, 'cookieName', 'must be a cookie name: letters, digits and !#$%&\'*+-.^_`|~'],
    [{ allowUnauthenticated: 1 }, 'allowUnauthenticated', 'must be true or false'],
    [{ adminOnly: 'no' }, 'adminOnly', 'must be true or false'],
    [{ superuserOnly: null }, 'superuserOnly', 'must be true or false'],
    [{ activeOnly: 0 }, 'activeOnly', 'must be true or false'],
    [{ increaseExpiry: -5 }, 'increaseExpiry', 'must be a positive number of seconds or a duration such as "15m", "12h", "7d"'],
    [{ excludedPaths: 'health' }, 'excludedPaths', 'must be an array of paths'],
    [{ excludedPaths: ['/a*b'] }, 'excludedPaths', 'has "/a*b": * is allowed only at the end'],
    [{ loginUrl: '//evil.example/login' }, 'loginUrl', 'must be a path starting with / or an http(s) URL, or null'],
    [{ loginUrl: 5 }, 'loginUrl', 'must be a path starting with / or an http(s) URL, or null']
  ]
  for (const [options, option, problem] of cases) {
    t.match(await refused(sessionAuth, options), OPTION('sessionAuth', option, problem), JSON.stringify(options))
  }
})

t.test('without @fastify/postgres each plugin says so', async (t) => {
  for (const [name, plugin] of [['sessionLogin', sessionLogin], ['sessionLogout', sessionLogout], ['sessionAuth', sessionAuth]] as const) {
    const app = Fastify()
    await t.rejects(async () => await app.register(plugin as any).ready(), { message: `${name}: register @fastify/postgres before this plugin (it uses fastify.pg)` })
    await app.close()
  }
})

t.test('an integrator\'s @fastify/formbody is used, not registered twice', async (t) => {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none' })
  await app.register(fastifyFormbody)
  await app.register(sessionLogin, { prefix: '/login' })
  const res = await app.inject({ method: 'POST', url: '/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'username=' })
  t.same([res.statusCode, res.json().code], [422, 'TABLECRUD_ERR_AUTH_MISSING_FIELDS'])
  await app.close()
})

t.test('pages: a template of one\'s own, at the root of an app, and the CAPTCHA field handed to it', async (t) => {
  const app = Fastify()
  t.teardown(async () => await app.close())
  await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none' })
  const seen: unknown[] = []
  await app.register(sessionLogin, {
    captcha: { field: 'h-captcha-response', verify: () => true },
    template: (data) => { seen.push(data); return layout({ title: 'Sign in here', body: html`<div class="mine">${loginForm(data)}</div>` }) }
  })
  await app.register(sessionLogout, { prefix: '/logout', template: (data) => `<p>bye from ${data.action}</p>` })
  await app.register(sessionLogin, { prefix: '/plain' })
  const res = await app.inject({ method: 'GET', url: '/' })
  t.match(res.body, '<title>Sign in here</title>')
  t.match(res.body, '<div class="mine">')
  t.match(res.body, '<form method="post" action="/">', 'a login at the root posts to /')
  t.same(seen, [{ title: 'Log in', action: '/', csrfToken: null, message: null, notice: null, stylesheet: '/style.css', links: [], username: '', mfaProviders: [], captchaField: 'h-captcha-response', next: null }])
  t.notMatch(res.body, '<link', 'a template that does not link the stylesheet has none')
  t.equal((await app.inject({ method: 'GET', url: '/logout' })).body, '<p>bye from /logout/</p>')
  const noCookie = await app.inject({ method: 'POST', url: '/logout', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'format=html' })
  t.same([noCookie.statusCode, noCookie.body], [401, '<p>bye from /logout/</p>'], 'the template serves the refused form too')
  const missing = await app.inject({ method: 'POST', url: '/plain', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'format=html' })
  t.equal(missing.statusCode, 422)
  t.match(missing.body, 'value=""', 'no username to show again')
  t.match(missing.body, 'Missing username or password')
})

t.test('a body without a content type is a 415 naming none', async (t) => {
  const app = Fastify()
  t.teardown(async () => await app.close())
  await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none' })
  await app.register(sessionLogin, { prefix: '/login' })
  await app.ready()
  const res = await app.inject({ method: 'POST', url: '/login', payload: Buffer.from('username=bob'), headers: { 'content-type': undefined as unknown as string } })
  t.same([res.statusCode, res.json().message], [415, 'The body must be application/json or application/x-www-form-urlencoded, not none.'])
})
