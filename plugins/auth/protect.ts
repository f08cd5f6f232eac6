import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { BEARER_SCHEME_NAME, recordBearerAuth, securedSwaggerTransform } from '../../lib/auth/security.js'
import { errorHandler, sendError } from '../errors.js'
import { documentResponses } from '../route-responses.js'
import { errorResponse, ServiceUnavailableResponse, withHeaders } from '../../schemas/responses.js'
import type {} from './types.js'

/** Route protection: what an auth plugin does to the context it guards, and how it refuses. */

/** What an auth plugin may refuse a request with, besides the 503 of a user looked up in the database. */
export interface Refusals {
  /** 401: no valid credential (not with `allowUnauthenticated`). */
  unauthenticated: boolean
  /** 403: a valid credential whose user a rule refuses (session auth's `adminOnly`...). */
  forbidden: boolean
}

/** The error responses the auth plugin adds to each route it protects, for OpenAPI. */
function refusalResponses (scheme: string, refusals: Refusals): Record<string, Record<string, unknown>> {
  const unauthenticated = errorResponse('Credentials missing, malformed, expired or revoked.')
  return {
    ...(refusals.unauthenticated
      ? { 401: scheme === BEARER_SCHEME_NAME ? withHeaders(unauthenticated, { 'WWW-Authenticate': Type.String({ description: 'Bearer' }) }) : unauthenticated }
      : {}),
    ...(refusals.forbidden ? { 403: errorResponse('The user is not allowed here (inactive, or not an admin or superuser as the route requires).') } : {}),
    503: ServiceUnavailableResponse
  }
}

/**
 * Readies a context an auth plugin protects: `request.user` and `request.jwtError` exist (null
 * until set), and each route added to it from now on carries `security: [{ <scheme>: [] }]`
 * for OpenAPI (`bearerAuth` unless told), unless its path is excluded or it declares its own
 * `security`, and, when it documents its responses, the plugin's `refusals` among them. The
 * application is recorded as using bearer auth when the scheme is bearerAuth, so its OpenAPI
 * document declares the scheme; other schemes are recorded by their plugin.
 * Each such route also gets a route-level `swaggerTransform` that declares the recorded
 * schemes in the document, so plain @fastify/swagger (registered before or after) builds it.
 */
export function protectContext (
  fastify: FastifyInstance, isExcluded: (url: string) => boolean = () => false, scheme = BEARER_SCHEME_NAME,
  refusals: Refusals = { unauthenticated: true, forbidden: false }
): void {
  documentResponses(fastify, refusalResponses(scheme, refusals), (route) => !isExcluded(route.url) && route.schema?.security === undefined)
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
