import t from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import SwaggerParser from '@apidevtools/swagger-parser'
import { openApi } from '../../../plugins/openapi.js'
import { csrf } from '../../../plugins/web/csrf.js'
import { sessionAuth } from '../../../plugins/auth/session-auth.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { sessionLogout } from '../../../plugins/auth/session-logout.js'
import { jwtAuth } from '../../../plugins/auth/jwt-auth.js'

/*
 * What the csrf plugin checks is in the OpenAPI document (issue 30): the cookie and the header
 * as two security schemes each checked route requires together, beside its own credential,
 * and the form field in its urlencoded body. The document is built without a database.
 */
const app = Fastify()
t.teardown(async () => await app.close())
await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none' })
await app.register(openApi, { info: { title: 'csrf', version: '1.0.0' } })
await app.register(async (site) => {
  await site.register(csrf)
  await site.register(sessionLogin, { prefix: '/login' })
  await site.register(sessionLogout, { prefix: '/logout' })
  site.delete('/thing', { schema: { response: { 204: { type: 'null' } } } }, async (_request, reply) => await reply.code(204).send())
  site.post('/untransformed', { config: { swaggerTransform: false } }, async () => ({}))
  site.put('/list', { schema: { consumes: ['application/x-www-form-urlencoded'], body: { type: 'array' } } }, async () => ({}))
  site.patch('/json', { schema: { consumes: ['application/json'], body: { type: 'object', properties: { a: { type: 'string' } } } } }, async () => ({}))
  await site.register(async (me) => {
    await me.register(sessionAuth)
    me.post('/', { schema: { body: { type: 'object', properties: { a: { type: 'string' } } }, response: { 200: { type: 'object' } } } }, async () => ({}))
  }, { prefix: '/me' })
  await site.register(async (api) => {
    await api.register(jwtAuth, { secret: 'a-secret' })
    api.post('/x', async () => ({}))
  }, { prefix: '/api' })
})
await app.register(async (other) => {
  await other.register(csrf, { cookieName: 'ct', headerName: 'X-CT', formField: null })
  await other.register(sessionLogout, { prefix: '/logout' })
}, { prefix: '/other' })
await app.ready()
const doc = app.swagger() as any

t.test('each checked route requires the CSRF cookie and header, beside its own credential', async (t) => {
  const both = { csrfCookie: [], csrfHeader: [] }
  t.same(doc.paths['/login/'].post.security, [both], 'a public route: the two schemes alone')
  t.equal(doc.paths['/login/'].get.security, undefined, 'GET is not checked')
  t.same(doc.paths['/thing'].delete.security, [both])
  t.same(doc.paths['/me/'].post.security, [{ cookieAuth: [], ...both }], 'with the session cookie')
  t.same(doc.paths['/api/x'].post.security, [{ bearerAuth: [] }], 'an Authorization header is not checked')
  t.same(doc.paths['/other/logout/'].post.security, [{ csrfCookie_ct: [], 'csrfHeader_x-ct': [] }], 'other names, other schemes')
  t.same(doc.paths['/untransformed'].post.security, [both], 'a route with swaggerTransform: false (no transform of its own) still shows the check')
  t.match(doc.components.securitySchemes, {
    csrfCookie: { type: 'apiKey', in: 'cookie', name: 'csrftoken' },
    csrfHeader: { type: 'apiKey', in: 'header', name: 'x-csrftoken', description: /the `csrftoken` field instead/ },
    csrfCookie_ct: { type: 'apiKey', in: 'cookie', name: 'ct' },
    'csrfHeader_x-ct': { type: 'apiKey', in: 'header', name: 'x-ct' }
  })
  t.notMatch(doc.components.securitySchemes['csrfHeader_x-ct'].description, /field/, 'no form field: the header only')
  await t.resolves(SwaggerParser.validate(structuredClone(doc)))
})

t.test('the form field is in urlencoded bodies, not in JSON ones', async (t) => {
  const content = doc.paths['/login/'].post.requestBody.content
  t.ok('csrftoken' in content['application/x-www-form-urlencoded'].schema.properties)
  t.notOk('csrftoken' in content['application/json'].schema.properties)
  t.same(Object.keys(doc.paths['/logout/'].post.requestBody.content['application/x-www-form-urlencoded'].schema.properties), ['format', 'csrftoken'], 'the logout form')
  t.same(Object.keys(doc.paths['/other/logout/'].post.requestBody.content['application/x-www-form-urlencoded'].schema.properties), ['format'], 'formField: null')
  t.same(Object.keys(doc.paths['/me/'].post.requestBody.content), ['application/json'], 'a JSON-only body is left as it is')
  t.same(Object.keys(doc.paths['/json'].patch.requestBody.content), ['application/json'], 'consumes JSON only: no form field')
  t.same(doc.paths['/list'].put.requestBody.content['application/x-www-form-urlencoded'].schema, { type: 'array' }, 'a body without properties: nothing to add to')
})

t.test('form routes list their text/html answers', async (t) => {
  const logout = doc.paths['/logout/'].post.responses
  t.same(Object.keys(logout['401'].content), ['application/json', 'text/html'], 'format=html: the page again')
  t.same(Object.keys(logout['200'].content), ['application/json', 'text/html'], 'no redirectTo: the logout page for format=html')
  t.same(Object.keys(logout['400'].content), ['application/json'], 'a body that is not JSON: JSON only')
  t.equal(logout['200'].description, 'Logged out: the session row is deleted and the cookie cleared.')
})
