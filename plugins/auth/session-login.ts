import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import {
  optionError, TABLECRUD_ERR_AUTH_LOGIN_FAILED, TABLECRUD_ERR_AUTH_LOGIN_REFUSED, TABLECRUD_ERR_AUTH_MISSING_FIELDS
} from '../../lib/errors.js'
import { deleteSession, MAX_SESSION_EXPIRY, SESSION_EXPIRY, startSession } from '../../lib/auth/sessions.js'
import { checkLogin, recordLogin } from '../../lib/auth/users.js'
import { loginPage, type LoginPageData, type Template, type PageLink } from '../../lib/html/index.js'
import { sessionTable as builtInSessions, userTable } from '../../lib/table/auth-tables.js'
import type { Table } from '../../lib/table/index.js'
import { stringField } from './credentials.js'
import { captchaProblem, checkCaptcha, checkMfa, mfaProvidersProblem, type Captcha, type MfaProvider } from './extensions.js'
import { described, MfaLockedResponse } from '../../schemas/responses.js'
import { HTML_PAGE, MESSAGE, formContext, formErrors, formOperationIds, formRoutes, isFormSubmission, pageBase, refuseForm, sendPage } from './forms.js'
import { EXAMPLE_USER, MFA_FIELDS } from './login-routes.js'
import type {} from '../web/types.js'
import { safeNext } from '../../lib/web/pages.js'
import {
  booleanOption, cookieNameOption, costOption, databaseOf, durationOption, redirectOption, sessionTableOption, tableOption, templateOption, linksOption
} from './options.js'
import type { PoolOptions } from '../database.js'

/** A login hook's answer: a string refuses the login with `Login failed: <string>`. */
export type LoginHookResult = string | undefined | null | void

/**
 * The hooks of `sessionLogin` (SPEC §5.1), each a list run in order; the first that returns a
 * string refuses the login with 401 `Login failed: <string>`.
 * @example
 * const hooks: LoginHooks = { preLogin: [(username) => banned.has(username) ? 'this account is locked' : undefined] }
 */
export interface LoginHooks {
  /** Before anything is checked. */
  preLogin?: Array<(username: string) => LoginHookResult | Promise<LoginHookResult>>
  /** After the password and second factor passed, before the session starts. */
  loginSuccess?: Array<(username: string, userId: number | string) => LoginHookResult | Promise<LoginHookResult>>
  /** After an unknown user, a wrong password or an inactive user. */
  loginFailure?: Array<(username: string) => LoginHookResult | Promise<LoginHookResult>>
}

/**
 * Options of `sessionLogin`.
 * @example app.register(sessionLogin, { prefix: '/login', redirectTo: '/me/', production: true } satisfies SessionLoginOptions)
 */
export interface SessionLoginOptions extends PoolOptions {
  /** The user table; default the built-in `auth_user`. */
  authTable?: Table
  /** The session table; default the built-in `auth_session`. */
  sessionTable?: Table
  /** How long a session lasts (seconds or a duration such as `"1h"`); default one hour. */
  sessionExpiry?: number | string
  /** When a session ends whatever happens, and the cookie's `Max-Age`; default seven days. */
  maxSessionExpiry?: number | string
  /** Where a successful form login is sent (303); default `/`. */
  redirectTo?: string
  /** True adds `Secure` to the cookie (HTTPS only); default false. */
  production?: boolean
  /** The session cookie's name; default `id`. */
  cookieName?: string
  hooks?: LoginHooks
  /** A CAPTCHA asked before the password is checked. */
  captcha?: Captcha
  /** Second factors, asked of users enrolled with one. */
  mfaProviders?: MfaProvider[]
  /** The login page; default the built-in one. */
  template?: Template<LoginPageData>
  /** Links under the form, such as `[{ href: '/register/', text: 'Sign up' }]`; default none. */
  links?: PageLink[]
  /** bcrypt cost of the dummy hash checked for unknown users; default `TABLECRUD_BCRYPT_COST`, else 12. */
  bcryptCost?: number
}

const NAME = 'sessionLogin'
const HOOK_NAMES = ['preLogin', 'loginSuccess', 'loginFailure'] as const

