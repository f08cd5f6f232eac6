import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifyFormbody from '@fastify/formbody'
import { csrf, type CsrfOptions } from '../../../plugins/web/csrf.js'
import { csrfNamesOf } from '../../../lib/web/csrf.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { localMediaStorage } from '../../../lib/media/local.js'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../helpers/app.js'

const TOKEN = 'A'.repeat(43)
const OTHER = 'B'.repeat(43)
const FORM = 'application/x-www-form-urlencoded'

interface Probe { app: FastifyInstance, calls: Array<{ url: string, body: unknown }> }

/** csrf in a context with form parsing, a page showing the token, and write routes that record what reaches them. */
async function build (t: Test, options: CsrfOptions = {}, fastifyOptions: Record<string, unknown> = {}): Promise<Probe> {
  const app = Fastify(fastifyOptions)
  const calls: Probe['calls'] = []
  await app.register(async (site) => {
    await site.register(csrf, options)
    await site.register(fastifyFormbody)
    site.get('/page', async (request) => ({ token: request.csrfToken }))
    site.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url: '/write', handler: async (request) => { calls.push({ url: request.url, body: request.body }); return { ok: true } } })
    site.post('/echo-token', async (request) => ({ token: request.csrfToken }))
  })
  app.post('/outside', async () => ({ ok: true }))
  await app.ready()
  t.teardown(async () => await app.close())
  return { app, calls }
}

const post = (headers: Record<string, string>, payload?: unknown, extra: Partial<InjectOptions> = {}): InjectOptions =>
  ({ method: 'POST', url: '/write', headers, ...(payload === undefined ? {} : { payload: payload as string }), ...extra })

async function refused (t: Test, probe: Probe, request: InjectOptions, message: string): Promise<void> {
  const before = probe.calls.length
  const res = await probe.app.inject(request)
  t.equal(res.statusCode, 403, message)
  t.strictSame(res.json(), { statusCode: 403, code: 'TABLECRUD_ERR_CSRF', error: 'Forbidden', message })
  t.equal(probe.calls.length, before, 'the handler did not run')
}

async function passes (t: Test, probe: Probe, request: InjectOptions, what: string): Promise<void> {
  const before = probe.calls.length
  const res = await probe.app.inject(request)
  t.equal(res.statusCode, 200, what)
  t.equal(probe.calls.length, before + 1, `${what}: the handler ran`)
}

