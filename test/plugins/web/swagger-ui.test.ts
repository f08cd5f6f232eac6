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

t.test('without csrf the script copies nothing; the integrator\'s UI options are kept', async (t) => {
  const ui: OpenApiOptions['ui'] = {
    uiConfig: { requestInterceptor: (request: unknown) => request, docExpansion: 'none' },
    theme: { js: [{ filename: 'mine.js', content: 'window.mine = 1' }] },
    transformStaticCSP: (header: string) => `${header}; frame-ancestors 'none'`
  }
  const app = await build(t, async (app) => {
    await app.register(csp)
    await app.register(openApi, { ui })
  })
  t.match((await app.inject('/docs/static/theme/tablecrud-csrf.js')).body, 'var names = []')
  t.equal((await app.inject('/docs/static/theme/mine.js')).body, 'window.mine = 1')
  const initializer = (await app.inject('/docs/static/swagger-initializer.js')).body
  t.match(initializer, '"requestInterceptor":(request) => request', 'their own interceptor wins')
  t.match(initializer, '"docExpansion":"none"')
  t.equal((await app.inject('/docs/')).headers['content-security-policy'], `default-src 'self'; frame-ancestors 'none'; img-src 'self' data:; style-src 'self' ${STYLE_HASH}`, 'their transform first')
})
