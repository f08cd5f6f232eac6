import { runnerOf, type DatabaseHandle } from '../db/port.js'
import { setupError } from '../errors.js'
import * as sql from '../sql/auth.js'
import type { Table } from '../table/index.js'
import { checkPassword, hashPassword, verifyNobody, verifyPassword } from './password.js'
import { AUTH_COLUMNS } from '../table/auth-tables.js'
import { generateToken } from './token.js'

/**
 * Who made a request, as validators and hooks see it in `request.user` (SPEC §3); typed so
 * with `import type {} from 'fastify-tablecrud/user'` (docs/auth.md).
 * @example
 * const superusersOnly = (crud: unknown, request: FastifyRequest) => {
 *   if (request.user?.superuser !== true) throw new HttpError(403, 'Superusers only')
 * }
 */
export interface AuthUser {
  /** The user's primary key; null for a token of `staticTokenProvider`. */
  id: number | string | null
  username: string | null
  active: boolean
  admin: boolean
  superuser: boolean
}

/**
 * The user row `createUser` resolves to: every column but the password.
 * @example const row: UserRow = await createUser(app.pg, { username: 'bob', password: 'bob-secret-1' })
 */
export interface UserRow {
  id: number
  username: string
  email: string | null
  first_name: string | null
  last_name: string | null
  active: boolean
  admin: boolean
  superuser: boolean
  last_login: string | null
}

/**
 * The fields of a new user for `createUser`; only `username` and `password` are required.
 * @example const user: NewUser = { username: 'ann', password: 'ann-secret-1', email: 'ann@example.com', admin: true }
 */
export interface NewUser {
  username: string
  password: string
  email?: string | null
  first_name?: string | null
  last_name?: string | null
  /** Default true: a user made by this helper can log in at once. */
  active?: boolean
  admin?: boolean
  superuser?: boolean
}

/**
 * Options of `createUser`.
 * @example await createUser(pool, { username: 'ann', password: 'ann-secret-1' }, { bcryptCost: 13 })
 */
export interface CreateUserOptions {
  /** bcrypt cost; default `TABLECRUD_BCRYPT_COST`, else 12. */
  bcryptCost?: number
}

/** A user row as lib/sql/auth.ts's lookups return it. */
type AuthRow = { id: number | string, username: string, active: boolean, admin: boolean, superuser: boolean }

/**
 * Creates a user of the built-in user table with a hashed password, and resolves to the row
 * without its password. The password must have 6 to 128 characters (a 400 error otherwise).
 * @example
 * const user = await createUser(app.pg, { username: 'bob', password: 'bob-secret-1', superuser: true })
 */
export async function createUser (db: DatabaseHandle, user: NewUser, options: CreateUserOptions = {}): Promise<UserRow> {
  if (typeof user.username !== 'string' || user.username === '') throw setupError('createUser: username must be a non-empty string')
  const hash = await hashPassword(user.password, options.bcryptCost)
  const { rows } = await runnerOf(db).run<UserRow & Record<string, unknown>>(sql.insertUser([user.username, hash, user.email ?? null, user.first_name ?? null,
    user.last_name ?? null, user.active ?? true, user.admin ?? false, user.superuser ?? false]))
  return rows[0]!
}

/**
 * Creates an API token for a user of the built-in tables and resolves to it. A user may have
 * several; token login hands out the newest.
 * @example const token = await createToken(app.pg, user.id)
 */
export async function createToken (db: DatabaseHandle, userId: number): Promise<string> {
  const token = generateToken()
  await runnerOf(db).run(sql.insertToken(token, userId))
  return token
}

/** The id of the built-in user table's user called `username`, or null. */
export async function userIdOf (db: DatabaseHandle, username: string): Promise<number | null> {
  const { rows } = await runnerOf(db).run<{ id: number }>(sql.userIdByName(username))
  return rows[0]?.id ?? null
}

/** Sets a user's password; resolves to false when there is no such user. */
export async function setPassword (db: DatabaseHandle, username: string, password: string, bcryptCost?: number): Promise<boolean> {
  const hash = await hashPassword(password, bcryptCost)
  const { rows } = await runnerOf(db).run(sql.updatePassword(username, hash))
  return rows.length === 1
}

/** Why `table` cannot serve as an `authTable`, or null when it can. */
export function authTableProblem (table: Table): string | null {
  const missing = AUTH_COLUMNS.filter((name) => !table.columnMap.has(name))
  return missing.length === 0 ? null : `the table ${table.name} has no ${missing.join(', ')} column${missing.length > 1 ? 's' : ''}`
}

const asAuthUser = (row: AuthRow): AuthUser =>
  ({ id: row.id, username: row.username, active: row.active, admin: row.admin, superuser: row.superuser })

/**
 * Checks a username and password against `table`. Resolves to the user when the password is
 * right and the user active, else null. A password is checked whether or not the user exists
 * (against a dummy hash when not), so the time taken does not tell which usernames exist.
 */
export async function checkLogin (db: DatabaseHandle, table: Table, username: string, password: string, bcryptCost?: number): Promise<AuthUser | null> {
  try {
    checkPassword(password)
  } catch {
    return null // no stored password can have this length
  }
  // PostgreSQL refuses text with NUL; no username can hold one.
  const { rows } = username.includes('\0')
    ? { rows: [] }
    : await runnerOf(db).run<AuthRow & { password: string }>(sql.userForLogin(table, username))
  const row = rows[0]
  if (row === undefined) {
    await verifyNobody(password, bcryptCost)
    return null
  }
  const ok = await verifyPassword(password, row.password)
  return ok && row.active === true ? asAuthUser(row) : null
}

/** Sets `last_login` to now (UTC) after a successful login. */
export async function recordLogin (db: DatabaseHandle, table: Table, id: number | string): Promise<void> {
  await runnerOf(db).run(sql.touchLastLogin(table, id))
}

/** The active user of `table` with this primary key, or null. */
export async function activeUserById (db: DatabaseHandle, table: Table, id: number | string): Promise<AuthUser | null> {
  const [row] = (await runnerOf(db).run<AuthRow>(sql.activeUser(table, id))).rows
  return row === undefined ? null : asAuthUser(row)
}

/** The newest token of a user of the built-in tables, or null. */
export async function tokenOf (db: DatabaseHandle, userId: number | string): Promise<string | null> {
  const { rows } = await runnerOf(db).run<{ token: string }>(sql.latestToken(userId))
  return rows[0]?.token ?? null
}

/** The active user a token of the built-in token table belongs to, with the stored token, or null. */
export async function userByToken (db: DatabaseHandle, token: string): Promise<{ user: AuthUser, token: string } | null> {
  const [row] = (await runnerOf(db).run<AuthRow & { token: string }>(sql.userOfToken(token))).rows
  return row === undefined ? null : { user: asAuthUser(row), token: row.token }
}
