import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { optionError, TABLECRUD_ERR_CSRF } from '../../lib/errors.js'
import { generateToken, safeEqual } from '../../lib/auth/token.js'
import { fetchSiteProblem, hostOf, isCsrfToken, originOf, recordCsrf, SAFE_METHODS, sourceAllowed, type AllowedSources } from '../../lib/web/csrf.js'
import { sendError } from '../errors.js'
// The request.csrfToken declaration, kept in the emitted csrf.d.ts (an `import type {}` is dropped there): index.d.ts reaches it.
export type {} from './types.js'
import { documentResponses } from '../route-responses.js'
import { errorResponse } from '../../schemas/responses.js'
import { csrfSwaggerTransform, isCookieAuthScheme, recordCsrfSchemes } from '../../lib/auth/security.js'

/**
 * Options of `csrf` (SPEC §5.5); all optional.
 * @example app.register(csrf, { allowedHosts: ['admin.example.org'] } satisfies CsrfOptions)
 */
export interface CsrfOptions {
  /** The cookie holding the token. Default `csrftoken`. */
  cookieName?: string
  /** The header scripts copy the token into. Default `x-csrftoken`. */
  headerName?: string
  /** The form field carrying the token in urlencoded bodies; `null` accepts the header only. Default `csrftoken`. */
  formField?: string | null
  /** Hosts (`name` or `name:port`) besides the request's own whose pages, on either scheme, may post. Default none. */
  allowedHosts?: string[]
  /** Origins (`https://name[:port]`) besides the request's own whose pages may post. Default none. */
  allowedOrigins?: string[]
  /** Lifetime of the cookie in seconds. Default one year (31536000). */
  maxAge?: number
}

const NAME = 'csrf'
const YEAR = 31536000
/** RFC 7230 token characters: what a cookie, header or field name may be. */
const NAME_RULE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i

const refuse = (reply: FastifyReply, message: string): FastifyReply => sendError(reply, new TABLECRUD_ERR_CSRF(message))

function nameOption (option: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback
  if (typeof value !== 'string' || !NAME_RULE.test(value)) throw optionError(NAME, option, 'must be a non-empty name of letters, digits and !#$%&\'*+.^_`|~-')
  return value
}

interface Settings { cookieName: string, headerName: string, formField: string | null, allowed: AllowedSources, maxAge: number }

/** An origin as `allowedOrigins` takes it (nothing past the port), normalised, or null. */
function originOption (value: unknown): string | null {
  const origin = typeof value === 'string' ? originOf(value) : null
  return origin !== null && new URL(value as string).href === `${origin}/` ? origin : null
}

