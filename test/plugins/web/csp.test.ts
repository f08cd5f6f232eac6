import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { csp, type CspOptions } from '../../../plugins/web/csp.js'

async function build (t: Test, options: CspOptions = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(async (site) => {
    await site.register(csp, options)
    site.get('/', async () => ({ ok: true }))
    site.get('/own', async (_request, reply) => reply.header('content-security-policy', "default-src 'none'").send({ ok: true }))
    site.get('/hooked', { onRequest: async (_request, reply) => { reply.header('content-security-policy', "script-src 'self'") } }, async () => ({ ok: true }))
    site.get('/missing', async (_request, reply) => reply.code(404).send({ gone: true }))
  })
  app.get('/outside', async () => ({ ok: true }))
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

t.test('every response of the context carries exactly default-src \'self\' by default', async (t) => {
  const app = await build(t)
  const res = await app.inject('/')
  t.equal(res.headers['content-security-policy'], "default-src 'self'")
  t.equal(res.headers['content-security-policy-report-only'], undefined)
  t.equal((await app.inject('/missing')).headers['content-security-policy'], "default-src 'self'", 'error answers too')
  t.equal((await app.inject('/outside')).headers['content-security-policy'], undefined, 'not outside its context')
  t.equal((await app.inject('/own')).headers['content-security-policy'], "default-src 'none'", 'a route that sets its own keeps it')
  t.equal((await app.inject('/hooked')).headers['content-security-policy'], "script-src 'self'", 'also from a route hook')
})

t.test('helmet\'s other headers: kept, with Referrer-Policy same-origin and no HSTS', async (t) => {
  const app = await build(t)
  const { headers } = await app.inject('/')
  t.equal(headers['x-content-type-options'], 'nosniff')
  t.equal(headers['x-frame-options'], 'SAMEORIGIN')
  t.equal(headers['referrer-policy'], 'same-origin', 'same-origin POSTs keep their Origin for the CSRF check')
  t.equal(headers['cross-origin-opener-policy'], 'same-origin')
  t.equal(headers['strict-transport-security'], undefined, 'HSTS is the TLS terminator\'s decision')
  const tuned = await build(t, { helmet: { frameguard: { action: 'deny' }, hsts: { maxAge: 60 }, referrerPolicy: { policy: 'no-referrer' } } })
  const more = (await tuned.inject('/')).headers
  t.equal(more['x-frame-options'], 'DENY', 'the helmet option passes through')
  t.equal(more['strict-transport-security'], 'max-age=60; includeSubDomains')
  t.equal(more['referrer-policy'], 'no-referrer')
  const strict = await build(t, { helmet: { strictTransportSecurity: { maxAge: 120, includeSubDomains: false } } })
  t.equal((await strict.inject('/')).headers['strict-transport-security'], 'max-age=120')
})

t.test('defaultSrc, directives, reportUri, reportOnly', async (t) => {
  const app = await build(t, { reportUri: '/csp-report' })
  t.equal((await app.inject('/')).headers['content-security-policy'], "default-src 'self'; report-uri /csp-report")
  const full = await build(t, { defaultSrc: ["'self'", 'https://cdn.example.org'], directives: { imgSrc: ["'self'", 'data:'], 'frame-ancestors': "'none'" }, reportUri: '/r' })
  t.equal((await full.inject('/')).headers['content-security-policy'], "default-src 'self' https://cdn.example.org; img-src 'self' data:; frame-ancestors 'none'; report-uri /r")
  const only = await build(t, { reportOnly: true })
  const res = await only.inject('/')
  t.equal(res.headers['content-security-policy-report-only'], "default-src 'self'")
  t.equal(res.headers['content-security-policy'], undefined, 'nothing is blocked')
})

t.test('invalid options fail at registration', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ defaultSrc: [] }, 'csp: the option defaultSrc must be a source or a non-empty array of sources'],
    [{ defaultSrc: "'self'; script-src *" }, 'csp: the option defaultSrc must hold non-empty sources without ; , or line breaks'],
    [{ reportUri: '' }, 'csp: the option reportUri must be a non-empty URI without ; , spaces or line breaks'],
    [{ reportUri: '/a b' }, 'csp: the option reportUri must be'],
    [{ reportUri: 5 }, 'csp: the option reportUri must be'],
    [{ directives: { defaultSrc: 'x' } }, 'csp: the option directives cannot set default-src: use the defaultSrc option'],
    [{ directives: 'img-src x' }, 'csp: the option directives must be an object of directive: sources'],
    [{ reportOnly: 'yes' }, 'csp: the option reportOnly must be true or false'],
    [{ helmet: true }, 'csp: the option helmet must be an object of @fastify/helmet options'],
    [{ helmet: null }, 'csp: the option helmet must be an object'],
    [{ helmet: { contentSecurityPolicy: false } }, 'csp: the option helmet cannot set contentSecurityPolicy: use defaultSrc, directives, reportUri and reportOnly']
  ]
  for (const [options, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(csp, options as CspOptions); await app.ready() }, { code: 'TABLECRUD_ERR_OPTIONS', message: new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) }, JSON.stringify(options))
    await app.close()
  }
})
