import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { appPool, testDatabase } from '../helpers/db.js'
import { buildDemo, DEMO_USER } from '../../examples/movies/app.js'
import { PAGE_STYLE } from '../../lib/html/index.js'

/*
 * The demo's pages for a person at a browser, by inject (the Chromium tests in test/browser/
 * go through the same flows and skip without chromium): the home page, the login redirect with
 * `next` (no open redirect), the stylesheet, the notices, and the login limit's 429 as a page.
 */

process.env.TABLECRUD_BCRYPT_COST ??= '4'
const db = await testDatabase(t)
const app = await buildDemo(appPool(db))
t.teardown(async () => await app.close())
await app.ready()

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
const FORM = 'application/x-www-form-urlencoded'
const cookieOf = (setCookie: string | string[] | undefined, name: string): string | undefined => {
  const line = [setCookie ?? []].flat().find((c) => c.startsWith(`${name}=`))
  return line?.slice(name.length + 1).split(';')[0]
}
let client = 0

/** A browser of its own (its own address, so the login limit is its own), with a CSRF cookie. */
async function browser (): Promise<{ ip: string, csrf: string, post: (url: string, fields: Record<string, string>, cookies?: Record<string, string>) => Promise<LightMyRequestResponse> }> {
  const ip = `10.9.8.${++client}`
  const csrf = cookieOf((await app.inject({ url: '/login/', remoteAddress: ip })).headers['set-cookie'], 'csrftoken')!
  const post = async (url: string, fields: Record<string, string>, cookies: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
    await app.inject({
      method: 'POST',
      url,
      remoteAddress: ip,
      headers: { 'content-type': FORM, accept: BROWSER },
      cookies: { csrftoken: csrf, ...cookies },
      payload: new URLSearchParams({ format: 'html', csrftoken: csrf, ...fields }).toString()
    })
  return { ip, csrf, post }
}

t.test('the home page says what the demo is, where things are, and who is logged in', async (t) => {
  const anonymous = await app.inject({ url: '/', headers: { accept: BROWSER } })
  t.equal(anonymous.statusCode, 200)
  t.equal(anonymous.headers['content-type'], 'text/html; charset=utf-8')
  t.match(anonymous.body, '<h1>fastify-tablecrud movies demo</h1>')
  for (const link of ['/docs/', '/api/movies/?__readable=true&amp;__order=-rating', '/docs/json', '/login/', '/register/']) t.match(anonymous.body, `href="${link}"`, link)
  t.match(anonymous.body, 'You are not logged in.')
  t.match(anonymous.body, '<link rel="stylesheet" href="/login/style.css">')
  const { post } = await browser()
  const id = cookieOf((await post('/login/', DEMO_USER)).headers['set-cookie'], 'id')!
  const known = await app.inject({ url: '/', cookies: { id } })
  t.match(known.body, `Logged in as <strong>${DEMO_USER.username}</strong>`)
  t.match(known.body, 'href="/logout/"')
  t.equal((await app.inject({ url: '/', cookies: { id: 'stale' } })).statusCode, 200, 'a stale cookie: the page, anonymous')
})

t.test('the stylesheet comes from the library, on every form page\'s own prefix', async (t) => {
  for (const prefix of ['/login/', '/logout/', '/register/']) {
    const res = await app.inject(`${prefix}style.css`)
    t.equal(res.statusCode, 200, prefix)
    t.equal(res.headers['content-type'], 'text/css; charset=utf-8')
    t.equal(res.headers['cache-control'], 'public, max-age=3600', 'cacheable, unlike the pages')
    t.equal(res.body, PAGE_STYLE)
    t.match((await app.inject(prefix)).body, `<link rel="stylesheet" href="${prefix}style.css">`)
  }
  t.match((await app.inject('/login/')).body, '<li><a href="/register/">No account? Sign up</a></li>')
  t.match((await app.inject('/register/')).body, '<li><a href="/login/">Already have an account? Log in</a></li>')
})

t.test('a page behind the session, logged out: a browser is sent to log in with next, an API client gets the JSON 401', async (t) => {
  for (const path of ['/me/', '/change-password/', '/mfa/', '/me/?tab=a%2Fb']) {
    const res = await app.inject({ url: path, headers: { accept: BROWSER } })
    t.same([res.statusCode, res.headers.location], [303, `/login/?next=${encodeURIComponent(path)}`], path)
  }
  const head = await app.inject({ method: 'HEAD', url: '/me/' })
  t.same([head.statusCode, head.headers.location], [303, '/login/?next=%2Fme%2F'], 'a page route, whatever it accepts')
  const odd = await app.inject({ url: '/me/?a=\\b', headers: { accept: BROWSER } })
  t.same([odd.statusCode, odd.headers.location], [303, '/login/'], 'a path that is not a safe next: the login page alone')
  const api = await app.inject({ url: '/mfa/qrcode.png', headers: { accept: '*/*' } })
  t.same([api.statusCode, api.json().message], [401, 'No session cookie found.'], 'not a page, not asking for HTML: JSON')
  const html = await app.inject({ url: '/mfa/qrcode.png', headers: { accept: BROWSER } })
  t.equal(html.statusCode, 303, 'a browser navigating there is sent to log in too')
  // The CSRF token, as a page would send it: the check passes, and session auth answers.
  const { csrf } = await browser()
  const post = await app.inject({ method: 'POST', url: '/mfa/', headers: { accept: BROWSER, 'content-type': 'application/json', 'x-csrftoken': csrf }, cookies: { csrftoken: csrf }, payload: '{}' })
  t.equal(post.statusCode, 401, 'a POST is never redirected')
})

t.test('the login page carries next, and a login goes there; anything but a path of this site goes to redirectTo', async (t) => {
  const page = await app.inject({ url: '/login/?next=%2Fmfa%2F', headers: { accept: BROWSER } })
  t.match(page.body, '<input type="hidden" name="next" value="/mfa/">')
  for (const evil of ['//evil.example/', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
    t.notMatch((await app.inject(`/login/?next=${encodeURIComponent(evil)}`)).body, 'name="next"', evil)
  }
  t.notMatch((await app.inject('/login/?next=/a&next=/b')).body, 'name="next"', 'a repeated next: none')
  const { post } = await browser()
  const good = await post('/login/', { ...DEMO_USER, next: '/mfa/' })
  t.same([good.statusCode, good.headers.location], [303, '/mfa/'])
  for (const evil of ['//evil.example/', 'https://evil.example/', '/\\evil.example', '/\t/evil.example']) {
    const res = await post('/login/', { ...DEMO_USER, next: evil })
    t.same([res.statusCode, res.headers.location], [303, '/me/'], JSON.stringify(evil))
  }
  const refused = await post('/login/', { username: DEMO_USER.username, password: 'wrong-password', next: '/mfa/' })
  t.equal(refused.statusCode, 401)
  t.match(refused.body, '<input type="hidden" name="next" value="/mfa/">', 'kept through a refusal')
  t.match(refused.body, 'value="demo" aria-describedby="form-message"', 'the username kept, the field tied to the message')
})

t.test('notices: after sign-up, logout and a password change, the next page says what happened, once', async (t) => {
  const { post } = await browser()
  const signedUp = await post('/register/', { username: 'notice-user', email: 'n@example.com', password: 'first-password', confirm_password: 'first-password' })
  t.same([signedUp.statusCode, signedUp.headers.location], [303, '/login/'], 'Location is redirectTo, as SPEC §5.2 says')
  const notice = cookieOf(signedUp.headers['set-cookie'], 'tablecrud_notice')
  t.equal(notice, 'registered')
  const shown = await app.inject({ url: '/login/', cookies: { tablecrud_notice: notice! } })
  t.match(shown.body, '<p class="notice" role="status">Your account is ready: log in.</p>')
  t.equal(cookieOf(shown.headers['set-cookie'], 'tablecrud_notice'), '', 'cleared once shown')
  t.notMatch((await app.inject({ url: '/login/', cookies: { tablecrud_notice: 'made-up' } })).body, 'class="notice"', 'only notices of the closed set')

  const id = cookieOf((await post('/login/', { username: 'notice-user', password: 'first-password' })).headers['set-cookie'], 'id')!
  const changed = await post('/change-password/', { current_password: 'first-password', new_password: 'second-password', confirm_new_password: 'second-password' }, { id })
  t.same([changed.statusCode, cookieOf(changed.headers['set-cookie'], 'tablecrud_notice')], [303, 'password-changed'])
  const id2 = cookieOf((await post('/login/', { username: 'notice-user', password: 'second-password' })).headers['set-cookie'], 'id')!
  const out = await post('/logout/', {}, { id: id2 })
  t.same([out.statusCode, cookieOf(out.headers['set-cookie'], 'tablecrud_notice')], [303, 'logged-out'])
  t.match((await app.inject({ url: '/login/', cookies: { tablecrud_notice: 'logged-out' } })).body, 'You are logged out.')
})

t.test('over the login limit, a browser gets the login page with the message and when to try again, still a 429', async (t) => {
  const { post, ip, csrf } = await browser()
  for (let i = 1; i <= 10; i++) t.equal((await post('/login/', { username: DEMO_USER.username, password: 'wrong-password' })).statusCode, 401, `attempt ${i}`)
  const page = await post('/login/', DEMO_USER)
  t.equal(page.statusCode, 429, 'the right password too')
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8')
  t.ok(Number(page.headers['retry-after']) > 840, 'Retry-After kept')
  t.match(page.body, '<p class="message" id="form-message" role="alert">Too many requests. Try again in 15 minutes.</p>')
  t.match(page.body, '<form method="post" action="/login/">')
  const json = await app.inject({ method: 'POST', url: '/login/', remoteAddress: ip, headers: { 'content-type': 'application/json', 'x-csrftoken': csrf }, cookies: { csrftoken: csrf }, payload: DEMO_USER })
  t.same([json.statusCode, json.json().code, json.json().message], [429, 'TABLECRUD_ERR_RATE_LIMITED', 'Too many requests'], 'JSON for an API client')

  const other = await browser()
  for (let i = 1; i <= 10; i++) await other.post('/register/', { username: '' })
  const register = await other.post('/register/', { username: 'x' })
  t.same([register.statusCode, /Sign up<\/h1>[\s\S]*Too many requests. Try again in 15 minutes./.test(register.body)], [429, true], 'the sign-up page alike')
})
