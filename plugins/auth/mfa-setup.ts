import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { PoolOptions } from '../database.js'
import type { Database } from '../../lib/db/port.js'
import {
  optionError, TABLECRUD_ERR_AUTH_BAD_PASSWORD, TABLECRUD_ERR_AUTH_NOT_LOGGED_IN, TABLECRUD_ERR_MFA_INVALID_CODE,
  TABLECRUD_ERR_MFA_STATE, TABLECRUD_ERR_MFA_UNKNOWN_ACTION, TABLECRUD_ERR_ROUTE_NOT_FOUND
} from '../../lib/errors.js'
import { checkUserPassword } from '../../lib/auth/accounts.js'
import type { AuthenticatorProvider, MfaEnrollment, MfaStatus } from '../../lib/auth/mfa.js'
import { qrCodePng } from '../../lib/auth/totp.js'
import type { AuthUser } from '../../lib/auth/users.js'
import { mfaSetupPage, type MfaSetupPageData, type Template, type PageLink } from '../../lib/html/index.js'
import { userTable } from '../../lib/table/auth-tables.js'
import type { Table } from '../../lib/table/index.js'
import { sendError } from '../errors.js'
import { errorResponse } from '../../schemas/responses.js'
import { stringField } from './credentials.js'
import { HTML_PAGE, MESSAGE, formContext, formErrors, formOperationIds, formRoutes, jsonOrPage, pageBase, refuseForm, sendPage, wantsPage } from './forms.js'
import { EXAMPLE_USER } from './login-routes.js'
import { databaseOf, tableOption, templateOption, linksOption } from './options.js'

/**
 * Options of `mfaSetup`.
 * @example me.register(mfaSetup, { prefix: '/mfa', provider: authenticatorProvider({ encryptionKey: process.env.MFA_KEY! }) } satisfies MfaSetupOptions)
 */
export interface MfaSetupOptions extends PoolOptions {
  /** The provider made by `authenticatorProvider`, the same one given to the login plugins. Required. */
  provider: AuthenticatorProvider
  /** The user table, whose password confirms `register` and `revoke`; default the built-in `auth_user`. */
  authTable?: Table
  /** The page; default the built-in one. */
  template?: Template<MfaSetupPageData>
  /** Links under the form, such as `[{ href: '/register/', text: 'Sign up' }]`; default none. */
  links?: PageLink[]
}

const NAME = 'mfaSetup'
const ENROLLMENT = {
  type: 'object',
  properties: {
    qrcode_image: { type: 'string', description: 'data:image/png;base64,...' },
    otpauth_url: { type: 'string' },
    secret: { type: 'string', description: 'base32' },
    recovery_codes: { type: 'array', items: { type: 'string' } }
  },
  required: ['qrcode_image', 'otpauth_url', 'secret', 'recovery_codes']
} as const
const MFA_BODY = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['register', 'confirm', 'revoke'] },
    password: { type: 'string', format: 'password', description: 'For register and revoke' },
    code: { type: 'string', description: 'For confirm: the current code of the pending secret' },
    format: { type: 'string', enum: ['html'], description: 'html: answer with the page (what the built-in forms send)' }
  },
  required: ['action'],
  // The first step, set-up; then `confirm` with a code, or `revoke` with the password.
  examples: [{ action: 'register', password: EXAMPLE_USER.password }]
} as const
const QR_PATH = 'qrcode.png'

const state = (message: string): Error => new TABLECRUD_ERR_MFA_STATE(message)
const ENROLLED = 'MFA is already set up'
const NOT_SET_UP = 'MFA is not set up'

function providerOption (value: unknown): AuthenticatorProvider {
  const p = value as Partial<AuthenticatorProvider> | undefined
  const methods = ['register', 'confirm', 'revoke', 'status', 'pending'] as const
  if (typeof p !== 'object' || p === null || !methods.every((m) => typeof p[m] === 'function')) {
    throw optionError(NAME, 'provider', 'is required: a provider made by authenticatorProvider({ encryptionKey })')
  }
  return p as AuthenticatorProvider
}

type Outcome = { enrollment: MfaEnrollment } | { message: string }

type SetupUser = { id: number | string, username: string }

const userOf = (request: FastifyRequest): SetupUser | null => {
  const user: AuthUser | null = request.user
  return user === null || user.id === null || user.username === null ? null : { id: user.id, username: user.username }
}

/** One action, or the error to answer. */
async function act (provider: AuthenticatorProvider, table: Table, context: { db: Database }, user: SetupUser, body: unknown): Promise<Outcome | Error> {
  const action = stringField(body, 'action')
  if (action !== 'register' && action !== 'confirm' && action !== 'revoke') return new TABLECRUD_ERR_MFA_UNKNOWN_ACTION()
  if (action === 'confirm') {
    const result = await provider.confirm(user.id, stringField(body, 'code') ?? '', context)
    if (result === 'enabled') return { message: 'MFA enabled' }
    if (result === 'invalid') return new TABLECRUD_ERR_MFA_INVALID_CODE()
    return state(result === 'enrolled' ? ENROLLED : NOT_SET_UP)
  }
  if (!await checkUserPassword(context.db, table, user.id, stringField(body, 'password'))) return new TABLECRUD_ERR_AUTH_BAD_PASSWORD()
  if (action === 'revoke') return await provider.revoke(user.id, context) ? { message: 'MFA disabled' } : state(NOT_SET_UP)
  const enrollment = await provider.register(user, context)
  return enrollment === null ? state(ENROLLED) : { enrollment }
}

