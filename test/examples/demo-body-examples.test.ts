import t from 'tap'
import { appPool, testDatabase } from '../helpers/db.js'
import { buildDemo } from '../../examples/movies/app.js'

/*
 * The examples of the demo's auth bodies, sent as they are in the document, succeed on a fresh
 * demo one after another (sign-up's creates the user the logins log in) and hold the required
 * fields only: an optional one such as `format: "html"` would turn the answer into a page.
 * Swagger UI prefills them: test/browser/swagger-execute.test.ts executes them in Chromium.
 */

process.env.TABLECRUD_BCRYPT_COST ??= '4'
const db = await testDatabase(t)
const app = await buildDemo(appPool(db))
t.teardown(async () => await app.close())

interface Operation { requestBody?: { content: Record<string, { example?: Record<string, unknown>, schema: { required?: string[] } }> } }
const document = (await app.inject('/docs/json')).json() as { paths: Record<string, Record<string, Operation>> }
const example = (path: string): Record<string, unknown> => document.paths[path]!.post!.requestBody!.content['application/json']!.example!

t.test('each auth body has one example, of its required fields only, the same for the form', async (t) => {
  for (const path of ['/login/jwt/', '/login/token/', '/login/', '/logout/', '/register/', '/change-password/', '/mfa/']) {
    const content = document.paths[path]!.post!.requestBody!.content
    const form = content['application/x-www-form-urlencoded']
    // JWT and token login take JSON only.
    if (form !== undefined) t.strictSame(form.example, example(path), `${path}: the form's is the same`)
    const required = content['application/json']!.schema.required ?? []
    // MFA's first step, register, needs the password, which its other steps do not.
    const needed = path === '/mfa/' ? [...required, 'password'] : required
    t.ok(Object.keys(example(path)).every((field) => needed.includes(field)), `${path}: ${JSON.stringify(example(path))}`)
  }
})

t.test('sent as they are, one after another, the examples succeed', async (t) => {
  const page = await app.inject('/login/')
  const csrf = page.cookies.find((c) => c.name === 'csrftoken')!.value
  let cookie = `csrftoken=${csrf}`
  const post = async (url: string): Promise<{ status: number, body: unknown }> => {
    const response = await app.inject({ method: 'POST', url, headers: { cookie, 'x-csrftoken': csrf }, payload: example(url) })
    const session = response.cookies.find((c) => c.name === 'id')
    if (session !== undefined) cookie = `csrftoken=${csrf}; id=${session.value}`
    return { status: response.statusCode, body: response.json() }
  }
  t.match(await post('/register/'), { status: 201, body: { username: 'ada' } })
  t.match(await post('/login/jwt/'), { status: 200, body: { token: String } })
  t.match(await post('/login/'), { status: 200, body: { message: 'logged in' } })
  t.match(await post('/mfa/'), { status: 200, body: { secret: String } }, 'MFA set-up: register with the password')
  t.match(await post('/logout/'), { status: 200, body: { message: 'Successfully logged out' } })
  t.match(await post('/login/'), { status: 200, body: { message: 'logged in' } }, 'MFA only pending: no code asked')
  t.match(await post('/change-password/'), { status: 200, body: { message: 'Password changed' } })
  // Token login needs a token made for the user first (SPEC §3.1): the example's user has none.
  t.match(await post('/login/token/'), { status: 401, body: { message: 'The credentials were incorrect' } })
})