function hooksOption (value: unknown): Required<LoginHooks> {
  if (value === undefined) return { preLogin: [], loginSuccess: [], loginFailure: [] }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw optionError(NAME, 'hooks', 'must be an object { preLogin, loginSuccess, loginFailure } of lists of functions')
  const hooks = value as Record<string, unknown>
  for (const key of Object.keys(hooks)) {
    if (!(HOOK_NAMES as readonly string[]).includes(key)) throw optionError(NAME, 'hooks', `has ${key}: only ${HOOK_NAMES.join(', ')} are hooks`)
    const list = hooks[key]
    if (!Array.isArray(list) || !list.every((f) => typeof f === 'function')) throw optionError(NAME, 'hooks', `${key} must be a list of functions`)
  }
  return { preLogin: [], loginSuccess: [], loginFailure: [], ...hooks } as Required<LoginHooks>
}

/** Runs a list of hooks; the first string answered is the refusal. */
async function refusal<A extends unknown[]> (hooks: ReadonlyArray<(...args: A) => LoginHookResult | Promise<LoginHookResult>>, ...args: A): Promise<Error | null> {
  for (const hook of hooks) {
    const result = await hook(...args)
    if (typeof result === 'string') return new TABLECRUD_ERR_AUTH_LOGIN_REFUSED(result)
  }
  return null
}

const LOGIN_BODY = {
  type: 'object',
  properties: {
    username: { type: 'string', minLength: 1 },
    password: { type: 'string', minLength: 1, format: 'password' },
    ...MFA_FIELDS,
    format: { type: 'string', enum: ['html'], description: 'html: answer errors with the login page (what the built-in form sends)' },
    next: { type: 'string', description: 'A form submission: the path of this site to go to instead of redirectTo (what `?next=` of the login page carries)' }
  },
  required: ['username', 'password'],
  examples: [{ username: EXAMPLE_USER.username, password: EXAMPLE_USER.password }]
} as const

/**
 * Session login (SPEC §5.1): GET at the prefix is the login page; POST `{ username, password }`
 * (JSON or a form) checks, in order, missing fields (422), the `preLogin` hooks, the CAPTCHA,
 * the password (401 `Login failed`, timed alike for unknown and known users), the second
 * factor and the `loginSuccess` hooks, then ends the session of any cookie sent along, starts
 * a new one, sets `last_login` and the cookie `<cookieName>=<token>; Max-Age; Path=/;
 * HttpOnly; SameSite=Lax` (`Secure` with `production`). A form gets 303 to its `next` (a path
 * of this site, which the page carries from `?next=`) or else `redirectTo`, JSON
 * 200 `{"message": "logged in"}`. A refused built-in form gets the page again with the message.
 * @example
 * app.register(sessionLogin, { prefix: '/login', redirectTo: '/me/', sessionExpiry: '1h', maxSessionExpiry: '7d' })
 */
/** The two lifetimes, checked, in seconds. */
function expiryOptions (options: SessionLoginOptions): { expiry: number, maxExpiry: number } {
  return {
    expiry: durationOption(NAME, 'sessionExpiry', options.sessionExpiry ?? SESSION_EXPIRY),
    maxExpiry: durationOption(NAME, 'maxSessionExpiry', options.maxSessionExpiry ?? MAX_SESSION_EXPIRY)
  }
}

/** The `captcha` and `mfaProviders` options, checked; the providers. */
function extensionsOption (options: SessionLoginOptions): MfaProvider[] {
  const captchaIssue = options.captcha === undefined ? null : captchaProblem(options.captcha)
  if (captchaIssue !== null) throw optionError(NAME, 'captcha', captchaIssue)
  const mfaIssue = mfaProvidersProblem(options.mfaProviders ?? [])
  if (mfaIssue !== null) throw optionError(NAME, 'mfaProviders', mfaIssue)
  return [...options.mfaProviders ?? []]
}

