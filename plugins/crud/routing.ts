import type {
  FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, HTTPMethods, RawReplyDefaultExpression,
  RawRequestDefaultExpression, RawServerDefault, RouteGenericInterface, RouteOptions
} from 'fastify'
import type { FastifySchemaCompiler, FastifyValidationResult } from 'fastify/types/schema.js'
import type { Ajv } from 'ajv'
import { TABLECRUD_ERR_ID_INVALID, TABLECRUD_ERR_METHOD_NOT_ALLOWED, TABLECRUD_ERR_ROUTE_NOT_FOUND } from '../../lib/errors.js'
import type { RawQuery } from '../../lib/query/parse.js'
import { pathOf, sendError } from '../errors.js'
import { lazyValidator } from './compilers.js'

/** The methods that change something; a path answers 405 to those it does not have. */
export const WRITE_METHODS: readonly HTTPMethods[] = ['POST', 'PUT', 'PATCH', 'DELETE']

export type Route<RG extends RouteGenericInterface> =
  RouteOptions<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, RG>

/**
 * The route, with and without its trailing slash (SPEC §2: no redirect): two routes, unless the
 * application's router already takes both (`ignoreTrailingSlash`), which saves each route's
 * context, some 10 kB, times every route of every table. OpenAPI lists the path once, with its
 * slash: the alias is hidden, so its operationId is not listed twice, with @fastify/swagger
 * registered directly too.
 */
export function route<RG extends RouteGenericInterface> (fastify: FastifyInstance, options: Route<RG>): void {
  fastify.route<RG>(options)
  if (options.url !== '/' && !ignoresTrailingSlash(fastify)) fastify.route<RG>({ ...options, url: options.url.replace(/\/$/, ''), schema: { ...options.schema, hide: true } })
}

function ignoresTrailingSlash (fastify: FastifyInstance): boolean {
  const config = fastify.initialConfig as { routerOptions?: { ignoreTrailingSlash?: boolean }, ignoreTrailingSlash?: boolean }
  // Fastify 5.x moved the option to `routerOptions` and warns when the old place is read.
  return (config.routerOptions === undefined ? config.ignoreTrailingSlash : config.routerOptions.ignoreTrailingSlash) === true
}

/**
 * A Fastify validator compiler: bodies by our own Ajv, the query string by `parse` (its result
 * becomes `request.query`, typed by the route), params and headers as they come. Those pass
 * with `true`, not `{ value }`: Fastify assigns a value back, and `request.headers` assigned
 * becomes a getter that copies every header into a new object at each read (a GET `/:id/`
 * read it for If-None-Match, and Fastify again to reply).
 */
export function compilers (ajv: Ajv, parse: ((raw: RawQuery) => unknown) | null): FastifySchemaCompiler<FastifySchema> {
  const asIs = (): boolean => true
  return ({ schema, httpPart }) => {
    if (httpPart === 'body') return lazyValidator(ajv, schema)
    // Fastify's type says boolean results; at run time it also takes { value } and { error }.
    return (httpPart === 'querystring' && parse !== null ? parsing(parse) : asIs) as FastifyValidationResult
  }
}

function parsing (parse: (raw: RawQuery) => unknown): (data: unknown) => { value: unknown } | { error: Error } {
  return (data) => {
    try {
      return { value: parse(data as RawQuery) }
    } catch (error) {
      return { error: error as Error }
    }
  }
}

/**
 * Methods a path does not have, TRACE included, answer 405 before anything is parsed; OPTIONS
 * answers 204 with the same `Allow` (SPEC §6.13, §6.14).
 */
export function notAllowed (fastify: FastifyInstance, url: string, allowed: readonly HTTPMethods[]): void {
  const method: HTTPMethods[] = [...WRITE_METHODS.filter((m) => !allowed.includes(m)), 'OPTIONS', 'TRACE']
  const allow = ['GET', 'HEAD', ...allowed].join(', ')
  const options = answerOptions(allow)
  const answer = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    if (request.method === 'OPTIONS') return await options(request, reply)
    reply.header('allow', allow)
    return sendError(reply, new TABLECRUD_ERR_METHOD_NOT_ALLOWED(request.method, pathOf(request)))
  }
  // Answered in onRequest, before a body is parsed; the handler is never reached. One route
  // for both answers: each route costs a context of its own, some 10 kB, times every path of
  // every table.
  route(fastify, { method, url, schema: { hide: true }, onRequest: answer, handler: answer })
}

/**
 * OPTIONS on a TableCRUD path: 204 with `Allow` (SPEC §6.13). A CORS preflight is
 * @fastify/cors's to answer: registered around TableCRUD, its onRequest hook runs before this.
 */
export function answerOptions (allow: string): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  return async (_request, reply) => await reply.code(204).header('allow', allow).send()
}

/**
 * Paths below the table's routes. The router answers an id longer than Fastify's
 * maxParamLength (100 by default) with its own 414 before any route of ours: such paths land
 * here, answered as SPEC §6.11 and §6.13 say.
 */
export function beyondRoutes (fastify: FastifyInstance, writable: boolean): void {
  const idMethods: readonly string[] = ['GET', 'HEAD', ...(writable ? ['PUT', 'PATCH', 'DELETE'] : [])]
  const answer = async (request: FastifyRequest<{ Params: { '*': string } }>, reply: FastifyReply): Promise<FastifyReply> => {
    const path = pathOf(request)
    if (request.params['*'].replace(/\/$/, '').includes('/')) {
      return sendError(reply, new TABLECRUD_ERR_ROUTE_NOT_FOUND(request.method, path))
    }
    if (request.method === 'OPTIONS') return await answerOptions(idMethods.join(', '))(request, reply)
    if (!idMethods.includes(request.method)) {
      reply.header('allow', idMethods.join(', '))
      return sendError(reply, new TABLECRUD_ERR_METHOD_NOT_ALLOWED(request.method, path))
    }
    return sendError(reply, new TABLECRUD_ERR_ID_INVALID())
  }
  fastify.route<{ Params: { '*': string } }>({ method: ['GET', 'HEAD', ...WRITE_METHODS, 'OPTIONS', 'TRACE'], url: '/*', schema: { hide: true }, onRequest: answer, handler: answer })
}
