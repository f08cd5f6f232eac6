import type { FastifyPluginAsync } from 'fastify'
import { TABLECRUD_ERR_AUTH_NO_SESSION_COOKIE } from '../../lib/errors.js'
import { deleteSession } from '../../lib/auth/sessions.js'
import { logoutPage, type LogoutPageData, type Template, type PageLink } from '../../lib/html/index.js'
import { sessionTable as builtInSessions } from '../../lib/table/auth-tables.js'
import type { Table } from '../../lib/table/index.js'
import { described } from '../../schemas/responses.js'
import { HTML_PAGE, MESSAGE, formContext, formErrors, formOperationIds, isFormSubmission, jsonOrPage, leaveNotice, pageBase, refuseForm, sendPage, stylesheetRoute, wantsPage } from './forms.js'
import { refuseMethod } from './login-routes.js'
import { cookieNameOption, databaseOf, nullableRedirectOption, sessionTableOption, templateOption, linksOption } from './options.js'
import type { PoolOptions } from '../database.js'

/**
 * Options of `sessionLogout`.
 * @example app.register(sessionLogout, { prefix: '/logout', redirectTo: '/login/' } satisfies SessionLogoutOptions)
 */
export interface SessionLogoutOptions extends PoolOptions {
  /** The session table; default the built-in `auth_session`. */
  sessionTable?: Table
  /** The session cookie's name; default `id`. */
  cookieName?: string
  /** Where a logged-out form is sent (303); default null: JSON, or the page saying so for the built-in form. */
  redirectTo?: string | null
  /** The logout page; default the built-in one. */
  template?: Template<LogoutPageData>
  /** Links under the form, such as `[{ href: '/register/', text: 'Sign up' }]`; default none. */
  links?: PageLink[]
}

const NAME = 'sessionLogout'

/** What the logout form sends (the csrf plugin adds its field to the document). */
const LOGOUT_BODY = {
  type: 'object',
  properties: { format: { type: 'string', enum: ['html'], description: 'html: answer with the logout page (what the built-in form sends)' } },
  // Nothing to send: the cookie says whose session ends (`format` would make the answer a page).
  examples: [{}]
} as const

const LOGGED_OUT = 'Logged out: the session row is deleted and the cookie cleared.'

/**
 * Session logout (SPEC §5.1): GET at the prefix is a page with a logout button; POST ends the
 * session of the cookie (an unknown one ends nothing and still succeeds), clears the cookie
 * and answers 200 `{"message": "Successfully logged out"}`, or 303 to `redirectTo` for a form
 * when set. Without the cookie: 401 `The session cookie wasn't found.`
 * @example
 * app.register(sessionLogout, { prefix: '/logout', redirectTo: '/login/' })
 */
export const sessionLogout: FastifyPluginAsync<SessionLogoutOptions> = async function sessionLogout (fastify, options) {
  const sessions = sessionTableOption(NAME, options.sessionTable ?? builtInSessions)
  const cookieName = cookieNameOption(NAME, options.cookieName)
  const redirectTo = nullableRedirectOption(NAME, options.redirectTo)
  const template = templateOption(NAME, options.template, logoutPage)
  const links = linksOption(NAME, options.links)
  const db = databaseOf(fastify, NAME, options)!
  await formContext(fastify)
  const ids = formOperationIds(fastify, NAME)

  fastify.route({
    method: 'GET',
    url: '/',
    schema: { operationId: ids.page, summary: 'The logout page', tags: ['sessions'], response: { 200: HTML_PAGE } },
    handler: async (request, reply) => sendPage(reply, 200, template({ ...pageBase(request, 'Log out', links), loggedOut: false }))
  })
  fastify.route({
    method: 'POST',
    url: '/',
    schema: {
      operationId: ids.action,
      summary: 'Log out: ends the session of the cookie',
      tags: ['sessions'],
      consumes: ['application/json', 'application/x-www-form-urlencoded'],
      body: LOGOUT_BODY,
      response: {
        200: redirectTo === null ? jsonOrPage(MESSAGE, LOGGED_OUT) : described(MESSAGE, LOGGED_OUT),
        ...formErrors({ 401: 'No session cookie.' }),
        ...(redirectTo === null ? {} : { 303: { description: `A form submission: sent on to redirectTo (${redirectTo})`, type: 'null' } })
      }
    },
    // The body schema documents the form; the handler reads `format` itself, whatever the body is.
    validatorCompiler: () => () => true,
    handler: async (request, reply) => {
      const token = request.cookies[cookieName]
      if (token === undefined) {
        return refuseForm(request, reply, new TABLECRUD_ERR_AUTH_NO_SESSION_COOKIE(),
          (message) => template({ ...pageBase(request, 'Log out', links), message, loggedOut: false }))
      }
      await deleteSession(db, token, sessions)
      // Max-Age=0 alone (SPEC §5.1): clearCookie would add an Expires in 1970 as well.
      reply.setCookie(cookieName, '', { maxAge: 0, path: '/', httpOnly: true, sameSite: 'lax' })
      if (redirectTo !== null && isFormSubmission(request)) {
        leaveNotice(reply, 'logged-out')
        return reply.redirect(redirectTo, 303)
      }
      if (wantsPage(request)) return sendPage(reply, 200, template({ ...pageBase(request, 'Log out', links), loggedOut: true }))
      return { message: 'Successfully logged out' }
    }
  })
  stylesheetRoute(fastify)
  const refuse = refuseMethod('GET, HEAD, POST')
  fastify.route({ method: ['PUT', 'PATCH', 'DELETE'], url: '/', schema: { hide: true }, onRequest: refuse, handler: refuse })
}
