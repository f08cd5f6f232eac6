import type { Table } from '../table/table.js'
import { quoteIdent as q } from './identifier.js'
import type { Statement } from '../table/statement.js'

/** The statements of `register` and `changePassword`, on the built-in tables or an `authTable`. */

const statement = (text: string, values: unknown[]): Statement => Object.freeze({ text, values })

/** An arbitrary constant: the advisory-lock namespace of registrations, apart from any other use. */
const REGISTER_LOCK = 7303

/**
 * Serialises registrations of one email, case folded, until the transaction ends: the unique
 * constraint on `email` is case-sensitive, so two racing sign-ups as `Ann@x.org` and
 * `ann@x.org` would both pass a check done without it.
 */
export function lockEmail (email: string): Statement {
  return statement(`SELECT pg_advisory_xact_lock(${REGISTER_LOCK}, hashtext(lower($1)))`, [email])
}

/**
 * A new user, only when no user has the username or the email (case-insensitive); no row
 * comes back otherwise. `columns` are checked names of the table; the first three are
 * username, email and password.
 */
export function insertNewUser (table: Table, columns: readonly string[], values: readonly unknown[]): Statement {
  const t = q(table.name)
  const params = columns.map((_, i) => `$${i + 1}`)
  const n = columns.length
  // The check takes its own parameters: one parameter typed both by a column and by lower() is refused.
  return statement(
    `INSERT INTO ${t} (${columns.map(q).join(', ')}) SELECT ${params.join(', ')} ` +
    `WHERE NOT EXISTS (SELECT 1 FROM ${t} WHERE ${q('username')} = $${n + 1} OR lower(${q('email')}) = lower($${n + 2})) ` +
    `RETURNING ${q(table.primaryKey.name)} AS ${q('id')}, ${q('username')}`,
    [...values, values[0], values[1]])
}

/** A user's password hash. */
export function passwordOf (table: Table, id: number | string): Statement {
  return statement(`SELECT ${q('password')} FROM ${q(table.name)} WHERE ${q(table.primaryKey.name)} = $1`, [id])
}

/**
 * Replaces a user's password hash and deletes every session of the user, in one statement
 * (so atomically): no session made with the old password outlives the change.
 */
export function replacePassword (table: Table, sessions: Table, id: number | string, hash: string): Statement {
  const key = q(table.primaryKey.name)
  return statement(
    `WITH changed AS (UPDATE ${q(table.name)} SET ${q('password')} = $2 WHERE ${key} = $1 RETURNING ${key} AS id), ` +
    `ended AS (DELETE FROM ${q(sessions.name)} WHERE ${q('user')} IN (SELECT id FROM changed) RETURNING 1) ` +
    'SELECT (SELECT count(*) FROM changed)::int AS changed, (SELECT count(*) FROM ended)::int AS ended',
    [id, hash])
}
