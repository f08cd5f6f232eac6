import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { PoolOptions } from '../database.js'
import { TABLECRUD_ERR_AUTH_NOT_LOGGED_IN, TABLECRUD_ERR_FORM_READ_ONLY } from '../../lib/errors.js'
import { changeUserPassword, checkPasswordChange } from '../../lib/auth/accounts.js'
import { changePasswordPage, type ChangePasswordPageData, type Template, type PageLink } from '../../lib/html/index.js'
import { sessionTable as builtInSessions, userTable } from '../../lib/table/auth-tables.js'
import type { Table } from '../../lib/table/index.js'
import { described } from '../../schemas/responses.js'
import { HTML_PAGE, MESSAGE, formContext, formErrors, formOperationIds, formRoutes, isFormSubmission, leaveNotice, pageBase, refuseForm, sendPage } from './forms.js'
import { EXAMPLE_USER } from './login-routes.js'
import {
  booleanOption, cookieNameOption, costOption, databaseOf, redirectOption, sessionTableOption, tableOption, templateOption, linksOption
} from './options.js'
import { minPasswordLengthOption } from './register.js'

/**
 * Options of `changePassword`.
 * @example me.register(changePassword, { prefix: '/change-password', loginUrl: '/login/' } satisfies ChangePasswordOptions)
 */
export interface ChangePasswordOptions extends PoolOptions {
  /** Where a form is sent after the change (303), and a GET without a user; default `/login/`. */
  loginUrl?: string
  /** The user table; default the built-in `auth_user`. */
  authTable?: Table
  /** The session table whose rows of the user end with the change; default the built-in `auth_session`. */
  sessionTable?: Table
  /** The session cookie's name, cleared on success; default `id`. */
  cookieName?: string
  /** Refuse changes (405) while showing the page; default false. */
  readOnly?: boolean
  /** The shortest new password accepted, 6 to 128; default 6. */
  minPasswordLength?: number
  /** The page; default the built-in one. */
  template?: Template<ChangePasswordPageData>
  /** Links under the form, such as `[{ href: '/register/', text: 'Sign up' }]`; default none. */
  links?: PageLink[]
  /** bcrypt cost of the new password's hash; default `TABLECRUD_BCRYPT_COST`, else 12. */
  bcryptCost?: number
}

const NAME = 'changePassword'
const CHANGE_BODY = {
  type: 'object',
  properties: {
    current_password: { type: 'string', minLength: 1, format: 'password' },
    new_password: { type: 'string', minLength: 1, format: 'password' },
    confirm_new_password: { type: 'string', minLength: 1, format: 'password' },
    format: { type: 'string', enum: ['html'], description: 'html: answer errors with the page (what the built-in form sends)' }
  },
  required: ['current_password', 'new_password', 'confirm_new_password'],
  examples: [{ current_password: EXAMPLE_USER.password, new_password: 'tr0ub4dor&3 no more', confirm_new_password: 'tr0ub4dor&3 no more' }]
} as const

/** The answers of the change-password POST, for OpenAPI. */
function actionResponses (loginUrl: string, readOnly: boolean): Record<number, unknown> {
  return {
    200: described(MESSAGE, 'Changed (a JSON body): every session of the user ended, the cookie cleared.'),
    303: { description: `A form submission: sent on to loginUrl (${loginUrl})`, type: 'null' },
    ...formErrors({
      401: 'Not logged in.',
      ...(readOnly ? { 405: 'Password changes are read-only.' } : {}),
      422: 'A field is missing, the new password is too short or not confirmed, or the current password is wrong.'
    })
  }
}

/**
 * Change password (SPEC §5.2), registered inside a context whose auth plugin sets
 * `request.user` (`sessionAuth`, `jwtAuth`, `tokenAuth`). GET is the page (303 to `loginUrl`
 * without a user); POST `{ current_password, new_password, confirm_new_password }` checks, in
 * order, the user (401 `Not logged in`), `readOnly` (405), missing fields, the new password's
 * length and confirmation, and the current password (422 each), then replaces the hash, ends
 * every session of the user and clears the session cookie: 303 to `loginUrl` for a form, 200
 * `{"message": "Password changed"}` for JSON.
 * @example
 * app.register(async (me) => {
 *   await me.register(sessionAuth)
 *   await me.register(changePassword, { prefix: '/change-password' })
 * })
 */
export const changePassword: FastifyPluginAsync<ChangePasswordOptions> = async function changePassword (fastify, options) {
  const loginUrl = redirectOption(NAME, options.loginUrl, '/login/')
  const table = tableOption(NAME, options.authTable ?? userTable)
  const sessions = sessionTableOption(NAME, options.sessionTable ?? builtInSessions)
  const cookieName = cookieNameOption(NAME, options.cookieName)
  const readOnly = booleanOption(NAME, 'readOnly', options.readOnly, false)
  const minLength = minPasswordLengthOption(NAME, options.minPasswordLength)
  const template = templateOption(NAME, options.template, changePasswordPage)
  const links = linksOption(NAME, options.links)
  const cost = costOption(NAME, options.bcryptCost)
  const db = databaseOf(fastify, NAME, options)!
  await formContext(fastify)
  const ids = formOperationIds(fastify, NAME)
  // Set by the auth plugin of the context; declared here too so a context without one sees null, not undefined.
  if (!fastify.hasRequestDecorator('user')) fastify.decorateRequest('user', null)

  const page = (request: FastifyRequest, message: string | null = null): string =>
    template({ ...pageBase(request, 'Change password', links), message, minPasswordLength: minLength })

  formRoutes(fastify, {
    schema: { operationId: ids.page, summary: 'The change-password page', tags: ['accounts'], response: { 200: HTML_PAGE, 303: { description: 'No user: sent to loginUrl', type: 'null' } } },
    handler: async (request, reply) => {
      if (request.user === null || request.user.id === null) return reply.redirect(loginUrl, 303)
      return sendPage(reply, 200, page(request))
    }
  }, {
    schema: {
      operationId: ids.action,
      summary: "Change the user's password; ends every session of the user",
      tags: ['accounts'],
      body: CHANGE_BODY,
      response: actionResponses(loginUrl, readOnly)
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const refuse = (error: Error): FastifyReply => refuseForm(request, reply, error, (message) => page(request, message))
      const user = request.user
      // A static token of tokenAuth has no user row to change.
      if (user === null || user.id === null) return refuse(new TABLECRUD_ERR_AUTH_NOT_LOGGED_IN())
      if (readOnly) {
        reply.header('allow', 'GET, HEAD')
        return refuse(new TABLECRUD_ERR_FORM_READ_ONLY())
      }
      try {
        await changeUserPassword(db, table, sessions, user.id, checkPasswordChange(request.body, minLength), cost)
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode !== 422) throw error
        return refuse(error as Error)
      }
      // Max-Age=0 alone, as sessionLogout clears it: clearCookie would add an Expires in 1970 as well.
      reply.setCookie(cookieName, '', { maxAge: 0, path: '/', httpOnly: true, sameSite: 'lax' })
      if (isFormSubmission(request)) {
        leaveNotice(reply, 'password-changed')
        return reply.redirect(loginUrl, 303)
      }
      return { message: 'Password changed' }
    }
  }, page)
}
