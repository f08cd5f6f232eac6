import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import type {} from '@fastify/postgres'
import fastifyJwt, { type JWT } from '@fastify/jwt'
import { TABLECRUD_ERR_METHOD_NOT_ALLOWED } from '../lib/errors.js'
import { COST_RULE, isCost, resolveCost } from '../lib/auth/password.js'
import { BEARER_SCHEME_NAME, recordBearerAuth } from '../lib/auth/security.js'
import { authTableProblem, type AuthDb } from '../lib/auth/users.js'
import { isTable, type Table } from '../lib/table/index.js'
import { database } from './database.js'
import { errorHandler, sendError } from './errors.js'
import type {} from './auth-types.js'

/**
 * `fastify.pg`, checked at registration: @fastify/postgres must be registered before a plugin
 * that queries (null when nothing will query and it is absent).
 */
export function databaseOf (fastify: FastifyInstance, plugin: string, needed = true): AuthDb | null {
  return needed || fastify.hasDecorator('pg') ? database(fastify, plugin) : null
}

/** An Error naming the plugin and the option, for a bad option at registration. */
export function optionError (plugin: string, option: string, problem: string): Error {
  return new Error(`${plugin}: the option ${option} ${problem}`)
}

/** The `bcryptCost` option, checked; when absent, `TABLECRUD_BCRYPT_COST` or 12. */
export function costOption (plugin: string, cost: unknown): number {
  if (cost !== undefined && !isCost(cost)) throw optionError(plugin, 'bcryptCost', COST_RULE)
  return resolveCost(cost as number | undefined)
}

/**
 * Readies a context an auth plugin protects: `request.user` and `request.jwtError` exist (null
 * until set), and each route added to it from now on carries `security: [{ bearerAuth: [] }]`
 * for OpenAPI, unless its path is excluded or it declares its own `security`. The application
 * is recorded as using bearer auth, so its OpenAPI document declares the scheme.
 */
export function protectContext (fastify: FastifyInstance, isExcluded: (url: string) => boolean = () => false): void {
  // A nested context (or the integrator) may have declared them already.
  if (!fastify.hasRequestDecorator('user')) fastify.decorateRequest('user', null)
  if (!fastify.hasRequestDecorator('jwtError')) fastify.decorateRequest('jwtError', null)
  recordBearerAuth(fastify.server)
  fastify.addHook('onRoute', (route) => {
    if (isExcluded(route.url) || route.schema?.security !== undefined) return
    // A copy: a schema object may be shared with routes outside this context.
    route.schema = { ...route.schema, security: [{ [BEARER_SCHEME_NAME]: [] }] }
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

export interface Credentials { username: string, password: string }

/** `{ username, password }` from a login body, or null when either is missing, empty or not a string. */
export function credentialsOf (body: unknown): Credentials | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null
  const { username, password } = body as Record<string, unknown>
  if (typeof username !== 'string' || username === '' || typeof password !== 'string' || password === '') return null
  return { username, password }
}

const LOGIN_BODY = {
  type: 'object',
  properties: { username: { type: 'string', minLength: 1 }, password: { type: 'string', minLength: 1 } },
  required: ['username', 'password']
} as const

const TOKEN_RESPONSE = {
  type: 'object',
  properties: { token: { type: 'string' } },
  required: ['token']
} as const

async function refuseMethod (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.header('allow', 'POST')
  return sendError(reply, new TABLECRUD_ERR_METHOD_NOT_ALLOWED(request.method, request.url.split('?')[0]))
}

/**
 * The routes of a login context: POST at the prefix, a 405 with `Allow: POST` for the other
 * methods (answered before the body is read), and errors in the SPEC shape (a body that is not
 * JSON is a 400; one that is not `application/json` a 415).
 */
export function loginRoutes (fastify: FastifyInstance, summary: string, handler: RouteHandlerMethod): void {
  fastify.setErrorHandler(errorHandler)
  fastify.removeContentTypeParser('text/plain')
  fastify.route({
    method: 'POST',
    url: '/',
    schema: { summary, body: LOGIN_BODY, response: { 200: TOKEN_RESPONSE } },
    // The body schema documents the route; the handler checks the body itself, because a
    // missing field is a 401 with the SPEC's message, not a 400, and nothing may be coerced.
    validatorCompiler: () => () => true,
    handler
  })
  // OPTIONS is left to @fastify/cors, whose preflight answers would otherwise be shadowed.
  fastify.route({ method: ['GET', 'PUT', 'PATCH', 'DELETE'], url: '/', schema: { hide: true }, onRequest: refuseMethod, handler: refuseMethod })
}

/** Whether `secret` can sign HS256 tokens: a non-empty string or Buffer. */
export function secretProblem (secret: unknown): string | null {
  const ok = (typeof secret === 'string' || Buffer.isBuffer(secret)) && secret.length > 0
  return ok ? null : 'is required: a non-empty string or Buffer'
}

/** The `authTable` option, checked: a table with the columns of the built-in user table. */
export function tableOption (plugin: string, table: unknown): Table {
  if (!isTable(table)) throw optionError(plugin, 'authTable', 'must be a table made by defineTable')
  const problem = authTableProblem(table)
  if (problem !== null) throw optionError(plugin, 'authTable', `cannot hold users: ${problem}`)
  return table
}

let namespaces = 0

/**
 * An @fastify/jwt instance of our own, pinned to HS256, requiring `exp`, with no clock
 * tolerance. It lives in a private child context under its own namespace, so any number of
 * jwtLogin and jwtAuth registrations (nested or side by side) and an integrator's own
 * @fastify/jwt never meet: no decorator of the integrator's contexts is taken.
 */
export async function privateJwt (fastify: FastifyInstance, secret: string | Buffer, expiresIn?: number): Promise<JWT> {
  const namespace = `tablecrud${++namespaces}`
  let jwt: JWT | undefined
  await fastify.register(async (child) => {
    await child.register(fastifyJwt, {
      secret,
      namespace,
      decoratorName: `${namespace}Payload`,
      sign: { algorithm: 'HS256', ...(expiresIn === undefined ? {} : { expiresIn }) },
      verify: { algorithms: ['HS256'], requiredClaims: ['exp'], clockTolerance: 0 }
    })
    jwt = (child.jwt as unknown as Record<string, JWT>)[namespace]
  })
  return jwt!
}