t.test('safe methods get the cookie when they have none, and request.csrfToken', async (t) => {
  const probe = await build(t)
  const res = await probe.app.inject('/page')
  const token = res.json().token as string
  t.match(token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes in base64url')
  t.equal(res.headers['set-cookie'], `csrftoken=${token}; Max-Age=31536000; Path=/; SameSite=Lax`, 'readable by scripts: not HttpOnly')
  const again = await probe.app.inject({ url: '/page', headers: { cookie: `csrftoken=${token}` } })
  t.equal(again.headers['set-cookie'], undefined, 'a request with the cookie gets no new one')
  t.equal(again.json().token, token, 'request.csrfToken is the cookie')
  t.not((await probe.app.inject('/page')).json().token, token, 'each new client its own token')

  const head = await probe.app.inject({ method: 'HEAD', url: '/page' })
  t.match(head.headers['set-cookie'], /^csrftoken=[A-Za-z0-9_-]{43}; Max-Age=31536000; Path=\/; SameSite=Lax$/, 'HEAD too')
  for (const planted of ['<script>', '', 'short']) {
    const res = await probe.app.inject({ url: '/page', headers: { cookie: `csrftoken=${planted}` } })
    t.not(res.json().token, planted, `a cookie that is not a token (${JSON.stringify(planted)}) is not echoed`)
    t.match(res.headers['set-cookie'], /^csrftoken=[A-Za-z0-9_-]{43};/, 'and is replaced')
  }
  const onPost = await probe.app.inject({ method: 'POST', url: '/echo-token', headers: { cookie: `csrftoken=${TOKEN}`, 'x-csrftoken': TOKEN } })
  t.strictSame(onPost.json(), { token: TOKEN }, 'a checked POST has request.csrfToken too, for a form shown again')
  const exempt = await probe.app.inject({ method: 'POST', url: '/echo-token', headers: { authorization: 'Bearer x', cookie: 'csrftoken=<b>' } })
  t.strictSame(exempt.json(), { token: null }, 'null when the cookie is not a token')
})

t.test('the options name the cookie, header and field, and the lifetime', async (t) => {
  const probe = await build(t, { cookieName: 'tok', headerName: 'X-Tok', formField: 'f', maxAge: 60 })
  const res = await probe.app.inject('/page')
  const token = res.json().token as string
  t.equal(res.headers['set-cookie'], `tok=${token}; Max-Age=60; Path=/; SameSite=Lax`)
  await passes(t, probe, post({ cookie: `tok=${token}`, 'x-tok': token }), 'the named header')
  await passes(t, probe, post({ cookie: `tok=${token}`, 'content-type': FORM }, `f=${token}&a=1`), 'the named field')
  await refused(t, probe, post({ cookie: `csrftoken=${token}`, 'x-csrftoken': token }), 'No CSRF cookie found')
  t.strictSame(csrfNamesOf(probe.app.server), [{ cookieName: 'tok', headerName: 'x-tok', maxAge: 60 }], 'recorded for the Swagger UI page')
})

t.test('every check of SPEC §5.5, in order', async (t) => {
  const probe = await build(t)
  const cookie = `csrftoken=${TOKEN}`

  // 1. Authorization: not checked at all.
  await passes(t, probe, post({ authorization: 'Bearer anything' }), 'an Authorization header is exempt, even without a cookie')
  await passes(t, probe, post({ authorization: 'Bearer x', 'sec-fetch-site': 'cross-site' }), 'exempt before the Sec-Fetch-Site check')

  // 2. Sec-Fetch-Site: cross-site, before the cookie is looked at.
  await refused(t, probe, post({ 'sec-fetch-site': 'cross-site', cookie, 'x-csrftoken': TOKEN }), 'Cross-site request refused')
  await refused(t, probe, post({ 'sec-fetch-site': 'cross-site' }), 'Cross-site request refused')
  for (const site of ['same-origin', 'none']) {
    await passes(t, probe, post({ 'sec-fetch-site': site, cookie, 'x-csrftoken': TOKEN }), `Sec-Fetch-Site: ${site} is not refused`)
  }
  // Another origin of the same site (another port of the host) reads the token cookie: refused too (issue 27).
  await refused(t, probe, post({ 'sec-fetch-site': 'same-site', cookie, 'x-csrftoken': TOKEN }), 'Same-site request from another origin refused')

  // 3. The cookie.
  await refused(t, probe, post({ 'x-csrftoken': TOKEN }), 'No CSRF cookie found')
  await refused(t, probe, post({ 'x-csrftoken': TOKEN, cookie: 'csrftoken=' }), 'No CSRF cookie found')
  await refused(t, probe, post({ 'x-csrftoken': TOKEN, cookie: `other=${TOKEN}` }), 'No CSRF cookie found')

  // 4. Neither header nor field.
  const missing = 'The CSRF token wasn\'t found in the form data or header.'
  await refused(t, probe, post({ cookie }), missing)
  await refused(t, probe, post({ cookie, 'content-type': 'application/json' }, JSON.stringify({ csrftoken: TOKEN })), missing)
  await refused(t, probe, post({ cookie, 'x-csrftoken': '' }, undefined), missing)
  await refused(t, probe, post({ cookie, 'content-type': FORM }, 'a=1'), missing)
  await refused(t, probe, post({ cookie, 'content-type': FORM }, 'a=1&csrftoken='), missing)
  await refused(t, probe, post({ cookie, 'content-type': FORM }, ''), missing)

  // 5. Mismatches, header first.
  await refused(t, probe, post({ cookie, 'x-csrftoken': OTHER }), 'The CSRF token in the header doesn\'t match the cookie.')
  await refused(t, probe, post({ cookie, 'x-csrftoken': TOKEN.slice(1) }), 'The CSRF token in the header doesn\'t match the cookie.')
  await refused(t, probe, post({ cookie, 'x-csrftoken': OTHER, 'content-type': FORM }, `csrftoken=${TOKEN}`), 'The CSRF token in the header doesn\'t match the cookie.')
  await refused(t, probe, post({ cookie, 'content-type': FORM }, `csrftoken=${OTHER}`), 'The CSRF token in the form doesn\'t match the cookie.')
  await refused(t, probe, post({ cookie, 'content-type': FORM }, `csrftoken=${TOKEN}&csrftoken=${TOKEN}`), 'The CSRF token in the form doesn\'t match the cookie.')
  await refused(t, probe, post({ cookie: 'csrftoken=not-a-token', 'x-csrftoken': TOKEN }), 'The CSRF token in the header doesn\'t match the cookie.')

  // 6. Over plain HTTP too, an Origin (else Referer) that is sent must be the request's own (issue 27).
  await refused(t, probe, post({ cookie, 'x-csrftoken': TOKEN, origin: 'http://elsewhere.example' }), 'Referer or origin is incorrect')

  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    await refused(t, probe, { method, url: '/write', headers: { cookie } }, missing)
    await passes(t, probe, { method, url: '/write', headers: { cookie, 'x-csrftoken': TOKEN } }, `${method} with the header`)
  }
})

