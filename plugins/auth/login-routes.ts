import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { TABLECRUD_ERR_METHOD_NOT_ALLOWED } from '../../lib/errors.js'
import { errorHandler, pathOf, sendError } from '../errors.js'
import { errorResponse, MfaLockedResponse, ServiceUnavailableResponse } from '../../schemas/responses.js'
import type {} from '../web/types.js'
import { claimOperationIds } from '../operation-ids.js'

/** The routes of the JSON login plugins (token and JWT login). */

/**
 * The user of the auth bodies' examples, which Swagger UI's "Try it out" starts from: sign-up's
 * creates it, the logins log it in, the password change changes its password. The examples
 * hold the required fields only, so an optional one (`format: "html"` turns the answer into a
 * page, `mfa_code` asks for a second factor) is sent only when typed in.
 */
export const EXAMPLE_USER = { username: 'ada', email: 'ada@example.com', password: 'correct horse battery staple' } as const
const CREDENTIALS = { username: EXAMPLE_USER.username, password: EXAMPLE_USER.password } as const

const LOGIN_BODY = {
  type: 'object',
  properties: { username: { type: 'string', minLength: 1 }, password: { type: 'string', minLength: 1 } },
  required: ['username', 'password'],
  examples: [CREDENTIALS]
} as const

/** The second factor's fields of a login body (SPEC §5.4), for the plugins with `mfaProviders`. */
export const MFA_FIELDS = {
  mfa_code: { type: 'string', description: 'The second factor, for a user enrolled with one' },
  mfa_provider: { type: 'string', description: 'Which second factor, when several are configured' }
} as const

/** The login body, with the second factor's fields when `mfaProviders` names providers: `mfa_provider` one of them. */
function loginBody (mfaProviders: readonly string[]): object {
  if (mfaProviders.length === 0) return LOGIN_BODY
  const provider = { ...MFA_FIELDS.mfa_provider, enum: mfaProviders }
  return { ...LOGIN_BODY, properties: { ...LOGIN_BODY.properties, ...MFA_FIELDS, mfa_provider: provider } }
}

const TOKEN_RESPONSE = {
  type: 'object',
  properties: { token: { type: 'string' } },
  required: ['token']
} as const

/** Every answer a login route can give (SPEC §3), so a typed client knows its errors. */
const LOGIN_RESPONSES = {
  200: { ...TOKEN_RESPONSE, 'x-response-description': 'Logged in: the token, with `Cache-Control: no-store`.' },
  400: errorResponse('The body is not JSON.'),
  401: errorResponse('No credentials, or credentials that are wrong (an unknown or inactive user, a wrong password).'),
  413: errorResponse('The body is over the size limit.'),
  415: errorResponse('The body is not `application/json`.'),
  503: ServiceUnavailableResponse
}

/** A 405 with `Allow`, answered before the body is read. */
export function refuseMethod (allow: string) {
  return async function refuseMethod (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    reply.header('allow', allow)
    return sendError(reply, new TABLECRUD_ERR_METHOD_NOT_ALLOWED(request.method, pathOf(request)))
  }
}

/**
 * `Cache-Control: no-store` on every answer of the context (SPEC §3.2): set in onRequest, where a
 * route may still replace it (the forms' stylesheet), and in onSend where it is absent: a
 * refusal by a hook of the enclosing context (CSRF's 403, sessionAuth's 401, a rate limit's 429)
 * runs before this context's onRequest hooks, but is sent through its onSend hooks.
 */
export function noStore (fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })
  fastify.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
    return payload
  })
}

/**
 * The routes of a login context: POST at the prefix (its operationId the plugin's name, docs/openapi.md), a 405 with `Allow: POST` for the other
 * methods (answered before the body is read), `Cache-Control: no-store` on every answer, and errors in the SPEC shape (a body that is not
 * JSON is a 400; one that is not `application/json` a 415). The body documents `mfa_code` and
 * `mfa_provider` when the plugin has `mfaProviders` (their names).
 */
export function loginRoutes (fastify: FastifyInstance, plugin: string, summary: string, handler: RouteHandlerMethod, mfaProviders: readonly string[] = []): void {
  fastify.setErrorHandler(errorHandler)
  fastify.removeContentTypeParser('text/plain')
  // A credential, or the refusal of one (a 401, and a 400 or 415 of a body never read, issue
  // 27): no cache (browser, proxy) may keep any answer of a login (SPEC §3.2).
  noStore(fastify)
  fastify.route({
    method: 'POST',
    url: '/',
    schema: { operationId: claimOperationIds(fastify, plugin, plugin), summary, tags: ['login'], body: loginBody(mfaProviders), response: mfaProviders.length > 0 ? { ...LOGIN_RESPONSES, 429: MfaLockedResponse } : LOGIN_RESPONSES },
    // The rateLimit plugin's login limit applies (SPEC §5.7).
    config: { tablecrudLogin: true },
    // The body schema documents the route; the handler checks the body itself, because a
    // missing field is a 401 with the SPEC's message, not a 400, and nothing may be coerced.
    validatorCompiler: () => () => true,
    handler
  })
  // OPTIONS is left to @fastify/cors, whose preflight answers would otherwise be shadowed.
  const refuse = refuseMethod('POST')
  fastify.route({ method: ['GET', 'PUT', 'PATCH', 'DELETE'], url: '/', schema: { hide: true }, onRequest: refuse, handler: refuse })
}
