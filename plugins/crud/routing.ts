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

/** The methods a TableCRUD path answers 405 to when it lacks them; any other (PROPFIND) is a 404. */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', ...WRITE_METHODS, 'OPTIONS', 'TRACE'])

/** Names a path beside `/:id/` (`/`, `/count/`, `/media/url/`) with the only methods it has. */
export type OnlyMethods = (url: string, allowed: readonly HTTPMethods[]) => void

/**
 * The answers of a table's paths to the methods they do not have (SPEC §6.13, §6.14): OPTIONS
 * a 204 and the rest a 405, both with the path's `Allow`, in onRequest, before a body is
 * parsed; a path the table does not have is a 404. `id` are the methods of `/:id/`; the paths
 * beside it are named through the function returned.
 *
 * The table's not-found handler gives most of them. The router hands it any method on any
 * path under the prefix that no route takes, so a route per path and missing method is not
 * needed: a read-only table put 72 entries in the router's trees and now puts 18, a writable
 * one 46 (heap and start-up: docs/performance.md). Routes stay only where the router would
 * otherwise give the request to another route, or answer it by itself:
 * - a path beside `/:id/`, for the methods of `/:id/` it lacks: `PUT /count/` would go to
 *   `PUT /:id/` as an id, and `PATCH /` (an empty id) too;
 * - `/*`, for the methods of `/:id/`: the router finds no route for an id longer than its
 *   `maxParamLength` (100 by default), and would answer with its own 414.
 * The not-found handler lives in a child context whose onRequest hook answers: a hook in
 * the table's own context would run before every one of its routes.
 */
export async function methodAnswers (fastify: FastifyInstance, id: readonly HTTPMethods[]): Promise<OnlyMethods> {
  /** `Allow` of each path beside `/:id/`, by its name: `''` for `/`, `count`. */
  const allowOf = new Map<string, string>()
  const idAllow = id.join(', ')
  // `*`: the path after the prefix's slash, decoded by the router (none for the prefix itself).
  const answer = async (request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply): Promise<FastifyReply> => {
    const rest = request.params['*'] ?? ''
    const name = rest.endsWith('/') ? rest.slice(0, -1) : rest
    const allow = allowOf.get(name)
    // Beside the named paths (`media/url`), a deeper path is none of the table's.
    if ((allow === undefined && name.includes('/')) || !KNOWN_METHODS.has(request.method)) return sendError(reply, new TABLECRUD_ERR_ROUTE_NOT_FOUND(request.method, pathOf(request)))
    // A method `/:id/` has, on an id: one past maxParamLength, found by `/*` only.
    if (allow === undefined && id.includes(request.method)) return sendError(reply, new TABLECRUD_ERR_ID_INVALID())
    return await refuse(request, reply, allow ?? idAllow)
  }
  fastify.route({ method: [...id], url: '/*', schema: { hide: true }, onRequest: answer, handler: answer })
  await fastify.register(async (elsewhere) => {
    elsewhere.addHook('onRequest', answer)
    elsewhere.setNotFoundHandler(answer)
  })
  return (url, allowed) => {
    const allow = allowed.join(', ')
    allowOf.set(url.slice(1, -1), allow)
    const taken = id.filter((method) => !allowed.includes(method))
    const refused = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => await refuse(request, reply, allow)
    // Answered in onRequest; the handler is never reached.
    if (taken.length > 0) route(fastify, { method: taken, url, schema: { hide: true }, onRequest: refused, handler: refused })
  }
}

/**
 * OPTIONS: 204 with `allow`; any other method 405 with it. A path that allows nothing (`Allow`
 * empty: disabled by configuration, RFC 9110) refuses OPTIONS too.
 */
async function refuse (request: FastifyRequest, reply: FastifyReply, allow: string): Promise<FastifyReply> {
  if (request.method === 'OPTIONS' && allow !== '') return await answerOptions(allow)(request, reply)
  reply.header('allow', allow)
  return sendError(reply, new TABLECRUD_ERR_METHOD_NOT_ALLOWED(request.method, pathOf(request)))
}

/**
 * OPTIONS on a TableCRUD path: 204 with `Allow` (SPEC §6.13). A CORS preflight is
 * @fastify/cors's to answer: registered around TableCRUD, its onRequest hook runs before this.
 */
export function answerOptions (allow: string): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  return async (_request, reply) => await reply.code(204).header('allow', allow).send()
}