t.test('a form carries the token in its field, which the route does not see', async (t) => {
  const probe = await build(t)
  const cookie = `csrftoken=${TOKEN}`
  await passes(t, probe, post({ cookie, 'content-type': FORM }, `username=ann&csrftoken=${TOKEN}`), 'the field matches')
  t.strictSame({ ...probe.calls.at(-1)!.body as object }, { username: 'ann' }, 'the field is taken out of the body')
  await passes(t, probe, post({ cookie, 'content-type': `${FORM}; charset=UTF-8`, 'x-csrftoken': TOKEN }, `username=ann&csrftoken=${OTHER}`), 'or the header, on a form')
  t.strictSame({ ...probe.calls.at(-1)!.body as object }, { username: 'ann' }, 'the header wins and the field is taken out as well')
  await passes(t, probe, post({ cookie, 'x-csrftoken': TOKEN, 'content-type': 'application/json' }, JSON.stringify({ csrftoken: 1 })), 'a JSON body is the route\'s own')
  t.strictSame(probe.calls.at(-1)!.body, { csrftoken: 1 })
})

t.test('formField null: the header only', async (t) => {
  const probe = await build(t, { formField: null })
  await refused(t, probe, post({ cookie: `csrftoken=${TOKEN}`, 'content-type': FORM }, `csrftoken=${TOKEN}`), 'The CSRF token wasn\'t found in the form data or header.')
  await passes(t, probe, post({ cookie: `csrftoken=${TOKEN}`, 'x-csrftoken': TOKEN }), 'the header')
})

