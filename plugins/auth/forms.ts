import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { retryAfterOf, TABLECRUD_ERR_FORM_MEDIA_TYPE, TABLECRUD_ERR_RATE_LIMITED } from '../../lib/errors.js'
import type { FormPageData, PageLink } from '../../lib/html/index.js'
import { PAGE_STYLE, STYLESHEET_FILE } from '../../lib/html/style.js'
import { errorHandler, sendError } from '../errors.js'
import type {} from '../web/types.js'
import { described, ErrorResponse, errorResponse, ServiceUnavailableResponse } from '../../schemas/responses.js'
import { claimOperationIds } from '../operation-ids.js'
import { noStore, refuseMethod } from './login-routes.js'
import { acceptsHtml, NOTICE_COOKIE, noticeText, retryIn, type NoticeKind } from '../../lib/web/pages.js'

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

/** The errors of a form context: a body of another type is a 415 naming both accepted ones. */
function formErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const type = request.headers['content-type']
    sendError(reply, new TABLECRUD_ERR_FORM_MEDIA_TYPE(type === undefined ? 'none' : JSON.stringify(type)))
    return
  }
  errorHandler(error, request, reply)
}

/**
 * The error handler of a form's POST: a browser over the rateLimit plugin's limit (refused
 * before its body is read, so by its `Accept`) gets the page with the message and when to try
 * again, still a 429 with `Retry-After`; any other error as `formErrorHandler` answers it.
 */
function limitedPageHandler (refusedPage: RefusedPage) {
  return async function (error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!(error instanceof TABLECRUD_ERR_RATE_LIMITED) || !acceptsHtml(request.headers.accept)) return formErrorHandler(error, request, reply)
    const after = Number(reply.getHeader('retry-after'))
    const page = await refusedPage(request, `${error.message}. Try again in ${retryIn(after)}.`)
    if (page === null) return formErrorHandler(error, request, reply)
    await sendPage(reply, 429, page)
  }
}

/**
 * Readies a context with form routes: JSON or urlencoded bodies only (another type is a 415
 * naming both), cookies, errors in the SPEC shape, and `Cache-Control: no-store` on every
 * answer: they carry session cookies and CSRF tokens, which no cache may keep (SPEC §3.2).
 */
export async function formContext (fastify: FastifyInstance): Promise<void> {
  fastify.setErrorHandler(formErrorHandler)
  fastify.removeContentTypeParser('text/plain')
  // @fastify/formbody turns repeated fields into arrays; the handlers refuse them as missing.
  if (!fastify.hasContentTypeParser(FORM)) await fastify.register(import('@fastify/formbody'))
  await ensureCookies(fastify)
  noStore(fastify)
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

/**
 * Whether a request asks for a page rather than JSON: a GET or HEAD whose `Accept` lists
 * `text/html` (a browser navigating), or of a route marked `tablecrudPage`.
 */
export function asksForPage (request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false
  return request.routeOptions.config.tablecrudPage === true || acceptsHtml(request.headers.accept)
}

/**
 * What every page of a form route is given: where it posts (the route's own path, never the
 * request's), the CSRF token, the stylesheet served beside it, the notice a form left in a
 * cookie before sending the browser here, and the plugin's `links`.
 */
export function pageBase (request: FastifyRequest, title: string, links: readonly PageLink[] = []): FormPageData {
  // Fastify gives a prefix's root route as `/login` for `/login/` too; the pages use the slash form.
  const url = request.routeOptions.url!
  const action = url.endsWith('/') ? url : `${url}/`
  return {
    title,
    action,
    csrfToken: request.csrfToken ?? null,
    message: null,
    notice: noticeText(request.cookies[NOTICE_COOKIE]),
    stylesheet: action + STYLESHEET_FILE,
    links
  }
}

/** Sends a page with a status; a notice it was given from the cookie is shown once, so the cookie is cleared. */
export function sendPage (reply: FastifyReply, status: number, page: string): FastifyReply {
  if (reply.request.cookies[NOTICE_COOKIE] !== undefined) reply.setCookie(NOTICE_COOKIE, '', { maxAge: 0, path: '/', httpOnly: true, sameSite: 'lax' })
  return reply.code(status).type('text/html; charset=utf-8').send(page)
}

/** Leaves a notice for the page a form sends the browser on to (303), good for a minute. */
export function leaveNotice (reply: FastifyReply, kind: NoticeKind): void {
  reply.setCookie(NOTICE_COOKIE, kind, { maxAge: 60, path: '/', httpOnly: true, sameSite: 'lax' })
}

/**
 * The pages' stylesheet at `<prefix>/style.css`: from the page's origin, so `default-src
 * 'self'` lets it in. Hidden from OpenAPI; cacheable, unlike the pages.
 */
export function stylesheetRoute (fastify: FastifyInstance): void {
  fastify.route({
    method: 'GET',
    url: `/${STYLESHEET_FILE}`,
    schema: { hide: true },
    handler: async (_request, reply) => reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(PAGE_STYLE)
  })
}

/**
 * Answers a refused submission: the page again with the message (escaped by the template)
 * and the error's status for a built-in form, the SPEC §1 JSON otherwise.
 */
export function refuseForm (request: FastifyRequest, reply: FastifyReply, error: Error, page: (message: string) => string): FastifyReply {
  if (!wantsPage(request)) return sendError(reply, error)
  const retryAfter = retryAfterOf(error)
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter))
  // Every error a form route refuses with is one of lib/errors.ts, which carry their status.
  return sendPage(reply, (error as Error & { statusCode: number }).statusCode, page(error.message))
}

/** A form's page showing why a submission was refused. */
/** The form's page with a refusal's message; null when it has none to show (the JSON answer then). */
export type RefusedPage = (request: FastifyRequest, message: string) => string | null | Promise<string | null>

/** One route of a form, at the context's prefix: its schema and handler. */
export type FormRoute = Omit<RouteOptions, 'method' | 'url'>

/**
 * The routes of a form at the context's prefix: GET (and HEAD) the page; POST the form, as JSON
 * or urlencoded, under the rateLimit plugin's login limit (SPEC §5.7); a 405 naming those for
 * the other methods. A browser over the login limit gets `refusedPage` with the message and
 * when to try again (a 429 still; the JSON 429 when it gives null). The body schema of the POST documents it and the handler reads the body
 * itself: the SPEC orders the checks (a CAPTCHA first), words each refusal (a missing field is a
 * 422 with its message), and a repeated form field must not pass as one of its values.
 */
export function formRoutes (fastify: FastifyInstance, page: FormRoute, submit: FormRoute, refusedPage: RefusedPage): void {
  fastify.route({ ...page, config: { ...page.config, tablecrudPage: true }, method: 'GET', url: '/' })
  fastify.route({
    config: { tablecrudLogin: true },
    validatorCompiler: () => () => true,
    errorHandler: limitedPageHandler(refusedPage),
    ...submit,
    schema: { consumes: ['application/json', FORM], ...submit.schema },
    method: 'POST',
    url: '/'
  })
  stylesheetRoute(fastify)
  const refuse = refuseMethod('GET, HEAD, POST')
  fastify.route({ method: ['PUT', 'PATCH', 'DELETE'], url: '/', schema: { hide: true }, onRequest: refuse, handler: refuse })
}
