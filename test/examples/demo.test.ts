import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { appPool, testDatabase } from '../helpers/db.js'
import { buildDemo, DEMO_USER } from '../../examples/movies/app.js'
import { createUser } from '../../lib/auth/users.js'

process.env.TABLECRUD_BCRYPT_COST ??= '4'
const db = await testDatabase(t)
const mediaPath = await mkdtemp(join(tmpdir(), 'tc-f-demo-media-'))
t.teardown(async () => await rm(mediaPath, { recursive: true, force: true }))
// Named statements as a direct connection takes them, unnamed through the pooled mode's PgBouncer.
const app = await buildDemo({ ...appPool(db), mediaPath, preparedStatements: db.pooled ? 'unnamed' : 'named' })
t.teardown(async () => await app.close())
await app.ready()

async function tokenFor (url: string, username: string, password: string): Promise<string> {
  const response = await app.inject({ method: 'POST', url, payload: { username, password } })
  t.equal(response.statusCode, 200, `${url} login`)
  return response.json().token
}

t.test('the public mounts are read-only', async (t) => {
  const list = await app.inject('/api/movies/?__page_size=2&__visible_fields=name,director.name&__readable=true&__range_header=true')
  t.equal(list.statusCode, 200)
  t.equal(list.json().rows.length, 2)
  t.match(list.headers['content-range'], /^movie 0-1\/\d+$/)
  t.match(list.json().rows[0], { name: String, director: { name: String }, director_readable: String })
  const write = await app.inject({ method: 'POST', url: '/api/movies/', payload: {} })
  t.equal(write.statusCode, 405)
  t.equal(write.headers.allow, 'GET, HEAD')
})

t.test('the admin mount takes a JWT, and only superusers delete', async (t) => {
  const jwt = await tokenFor('/login/jwt', DEMO_USER.username, DEMO_USER.password)
  const auth = { authorization: `Bearer ${jwt}` }
  t.equal((await app.inject({ method: 'PATCH', url: '/api/admin/movies/1/', payload: { rating: 9.5 } })).statusCode, 401)
  const patched = await app.inject({ method: 'PATCH', url: '/api/admin/movies/1/', headers: auth, payload: { rating: 9.5 } })
  t.equal(patched.statusCode, 200)
  t.equal(patched.json().rating, 9.5)

  await createUser(app.pg, { username: 'editor', password: 'editor-password' })
  const editor = { authorization: `Bearer ${await tokenFor('/login/jwt', 'editor', 'editor-password')}` }
  const role = (await app.inject('/api/roles/?__page_size=1')).json().rows[0]
  const refused = await app.inject({ method: 'DELETE', url: `/api/admin/roles/${role.id}/`, headers: editor })
  t.equal(refused.statusCode, 403)
  t.equal(refused.json().message, 'Only superusers may delete rows.')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/admin/roles/${role.id}/`, headers: auth })).statusCode, 204)
})

t.test('the token mount takes a token from token login', async (t) => {
  const token = await tokenFor('/login/token', DEMO_USER.username, DEMO_USER.password)
  const response = await app.inject({ url: '/api/token/directors/count/', headers: { authorization: `Bearer ${token}` } })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { count: 20, page_size: 15 })
})

t.test('the load balancer\'s probes: live and ready', async (t) => {
  t.strictSame((await app.inject('/health/live')).json(), { status: 'live' })
  const ready = await app.inject('/health/ready')
  t.equal(ready.statusCode, 200)
  t.equal(ready.json().status, 'ready')
})

t.test('the docs page and document are served', async (t) => {
  const document = await app.inject('/docs/json')
  t.equal(document.statusCode, 200)
  t.ok(document.json().paths['/api/admin/movies/'], 'the admin routes are documented')
  t.equal((await app.inject('/docs')).statusCode < 400, true)
})

t.test('posters: uploaded through the movies mount, served at /media/ sandboxed', async (t) => {
  const token = await tokenFor('/login/token', DEMO_USER.username, DEMO_USER.password)
  const boundary = 'demo-boundary'
  const png = Buffer.from('89504e470d0a1a0a', 'hex')
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="column"\r\n\r\nposter\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="Alien.png"\r\nContent-Type: image/png\r\n\r\n`),
    png,
    Buffer.from(`\r\n--${boundary}--\r\n`)
  ])
  const headers = { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` }
  const stored = await app.inject({ method: 'POST', url: '/api/token/movies/media/', headers, payload })
  t.equal(stored.statusCode, 201)
  const key = stored.json().file_key as string
  t.equal((await app.inject({ method: 'PATCH', url: '/api/token/movies/1/', headers: { authorization: `Bearer ${token}` }, payload: { poster: key } })).statusCode, 200)
  const { file_url: url } = (await app.inject(`/api/movies/media/url/?column=poster&file_key=${encodeURIComponent(key)}`)).json()
  t.equal(url, `/media/${encodeURIComponent(key)}`)
  const served = await app.inject(url)
  t.equal(served.statusCode, 200)
  t.same(served.rawPayload, png)
  t.equal(served.headers['content-type'], 'image/png')
  t.equal(served.headers['x-content-type-options'], 'nosniff')
  t.match(served.headers['content-security-policy'], /sandbox/)
  const svg = await app.inject({ method: 'POST', url: '/api/token/movies/media/', headers, payload: payload.toString('latin1').replace('Alien.png', 'x.svg') })
  t.equal(svg.statusCode, 400, 'the demo takes images it can show, not SVG')
  const publicUpload = await app.inject({ method: 'POST', url: '/api/movies/media/', headers, payload })
  t.equal(publicUpload.statusCode, 405, 'the public mount is read-only')
})

t.test('every error of the demo is in the SPEC §1 shape (errorShape)', async (t) => {
  const nowhere = await app.inject('/nowhere')
  t.equal(nowhere.statusCode, 404)
  t.strictSame(nowhere.json(), { statusCode: 404, code: 'TABLECRUD_ERR_ROUTE_NOT_FOUND', error: 'Not Found', message: 'Route GET:/nowhere not found' })
  const badUrl = await app.inject('/api/movies/%zz/')
  t.equal(badUrl.statusCode, 400)
  t.equal(badUrl.headers['content-type'], 'application/json; charset=utf-8')
  t.strictSame(badUrl.json(), { statusCode: 400, code: 'FST_ERR_BAD_URL', error: 'Bad Request', message: "'/api/movies/%zz/' is not a valid url component" })
})
