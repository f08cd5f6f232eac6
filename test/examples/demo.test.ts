import t from 'tap'
import { testDatabase } from '../helpers/db.js'
import { buildDemo, DEMO_USER } from '../../examples/movies/app.js'
import { createUser } from '../../lib/auth/users.js'

process.env.TABLECRUD_BCRYPT_COST ??= '4'
const db = await testDatabase(t)
const app = await buildDemo({ connectionString: db.connectionString, max: db.max })
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

t.test('the docs page and document are served', async (t) => {
  const document = await app.inject('/docs/json')
  t.equal(document.statusCode, 200)
  t.ok(document.json().paths['/api/admin/movies/'], 'the admin routes are documented')
  t.equal((await app.inject('/docs')).statusCode < 400, true)
})
