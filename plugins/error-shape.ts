import { maxHeaderSize, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import {
  TABLECRUD_ERR_BAD_REQUEST, TABLECRUD_ERR_HEADERS_TOO_LARGE, TABLECRUD_ERR_REQUEST_TIMEOUT, TABLECRUD_ERR_ROUTE_NOT_FOUND
} from '../lib/errors.js'
import { errorBody, errorHandler, sendError } from './errors.js'

/** A socket error of Node's HTTP parser, as the server's 'clientError' event gives it. */
interface ClientError extends Error { code?: string, reason?: unknown }

/** The coded error for what Node's HTTP parser refused. */
export function clientErrorOf (error: ClientError, limit: number): Error & { statusCode: number, code: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW') return new TABLECRUD_ERR_HEADERS_TOO_LARGE(limit)
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new TABLECRUD_ERR_REQUEST_TIMEOUT()
  // llhttp's reason is its own fixed text ("Invalid method encountered"), never the client's bytes.
  const reason = typeof error.reason === 'string' && error.reason !== '' ? error.reason : 'malformed request'
  return new TABLECRUD_ERR_BAD_REQUEST(reason.replace(/\.$/, ''))
}

/** A whole HTTP/1.1 response carrying `error` in the SPEC §1 shape, for a socket with no request object. */
export function rawErrorResponse (error: Error & { statusCode: number, code: string }): string {
  const body = JSON.stringify(errorBody(error))
  return `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode]!}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' + body
}

/**
 * Fastify's `frameworkErrors` option: the 400 for a path that does not decode
 * (`FST_ERR_BAD_URL`), the 414 for a path parameter over `maxParamLength`
 * (`FST_ERR_MAX_PARAM_LENGTH`) and the 500 of a failing async route constraint answered by
 * the SPEC error handler, so they carry the right `error` name and content type (and the 500
 * is logged, its detail kept out of the body). A constructor option: no plugin can set it.
 * @example const app = Fastify({ frameworkErrors })
 */
export function frameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  errorHandler(error, request, reply)
}

// Fastify binds its default handlers: these names tell them from an integrator's own.
const FASTIFY_CLIENT_ERROR = 'bound defaultClientErrorHandler'
const FASTIFY_ERROR_HANDLER = 'defaultErrorHandler'

/** Installs the handling of what Node's parser refuses, unless the integrator gave `clientErrorHandler`. */
function installClientErrors (fastify: FastifyInstance): void {
  const server = fastify.server
  const fastifyOwn = server.listeners('clientError').filter((l) => l.name === FASTIFY_CLIENT_ERROR)
  if (fastifyOwn.length === 0) return
  for (const listener of fastifyOwn) server.off('clientError', listener as (...args: unknown[]) => void)
  const limit = (server as { maxHeaderSize?: number }).maxHeaderSize ?? maxHeaderSize
  server.on('clientError', (error: ClientError, socket: Socket) => {
    // A reset connection has nobody left to answer (Node's documentation of 'clientError').
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    fastify.log.debug({ err: error }, 'unparsable request refused')
    if (socket.writable) socket.end(rawErrorResponse(clientErrorOf(error, limit)))
    else socket.destroy()
  })
}

/**
 * Every error the application answers in the SPEC §1 shape, for the context it is registered
 * in (the root, usually): the not-found handler, the error handler, and the server's
 * clientError handling (431 for headers or a URL over the limit, 400 for a request that is
 * not HTTP). Handlers the integrator set on that context before registering it are kept.
 */
const errorShapePlugin: FastifyPluginAsync = async function errorShape (fastify) {
  if (fastify.errorHandler.name === FASTIFY_ERROR_HANDLER) fastify.setErrorHandler(errorHandler)
  const notFound = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> =>
    sendError(reply, new TABLECRUD_ERR_ROUTE_NOT_FOUND(request.method, request.url.split('?')[0]))
  // Set from a child context, whose onRequest hook answers before a body is parsed (SPEC §6.14:
  // the route before the body), so a PATCH to no route with a malformed body is a 404, not a
  // 400. The child has no routes: its hook runs for the not-found answer only.
  await fastify.register(async (child) => {
    try {
      child.setNotFoundHandler(notFound)
    } catch (error) {
      // The integrator set their own not-found handler here first: it stays.
      if (!/^Not found handler already set/.test((error as Error).message)) throw error
      return
    }
    child.addHook('onRequest', notFound)
  })
  installClientErrors(fastify)
}

/**
 * Puts every error of the application in the SPEC §1 shape (`statusCode`, `code`, `error`,
 * `message`): Fastify's 404 for a path no route has, its 400s and 413s, and the 431 and 400
 * Node's HTTP server answers for headers over the limit or a malformed request. Register it
 * at the root, before your own routes; a root error handler, not-found handler or
 * `clientErrorHandler` you set before registering it wins.
 * @example
 * const app = Fastify({ frameworkErrors })
 * await app.register(errorShape)
 */
export const errorShape = fp(errorShapePlugin, { name: 'fastify-tablecrud/error-shape', fastify: '5.x' })
