import t from 'tap'
import { appPool, testDatabase } from '../helpers/db.js'
import { buildDemo, DEMO_USER } from '../../examples/movies/app.js'

/* The demo's browser side under csrf, csp and rateLimit (SPEC §5.5-5.7), by inject. */

process.env.TABLECRUD_BCRYPT_COST ??= '4'
const db = await testDatabase(t)
const app = await buildDemo(appPool(db))
t.teardown(async () => await app.close())
await app.ready()

const cookieOf = (setCookie: string | string[] | undefined, name: string): string => {
  const line = [setCookie ?? []].flat().find((c) => c.startsWith(`${name}=`))!
  return line.slice(name.length + 1).split(';')[0]!
}

t.test('every response carries the policy and the rate-limit headers', async (t) => {
  for (const path of ['/api/movies/', '/login/', '/docs/json']) {
    const res = await app.inject(path)
    t.equal(res.statusCode, 200, path)
    t.match(res.headers['content-security-policy'], /^default-src 'self'/, `${path}: CSP`)
    t.equal(res.headers['x-ratelimit-limit'], '1000', `${path}: rate limit`)
  }
})

t.test('the session login and logout are behind csrf; the bearer APIs are not', async (t) => {
  const refused = await app.inject({ method: 'POST', url: '/login/', payload: DEMO_USER })
  t.equal(refused.statusCode, 403)
  t.equal(refused.json().message, 'No CSRF cookie found')
  const page = await app.inject('/login/')
  const token = cookieOf(page.headers['set-cookie'], 'csrftoken')
  t.match(page.body, `name="csrftoken" value="${token}"`, 'the login form carries the token')
  const form = await app.inject({
    method: 'POST',
    url: '/login/',
    headers: { cookie: `csrftoken=${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `format=html&username=${DEMO_USER.username}&password=${DEMO_USER.password}&csrftoken=${token}`
  })
  t.equal(form.statusCode, 303, 'the form with its token logs in')
  t.equal(form.headers['x-ratelimit-limit'], '10', 'under the login limit')
  const session = cookieOf(form.headers['set-cookie'], 'id')
  const logout = await app.inject({ method: 'POST', url: '/logout/', headers: { cookie: `id=${session}; csrftoken=${token}` }, payload: {} })
  t.equal(logout.statusCode, 403, 'logout without the token header')
  t.equal(logout.json().message, 'The CSRF token wasn\'t found in the form data or header.')
  const out = await app.inject({ method: 'POST', url: '/logout/', headers: { cookie: `id=${session}; csrftoken=${token}`, 'x-csrftoken': token }, payload: {} })
  t.equal(out.statusCode, 200, 'with it')
  const jwt = await app.inject({ method: 'POST', url: '/login/jwt', payload: DEMO_USER })
  t.equal(jwt.statusCode, 200, 'JWT login needs no CSRF token')
  const admin = await app.inject({ method: 'PATCH', url: '/api/admin/movies/1/', headers: { authorization: `Bearer ${jwt.json().token}` }, payload: { rating: 8 } })
  t.equal(admin.statusCode, 200, 'nor a bearer write')
  t.equal(jwt.headers['x-ratelimit-limit'], '10', 'the login limit is on the JWT login')
})

t.test('an anonymous GET behind session auth (401) is counted like any request: the 1001st is a 429', async (t) => {
  const statuses = new Map<number, number>()
  let first
  for (let i = 1; i <= 1001; i++) {
    const res = await app.inject({ url: '/mfa/qrcode.png', remoteAddress: '10.20.30.40' })
    first ??= res
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
    if (i === 1001) t.equal(res.statusCode, 429, 'the 1001st')
  }
  t.strictSame(Object.fromEntries(statuses), { 401: 1000, 429: 1 })
  t.equal(first!.headers['x-ratelimit-limit'], '1000', 'the 401 carries the headers')
  t.equal(first!.headers['x-ratelimit-remaining'], '999')
})
