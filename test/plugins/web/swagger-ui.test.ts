import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { openApi, type OpenApiOptions } from '../../../plugins/openapi.js'
import { csp } from '../../../plugins/web/csp.js'
import { csrf } from '../../../plugins/web/csrf.js'
import { csrfScript } from '../../../plugins/swagger-ui.js'

const STYLE_HASH = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"

async function build (t: Test, setup: (app: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  const app = Fastify()
  await setup(app)
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

t.test('under csp, the Swagger UI page allows data: images and its logo\'s style sheet, nothing else', async (t) => {
  const app = await build(t, async (app) => {
    await app.register(csp, { reportUri: '/r' })
    await app.register(openApi)
    app.get('/api', async () => ({}))
  })
  const policy = `default-src 'self'; img-src 'self' data:; style-src 'self' ${STYLE_HASH}; report-uri /r`
  for (const path of ['/docs/', '/docs/static/swagger-initializer.js', '/docs/json']) {
    t.equal((await app.inject(path)).headers['content-security-policy'], policy, path)
  }
  t.equal((await app.inject('/api')).headers['content-security-policy'], "default-src 'self'; report-uri /r", 'other routes keep the plain policy')
})

t.test('the page copies the token of every csrf plugin, registered before or after openApi', async (t) => {
  const app = await build(t, async (app) => {
    await app.register(openApi)
    await app.register(async (a) => { await a.register(csrf) })
    await app.register(async (b) => { await b.register(csrf, { cookieName: 'tok', headerName: 'X-Tok' }) })
  })
  const html = (await app.inject('/docs/')).body
  t.match(html, '<script src="./static/theme/tablecrud-csrf.js"', 'the page loads the script: no inline script')
  const script = await app.inject('/docs/static/theme/tablecrud-csrf.js')
  t.equal(script.headers['content-type'], 'application/javascript; charset=utf-8')
  t.equal(script.body, csrfScript([{ cookieName: 'csrftoken', headerName: 'x-csrftoken' }, { cookieName: 'tok', headerName: 'x-tok' }]))
  t.match((await app.inject('/docs/static/swagger-initializer.js')).body, /"requestInterceptor":function requestInterceptor\(request\)/, 'Swagger UI calls it on each request')
  t.equal((await app.inject('/docs/')).headers['content-security-policy'], undefined, 'no csp plugin, no policy')
})

t.test('the script\'s answer issues the csrf cookies the browser lacks, as the plugins would', async (t) => {
  const app = await build(t, async (app) => {
    await app.register(openApi)
    await app.register(async (a) => { await a.register(csrf) })
    await app.register(async (b) => { await b.register(csrf, { cookieName: 'tok', headerName: 'X-Tok', maxAge: 60 }) })
    // The same cookie with another header: one token for it.
    await app.register(async (c) => { await c.register(csrf, { headerName: 'X-Other' }) })
  })
  const SCRIPT = '/docs/static/theme/tablecrud-csrf.js'
  const issued = async (cookie?: string, url = SCRIPT): Promise<string[]> =>
    [(await app.inject({ url, headers: cookie === undefined ? {} : { cookie } })).headers['set-cookie'] ?? []].flat()
  const fresh = await issued()
  t.match(fresh, [/^csrftoken=[A-Za-z0-9_-]{43}; Max-Age=31536000; Path=\/; SameSite=Lax$/, /^tok=[A-Za-z0-9_-]{43}; Max-Age=60; Path=\/; SameSite=Lax$/])
  t.equal(fresh.length, 2, 'one per cookie name')
  const held = 'A'.repeat(43)
  t.match(await issued(`csrftoken=${held}; other=1`), [/^tok=/], 'a valid cookie is kept')
  t.equal((await issued(`csrftoken=${held}; other=1`)).length, 1)
  t.strictSame(await issued(`csrftoken=${held}; tok=${held}`), [], 'both held: none issued')
  t.match(await issued(`csrftoken=<b>; tok=${held}; noequals`), [/^csrftoken=[A-Za-z0-9_-]{43};/], 'a value that is no token is replaced')
  t.strictSame(await issued(undefined, `${SCRIPT}?v=1`).then((c) => c.length), 2, 'with a query string too')
  t.strictSame(await issued(undefined, '/docs/'), [], 'only the script sets them, not the page')
})

t.test('without csrf the script copies nothing; the integrator\'s UI options are kept', async (t) => {
  const ui: OpenApiOptions['ui'] = {
    uiConfig: { requestInterceptor: (request: unknown) => request, docExpansion: 'none' },
    theme: { js: [{ filename: 'mine.js', content: 'window.mine = 1' }] },
    transformStaticCSP: (header: string) => `${header}; frame-ancestors 'none'`,
    uiHooks: { onRequest: async (request: { headers: Record<string, unknown> }, reply: { code: (n: number) => { send: (b: unknown) => unknown } }) => { if (request.headers['x-secret'] === undefined) return await reply.code(401).send({}) } }
  }
  const app = await build(t, async (app) => {
    await app.register(csp)
    await app.register(openApi, { ui })
  })
  t.equal((await app.inject('/docs/static/theme/tablecrud-csrf.js')).statusCode, 401, 'their onRequest hook runs')
  const headers = { 'x-secret': '1' }
  const script = await app.inject({ url: '/docs/static/theme/tablecrud-csrf.js', headers })
  t.match(script.body, 'var names = []')
  t.equal(script.headers['set-cookie'], undefined, 'no csrf plugin, no cookie')
  t.equal((await app.inject({ url: '/docs/static/theme/mine.js', headers })).body, 'window.mine = 1')
  const initializer = (await app.inject({ url: '/docs/static/swagger-initializer.js', headers })).body
  t.match(initializer, '"requestInterceptor":(request) => request', 'their own interceptor wins')
  t.match(initializer, '"docExpansion":"none"')
  t.equal((await app.inject({ url: '/docs/', headers })).headers['content-security-policy'], `default-src 'self'; frame-ancestors 'none'; img-src 'self' data:; style-src 'self' ${STYLE_HASH}`, 'their transform first')
})
