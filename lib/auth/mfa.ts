import { mfaLocked, optionError } from '../errors.js'
import { parseDuration } from './duration.js'
import { runnerOf, type DatabaseHandle } from '../db/port.js'
import type { Statement } from '../table/statement.js'
import * as sql from '../sql/mfa.js'
import { isTable, type Table } from '../table/index.js'
import {
  decryptSecret, encryptSecret, generateRecoveryCode, hashRecoveryCode, KEY_RULE, matchRecoveryCode, parseKeys, type MfaKey,
  type EncryptionKey
} from './mfa-crypto.js'
import { MFA_COLUMNS, mfaSecretTable } from '../table/auth-tables.js'
import { matchTotp, otpauthUrl, qrCodeDataUrl, newTotpSecret } from './totp.js'

/**
 * What each call of a provider is given: the database (`fastify.pg`); the login plugins add the request.
 * @example const status = await totp.status(user.id, { db: app.pg } satisfies MfaDbContext)
 */
export interface MfaDbContext {
  db: DatabaseHandle
}

/**
 * What `register` hands the user once, to put into an authenticator app and to keep.
 * @example const { secret, otpauth_url, qrcode_image, recovery_codes }: MfaEnrollment = await provider.register(app.pg, user)
 */
export interface MfaEnrollment {
  qrcode_image: string
  otpauth_url: string
  secret: string
  recovery_codes: string[]
}

/**
 * Where a user stands with a provider: what `mfaSetup` shows and allows.
 * @example if ((await totp.status(user.id, { db: app.pg })) === 'enrolled') console.log('MFA is on')
 */
export type MfaStatus = 'none' | 'pending' | 'enrolled'

/**
 * The authenticator-app provider: what `mfaSetup` drives, and what the login plugins ask.
 * @example const totp: AuthenticatorProvider = authenticatorProvider({ encryptionKey: process.env.MFA_KEY! })
 */
export interface AuthenticatorProvider {
  /** `authenticator`: the value of `mfa_provider` that picks it. */
  readonly name: string
  readonly secretTable: Table
  /** Whether a login of this user must carry a code: an enrollment that is confirmed and not revoked. */
  isEnrolled: (userId: number | string, context: MfaDbContext) => Promise<boolean>
  /** Checks a login code (TOTP, or a recovery code when longer than 10 characters) and spends it: true once per code. */
  verifyCode: (userId: number | string, code: string, context: MfaDbContext) => Promise<boolean>
  /**
   * Whether a code `verifyCode` refused is the right one of a time step already spent (the code
   * that just confirmed the set-up, or logged in): the login then tells the user to wait for
   * the next code instead of saying `MFA failed`.
   */
  codeUsed: (userId: number | string, code: string, context: MfaDbContext) => Promise<boolean>
  status: (userId: number | string, context: MfaDbContext) => Promise<MfaStatus>
  /** A new pending enrollment (replacing a pending or revoked one); null when the user is enrolled. */
  register: (user: { id: number | string, username: string }, context: MfaDbContext) => Promise<MfaEnrollment | null>
  /** Confirms the pending enrollment with its current code. */
  confirm: (userId: number | string, code: string, context: MfaDbContext) => Promise<'enabled' | 'invalid' | MfaStatus>
  /** Revokes a confirmed enrollment; false when there is none. */
  revoke: (userId: number | string, context: MfaDbContext) => Promise<boolean>
  /** The pending secret and its otpauth URL, for the set-up page; null when none is pending. */
  pending: (user: { id: number | string, username: string }, context: MfaDbContext) => Promise<{ secret: string, otpauth_url: string } | null>
}

/**
 * Options of `authenticatorProvider`.
 * @example
 * const options: AuthenticatorProviderOptions = { encryptionKey: [newKey, oldKey], issuer: 'My site' }
 */
