import type { FastifyRequest } from 'fastify'
import {
  TABLECRUD_ERR_AUTH_CAPTCHA, TABLECRUD_ERR_MFA_CODE_USED, TABLECRUD_ERR_MFA_FAILED, TABLECRUD_ERR_MFA_LOCKED, TABLECRUD_ERR_MFA_PROVIDER, TABLECRUD_ERR_MFA_REQUIRED
} from '../../lib/errors.js'
import type { AuthUser } from '../../lib/auth/users.js'
import type { MfaDbContext } from '../../lib/auth/mfa.js'
import type { Database } from '../../lib/db/port.js'
import { stringField } from './credentials.js'

/**
 * The two places a login can be asked for more than a password (SPEC §5.1 steps 3 and 5): a
 * CAPTCHA before the password is checked, a second factor after. Each is a small interface,
 * so hCaptcha, reCAPTCHA, TOTP or anything else plugs in without touching the login plugins.
 */

/**
 * A CAPTCHA check (SPEC §5.2): `field` names the body field the widget fills in; `verify`
 * asks the provider whether the token is good. A false answer, or a throw (the provider is
 * down), refuses the login.
 * @example
 * const captcha: Captcha = { field: 'h-captcha-response', verify: async (token) => await askHcaptcha(token) }
 */
export interface Captcha {
  field: string
  verify: (token: string, request: FastifyRequest) => boolean | Promise<boolean>
}

/** What an MFA provider is given with each call: `authenticatorProvider`'s context, with the request. */
export interface MfaContext extends MfaDbContext {
  /** The plugin's database port (its `pg` or `pool` option, else `fastify.pg`): `run(statement)`, or pg's `query(text, values)`. */
  db: Database
  request: FastifyRequest
}

/**
 * A second factor for `sessionLogin` (and any login taking `mfaProviders`, SPEC §5.4). `name`
 * is the value of `mfa_provider` that chooses it when several are configured.
 * @example
 * const provider: MfaProvider = {
 *   name: 'authenticator',
 *   isEnrolled: async (userId, { db }) => await hasConfirmedSecret(db, userId),
 *   verifyCode: async (userId, code, { db }) => await checkTotpOrRecoveryCode(db, userId, code)
 * }
 */
export interface MfaProvider {
  readonly name: string
  /** Whether the user has a confirmed enrollment: only then is a code asked for. */
  isEnrolled: (userId: number | string, context: MfaContext) => Promise<boolean>
  /** Whether the code (or a recovery code) is good for the user; a good one is used up, so a replay is refused. */
  verifyCode: (userId: number | string, code: string, context: MfaContext) => Promise<boolean>
  /**
   * Optional: whether a code `verifyCode` refused is a good one already spent; the login then
   * answers 401 `TABLECRUD_ERR_MFA_CODE_USED` (wait for the next code) instead of `MFA failed`.
   */
  codeUsed?: (userId: number | string, code: string, context: MfaContext) => Promise<boolean>
}

/** The reason `captcha` is not a usable `captcha` option, or null. */
export function captchaProblem (captcha: unknown): string | null {
  if (typeof captcha !== 'object' || captcha === null) return 'must be an object { field, verify(token, request) }'
  const { field, verify } = captcha as Record<string, unknown>
  if (typeof field !== 'string' || field === '') return 'must have a field: the non-empty name of the body field holding the token'
  return typeof verify === 'function' ? null : 'must have a verify(token, request) method'
}

/** The reason `providers` is not a usable `mfaProviders` option, or null. */
export function mfaProvidersProblem (providers: unknown): string | null {
  if (!Array.isArray(providers)) return 'must be an array of MFA providers'
  const names = new Set<string>()
  for (const p of providers as Array<Record<string, unknown> | null>) {
    if (typeof p !== 'object' || p === null || typeof p.name !== 'string' || p.name === '' ||
        typeof p.isEnrolled !== 'function' || typeof p.verifyCode !== 'function') {
      return 'must hold providers { name, isEnrolled(userId, context), verifyCode(userId, code, context) }'
    }
    if (names.has(p.name)) return `has two providers named ${p.name}`
    names.add(p.name)
  }
  return null
}

/** Step 3 of a login: the CAPTCHA's error, or null when it passed. */
export async function checkCaptcha (captcha: Captcha, body: unknown, request: FastifyRequest): Promise<Error | null> {
  const token = stringField(body, captcha.field)
  if (token === undefined || token === '') return new TABLECRUD_ERR_AUTH_CAPTCHA('Unable to find CAPTCHA token.')
  let ok = false
  try {
    ok = await captcha.verify(token, request)
  } catch (error) {
    request.log.warn({ err: error }, 'CAPTCHA verification failed')
  }
  return ok === true ? null : new TABLECRUD_ERR_AUTH_CAPTCHA('CAPTCHA failed.')
}

/**
 * Step 5 of a login: the MFA error, or null when the user passes (no provider, not enrolled,
 * or a good code). With several providers `mfa_provider` names one, asked only of a user
 * enrolled with some provider; naming one the user is not enrolled with fails.
 */
export async function checkMfa (providers: readonly MfaProvider[], user: AuthUser, body: unknown, context: MfaContext): Promise<Error | null> {
  if (providers.length === 0 || user.id === null) return null
  const userId = user.id
  let provider = providers[0]!
  if (providers.length > 1) {
    const enrolled = await Promise.all(providers.map(async (p) => await p.isEnrolled(userId, context)))
    if (!enrolled.includes(true)) return null
    const name = stringField(body, 'mfa_provider')
    if (name === undefined || name === '') return new TABLECRUD_ERR_MFA_PROVIDER('MFA provider must be specified')
    const index = providers.findIndex((p) => p.name === name)
    if (index === -1) return new TABLECRUD_ERR_MFA_PROVIDER('MFA provider not recognised.')
    if (enrolled[index] !== true) return new TABLECRUD_ERR_MFA_FAILED()
    provider = providers[index]!
  } else if (!await provider.isEnrolled(userId, context)) {
    return null
  }
  const code = stringField(body, 'mfa_code')
  if (code === undefined || code === '') return new TABLECRUD_ERR_MFA_REQUIRED()
  const verified = await provider.verifyCode(userId, code, context).catch((error: unknown) => {
    // A provider's lockout (429 with Retry-After) is the login's answer, a form page included.
    if (error instanceof TABLECRUD_ERR_MFA_LOCKED) return error
    throw error
  })
  if (verified instanceof Error) return verified
  if (verified) return null
  return await provider.codeUsed?.(userId, code, context) === true ? new TABLECRUD_ERR_MFA_CODE_USED() : new TABLECRUD_ERR_MFA_FAILED()
}