/** GET the QR code of the pending secret. */
function qrRoute (fastify: FastifyInstance, operationId: string, provider: AuthenticatorProvider, context: { db: Database }): void {
  fastify.route({
    method: 'GET',
    url: `/${QR_PATH}`,
    schema: {
      operationId,
      summary: "The QR code of the user's pending secret",
      tags: ['mfa'],
      response: { 200: { description: 'A PNG image', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } }, 401: errorResponse('Not logged in.'), 404: errorResponse('No set-up is pending.') }
    },
    handler: async (request, reply) => {
      const user = userOf(request)
      if (user === null) return sendError(reply, new TABLECRUD_ERR_AUTH_NOT_LOGGED_IN())
      const pending = await provider.pending(user, context)
      if (pending === null) return sendError(reply, new TABLECRUD_ERR_ROUTE_NOT_FOUND(request.method, request.url))
      return reply.type('image/png').send(await qrCodePng(pending.otpauth_url))
    }
  })
}

/**
 * MFA set-up (SPEC §5.4), inside a `sessionAuth` context. GET is the page: the set-up form, the
 * QR code and confirm form of a pending secret, or the revoke form when enrolled. POST
 * `{ action, password, code? }`: `register` (password; 409 when enrolled) answers the QR code
 * (a PNG data URL), the otpauth URL, the base32 secret and the recovery codes; `confirm` with
 * the current code turns MFA on (`MFA enabled`; 422 `Invalid MFA code.`, 409 without a pending
 * secret); `revoke` with the password turns it off (`MFA disabled`; 409 when not enrolled);
 * a wrong password is 401 `Incorrect password`, another action 400 `Unknown action.`
 * GET `qrcode.png` under the prefix is the pending secret's QR code, for the page.
 * @example
 * const totp = authenticatorProvider({ encryptionKey: process.env.MFA_KEY! })
 * app.register(async (me) => {
 *   await me.register(sessionAuth)
 *   await me.register(mfaSetup, { prefix: '/mfa', provider: totp })
 * })
 */
export const mfaSetup: FastifyPluginAsync<MfaSetupOptions> = async function mfaSetup (fastify, options) {
  const provider = providerOption(options?.provider)
  const table = tableOption(NAME, options.authTable ?? userTable)
  const template = templateOption(NAME, options.template, mfaSetupPage)
  const links = linksOption(NAME, options.links)
  const db = databaseOf(fastify, NAME, options)!
  const context = { db }
  await formContext(fastify)
  const ids = formOperationIds(fastify, NAME)
  if (!fastify.hasRequestDecorator('user')) fastify.decorateRequest('user', null)

  async function page (request: FastifyRequest, extra: { message?: string | null, notice?: string | null, enrollment?: MfaEnrollment | null } = {}): Promise<string> {
    const user = userOf(request)!
    const status: MfaStatus = await provider.status(user.id, context)
    const pending = extra.enrollment ?? (status === 'pending' ? await provider.pending(user, context) : null)
    const base = pageBase(request, 'Two-factor authentication', links)
    return template({
      ...base,
      message: extra.message ?? null,
      status,
      qrcodeUrl: base.action + QR_PATH,
      secret: pending?.secret ?? null,
      recoveryCodes: extra.enrollment?.recovery_codes ?? null,
      notice: extra.notice ?? null
    })
  }

  formRoutes(fastify, {
    schema: { operationId: ids.page, summary: 'The MFA set-up page', tags: ['mfa'], response: { 200: HTML_PAGE, 401: errorResponse('Not logged in.') } },
    handler: async (request, reply) => {
      if (userOf(request) === null) return sendError(reply, new TABLECRUD_ERR_AUTH_NOT_LOGGED_IN())
      return sendPage(reply, 200, await page(request))
    }
  }, {
    schema: {
      operationId: ids.action,
      summary: 'Set up, confirm or revoke MFA with an authenticator app',
      tags: ['mfa'],
      body: MFA_BODY,
      response: {
        200: jsonOrPage({ oneOf: [ENROLLMENT, MESSAGE] }, 'register: the new secret, its QR code and recovery codes; confirm and revoke: what changed.'),
        ...formErrors({ 400: 'The body is not valid JSON, or the action is unknown.', 401: 'Not logged in, or the password is wrong.', 409: 'The action does not fit the MFA state (already set up, or nothing to confirm).', 422: 'The code is invalid.' })
      }
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const user = userOf(request)
      if (user === null) return sendError(reply, new TABLECRUD_ERR_AUTH_NOT_LOGGED_IN())
      const outcome = await act(provider, table, context, user, request.body)
      if (outcome instanceof Error) {
        const html = wantsPage(request) ? await page(request, { message: outcome.message }) : ''
        return refuseForm(request, reply, outcome, () => html)
      }
      if (wantsPage(request)) {
        const shown = 'enrollment' in outcome ? { enrollment: outcome.enrollment } : { notice: outcome.message }
        return sendPage(reply, 200, await page(request, shown))
      }
      return 'enrollment' in outcome ? outcome.enrollment : outcome
    }
    // Over the login limit, the page with the message (SPEC §5.7); a page of nobody's MFA there is not.
  }, async (request, message) => userOf(request) === null ? null : await page(request, { message }))
  qrRoute(fastify, `${ids.action}.qrCode`, provider, context)
}
