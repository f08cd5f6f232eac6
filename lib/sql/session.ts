import type { Table } from '../table/table.js'
import { quoteIdent as q } from './identifier.js'
import type { Statement } from '../table/statement.js'

/**
 * The statements of sessions (SPEC §5.1), on the built-in `auth_session` or a `sessionTable`
 * with its columns. Every time is the database's, in UTC, like every timestamp this library
 * writes: the application's clock never decides whether a session has expired.
 */

const NOW = "(now() AT TIME ZONE 'utc')"
const seconds = (placeholder: string): string => `make_interval(secs => ${placeholder})`
const epoch = (column: string): string => `extract(epoch FROM ${q(column)})::float8`

const statement = (text: string, values: unknown[]): Statement => Object.freeze({ text, values })

/** A new session; its expiry is capped by its maximum expiry. Returns both as epoch seconds. */
export function insertSession (sessions: Table, tokenHash: string, userId: number | string, expiry: number, maxExpiry: number): Statement {
  return statement(
    `INSERT INTO ${q(sessions.name)} (${q('token_hash')}, ${q('user')}, ${q('expiry_date')}, ${q('max_expiry_date')}) ` +
    `VALUES ($1, $2, ${NOW} + ${seconds('LEAST($3::float8, $4::float8)')}, ${NOW} + ${seconds('$4::float8')}) ` +
    `RETURNING ${epoch('expiry_date')} AS ${q('expiry')}, ${epoch('max_expiry_date')} AS ${q('max_expiry')}`,
    [tokenHash, userId, expiry, maxExpiry])
}

export function deleteSessionByHash (sessions: Table, tokenHash: string): Statement {
  return statement(`DELETE FROM ${q(sessions.name)} WHERE ${q('token_hash')} = $1`, [tokenHash])
}

export function deleteUserSessions (sessions: Table, userId: number | string): Statement {
  return statement(`DELETE FROM ${q(sessions.name)} WHERE ${q('user')} = $1`, [userId])
}

/** Deletes the sessions past either expiry; one row holding how many. */
export function deleteExpired (sessions: Table): Statement {
  return statement(
    `WITH ${q('gone')} AS (DELETE FROM ${q(sessions.name)} WHERE ${q('expiry_date')} <= ${NOW} OR ${q('max_expiry_date')} <= ${NOW} RETURNING 1) ` +
    `SELECT count(*)::int AS ${q('count')} FROM ${q('gone')}`, [])
}

/**
 * The live session of a token hash with its user's auth columns (null when the user is gone),
 * and whether less than `increase` seconds are left before its expiry (false without one).
 */
export function liveSession (sessions: Table, users: Table, tokenHash: string, increase: number | null): Statement {
  const u = (column: string): string => `u.${q(column)}`
  return statement(
    `SELECT s.${q(sessions.primaryKey.name)} AS ${q('session_id')}, ` +
    `COALESCE(s.${q('expiry_date')} < ${NOW} + ${seconds('$2::float8')}, false) AS ${q('extend')}, ` +
    `${u(users.primaryKey.name)} AS ${q('id')}, ${['username', 'active', 'admin', 'superuser'].map(u).join(', ')} ` +
    `FROM ${q(sessions.name)} s LEFT JOIN ${q(users.name)} u ON ${u(users.primaryKey.name)} = s.${q('user')} ` +
    `WHERE s.${q('token_hash')} = $1 AND s.${q('expiry_date')} > ${NOW} AND s.${q('max_expiry_date')} > ${NOW}`,
    [tokenHash, increase])
}

/** Slides a session's expiry to now + `increase` seconds, never past its maximum. */
export function extendSession (sessions: Table, sessionId: number | string, increase: number): Statement {
  return statement(
    `UPDATE ${q(sessions.name)} SET ${q('expiry_date')} = LEAST(${NOW} + ${seconds('$2::float8')}, ${q('max_expiry_date')}) ` +
    `WHERE ${q(sessions.primaryKey.name)} = $1`, [sessionId, increase])
}
