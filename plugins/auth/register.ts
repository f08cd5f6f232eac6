import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { optionError, TABLECRUD_ERR_FORM_READ_ONLY } from '../../lib/errors.js'
import { checkRegistration, createRegisteredUser } from '../../lib/auth/accounts.js'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../lib/auth/password.js'
import { registerPage, type RegisterPageData, type Template, type PageLink } from '../../lib/html/index.js'
import { userTable } from '../../lib/table/auth-tables.js'
import type { Table } from '../../lib/table/index.js'
import { stringField } from './credentials.js'
import { captchaProblem, checkCaptcha, type Captcha } from './extensions.js'
import { described } from '../../schemas/responses.js'
import { HTML_PAGE, formContext, formErrors, formOperationIds, formRoutes, isFormSubmission, leaveNotice, pageBase, refuseForm, sendPage } from './forms.js'
import { EXAMPLE_USER } from './login-routes.js'
import { databaseHelper, type PoolOptions } from '../database.js'
import { booleanOption, costOption, redirectOption, tableOption, templateOption, linksOption } from './options.js'

/**
 * Options of `register`.
 * @example app.register(register, { prefix: '/register', userDefaults: { active: true }, minPasswordLength: 10 } satisfies RegisterOptions)
 */
export interface RegisterOptions extends PoolOptions {
  /** The user table; default the built-in `auth_user`. It needs an `email` column. */
  authTable?: Table
  /** Where a successful form sign-up is sent (303); default `/login/`. */
  redirectTo?: string
  /** Other columns of the new user, e.g. `{ active: true }`; default `{}` (the user is inactive). */
  userDefaults?: Record<string, unknown>
  /** A CAPTCHA asked before anything else is checked, e.g. `hcaptcha({ secret })`. */
  captcha?: Captcha
  /** Refuse sign-ups (405) while showing the page; default false. */
  readOnly?: boolean
  /** The shortest password accepted, 6 to 128; default 6. */
  minPasswordLength?: number
  /** The sign-up page; default the built-in one. */
  template?: Template<RegisterPageData>
  /** Links under the form, such as `[{ href: '/register/', text: 'Sign up' }]`; default none. */
  links?: PageLink[]
  /** bcrypt cost of the new password's hash; default `TABLECRUD_BCRYPT_COST`, else 12. */
  bcryptCost?: number
}

const NAME = 'register'
const REGISTER_BODY = {
  type: 'object',
  properties: {
    username: { type: 'string', minLength: 1 },
    email: { type: 'string', format: 'email' },
    password: { type: 'string', minLength: 1, format: 'password' },
    confirm_password: { type: 'string', minLength: 1, format: 'password' },
    format: { type: 'string', enum: ['html'], description: 'html: answer errors with the sign-up page (what the built-in form sends)' }
  },
  required: ['username', 'email', 'password', 'confirm_password'],
  examples: [{ ...EXAMPLE_USER, confirm_password: EXAMPLE_USER.password }]
} as const
const CREATED = { type: 'object', properties: { id: { type: ['integer', 'string'] }, username: { type: 'string' } }, required: ['id', 'username'] } as const

/** The shared `minPasswordLength` option of register and change password. */
export function minPasswordLengthOption (plugin: string, value: unknown): number {
  if (value === undefined) return PASSWORD_MIN_LENGTH
  // Below 6, the password could be set but never used: every login refuses it (SPEC §3).
  if (!Number.isInteger(value) || (value as number) < PASSWORD_MIN_LENGTH || (value as number) > PASSWORD_MAX_LENGTH) {
    throw optionError(plugin, 'minPasswordLength', `must be an integer from ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH}`)
  }
  return value as number
}

/** `userDefaults`, checked against the table: columns it has, other than the ones the form fills in. */
function defaultsOption (table: Table, value: unknown): Map<string, unknown> {
  if (value === undefined) return new Map()
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw optionError(NAME, 'userDefaults', 'must be an object of column values')
  const defaults = new Map(Object.entries(value))
  for (const name of defaults.keys()) {
    const column = table.columnMap.get(name)
    if (column === undefined) throw optionError(NAME, 'userDefaults', `names ${name}, which is not a column of ${table.name}`)
    if (column.primaryKey || ['username', 'email', 'password'].includes(name)) throw optionError(NAME, 'userDefaults', `cannot set ${name}: the form gives it`)
  }
  return defaults
}

