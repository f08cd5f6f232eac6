import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { BEARER_SCHEME_NAME, recordBearerAuth, securedSwaggerTransform } from '../../lib/auth/security.js'
import { errorHandler, sendError } from '../errors.js'
import type {} from './types.js'

/** Route protection: what an auth plugin does to the context it guards, and how it refuses. */

/**
 * Readies a context an auth plugin protects: `request.user` and `request.jwtError` exist (null
 * until set), and each route added to it from now on carries `security: [{ <scheme>: [] }]`
 * for OpenAPI (`bearerAuth` unless told), unless its path is excluded or it declares its own
 * `security`. The application is recorded as using bearer auth when the scheme is bearerAuth,
 * so its OpenAPI document declares the scheme; other schemes are recorded by their plugin.
 * Each such route also gets a route-level `swaggerTransform` that declares the recorded
 * schemes in the document, so plain @fastify/swagger (registered before or after) builds it.
 */
export function protectContext (fastify: FastifyInstance, isExcluded: (url: string) => boolean = () => false, scheme = BEARER_SCHEME_NAME): void {
  // A nested context (or the integrator) may have declared them already.
  if (!fastify.hasRequestDecorator('user')) fastify.decorateRequest('user', null)
  if (!fastify.hasRequestDecorator('jwtError')) fastify.decorateRequest('jwtError', null)
  if (scheme === BEARER_SCHEME_NAME) recordBearerAuth(fastify.server)
  fastify.addHook('onRoute', (route) => {
    if (isExcluded(route.url) || route.schema?.security !== undefined) return
    // Copies: a schema or config object may be shared with routes outside this context.
    route.schema = { ...route.schema, security: [{ [scheme]: [] }] }
    const config = (route.config ?? {}) as Record<string, unknown>
    route.config = { ...config, swaggerTransform: securedSwaggerTransform(fastify.server, config.swaggerTransform) } as typeof route.config
  })
}

/** Answers a 401 from an auth hook, with the challenge RFC 7235 asks for. */
export function refuse (reply: FastifyReply, error: Error): FastifyReply {
  reply.header('www-authenticate', 'Bearer')
  return sendError(reply, error)
}

/** Answers an unexpected error from a hook as the error handler would (503 for the database, generic 500 otherwise). */
export function fail (request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  errorHandler(error as Parameters<typeof errorHandler>[0], request, reply)
  return reply
}
