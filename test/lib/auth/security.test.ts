import t from 'tap'
import { BEARER_SECURITY_SCHEME, recordBearerAuth, recordCookieAuth, securitySchemesOf } from '../../../lib/auth/security.js'

t.test('an application is known to use bearer auth once recorded, by its server', async (t) => {
  const server = {}
  t.same(securitySchemesOf(server), {})
  recordBearerAuth(server)
  recordBearerAuth(server)
  t.same(securitySchemesOf(server), { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'API token or JWT', description: '`Authorization: Bearer <token>`, the token from token login or JWT login. Paste the token alone: Swagger UI adds `Bearer `.' } })
  t.equal(securitySchemesOf(server).bearerAuth, BEARER_SECURITY_SCHEME)
  t.same(securitySchemesOf({}), {}, 'another application is not')
  t.ok(Object.isFrozen(BEARER_SECURITY_SCHEME))
})

t.test('session auth records an apiKey cookie scheme per cookie name', async (t) => {
  const server = {}
  t.equal(recordCookieAuth(server, 'id'), 'cookieAuth')
  t.equal(recordCookieAuth(server, 'sid'), 'cookieAuth_sid')
  recordBearerAuth(server)
  t.same(securitySchemesOf(server), {
    cookieAuth: { type: 'apiKey', in: 'cookie', name: 'id', description: 'The session cookie id, from session login' },
    cookieAuth_sid: { type: 'apiKey', in: 'cookie', name: 'sid', description: 'The session cookie sid, from session login' },
    bearerAuth: BEARER_SECURITY_SCHEME
  })
})
