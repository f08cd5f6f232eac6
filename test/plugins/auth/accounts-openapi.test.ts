import t from 'tap'
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import SwaggerParser from '@apidevtools/swagger-parser'
import { openApi } from '../../../plugins/openapi.js'
import { authenticatorProvider } from '../../../lib/auth/mfa.js'
import { changePassword } from '../../../plugins/auth/change-password.js'
import { mfaSetup } from '../../../plugins/auth/mfa-setup.js'
import { register } from '../../../plugins/auth/register.js'
import { sessionAuth } from '../../../plugins/auth/session-auth.js'

// The document is built without a database: nothing here queries.
const app = Fastify()
t.teardown(async () => await app.close())
await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none' })
await app.register(openApi, { info: { title: 'accounts', version: '1.0.0' } })
await app.register(register, { prefix: '/register' })
await app.register(async (me) => {
  await me.register(sessionAuth)
  await me.register(changePassword, { prefix: '/change-password' })
  await me.register(mfaSetup, { prefix: '/mfa', provider: authenticatorProvider({ encryptionKey: randomBytes(32) }) })
})
await app.ready()
const doc = app.swagger() as any

t.test('the account routes are documented and the document validates', async (t) => {
  const signUp = doc.paths['/register/']
  t.same(Object.keys(signUp).sort(), ['get', 'post'])
  t.same(signUp.post.requestBody.content['application/json'].schema.required, ['username', 'email', 'password', 'confirm_password'])
  t.same(Object.keys(signUp.post.requestBody.content).sort(), ['application/json', 'application/x-www-form-urlencoded'])
  t.ok(signUp.post.responses['201'])
  t.equal(signUp.post.security, undefined, 'signing up needs no session')
  const change = doc.paths['/change-password/']
  t.same(change.post.security, [{ cookieAuth: [] }])
  t.same(change.post.requestBody.content['application/json'].schema.required, ['current_password', 'new_password', 'confirm_new_password'])
  const mfa = doc.paths['/mfa/']
  t.same(mfa.post.requestBody.content['application/json'].schema.properties.action.enum, ['register', 'confirm', 'revoke'])
  t.same(mfa.post.security, [{ cookieAuth: [] }])
  t.ok(doc.paths['/mfa/qrcode.png'].get.responses['200'].content['image/png'])
  await t.resolves(SwaggerParser.validate(structuredClone(doc)))
})