t.test('over HTTPS (trustProxy honoured), Origin or else Referer must name this host or an allowed one', async (t) => {
  const probe = await build(t, { allowedHosts: ['admin.example.org', 'Static.Example.org:8443'] }, { trustProxy: true })
  const incorrect = 'Referer or origin is incorrect'
  const https = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.org', cookie: `csrftoken=${TOKEN}`, 'x-csrftoken': TOKEN }
  await refused(t, probe, post(https), incorrect)
  await refused(t, probe, post({ ...https, origin: 'https://evil.example' }), incorrect)
  await refused(t, probe, post({ ...https, origin: 'null' }), incorrect)
  await refused(t, probe, post({ ...https, origin: 'null', referer: 'https://api.example.org/form' }), incorrect)
  await refused(t, probe, post({ ...https, referer: 'https://api.example.org.evil.example/' }), incorrect)
  await refused(t, probe, post({ ...https, origin: 'https://api.example.org:8443' }), incorrect)
  await refused(t, probe, post({ ...https, referer: 'api.example.org' }), incorrect)
  await refused(t, probe, post({ ...https, origin: 'https://static.example.org' }), incorrect)
  await passes(t, probe, post({ ...https, origin: 'https://api.example.org' }), 'the request\'s own host')
  await passes(t, probe, post({ ...https, origin: 'https://API.example.org:443' }), 'the default port and case do not matter')
  await passes(t, probe, post({ ...https, referer: 'https://api.example.org/page?x=1' }), 'Referer when there is no Origin')
  await passes(t, probe, post({ ...https, origin: 'https://admin.example.org' }), 'an allowed host')
  await passes(t, probe, post({ ...https, origin: 'https://static.example.org:8443' }), 'an allowed host with its port')
  await refused(t, probe, post({ ...https, 'x-csrftoken': OTHER, origin: 'https://evil.example' }), 'The CSRF token in the header doesn\'t match the cookie.')
  const form = { ...https, 'x-csrftoken': '', 'content-type': FORM }
  await refused(t, probe, post({ ...form, origin: 'https://evil.example' }, `csrftoken=${TOKEN}`), incorrect)
  await passes(t, probe, post({ ...form, origin: 'https://api.example.org' }, `csrftoken=${TOKEN}`), 'a form from this host')

  const direct = await build(t, {})
  await passes(t, direct, post({ 'x-forwarded-proto': 'https', cookie: `csrftoken=${TOKEN}`, 'x-csrftoken': TOKEN }), 'without trustProxy, X-Forwarded-Proto is not believed')
})

t.test('over plain HTTP, a page of another origin is refused even with the right token: another port, another host name, a Referer (issue 27)', async (t) => {
  const probe = await build(t, { allowedOrigins: ['http://127.0.0.1:15702', 'https://Admin.Example.org:443/'] })
  const incorrect = 'Referer or origin is incorrect'
  // A page on another port read the cookie (cookies ignore ports) and sends it back as the token.
  const http = { host: '127.0.0.1:15700', cookie: `csrftoken=${TOKEN}`, 'x-csrftoken': TOKEN }
  await refused(t, probe, post({ ...http, origin: 'http://127.0.0.1:15701' }), incorrect)
  await refused(t, probe, post({ ...http, origin: 'http://localhost:15700' }), incorrect)
  await refused(t, probe, post({ ...http, referer: 'http://127.0.0.1:15701/attack' }), incorrect)
  await refused(t, probe, post({ ...http, origin: 'null' }), incorrect)
  await refused(t, probe, post({ ...http, 'x-csrftoken': '', 'content-type': FORM, origin: 'http://127.0.0.1:15701' }, `csrftoken=${TOKEN}`), incorrect)
  await refused(t, probe, post({ ...http, origin: 'http://127.0.0.1:15701', 'sec-fetch-site': 'same-site' }), 'Same-site request from another origin refused')
  await passes(t, probe, post({ ...http, origin: 'http://127.0.0.1:15700' }), 'the request\'s own origin')
  await passes(t, probe, post({ ...http, referer: 'http://127.0.0.1:15700/form' }), 'its own Referer')
  await passes(t, probe, post(http), 'neither header over HTTP: not a browser')
  await passes(t, probe, post({ ...http, origin: 'http://127.0.0.1:15702', 'sec-fetch-site': 'same-site' }), 'an allowed origin, same-site')
  await passes(t, probe, post({ ...http, origin: 'https://admin.example.org', 'sec-fetch-site': 'cross-site' }), 'an allowed origin, cross-site')
  await refused(t, probe, post({ ...http, origin: 'http://admin.example.org' }), incorrect)
})