function checkOptions (options: CsrfOptions): Settings {
  const cookieName = nameOption('cookieName', options.cookieName, 'csrftoken')
  const headerName = nameOption('headerName', options.headerName, 'x-csrftoken').toLowerCase()
  const formField = options.formField === null ? null : nameOption('formField', options.formField, 'csrftoken')
  const { allowedHosts = [], allowedOrigins = [], maxAge = YEAR } = options
  const hosts = Array.isArray(allowedHosts) ? allowedHosts.map((h) => typeof h === 'string' && !/[\s/@?#]/.test(h) ? hostOf(h) : null) : [null]
  if (hosts.some((h) => h === null)) throw optionError(NAME, 'allowedHosts', 'must be an array of host names, each `name` or `name:port`')
  const origins = Array.isArray(allowedOrigins) ? allowedOrigins.map(originOption) : [null]
  if (origins.includes(null)) throw optionError(NAME, 'allowedOrigins', 'must be an array of origins, each `https://name` or `http://name:port`, without a path')
  if (!Number.isSafeInteger(maxAge) || maxAge < 1) throw optionError(NAME, 'maxAge', 'must be a whole number of seconds, 1 or more')
  return { cookieName, headerName, formField, allowed: { origins: new Set(origins as string[]), hosts: new Set(hosts as string[]) }, maxAge }
}

/** Node joins a repeated request header into one string (only Set-Cookie comes as an array), which then matches no token. */
const single = (value: string | string[] | undefined): string | undefined => value as string | undefined

/** For OpenAPI: the checked routes' 403, and the cookie and the header they require (schemes, as auth plugins declare theirs). */
function documentCsrf (fastify: FastifyInstance, settings: ReturnType<typeof checkOptions>): void {
  // Every method but the safe ones is checked (not the requests with Authorization, which may still lack it).
  const checks = (route: RouteOptions): boolean => [route.method].flat().some((method) => !SAFE_METHODS.has(method))
  documentResponses(fastify, { 403: errorResponse('The CSRF check failed: the token is missing or does not match the cookie, or the request is cross-site.') }, checks)
  const schemes = recordCsrfSchemes(fastify.server, settings)
  fastify.addHook('onRoute', (route) => {
    if (!checks(route)) return
    // A copy: the config object may be shared with routes outside this context.
    const config = (route.config ?? {}) as Record<string, unknown>
    route.config = { ...config, swaggerTransform: csrfSwaggerTransform(fastify.server, schemes, settings.formField, config.swaggerTransform) } as typeof route.config
  })
}

/**
 * Check 1: a request carrying `Authorization` is not checked (a browser cannot send one across
 * sites without the server's CORS consent), unless its route authenticates by a cookie (session
 * auth): there the header proves nothing, and a browser holding HTTP Basic credentials for the
 * host attaches one to a forged form post too.
 */
function exempt (request: FastifyRequest): boolean {
  if (request.headers.authorization === undefined) return false
  const security = (request.routeOptions.schema?.security ?? []) as ReadonlyArray<Record<string, unknown>>
  return !security.some((requirement) => Object.keys(requirement).some(isCookieAuthScheme))
}

const csrfPlugin: FastifyPluginAsync<CsrfOptions> = async function csrf (fastify, options) {
  const settings = checkOptions(options)
  const { cookieName, headerName, formField, allowed, maxAge } = settings
  // The integrator's (or another plugin's) @fastify/cookie is used when it is there.
  if (!fastify.hasDecorator('parseCookie')) await fastify.register(import('@fastify/cookie'))
  if (!fastify.hasRequestDecorator('csrfToken')) fastify.decorateRequest('csrfToken', null)
  recordCsrf(fastify.server, { cookieName, headerName, maxAge })
  documentCsrf(fastify, settings)
  /** Requests whose header token passed in onRequest: preValidation has nothing left to check. */
  const checked = new WeakSet<FastifyRequest>()

  const cookieOf = (request: FastifyRequest): string | undefined =>
    fastify.parseCookie(request.headers.cookie ?? '')[cookieName]

  /** Check 6: over HTTP and HTTPS alike, the page the request came from. Null when it passes. */
  const originProblem = (request: FastifyRequest): string | null =>
    sourceAllowed({ origin: single(request.headers.origin), referer: single(request.headers.referer), protocol: request.protocol, host: request.host }, allowed)
      ? null
      : 'Referer or origin is incorrect'

  fastify.addHook('onRequest', async function checkCsrf (request, reply) {
    const cookie = cookieOf(request)
    if (SAFE_METHODS.has(request.method)) {
      if (isCsrfToken(cookie)) {
        request.csrfToken = cookie
      } else {
        request.csrfToken = generateToken()
        reply.setCookie(cookieName, request.csrfToken, { maxAge, path: '/', sameSite: 'lax' })
      }
      return
    }
    request.csrfToken = isCsrfToken(cookie) ? cookie : null
    if (exempt(request)) return
    const site = fetchSiteProblem(single(request.headers['sec-fetch-site']), single(request.headers.origin), allowed)
    if (site !== null) return refuse(reply, site)
    if (cookie === undefined || cookie === '') return refuse(reply, 'No CSRF cookie found')
    const header = single(request.headers[headerName])
    if (header !== undefined && header !== '') {
      if (!safeEqual(header, cookie)) return refuse(reply, 'The CSRF token in the header doesn\'t match the cookie.')
      const problem = originProblem(request)
      if (problem !== null) return refuse(reply, problem)
      checked.add(request)
      return
    }
    // Only a form can carry the token in its body, and only once it is parsed: the rest of the
    // check waits for preValidation. Anything else is refused now, before its body is read.
    if (formField === null || !FORM_TYPE.test(request.headers['content-type'] ?? '')) {
      return refuse(reply, 'The CSRF token wasn\'t found in the form data or header.')
    }
  })

  fastify.addHook('preValidation', async function checkCsrfForm (request, reply) {
    if (SAFE_METHODS.has(request.method) || exempt(request)) return
    const body = request.body as Record<string, unknown> | null | undefined
    const hasField = formField !== null && FORM_TYPE.test(request.headers['content-type'] ?? '') && typeof body === 'object' && body !== null && Object.hasOwn(body, formField)
    // The token is ours, not the route's: a handler that refuses unknown fields never sees it.
    if (checked.has(request)) {
      if (hasField) delete body![formField]
      return
    }
    const field = hasField ? body![formField!] : undefined
    if (field === undefined || field === '') return refuse(reply, 'The CSRF token wasn\'t found in the form data or header.')
    // A repeated field (an array) is never the token.
    if (typeof field !== 'string' || !safeEqual(field, cookieOf(request)!)) return refuse(reply, 'The CSRF token in the form doesn\'t match the cookie.')
    const problem = originProblem(request)
    if (problem !== null) return refuse(reply, problem)
    delete body![formField!]
  })
}

/**
 * CSRF protection for the context it is registered in (SPEC §5.5), by double-submit cookie: safe
 * requests (GET, HEAD, OPTIONS, TRACE) receive a `csrftoken` cookie readable by scripts and
 * `request.csrfToken` for forms; any other request must send the same token in the
 * `x-csrftoken` header or, from an urlencoded form, the `csrftoken` field, else a 403
 * (`TABLECRUD_ERR_CSRF`). Requests with an `Authorization` header are not checked, but on
 * routes that authenticate by session cookie; `Sec-Fetch-Site: cross-site` or `same-site` is
 * refused; over HTTP and HTTPS alike, `Origin` (else `Referer`), when sent, must name the
 * request's own origin, one of `allowedOrigins` or a host of `allowedHosts`. Tokens are compared in constant time. Register it
 * before the routes it protects.
 * @example
 * app.register(async (site) => {
 *   await site.register(csrf)
 *   await site.register(sessionLogin, { prefix: '/login' })
 *   await site.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false })
 * })
 */
export const csrf = fp(csrfPlugin, { name: 'fastify-tablecrud/csrf', fastify: '5.x' })
