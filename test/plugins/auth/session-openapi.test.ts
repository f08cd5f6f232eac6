import t from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import SwaggerParser from '@apidevtools/swagger-parser'
import { openApi } from '../../../plugins/openapi.js'
import { sessionAuth } from '../../../plugins/auth/session-auth.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { sessionLogout } from '../../../plugins/auth/session-logout.js'
import { jwtAuth } from '../../../plugins/auth/jwt-auth.js'

// The document is built without a database: nothing here queries.
const app = Fastify()
t.teardown(async () => await app.close())
await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none' })
await app.register(openApi, { info: { title: 'sessions', version: '1.0.0' } })
await app.register(sessionLogin, { prefix: '/login' })
await app.register(sessionLogout, { prefix: '/logout', redirectTo: '/login/' })
await app.register(async (me) => {
  await me.register(sessionAuth, { excludedPaths: ['/me/public'] })
  me.get('/', { schema: { response: { 200: { type: 'object', properties: { username: { type: 'string' } } } } } }, async (request) => ({ username: request.user!.username }))
  me.get('/public', async () => ({}))
}, { prefix: '/me' })
await app.register(async (api) => {
  await api.register(jwtAuth, { secret: 'a-secret' })
  api.get('/x', async () => ({}))
}, { prefix: '/api' })
await app.ready()
const doc = app.swagger() as any

t.test('the session routes are documented, with their bodies and answers', async (t) => {
  const login = doc.paths['/login/']
  t.same(Object.keys(login).sort(), ['get', 'post'])
  t.same(Object.keys(login.get.responses['200'].content), ['text/html'])
  t.same(Object.keys(login.post.requestBody.content).sort(), ['application/json', 'application/x-www-form-urlencoded'])
  t.same(login.post.requestBody.content['application/json'].schema.required, ['username', 'password'])
  t.ok(login.post.responses['303'])
  t.same(login.post.responses['200'].content['application/json'].schema.properties, { message: { type: 'string' } })
  t.ok(doc.paths['/logout/'].post.responses['303'])
  t.equal(login.post.security, undefined, 'logging in needs no session')
})

t.test('routes of a sessionAuth context carry cookieAuth, the scheme is declared, and the document validates', async (t) => {
  t.same(doc.paths['/me/'].get.security, [{ cookieAuth: [] }])
  t.equal(doc.paths['/me/public'].get.security, undefined, 'an excluded path')
  t.same(doc.paths['/api/x'].get.security, [{ bearerAuth: [] }])
  t.same(doc.components.securitySchemes.cookieAuth, { type: 'apiKey', in: 'cookie', name: 'id', description: 'The session cookie id, from session login' })
  t.ok(doc.components.securitySchemes.bearerAuth)
  await t.resolves(SwaggerParser.validate(structuredClone(doc)))
})
