import type { FastifyPluginAsync, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { TABLECRUD_ERR_AUTH_FORBIDDEN, TABLECRUD_ERR_AUTH_SESSION } from '../../lib/errors.js'
import { recordCookieAuth } from '../../lib/auth/security.js'
import { sessionUser } from '../../lib/auth/sessions.js'
import type { AuthUser } from '../../lib/auth/users.js'
import { sessionTable as builtInSessions, userTable } from '../../lib/table/auth-tables.js'
import type { Table } from '../../lib/table/index.js'
import { sendError } from '../errors.js'
import { asksForPage, ensureCookies } from './forms.js'
import { safeNext, withNext } from '../../lib/web/pages.js'
import {
  booleanOption, cookieNameOption, databaseOf, durationOption, excludedPathsOption, nullableRedirectOption, sessionTableOption, tableOption
} from './options.js'
import type { PoolOptions } from '../database.js'
import { fail, protectContext } from './protect.js'
import { documentResponses } from '../route-responses.js'

/**
 * Options of `sessionAuth`.
 * @example api.register(sessionAuth, { increaseExpiry: '30m', adminOnly: true, excludedPaths: ['/admin/login/'] } satisfies SessionAuthOptions)
 */
export interface SessionAuthOptions extends PoolOptions {
  /** The user table; default the built-in `auth_user`. */
  authTable?: Table
  /** The session table; default the built-in `auth_session`. */
  sessionTable?: Table
  /** The session cookie's name; default `id`. */
  cookieName?: string
  /** Let requests without a live session through with `request.user = null`; default false. */
  allowUnauthenticated?: boolean
  /** Only admins (403 `Admin users only`); default false. */
  adminOnly?: boolean
  /** Only superusers (403 `Superusers only`); default false. */
  superuserOnly?: boolean
  /** Only active users (403 `Active users only`); default true. */
  activeOnly?: boolean
  /**
   * Sliding expiry (seconds or a duration such as `"30m"`): a session with less than this left
   * is extended to now + this, never past its maximum expiry. Default none.
   */
  increaseExpiry?: number | string
  /** Paths that need no session (SPEC §3.1 rules): `request.user` is null there. */
  excludedPaths?: string[]
  /**
   * The login page: a request for a page (a GET or HEAD asking for `text/html`, or of a page
   * route) without a live session is sent there (303) with `?next=<its path>`, which
   * `sessionLogin` sends the browser back to; API clients keep the JSON 401. Default null: a
   * 401 for every request.
   */
  loginUrl?: string | null
}

const NAME = 'sessionAuth'

const session = (message: string): Error => new TABLECRUD_ERR_AUTH_SESSION(message)

const sessionAuthPlugin: FastifyPluginAsync<SessionAuthOptions> = async function sessionAuth (fastify, options) {
  const users = tableOption(NAME, options.authTable ?? userTable)
  const sessions = sessionTableOption(NAME, options.sessionTable ?? builtInSessions)
  const cookieName = cookieNameOption(NAME, options.cookieName)
  const allowUnauthenticated = booleanOption(NAME, 'allowUnauthenticated', options.allowUnauthenticated, false)
  const rules: Array<[boolean, keyof AuthUser, string]> = [
    [booleanOption(NAME, 'adminOnly', options.adminOnly, false), 'admin', 'Admin users only'],
    [booleanOption(NAME, 'superuserOnly', options.superuserOnly, false), 'superuser', 'Superusers only'],
    [booleanOption(NAME, 'activeOnly', options.activeOnly, true), 'active', 'Active users only']
  ]
  const increase = options.increaseExpiry === undefined ? null : durationOption(NAME, 'increaseExpiry', options.increaseExpiry)
  const isExcluded = excludedPathsOption(NAME, options.excludedPaths)
  const loginUrl = nullableRedirectOption(NAME, options.loginUrl, 'loginUrl')
  const db = databaseOf(fastify, NAME, options)!
  await ensureCookies(fastify)
  protectContext(fastify, isExcluded, recordCookieAuth(fastify.server, cookieName), { unauthenticated: !allowUnauthenticated, forbidden: rules.some(([on]) => on) })
  if (loginUrl !== null && !allowUnauthenticated) {
    // For OpenAPI: a page asked for while logged out is sent to the login page (the onRequest hook below).
    const pages = (route: RouteOptions): boolean => !isExcluded(route.url) && [route.method].flat().includes('GET')
    documentResponses(fastify, { 303: { description: `Not logged in, a browser asking for a page: sent to ${loginUrl} with next`, type: 'null' } }, pages)
  }

  /** The request's user, or the 401 it gets. */
  async function authenticate (token: string | undefined): Promise<AuthUser | Error> {
    if (token === undefined || token === '') return session('No session cookie found.')
    const user = await sessionUser(db, sessions, users, token, increase)
    if (user === 'none') return session('No matching session found.')
    if (user === 'gone') return session("That user doesn't exist anymore")
    return user
  }

  fastify.addHook('onRequest', async (request, reply) => {
    if (isExcluded(request.url)) return
    let user: AuthUser | Error
    try {
      user = await authenticate(request.cookies[cookieName])
    } catch (error) {
      return fail(request, reply, error)
    }
    if (user instanceof Error) {
      if (allowUnauthenticated) return
      if (loginUrl !== null && asksForPage(request)) {
        const next = safeNext(request.url)
        return reply.redirect(next === null ? loginUrl : withNext(loginUrl, next), 303)
      }
      return sendError(reply, user)
    }
    request.user = user
    for (const [on, flag, message] of rules) {
      if (on && user[flag] !== true) return sendError(reply, new TABLECRUD_ERR_AUTH_FORBIDDEN(message))
    }
  })
}

/**
 * Session auth (SPEC §5.1): every request of the context it is registered in must carry the
 * cookie of a live session from `sessionLogin`, else a 401: `No session cookie found.`,
 * `No matching session found.` (unknown or expired) or `That user doesn't exist anymore`.
 * Then `adminOnly`, `superuserOnly` and `activeOnly` (on by default) may refuse the user
 * with a 403. Sets `request.user`; with `allowUnauthenticated` the 401 cases go on with
 * `request.user = null`; with `loginUrl`, a browser asking for a page is sent to the login
 * page instead, with `next`. Routes of the context carry the `cookieAuth` scheme in OpenAPI.
 * @example
 * app.register(async (site) => {
 *   await site.register(sessionAuth, { increaseExpiry: '30m' })
 *   site.get('/me/', async (request) => ({ username: request.user!.username }))
 * })
 */
export const sessionAuth = fp(sessionAuthPlugin, { name: 'fastify-tablecrud/session-auth', fastify: '5.x' })
