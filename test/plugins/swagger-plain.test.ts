import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import SwaggerParser from '@apidevtools/swagger-parser'
import { column, defineTable } from '../../lib/table/index.js'
import { BEARER_SECURITY_SCHEME, recordSecurityScheme, securedSwaggerTransform, securitySchemesOf } from '../../lib/auth/security.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { jwtAuth } from '../../plugins/auth/jwt-auth.js'
import { tokenAuth } from '../../plugins/auth/token-auth.js'
import { staticTokenProvider } from '../../lib/auth/providers.js'
import { importPeer, openApi, vendorExtra } from '../../plugins/openapi.js'

/* The document needs no database (SPEC §6.17): the pool points where nothing listens. */
const NOWHERE = 'postgres://postgres@127.0.0.1:1/none'

const thing = defineTable('sp_thing', { name: column.varchar({ length: 50 }) })

const plain = (value: unknown): any => JSON.parse(JSON.stringify(value))

async function build (t: Test, setup: (app: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: NOWHERE })
  await setup(app)
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

const protectedThings = async (app: FastifyInstance): Promise<void> => {
  await app.register(async (api) => {
    await api.register(tokenAuth, { provider: staticTokenProvider(['t1']) })
    await api.register(tableCrud, { table: thing, prefix: '/things' })
  }, { prefix: '/api' })
}

for (const [when, order] of [['before', 'swagger first'], ['after', 'auth first']] as const) {
  t.test(`@fastify/swagger registered directly, ${when} the auth plugin: the document declares bearerAuth (SPEC §6.21)`, async (t) => {
    const app = await build(t, async (app) => {
      const swagger = async (): Promise<void> => {
        await app.register(fastifySwagger, { openapi: { info: { title: 'Plain', version: '1.0.0' } } })
        await app.register(fastifySwaggerUi, { routePrefix: '/documentation' })
      }
      if (order === 'swagger first') await swagger()
      await protectedThings(app)
      // Registered after the routes, swagger sees none of them: it must still build.
      if (order === 'auth first') await swagger()
    })
    const response = await app.inject('/documentation/json')
    t.equal(response.statusCode, 200)
    const doc = response.json()
    if (order === 'swagger first') {
      t.strictSame(doc.components.securitySchemes, { bearerAuth: plain(BEARER_SECURITY_SCHEME) })
      t.strictSame(doc.paths['/api/things/'].get.security, [{ bearerAuth: [] }])
      t.equal((await app.inject('/documentation/yaml')).statusCode, 200, 'the YAML document too')
    } else {
      t.strictSame(Object.keys(doc.paths), [], 'routes registered before swagger are not documented (a swagger rule)')
    }
    await t.resolves(SwaggerParser.validate(structuredClone(doc)))
  })
}

t.test('with jwtAuth, and a scheme the integrator declared kept as declared', async (t) => {
  const mine = { type: 'http' as const, scheme: 'bearer', bearerFormat: 'JWT', description: 'mine' }
  const app = await build(t, async (app) => {
    await app.register(fastifySwagger, { openapi: { components: { securitySchemes: { bearerAuth: mine } } } })
    await app.register(async (api) => {
      await api.register(jwtAuth, { secret: 'swagger-plain-secret' })
      await api.register(tableCrud, { table: thing, prefix: '/things' })
    })
  })
  const doc = plain(app.swagger())
  t.strictSame(doc.components.securitySchemes, { bearerAuth: mine })
  t.strictSame(doc.paths['/things/{id}/'].get.security, [{ bearerAuth: [] }])
})

t.test('a route-level swaggerTransform of the integrator still runs on a protected route', async (t) => {
  const app = await build(t, async (app) => {
    await app.register(fastifySwagger, { openapi: {} })
    await app.register(async (api) => {
      await api.register(tokenAuth, { provider: staticTokenProvider(['t1']) })
      api.get('/renamed', { config: { swaggerTransform: ({ schema }) => ({ schema, url: '/shown-as' }) } }, async () => 'ok')
      api.get('/untransformed', { config: { swaggerTransform: false } }, async () => 'ok')
    })
  })
  const doc = plain(app.swagger())
  t.strictSame(Object.keys(doc.paths).sort(), ['/shown-as', '/untransformed'])
  t.strictSame(doc.paths['/shown-as'].get.security, [{ bearerAuth: [] }])
  t.equal((await app.inject({ url: '/renamed', headers: { authorization: 'Bearer t1' } })).body, 'ok')
})

t.test('registered directly, each TableCRUD path is listed once, with its slash, and no operationId twice', async (t) => {
  const app = await build(t, async (app) => {
    await app.register(fastifySwagger, { openapi: {} })
    await app.register(tableCrud, { table: thing, prefix: '/things', readOnly: false })
  })
  const doc = plain(app.swagger())
  t.strictSame(Object.keys(doc.paths).sort(), ['/things/', '/things/count/', '/things/ids/', '/things/new/', '/things/references/', '/things/schema/', '/things/{id}/'])
  const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId))
  t.equal(ids.length, 11)
  t.equal(new Set(ids).size, ids.length)
  t.equal((await app.inject('/things/new')).statusCode, 200, 'the hidden alias is still answered')
})

t.test('through openApi, a protected route keeps openApi\'s own transform (one path per route, with its slash)', async (t) => {
  const app = await build(t, async (app) => {
    await app.register(openApi)
    await protectedThings(app)
  })
  const doc = plain(app.swagger())
  t.ok('/api/things/' in doc.paths)
  t.notOk('/api/things' in doc.paths, 'the alias without the slash is hidden')
  t.strictSame(doc.paths['/api/things/'].get.security, [{ bearerAuth: [] }])
})

t.test('the scheme registry holds any scheme, one set per application', async (t) => {
  const server = {}
  const cookie = { type: 'apiKey', in: 'cookie', name: 'id', description: 'a cookie' } as const
  recordSecurityScheme(server, 'cookieAuth', cookie)
  t.strictSame(securitySchemesOf(server), { cookieAuth: cookie })
  const transform = securedSwaggerTransform(server, undefined)
  const document: { components?: { securitySchemes?: Record<string, unknown> } } = {}
  t.strictSame(transform({ schema: {}, url: '/x', route: {}, openapiObject: document }), {}, 'nothing else to run: the route as it is')
  t.strictSame(document.components, { securitySchemes: { cookieAuth: cookie } })
  t.strictSame(transform({ schema: {}, url: '/x', route: {}, swaggerObject: {} }), {}, 'a Swagger 2.0 build is left alone')
})

t.test('openApi without the swagger packages names what to install', async (t) => {
  await t.rejects(importPeer('@fastify/no-such-swagger'), {
    code: 'TABLECRUD_ERR_PEER_MISSING',
    message: 'openApi needs the package @fastify/no-such-swagger: npm install @fastify/swagger @fastify/swagger-ui'
  })
  await t.rejects(importPeer('data:text/javascript,throw new Error("broken")'), { message: 'broken' }, 'another failure is not hidden')
})

t.test('openApi writes the extra annotation as x-extra, and leaves a column named extra alone', async (t) => {
  const schema = { type: 'object', properties: { extra: { type: 'string', extra: { widget: 'text-area' } } }, anyOf: [{ extra: 1 }, 'x'], extra: { help_text: null } }
  t.strictSame(vendorExtra(schema), {
    type: 'object', properties: { extra: { type: 'string', 'x-extra': { widget: 'text-area' } } }, anyOf: [{ 'x-extra': 1 }, 'x'], 'x-extra': { help_text: null }
  })
  t.equal(schema.extra.help_text, null, 'a copy')
})
