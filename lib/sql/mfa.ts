import type { Table } from '../table/table.js'
import { quoteIdent as q } from './identifier.js'
import type { Statement } from '../table/statement.js'

/** The statements of `authenticatorProvider`, on `auth_mfa_secret` or a table like it. */

const statement = (text: string, values: unknown[]): Statement => Object.freeze({ text, values })
const NOW = "(now() AT TIME ZONE 'utc')"
const USER = q('user')
const ACTIVE = `${q('confirmed_at')} IS NOT NULL AND ${q('revoked_at')} IS NULL`

/**
 * A new pending enrollment, replacing the user's pending or revoked one in the same statement;
 * no row comes back when the user is enrolled (confirmed, not revoked), which nothing replaces.
 */
export function upsertPending (table: Table, userId: number | string, secret: string, codes: readonly string[]): Statement {
  const t = q(table.name)
  const reset = ['confirmed_at', 'revoked_at', 'last_used_at', 'last_used_step'].map((c) => `${q(c)} = NULL`).join(', ')
  return statement(
    `INSERT INTO ${t} AS t (${USER}, ${q('secret')}, ${q('recovery_codes')}, ${q('created_at')}) VALUES ($1, $2, $3, ${NOW}) ` +
    `ON CONFLICT (${USER}) DO UPDATE SET ${q('secret')} = EXCLUDED.${q('secret')}, ${q('recovery_codes')} = EXCLUDED.${q('recovery_codes')}, ` +
    `${q('created_at')} = EXCLUDED.${q('created_at')}, ${reset} ` +
    `WHERE t.${q('confirmed_at')} IS NULL OR t.${q('revoked_at')} IS NOT NULL RETURNING ${q(table.primaryKey.name)} AS ${q('id')}`,
    [userId, secret, [...codes]])
}

/** A user's enrollment row, whatever its state. */
export function enrollment (table: Table, userId: number | string): Statement {
  return statement(
    `SELECT ${q(table.primaryKey.name)} AS ${q('id')}, ${q('secret')}, ${q('recovery_codes')}, ` +
    `${q('confirmed_at')} IS NOT NULL AS ${q('confirmed')}, ${q('revoked_at')} IS NOT NULL AS ${q('revoked')}, ${q('last_used_step')} ` +
    `FROM ${q(table.name)} WHERE ${USER} = $1`, [userId])
}

/** Confirms a pending enrollment; the confirming code's step counts as used. */
export function confirm (table: Table, id: number | string, step: number): Statement {
  return statement(
    `UPDATE ${q(table.name)} SET ${q('confirmed_at')} = ${NOW}, ${q('last_used_at')} = ${NOW}, ${q('last_used_step')} = $2 ` +
    `WHERE ${q(table.primaryKey.name)} = $1 AND ${q('confirmed_at')} IS NULL AND ${q('revoked_at')} IS NULL RETURNING ${q(table.primaryKey.name)}`,
    [id, step])
}

/**
 * Takes a time step for a login, only when it is later than the last one taken: the check and
 * the write are one statement, so two logins racing with one code cannot both pass.
 */
export function useStep (table: Table, id: number | string, step: number): Statement {
  return statement(
    `UPDATE ${q(table.name)} SET ${q('last_used_step')} = $2, ${q('last_used_at')} = ${NOW}, ${RESET} ` +
    `WHERE ${q(table.primaryKey.name)} = $1 AND ${ACTIVE} AND (${q('last_used_step')} IS NULL OR ${q('last_used_step')} < $2) ` +
    `RETURNING ${q(table.primaryKey.name)}`, [id, step])
}

/** What a good code does besides: the count of attempts starts again. */
const RESET = `${q('failed_count')} = 0, ${q('failed_since')} = NULL`

/** Whether the counting window of an enrollment row has passed ($3: its length in seconds). */
const WINDOW_OVER = `(${q('failed_since')} IS NULL OR ${q('failed_since')} <= ${NOW} - $3::integer * interval '1 second')`

/**
 * Takes one of the `$2` attempts at an authenticator code that a user has per window of `$3`
 * seconds, counted from the first attempt since the last good code: a new window when the last
 * one has passed. No row comes back when the attempts are used up (locked). Counting before the
 * code is checked, in one statement, lets no burst of concurrent guesses past the limit.
 */
export function takeAttempt (table: Table, id: number | string, max: number, windowSeconds: number): Statement {
  return statement(
    `UPDATE ${q(table.name)} SET ${q('failed_count')} = CASE WHEN ${WINDOW_OVER} THEN 1 ELSE ${q('failed_count')} + 1 END, ` +
    `${q('failed_since')} = CASE WHEN ${WINDOW_OVER} THEN ${NOW} ELSE ${q('failed_since')} END ` +
    `WHERE ${q(table.primaryKey.name)} = $1 AND (${WINDOW_OVER} OR ${q('failed_count')} < $2) RETURNING ${q(table.primaryKey.name)}`,
    [id, max, windowSeconds])
}

/** Whole seconds until a locked enrollment's window ends (at least 1; the whole window should the row be gone). */
export function lockRemaining (table: Table, id: number | string, windowSeconds: number): Statement {
  return statement(
    `SELECT coalesce((SELECT greatest(1, ceil(extract(epoch FROM ${q('failed_since')} + $2::integer * interval '1 second' - ${NOW}))) ` +
    `FROM ${q(table.name)} WHERE ${q(table.primaryKey.name)} = $1), $2)::integer AS ${q('seconds')}`, [id, windowSeconds])
}

/** Spends a recovery code (its stored hash), only when it is still there: once, even racing. */
export function useRecoveryCode (table: Table, id: number | string, hash: string): Statement {
  return statement(
    `UPDATE ${q(table.name)} SET ${q('recovery_codes')} = array_remove(${q('recovery_codes')}, $2::text), ${q('last_used_at')} = ${NOW}, ${RESET} ` +
    `WHERE ${q(table.primaryKey.name)} = $1 AND ${ACTIVE} AND $2::text = ANY(${q('recovery_codes')}) RETURNING ${q(table.primaryKey.name)}`,
    [id, hash])
}

/** Revokes a user's confirmed enrollment; no row when there is none. */
export function revoke (table: Table, userId: number | string): Statement {
  return statement(
    `UPDATE ${q(table.name)} SET ${q('revoked_at')} = ${NOW} WHERE ${USER} = $1 AND ${ACTIVE} RETURNING ${q(table.primaryKey.name)}`,
    [userId])
}
