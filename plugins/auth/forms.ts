import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { TABLECRUD_ERR_FORM_MEDIA_TYPE } from '../../lib/errors.js'
import type { FormPageData } from '../../lib/html/index.js'
import { errorHandler, sendError } from '../errors.js'
import type {} from '../web/types.js'
import { described, ErrorResponse, errorResponse, ServiceUnavailableResponse } from '../../schemas/responses.js'
import { claimOperationIds } from '../operation-ids.js'
import { refuseMethod } from './login-routes.js'

/**
 * The plumbing of the browser-facing auth plugins (SPEC §5): bodies that are JSON or
 * urlencoded forms, cookies, and answers that are pages for the built-in forms and JSON
 * otherwise.
 */

const FORM = 'application/x-www-form-urlencoded'

/** The OpenAPI response of a page. */
export const HTML_PAGE = { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } } as const
/** A JSON answer that only says what happened. */
export const MESSAGE = { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } as const

/** The form page shown again, for a body with `format=html` (what the built-in forms send). */
const PAGE_AGAIN = { 'text/html': { schema: { type: 'string', description: 'The form page again, with the message (escaped).' } } } as const

/**
 * A form route's answer: `schema` as JSON, or the page as `text/html` when the body has
 * `format=html` (SPEC §5: same status, the form shown again), each media type documented.
 */
export function jsonOrPage (schema: object, description: string): Record<string, unknown> {
  return described({ content: { 'application/json': { schema }, ...PAGE_AGAIN } }, description)
}

/**
 * @fastify/cookie in this context unless it (or an integrator's registration above it) is
 * there already: registering it twice would decorate twice and fail.
 */
export async function ensureCookies (fastify: FastifyInstance): Promise<void> {
  if (!fastify.hasDecorator('parseCookie') && !fastify.hasRequestDecorator('cookies')) await fastify.register(import('@fastify/cookie'))
}

/**
 * Readies a context with form routes: JSON or urlencoded bodies only (another type is a 415
 * naming both), cookies, errors in the SPEC shape, and `Cache-Control: no-store` on every
 * answer: they carry session cookies and CSRF tokens, which no cache may keep (SPEC §3.2).
 */
export async function formContext (fastify: FastifyInstance): Promise<void> {
  fastify.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      const type = request.headers['content-type']
      sendError(reply, new TABLECRUD_ERR_FORM_MEDIA_TYPE(type === undefined ? 'none' : JSON.stringify(type)))
      return
    }
    errorHandler(error, request, reply)
  })
  fastify.removeContentTypeParser('text/plain')
  // @fastify/formbody turns repeated fields into arrays; the handlers refuse them as missing.
  if (!fastify.hasContentTypeParser(FORM)) await fastify.register(import('@fastify/formbody'))
  await ensureCookies(fastify)
  fastify.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })
}

/**
 * The error responses of a form route's POST, for OpenAPI: `own` (status: meaning), which the
 * built-in forms get as the page again (`jsonOrPage`), and what every form route may answer
 * as JSON (SPEC §1, §5).
 */
export function formErrors (own: Partial<Record<number, string>>): Record<number, unknown> {
  return {
    400: errorResponse('The body is not valid JSON.'),
    413: errorResponse('The body is over the size limit.'),
    415: errorResponse('The body is neither `application/json` nor `application/x-www-form-urlencoded`.'),
    503: ServiceUnavailableResponse,
    ...Object.fromEntries(Object.entries(own).map(([status, meaning]) => [status, jsonOrPage(ErrorResponse, String(meaning))]))
  }
}

/** The operationIds of a form plugin's mount: its action (`sessionLogin`) and its page (`sessionLogin.page`), docs/openapi.md. */
export function formOperationIds (fastify: FastifyInstance, plugin: string): { action: string, page: string } {
  const name = claimOperationIds(fastify, plugin, plugin)
  return { action: name, page: `${name}.page` }
}

/** Whether the request is a form submission: an urlencoded body, or `format=html` (SPEC §5.1). */
export function isFormSubmission (request: FastifyRequest): boolean {
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase()
  return type === FORM || wantsPage(request)
}

/** Whether the body asks for answers as pages: the built-in forms send `format=html`. */
export function wantsPage (request: FastifyRequest): boolean {
  const body = request.body
  return typeof body === 'object' && body !== null && (body as Record<string, unknown>).format === 'html'
}

/** What every page of a form route is given: where it posts (the route's own path, never the request's) and the CSRF token. */
export function pageBase (request: FastifyRequest, title: string): FormPageData {
  // Fastify gives a prefix's root route as `/login` for `/login/` too; the pages use the slash form.
  const url = request.routeOptions.url!
  return { title, action: url.endsWith('/') ? url : `${url}/`, csrfToken: request.csrfToken ?? null, message: null }
}

/** Sends a page with a status. */
export function sendPage (reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page)
}

/**
 * Answers a refused submission: the page again with the message (escaped by the template)
 * and the error's status for a built-in form, the SPEC §1 JSON otherwise.
 */
export function refuseForm (request: FastifyRequest, reply: FastifyReply, error: Error, page: (message: string) => string): FastifyReply {
  if (!wantsPage(request)) return sendError(reply, error)
  // Every error a form route refuses with is one of lib/errors.ts, which carry their status.
  return sendPage(reply, (error as Error & { statusCode: number }).statusCode, page(error.message))
}

/** One route of a form, at the context's prefix: its schema and handler. */
export type FormRoute = Omit<RouteOptions, 'method' | 'url'>

/**
 * The routes of a form at the context's prefix: GET (and HEAD) the page; POST the form, as JSON
 * or urlencoded, under the rateLimit plugin's login limit (SPEC §5.7); a 405 naming those for
 * the other methods. The body schema of the POST documents it and the handler reads the body
 * itself: the SPEC orders the checks (a CAPTCHA first), words each refusal (a missing field is a
 * 422 with its message), and a repeated form field must not pass as one of its values.
 */
export function formRoutes (fastify: FastifyInstance, page: FormRoute, submit: FormRoute): void {
  fastify.route({ ...page, method: 'GET', url: '/' })
  fastify.route({
    config: { tablecrudLogin: true },
    validatorCompiler: () => () => true,
    ...submit,
    schema: { consumes: ['application/json', FORM], ...submit.schema },
    method: 'POST',
    url: '/'
  })
  const refuse = refuseMethod('GET, HEAD, POST')
  fastify.route({ method: ['PUT', 'PATCH', 'DELETE'], url: '/', schema: { hide: true }, onRequest: refuse, handler: refuse })
}