/**
 * Sign-up (SPEC §5.2): GET at the prefix is the sign-up page; POST `{ username, email,
 * password, confirm_password }` (JSON or a form) checks, in order, `readOnly` (405), the
 * CAPTCHA (401), missing fields, the username, the email, the password's length and its
 * confirmation, and a taken username or email, case-insensitive and race-proof (422 each),
 * then creates the user with `userDefaults` (no session). A form gets 303 to `redirectTo`,
 * JSON 201 `{ "id": <id>, "username": "<username>" }`.
 * @example
 * app.register(register, { prefix: '/register', redirectTo: '/login/', userDefaults: { active: true } })
 */
/** The responses of POST: created, or sent on, or the form's errors. */
function actionResponses (redirectTo: string, captcha: boolean, readOnly: boolean): Record<number, unknown> {
  return {
    201: described(CREATED, 'Signed up (a JSON body): the new user; no session is started.'),
    303: { description: `A form submission: sent on to redirectTo (${redirectTo})`, type: 'null' },
    ...formErrors({
      ...(captcha ? { 401: 'The CAPTCHA failed.' } : {}),
      ...(readOnly ? { 405: 'Sign-up is read-only.' } : {}),
      422: 'A field is missing or invalid, or the username or email is taken.'
    })
  }
}

export const register: FastifyPluginAsync<RegisterOptions> = async function register (fastify, options) {
  const table = tableOption(NAME, options.authTable ?? userTable)
  if (!table.columnMap.has('email')) throw optionError(NAME, 'authTable', `cannot hold sign-ups: the table ${table.name} has no email column`)
  const redirectTo = redirectOption(NAME, options.redirectTo, '/login/')
  const defaults = defaultsOption(table, options.userDefaults)
  const captchaIssue = options.captcha === undefined ? null : captchaProblem(options.captcha)
  if (captchaIssue !== null) throw optionError(NAME, 'captcha', captchaIssue)
  const readOnly = booleanOption(NAME, 'readOnly', options.readOnly, false)
  const minLength = minPasswordLengthOption(NAME, options.minPasswordLength)
  const template = templateOption(NAME, options.template, registerPage)
  const links = linksOption(NAME, options.links)
  const cost = costOption(NAME, options.bcryptCost)
  const db = databaseHelper(fastify, NAME, { pg: options.pg, pool: options.pool })
  const username = table.columnMap.get('username')!
  const usernameMax = username.type === 'varchar' ? username.length! : null
  await formContext(fastify)
  const ids = formOperationIds(fastify, NAME)

  const page = (request: FastifyRequest, message: string | null = null): string => template({
    ...pageBase(request, 'Sign up', links),
    message,
    username: message === null ? '' : stringField(request.body, 'username') ?? '',
    email: message === null ? '' : stringField(request.body, 'email') ?? '',
    minPasswordLength: minLength,
    captchaField: options.captcha?.field ?? null
  })

  formRoutes(fastify, {
    schema: { operationId: ids.page, summary: 'The sign-up page', tags: ['accounts'], response: { 200: HTML_PAGE } },
    handler: async (request, reply) => sendPage(reply, 200, page(request))
  }, {
    schema: {
      operationId: ids.action,
      summary: 'Sign up: creates a user (no session)',
      tags: ['accounts'],
      body: REGISTER_BODY,
      response: actionResponses(redirectTo, options.captcha !== undefined, readOnly)
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const refuse = (error: Error): FastifyReply => refuseForm(request, reply, error, (message) => page(request, message))
      if (readOnly) {
        reply.header('allow', 'GET, HEAD')
        return refuse(new TABLECRUD_ERR_FORM_READ_ONLY())
      }
      const captchaError = options.captcha === undefined ? null : await checkCaptcha(options.captcha, request.body, request)
      if (captchaError !== null) return refuse(captchaError)
      let created: { id: number | string, username: string }
      try {
        created = await createRegisteredUser(db, table, checkRegistration(request.body, minLength, usernameMax), defaults, cost)
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode !== 422) throw error
        return refuse(error as Error)
      }
      if (isFormSubmission(request)) {
        leaveNotice(reply, 'registered')
        return reply.redirect(redirectTo, 303)
      }
      return reply.code(201).send(created)
    }
  }, page)
}
