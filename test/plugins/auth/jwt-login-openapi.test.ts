import t from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import SwaggerParser from '@apidevtools/swagger-parser'
import { openApi } from '../../../plugins/openapi.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { tokenLogin } from '../../../plugins/auth/token-login.js'
import type { MfaProvider } from '../../../plugins/auth/extensions.js'

/*
 * The JSON login bodies in OpenAPI (SPEC §5.4): jwtLogin with `mfaProviders` documents
 * `mfa_code` and `mfa_provider` (one of the providers' names), both optional, since only a user
 * enrolled with a provider sends them; without providers, and on tokenLogin, they mean nothing
 * and are not listed. The document is built without a database: nothing here queries.
 */

const provider = (name: string): MfaProvider => ({ name, isEnrolled: async () => false, verifyCode: async () => false })

const app = Fastify()
t.teardown(async () => await app.close())
await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none' })
await app.register(openApi, { info: { title: 'logins', version: '1.0.0' } })
await app.register(jwtLogin, { prefix: '/login/jwt', secret: 'jwt-login-openapi-secret-0123456789abcdef', mfaProviders: [provider('authenticator'), provider('sms')] })
await app.register(jwtLogin, { prefix: '/login/plain', secret: 'jwt-login-openapi-secret-0123456789abcdef' })
await app.register(tokenLogin, { prefix: '/login/token' })
await app.ready()
const doc = app.swagger() as any
const bodyOf = (path: string): any => doc.paths[path].post.requestBody.content['application/json'].schema

t.test('jwtLogin with mfaProviders lists mfa_code and mfa_provider, optional', async (t) => {
  t.strictSame(bodyOf('/login/jwt/'), {
    type: 'object',
    properties: {
      username: { type: 'string', minLength: 1 },
      password: { type: 'string', minLength: 1 },
      mfa_code: { type: 'string', description: 'The second factor, for a user enrolled with one' },
      mfa_provider: { type: 'string', description: 'Which second factor, when several are configured', enum: ['authenticator', 'sms'] }
    },
    required: ['username', 'password']
  })
})

t.test('jwtLogin without providers and tokenLogin take the credentials alone', async (t) => {
  const plain = { type: 'object', properties: { username: { type: 'string', minLength: 1 }, password: { type: 'string', minLength: 1 } }, required: ['username', 'password'] }
  t.strictSame(bodyOf('/login/plain/'), plain)
  t.strictSame(bodyOf('/login/token/'), plain)
  await t.resolves(SwaggerParser.validate(structuredClone(doc)), 'the document validates')
})