export interface AuthenticatorProviderOptions {
  /**
   * The AES-256-GCM key of the secrets at rest: 32 bytes (a Buffer, 64 hex characters or
   * base64), or an array of them: the first encrypts, every one decrypts (key rotation).
   */
  encryptionKey: EncryptionKey | readonly EncryptionKey[]
  /** The name an authenticator app shows; default `'fastify-tablecrud'`. */
  issuer?: string
  /** How many recovery codes a user gets; default 8. */
  recoveryCodeCount?: number
  /** Steps either side of the current one whose codes are accepted (clock drift); default 0. */
  validWindow?: number
  /** The table of enrollments; default the built-in `auth_mfa_secret`. */
  secretTable?: Table
  /**
   * The value of `mfa_provider` that picks this provider (SPEC §5.4): default `'authenticator'`.
   * Two providers of one login need two names; the same name twice fails at registration.
   */
  name?: string
  /**
   * How many authenticator codes a user may try without a good one within `failureWindow`;
   * past it, a 429 (`TABLECRUD_ERR_MFA_LOCKED`) until the window ends. Default 5.
   */
  maxFailures?: number
  /** The window of `maxFailures`, from the first wrong code: seconds or a duration (`'15m'`). Default `'15m'`. */
  failureWindow?: number | string
}

const NAME = 'authenticatorProvider'

// A type, not an interface: the port's rows are records.
type Row = { id: number | string, secret: string, recovery_codes: string[], confirmed: boolean, revoked: boolean, last_used_step: number | null }

/** How many rows a statement of lib/sql/mfa.ts changed (each changes one at most). */
async function changed (db: DatabaseHandle, statement: Statement): Promise<number> {
  return (await runnerOf(db).run(statement)).rows.length
}

interface Lockout { maxFailures: number, failureWindow: number }
interface Settings extends Lockout { keys: MfaKey[], name: string, issuer: string, count: number, window: number, table: Table }

/** The lockout options (issue 27). */
function lockoutOptions (options: AuthenticatorProviderOptions): Lockout {
  const maxFailures = options.maxFailures ?? 5
  if (!Number.isInteger(maxFailures) || maxFailures < 1 || maxFailures > 1000) throw optionError(NAME, 'maxFailures', 'must be an integer from 1 to 1000')
  const failureWindow = parseDuration(options.failureWindow ?? '15m')
  if (failureWindow === undefined || failureWindow > 86400) throw optionError(NAME, 'failureWindow', 'must be a number of seconds or a duration such as "15m", at most a day')
  return { maxFailures, failureWindow }
}

function checkOptions (options: AuthenticatorProviderOptions): Settings {
  if (typeof options !== 'object' || options === null) throw optionError(NAME, 'encryptionKey', KEY_RULE)
  const keys = parseKeys(options.encryptionKey)
  if (keys === null) throw optionError(NAME, 'encryptionKey', KEY_RULE)
  const name = options.name ?? 'authenticator'
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(name)) throw optionError(NAME, 'name', 'must be 1 to 64 letters, digits, "_", "." or "-"')
  const issuer = options.issuer ?? 'fastify-tablecrud'
  if (typeof issuer !== 'string' || issuer === '' || issuer.includes(':')) throw optionError(NAME, 'issuer', 'must be a non-empty string without ":"')
  const count = options.recoveryCodeCount ?? 8
  if (!Number.isInteger(count) || count < 0 || count > 100) throw optionError(NAME, 'recoveryCodeCount', 'must be an integer from 0 to 100')
  const window = options.validWindow ?? 0
  if (!Number.isInteger(window) || window < 0 || window > 10) throw optionError(NAME, 'validWindow', 'must be an integer from 0 to 10')
  const table = options.secretTable ?? mfaSecretTable
  if (!isTable(table)) throw optionError(NAME, 'secretTable', 'must be a table made by defineTable')
  const missing = MFA_COLUMNS.filter((name) => !table.columnMap.has(name))
  if (missing.length > 0) throw optionError(NAME, 'secretTable', `has no ${missing.join(', ')} column`)
  if (!table.columnMap.get('user')!.unique) throw optionError(NAME, 'secretTable', 'must have a unique user column')
  return { keys, name, issuer, count, window, table, ...lockoutOptions(options) }
}

/**
 * Counts an attempt at an authenticator code before it is checked (a good one starts the count
 * again), or throws the 429 of a user whose attempts are used up in this window (issue 27).
 */
async function takeAttempt (db: DatabaseHandle, table: Table, id: number | string, { maxFailures, failureWindow }: Lockout): Promise<void> {
  if (await changed(db, sql.takeAttempt(table, id, maxFailures, failureWindow)) > 0) return
  throw mfaLocked((await runnerOf(db).run<{ seconds: number }>(sql.lockRemaining(table, id, failureWindow))).rows[0]!.seconds)
}

