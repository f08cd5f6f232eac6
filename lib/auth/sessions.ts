import { createHash } from 'node:crypto'
import { runnerOf, type DatabaseHandle } from '../db/port.js'
import { setupError } from '../errors.js'
import * as sql from '../sql/session.js'
import { sessionTable, SESSION_COLUMNS } from '../table/auth-tables.js'
import type { Table } from '../table/index.js'
import { parseDuration } from './duration.js'
import { generateToken } from './token.js'
import type { AuthUser } from './users.js'

/** Default lifetimes of a session (SPEC §5.1): an hour, and a week at most. */
export const SESSION_EXPIRY = 3600
export const MAX_SESSION_EXPIRY = 7 * 86400

/**
 * Options of `createSession`: lifetimes in seconds or durations such as `"1h"`, `"7d"`.
 * @example await createSession(app.pg, user.id, { expiry: '30m', maxExpiry: '1d' })
 */
export interface SessionOptions {
  /** How long the session lasts unless extended; default one hour (never past `maxExpiry`). */
  expiry?: number | string
  /** When the session ends whatever happens; default seven days. */
  maxExpiry?: number | string
}

/**
 * A new session: the token for the cookie (shown once, never stored) and its expiry dates.
 * @example const { token, expiryDate } = await createSession(app.pg, user.id)
 */
export interface NewSession {
  token: string
  expiryDate: Date
  maxExpiryDate: Date
}

/** The hex SHA-256 of a session token: what the session table stores. */
export function hashSessionToken (token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

/** A token as `generateToken` makes them (32 bytes, base64url): anything else cannot match a session, so is not looked up. */
export function isSessionToken (value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value)
}

/** Why `table` cannot serve as a `sessionTable`, or null when it can. */
export function sessionTableProblem (table: Table): string | null {
  const missing = SESSION_COLUMNS.filter((name) => !table.columnMap.has(name))
  return missing.length === 0 ? null : `the table ${table.name} has no ${missing.join(', ')} column${missing.length > 1 ? 's' : ''}`
}

function seconds (option: string, value: unknown, fallback: number): number {
  const parsed = parseDuration(value ?? fallback)
  if (parsed === undefined) throw setupError(`createSession: ${option} must be a positive number of seconds or a duration such as "1h", "7d"`)
  return parsed
}

/** Starts a session of `userId` in `table` (lifetimes in seconds). */
export async function startSession (db: DatabaseHandle, table: Table, userId: number | string, expiry: number, maxExpiry: number): Promise<NewSession> {
  const token = generateToken()
  const { rows } = await runnerOf(db).run<{ expiry: number, max_expiry: number }>(sql.insertSession(table, hashSessionToken(token), userId, expiry, maxExpiry))
  const row = rows[0]!
  return { token, expiryDate: new Date(row.expiry * 1000), maxExpiryDate: new Date(row.max_expiry * 1000) }
}

/**
 * Starts a session for a user of the built-in tables and resolves to its token (for the
 * cookie) and expiry dates. Only the token's SHA-256 is stored.
 * @example
 * const { token } = await createSession(app.pg, user.id, { expiry: '1h', maxExpiry: '7d' })
 * await app.inject({ url: '/me/', cookies: { id: token } })
 */
export async function createSession (db: DatabaseHandle, userId: number, options: SessionOptions = {}): Promise<NewSession> {
  return await startSession(db, sessionTable, userId,
    seconds('expiry', options.expiry, SESSION_EXPIRY), seconds('maxExpiry', options.maxExpiry, MAX_SESSION_EXPIRY))
}

/**
 * Ends the session of a token (nothing happens for an unknown token).
 * @example await deleteSession(app.pg, request.cookies.id!)
 */
export async function deleteSession (db: DatabaseHandle, token: string, table: Table = sessionTable): Promise<void> {
  if (typeof token === 'string' && isSessionToken(token)) await runnerOf(db).run(sql.deleteSessionByHash(table, hashSessionToken(token)))
}

/**
 * Deletes every session past its expiry or maximum expiry; resolves to how many. Run it now
 * and then (the CLI's `session clean` does): expired sessions are refused anyway, this keeps
 * the table small.
 * @example const deleted = await deleteExpiredSessions(app.pg)
 */
export async function deleteExpiredSessions (db: DatabaseHandle, table: Table = sessionTable): Promise<number> {
  const { rows } = await runnerOf(db).run<{ count: number }>(sql.deleteExpired(table))
  return rows[0]!.count
}

/** Ends every session of a user (after a password change). */
export async function deleteUserSessions (db: DatabaseHandle, table: Table, userId: number | string): Promise<void> {
  await runnerOf(db).run(sql.deleteUserSessions(table, userId))
}

/**
 * The user of a live session: `'none'` when no session of `sessions` has this token or it has
 * expired, `'gone'` when its user is not in `users`. With `increase` (seconds), a session with
 * less than that left is extended to now + `increase`, never past its maximum expiry.
 */
export async function sessionUser (db: DatabaseHandle, sessions: Table, users: Table, token: string, increase: number | null): Promise<AuthUser | 'none' | 'gone'> {
  if (!isSessionToken(token)) return 'none'
  const runner = runnerOf(db)
  const [row] = (await runner.run<LiveSession>(sql.liveSession(sessions, users, hashSessionToken(token), increase))).rows
  if (row === undefined) return 'none'
  if (row.extend) await runner.run(sql.extendSession(sessions, row.session_id, increase!))
  if (row.id === null) return 'gone'
  return { id: row.id, username: row.username, active: row.active, admin: row.admin, superuser: row.superuser }
}

/** A row of `sql.liveSession`: the user's columns are null when the user is gone. */
type LiveSession = { session_id: number | string, extend: boolean } & (
  | { id: number | string, username: string, active: boolean, admin: boolean, superuser: boolean }
  | { id: null, username: null, active: null, admin: null, superuser: null })