t.test('Authorization exempts a request only where its route does not authenticate by the session cookie (issue 27)', async (t) => {
  const app = Fastify()
  let ran = 0
  await app.register(async (site) => {
    await site.register(csrf)
    site.post('/bearer', { schema: { security: [{ bearerAuth: [] }] } }, async () => { ran++; return {} })
    site.post('/session', { schema: { security: [{ cookieAuth: [] }] } }, async () => { ran++; return {} })
    site.post('/other-session', { schema: { security: [{ cookieAuth_sid: [] }] } }, async () => { ran++; return {} })
  })
  t.teardown(async () => await app.close())
  const basic = { authorization: 'Basic YTpi' }
  t.equal((await app.inject({ method: 'POST', url: '/bearer', headers: basic })).statusCode, 200, 'a route of bearer auth')
  for (const url of ['/session', '/other-session']) {
    const res = await app.inject({ method: 'POST', url, headers: basic })
    t.same([res.statusCode, res.json().message], [403, 'No CSRF cookie found'], `${url}: the header does not exempt a cookie-authenticated route`)
    const form = await app.inject({ method: 'POST', url, headers: { ...basic, cookie: `csrftoken=${TOKEN}`, 'content-type': FORM }, payload: `csrftoken=${OTHER}` })
    t.equal(form.statusCode, 415, 'nor its form (no parser here: refused either way)')
  }
  t.equal(ran, 1)
})

t.test('only the context it is registered in, before its bodies are read', async (t) => {
  const probe = await build(t)
  t.equal((await probe.app.inject({ method: 'POST', url: '/outside' })).statusCode, 200, 'a route outside the context is not checked')

  const app = Fastify()
  let ran = 0
  await app.register(async (site) => {
    await site.register(fastifyCookie)
    await site.register(csrf)
    site.post('/json', async () => { ran++; return {} })
  })
  await app.ready()
  t.teardown(async () => await app.close())
  const unparsed = await app.inject({ method: 'POST', url: '/json', headers: { cookie: `csrftoken=${TOKEN}`, 'content-type': FORM }, payload: `csrftoken=${TOKEN}` })
  t.equal(unparsed.statusCode, 415, 'a form where no form parser is registered is refused as a body type')
  t.equal(ran, 0)
  const json = await app.inject({ method: 'POST', url: '/json', headers: { cookie: `csrftoken=${TOKEN}` }, payload: { a: 1 } })
  t.equal(json.statusCode, 403, 'the integrator\'s @fastify/cookie is used, not registered twice')
  t.equal(ran, 0)
})

t.test('invalid options fail at registration', async (t) => {
  const cases: Array<[CsrfOptions, string]> = [
    [{ cookieName: '' }, 'csrf: the option cookieName must be a non-empty name'],
    [{ cookieName: 'a b' }, 'csrf: the option cookieName must be'],
    [{ headerName: 1 as unknown as string }, 'csrf: the option headerName must be'],
    [{ formField: 'x;y' }, 'csrf: the option formField must be'],
    [{ allowedHosts: 'a.example' as unknown as string[] }, 'csrf: the option allowedHosts must be an array of host names'],
    [{ allowedHosts: ['https://a.example/'] }, 'csrf: the option allowedHosts must be'],
    [{ allowedHosts: [3 as unknown as string] }, 'csrf: the option allowedHosts must be'],
    [{ allowedHosts: ['a:b:c'] }, 'csrf: the option allowedHosts must be'],
    [{ allowedHosts: [''] }, 'csrf: the option allowedHosts must be'],
    [{ allowedOrigins: 'https://a.example' as unknown as string[] }, 'csrf: the option allowedOrigins must be an array of origins'],
    [{ allowedOrigins: ['https://a.example/path'] }, 'csrf: the option allowedOrigins must be'],
    [{ allowedOrigins: ['a.example'] }, 'csrf: the option allowedOrigins must be'],
    [{ allowedOrigins: ['ftp://a.example'] }, 'csrf: the option allowedOrigins must be'],
    [{ allowedOrigins: [1 as unknown as string] }, 'csrf: the option allowedOrigins must be'],
    [{ maxAge: 0 }, 'csrf: the option maxAge must be a whole number of seconds, 1 or more'],
    [{ maxAge: 1.5 }, 'csrf: the option maxAge must be']
  ]
  for (const [options, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(csrf, options); await app.ready() }, { code: 'TABLECRUD_ERR_OPTIONS', message: new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) }, JSON.stringify(options))
    await app.close()
  }
})

