import {
  errorCode, fromDatabaseError, TABLECRUD_ERR_FORM_INVALID, TABLECRUD_ERR_FORM_MISSING_FIELDS
} from '../errors.js'
import { runnerOf, type Database, type DatabaseHandle } from '../db/port.js'
import * as sql from '../sql/accounts.js'
import type { Table } from '../table/index.js'
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, verifyPassword } from './password.js'

/** The checks of `register` and `changePassword` (SPEC §5.2), in the SPEC's order. */

export interface Registration { username: string, email: string, password: string }
export interface PasswordChange { current: string, next: string }

/** The values of `names` in a form body, or null when one is missing, empty or not a string. */
function stringFields (body: unknown, names: readonly string[]): string[] | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null
  const fields = body as Record<string, unknown>
  const values: string[] = []
  for (const name of names) {
    const value = Object.hasOwn(fields, name) ? fields[name] : undefined
    if (typeof value !== 'string' || value === '') return null
    values.push(value)
  }
  return values
}

const invalid = (message: string): Error => new TABLECRUD_ERR_FORM_INVALID(message)

/** Email addresses longer than this cannot be delivered (RFC 5321's path limit). */
const EMAIL_MAX_LENGTH = 254
/** `local@domain.tld`: no spaces or control characters, one `@`, a dot in the domain. */
const EMAIL = /^[^\s@\p{Cc}]+@[^\s@.\p{Cc}]+(?:\.[^\s@.\p{Cc}]+)+$/u
const CONTROL = /\p{Cc}/u

/** The new password's length and confirmation, as register and change password check them. */
function checkNewPassword (password: string, confirmation: string, minLength: number): void {
  const length = [...password].length
  if (length < minLength) throw invalid(`Password must be at least ${minLength} characters long.`)
  if (length > PASSWORD_MAX_LENGTH) throw invalid(`Password must be at most ${PASSWORD_MAX_LENGTH} characters long.`)
  if (password !== confirmation) throw invalid('Passwords do not match.')
}

/**
 * A sign-up form, checked: missing fields, then the username (not over `usernameMax`
 * characters, no control characters: rules the SPEC leaves open), the email, the password's
 * length and its confirmation. Throws the 422 to answer.
 */
export function checkRegistration (body: unknown, minLength: number, usernameMax: number | null): Registration {
  const fields = stringFields(body, ['username', 'email', 'password', 'confirm_password'])
  if (fields === null) throw new TABLECRUD_ERR_FORM_MISSING_FIELDS()
  const [username, email, password, confirmation] = fields as [string, string, string, string]
  if (usernameMax !== null && [...username].length > usernameMax) throw invalid(`Username must be at most ${usernameMax} characters long.`)
  if (CONTROL.test(username)) throw invalid('Username must not contain control characters.')
  if (email.length > EMAIL_MAX_LENGTH || !EMAIL.test(email)) throw invalid('Invalid email address.')
  checkNewPassword(password, confirmation, minLength)
  return { username, email, password }
}

/** A change-password form, checked up to the current password (which needs the database). */
export function checkPasswordChange (body: unknown, minLength: number): PasswordChange {
  const fields = stringFields(body, ['current_password', 'new_password', 'confirm_new_password'])
  if (fields === null) throw new TABLECRUD_ERR_FORM_MISSING_FIELDS()
  const [current, next, confirmation] = fields as [string, string, string]
  checkNewPassword(next, confirmation, minLength)
  return { current, next }
}

/**
 * What registration runs its short transaction through: the port's `transaction`, which rolls
 * back on any error and drops a connection whose ROLLBACK fails.
 */
export type TransactionDb = Pick<Database, 'transaction'>

type NewUserRow = { id: number | string, username: string }

const DUPLICATE = 'User with email or username already exists.'

/**
 * Creates the user of a checked registration, with `defaults` (column name to value) for the
 * other columns. Resolves to `{ id, username }`; a taken username or email (case-insensitive,
 * racing sign-ups included) is the 422 `User with email or username already exists.`
 */
export async function createRegisteredUser (
  db: TransactionDb, table: Table, registration: Registration, defaults: ReadonlyMap<string, unknown>, cost: number
): Promise<{ id: number | string, username: string }> {
  const hash = await hashPassword(registration.password, cost)
  const columns = ['username', 'email', 'password', ...defaults.keys()]
  const values = [registration.username, registration.email, hash, ...defaults.values()]
  let rows: NewUserRow[]
  try {
    rows = await db.transaction(async (tx) => {
      await tx.run(sql.lockEmail(registration.email))
      return (await tx.run<NewUserRow>(sql.insertNewUser(table, columns, values))).rows
    })
  } catch (error) {
    // The unique constraint on username or email caught a race the check could not see.
    if (errorCode(error) === '23505') throw invalid(DUPLICATE)
    throw fromDatabaseError(error) ?? error
  }
  if (rows.length === 0) throw invalid(DUPLICATE)
  return rows[0]!
}

/**
 * Whether `password` is the password of the user `userId` of `table`. A password of a length
 * no stored one can have is refused without asking bcrypt.
 */
export async function checkUserPassword (db: DatabaseHandle, table: Table, userId: number | string, password: unknown): Promise<boolean> {
  if (typeof password !== 'string') return false
  const length = [...password].length
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) return false
  const { rows } = await runnerOf(db).run<{ password: string }>(sql.passwordOf(table, userId))
  return rows.length === 1 && await verifyPassword(password, rows[0]!.password)
}

/**
 * Changes a user's password after checking the current one (a 422 `Incorrect password.` when
 * wrong), and ends every session of the user in the same statement.
 */
export async function changeUserPassword (
  db: DatabaseHandle, table: Table, sessions: Table, userId: number | string, change: PasswordChange, cost: number
): Promise<void> {
  if (!await checkUserPassword(db, table, userId, change.current)) throw invalid('Incorrect password.')
  await runnerOf(db).run(sql.replacePassword(table, sessions, userId, await hashPassword(change.next, cost)))
}