/** The responses of POST: logged in, or sent on, or the form's errors. */
function actionResponses (redirectTo: string, mfa: boolean): Record<number, unknown> {
  return {
    200: described(MESSAGE, 'Logged in (a JSON body): the session cookie is set.'),
    303: { description: `A form submission: sent on to redirectTo (${redirectTo})`, type: 'null' },
    ...formErrors({ 401: 'Login failed: wrong credentials, a refusing hook, CAPTCHA or second factor.', 422: 'The username or the password is missing.' }),
    ...(mfa ? { 429: MfaLockedResponse } : {})
  }
}

export const sessionLogin: FastifyPluginAsync<SessionLoginOptions> = async function sessionLogin (fastify, options) {
  const table = tableOption(NAME, options.authTable ?? userTable)
  const sessions = sessionTableOption(NAME, options.sessionTable ?? builtInSessions)
  const { expiry, maxExpiry } = expiryOptions(options)
  const redirectTo = redirectOption(NAME, options.redirectTo, '/')
  const production = booleanOption(NAME, 'production', options.production, false)
  const cookieName = cookieNameOption(NAME, options.cookieName)
  const hooks = hooksOption(options.hooks)
  const mfaProviders = extensionsOption(options)
  const template = templateOption(NAME, options.template, loginPage)
  const links = linksOption(NAME, options.links)
  const cost = costOption(NAME, options.bcryptCost)
  const db = databaseOf(fastify, NAME, options)!
  await formContext(fastify)
  const ids = formOperationIds(fastify, NAME)

  const page = (request: FastifyRequest, message: string | null = null): string => template({
    ...pageBase(request, 'Log in', links),
    message,
    username: message === null ? '' : stringField(request.body, 'username') ?? '',
    mfaProviders: mfaProviders.map((p) => p.name),
    captchaField: options.captcha?.field ?? null,
    // Where to go after logging in: from the address on the page, from the form once posted.
    next: safeNext(message === null ? (request.query as Record<string, unknown>).next : stringField(request.body, 'next'))
  })

  /** Steps 1 to 6 of SPEC §5.1: the user, or why the login is refused. */
  async function check (request: FastifyRequest): Promise<{ id: number | string } | Error> {
    const body = request.body
    const username = stringField(body, 'username')
    const password = stringField(body, 'password')
    if (username === undefined || username === '' || password === undefined || password === '') return new TABLECRUD_ERR_AUTH_MISSING_FIELDS()
    const refusedEarly = await refusal(hooks.preLogin, username)
    if (refusedEarly !== null) return refusedEarly
    const captchaError = options.captcha === undefined ? null : await checkCaptcha(options.captcha, body, request)
    if (captchaError !== null) return captchaError
    const user = await checkLogin(db, table, username, password, cost)
    if (user === null) return await refusal(hooks.loginFailure, username) ?? new TABLECRUD_ERR_AUTH_LOGIN_FAILED()
    const mfaError = await checkMfa(mfaProviders, user, body, { db, request })
    if (mfaError !== null) return mfaError
    return await refusal(hooks.loginSuccess, username, user.id!) ?? { id: user.id! }
  }

  formRoutes(fastify, {
    schema: { operationId: ids.page, summary: 'The login page', tags: ['sessions'], response: { 200: HTML_PAGE } },
    handler: async (request, reply) => sendPage(reply, 200, page(request))
  }, {
    schema: { operationId: ids.action, summary: 'Log in with a username and password; starts a session (cookie)', tags: ['sessions'], body: LOGIN_BODY, response: actionResponses(redirectTo, mfaProviders.length > 0) },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const result = await check(request)
      if (result instanceof Error) return refuseForm(request, reply, result, (message) => page(request, message))
      const previous = request.cookies[cookieName]
      if (previous !== undefined) await deleteSession(db, previous, sessions)
      const session = await startSession(db, sessions, result.id, expiry, maxExpiry)
      await recordLogin(db, table, result.id)
      reply.setCookie(cookieName, session.token, { maxAge: maxExpiry, path: '/', httpOnly: true, sameSite: 'lax', secure: production })
      if (isFormSubmission(request)) return reply.redirect(safeNext(stringField(request.body, 'next')) ?? redirectTo, 303)
      return { message: 'logged in' }
    }
  }, page)
}