t.test('TableCRUD writes in the context are refused before any route work', async (t) => {
  const note = defineTable('csrf_inject_note', { text: column.varchar({ length: 100, required: true }) })
  const db = await testDatabase(t)
  const app = await buildApp(t, db, [note], async (app) => {
    await app.register(async (site) => {
      await site.register(csrf)
      await site.register(fastifyFormbody)
      await site.register(tableCrud, { table: note, prefix: '/notes', readOnly: false })
    })
  })
  const cookie = `csrftoken=${TOKEN}`
  const json = await app.inject({ method: 'POST', url: '/notes/', headers: { cookie }, payload: { text: 'x' } })
  t.equal(json.statusCode, 403, 'JSON without the header')
  t.equal(json.json().message, 'The CSRF token wasn\'t found in the form data or header.')
  const form = await app.inject({ method: 'POST', url: '/notes/', headers: { cookie, 'content-type': FORM }, payload: `text=x&csrftoken=${OTHER}` })
  t.equal(form.statusCode, 403, 'a form with a wrong token')
  t.equal(form.json().message, 'The CSRF token in the form doesn\'t match the cookie.')
  const put = await app.inject({ method: 'PUT', url: '/notes/1/', headers: { cookie: `csrftoken=${OTHER}`, 'x-csrftoken': TOKEN }, payload: { text: 'x' } })
  t.equal(put.statusCode, 403, 'before the row lookup (no 404)')
  t.equal((await db.pool.query('SELECT count(*)::int AS n FROM csrf_inject_note')).rows[0].n, 0, 'nothing written')
  const ok = await app.inject({ method: 'POST', url: '/notes/', headers: { cookie, 'x-csrftoken': TOKEN }, payload: { text: 'x' } })
  t.equal(ok.statusCode, 201, 'with the header, the write goes through')
})

t.test('a multipart form (a media upload) needs the header: its csrftoken field is not read, and nothing is stored', async (t) => {
  const film = defineTable('csrf_media_film', { poster: column.varchar({ length: 200, null: true }) })
  const db = await testDatabase(t)
  const dir = await mkdtemp(join(tmpdir(), 'tc-fix-csrf-media-'))
  t.teardown(async () => await rm(dir, { recursive: true, force: true }))
  const storage = localMediaStorage({ column: film.columnMap.get('poster')!, mediaPath: dir })
  const app = await buildApp(t, db, [film], async (app) => {
    await app.register(async (site) => {
      await site.register(csrf)
      await site.register(tableCrud, { table: film, prefix: '/films', readOnly: false, mediaStorage: [storage] })
    })
  })
  const boundary = 'csrf-boundary'
  const field = (name: string, value: string): string => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const payload = `${field('csrftoken', TOKEN)}${field('column', 'poster')}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\npng\r\n--${boundary}--\r\n`
  const headers = { cookie: `csrftoken=${TOKEN}`, 'content-type': `multipart/form-data; boundary=${boundary}` }
  const form = await app.inject({ method: 'POST', url: '/films/media/', headers, payload })
  t.equal(form.statusCode, 403, 'the token in a multipart field, the first one, is not enough')
  t.strictSame(form.json(), { statusCode: 403, code: 'TABLECRUD_ERR_CSRF', error: 'Forbidden', message: 'The CSRF token wasn\'t found in the form data or header.' })
  t.strictSame(await readdir(dir), [], 'nothing stored')
  const script = await app.inject({ method: 'POST', url: '/films/media/', headers: { ...headers, 'x-csrftoken': TOKEN }, payload: payload.replace(field('csrftoken', TOKEN), '') })
  t.equal(script.statusCode, 201, 'with the header (a page script sending FormData), the upload goes through')
  t.strictSame(await readdir(dir), [script.json().file_key])
})