/** Where a user's enrollment stands. */
function statusOf (row: Row | null): MfaStatus {
  return row === null || row.revoked ? 'none' : row.confirmed ? 'enrolled' : 'pending'
}

/**
 * The authenticator-app MFA provider (SPEC §5.4), named `authenticator`: TOTP (RFC 6238, SHA-1,
 * 6 digits, 30 s) through otpauth, the secret encrypted at rest with AES-256-GCM, recovery
 * codes kept as salted hashes and usable once, a code never accepted twice. Throws at once
 * when the key is missing or not 32 bytes.
 * @example
 * const totp = authenticatorProvider({ encryptionKey: process.env.MFA_KEY! })
 * app.register(sessionLogin, { prefix: '/login', mfaProviders: [totp] })
 * app.register(mfaSetup, { prefix: '/mfa', provider: totp })
 */
export function authenticatorProvider (options: AuthenticatorProviderOptions): AuthenticatorProvider {
  const { keys, name, issuer, count, window, table, ...lockout } = checkOptions(options)

  const load = async (db: DatabaseHandle, userId: number | string): Promise<Row | null> => (await runnerOf(db).run<Row>(sql.enrollment(table, userId))).rows[0] ?? null
  const stepOf = (row: Row, userId: number | string, code: string): number | null => {
    const secret = decryptSecret(keys, row.secret, String(userId))
    return secret === null ? null : matchTotp(secret, code, window)
  }

  return Object.freeze({
    name,
    secretTable: table,
    async status (userId: number | string, { db }: MfaDbContext) {
      return statusOf(await load(db, userId))
    },
    async isEnrolled (userId: number | string, { db }: MfaDbContext) {
      return statusOf(await load(db, userId)) === 'enrolled'
    },
    async register (user: { id: number | string, username: string }, { db }: MfaDbContext) {
      const secret = newTotpSecret()
      const codes = Array.from({ length: count }, generateRecoveryCode)
      if (await changed(db, sql.upsertPending(table, user.id, encryptSecret(keys, secret, String(user.id)), codes.map((c) => hashRecoveryCode(c)))) === 0) return null
      const url = otpauthUrl(secret, issuer, user.username)
      return { qrcode_image: await qrCodeDataUrl(url), otpauth_url: url, secret, recovery_codes: codes }
    },
    async confirm (userId: number | string, code: string, { db }: MfaDbContext) {
      const row = await load(db, userId)
      const status = statusOf(row)
      if (status !== 'pending') return status
      const step = stepOf(row!, userId, code)
      if (step === null) return 'invalid'
      return await changed(db, sql.confirm(table, row!.id, step)) === 1 ? 'enabled' : 'none'
    },
    async pending (user: { id: number | string, username: string }, { db }: MfaDbContext) {
      const row = await load(db, user.id)
      const secret = statusOf(row) === 'pending' ? decryptSecret(keys, row!.secret, String(user.id)) : null
      return secret === null ? null : { secret, otpauth_url: otpauthUrl(secret, issuer, user.username) }
    },
    async revoke (userId: number | string, { db }: MfaDbContext) {
      return await changed(db, sql.revoke(table, userId)) === 1
    },
    async verifyCode (userId: number | string, code: string, { db }: MfaDbContext) {
      const row = await load(db, userId)
      if (statusOf(row) !== 'enrolled') return false
      // SPEC §5.4: a code longer than 10 characters is a recovery code.
      if (code.length > 10) {
        const hash = matchRecoveryCode(code, row!.recovery_codes)
        return hash !== null && await changed(db, sql.useRecoveryCode(table, row!.id, hash)) === 1
      }
      await takeAttempt(db, table, row!.id, lockout)
      const step = stepOf(row!, userId, code)
      return step !== null && await changed(db, sql.useStep(table, row!.id, step)) === 1
    },
    async codeUsed (userId: number | string, code: string, { db }: MfaDbContext) {
      const row = await load(db, userId)
      if (statusOf(row) !== 'enrolled' || code.length > 10 || row!.last_used_step === null) return false
      const step = stepOf(row!, userId, code)
      return step !== null && step <= row!.last_used_step
    }
  })
}
