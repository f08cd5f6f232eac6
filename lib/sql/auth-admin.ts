import { tokenTable, userTable } from '../table/auth-tables.js'
import { quoteIdent as q } from './identifier.js'
import type { Statement } from '../table/statement.js'

/** The statements of the command line's daily work on the built-in user and token tables. */

const USER = q(userTable.name)
const TOKEN = q(tokenTable.name)
const LISTED_USER_COLUMNS = ['id', 'username', 'email', 'active', 'admin', 'superuser', 'last_login'] as const

const statement = (text: string, values: unknown[] = []): Statement => Object.freeze({ text, values })

export function listUsers (): Statement {
  return statement(`SELECT ${LISTED_USER_COLUMNS.map(q).join(', ')} FROM ${USER} ORDER BY ${q('id')}`)
}

/** Deletes a user (its tokens go by the cascade) and answers its id and how many tokens it had. */
export function deleteUser (username: string): Statement {
  return statement(
    `WITH gone AS (DELETE FROM ${USER} WHERE ${q('username')} = $1 RETURNING ${q('id')}) ` +
    `SELECT gone.${q('id')}, (SELECT count(*)::int FROM ${TOKEN} t WHERE t.${q('user')} = gone.${q('id')}) AS ${q('tokens')} FROM gone`,
    [username])
}

/** Every token, or one user's, with its owner's name, oldest first. */
export function listTokens (username: string | null): Statement {
  return statement(
    `SELECT t.${q('id')}, u.${q('username')}, t.${q('token')} FROM ${TOKEN} t JOIN ${USER} u ON u.${q('id')} = t.${q('user')} ` +
    `WHERE $1::text IS NULL OR u.${q('username')} = $1 ORDER BY t.${q('id')}`,
    [username])
}

export function deleteTokenByValue (token: string): Statement {
  return statement(`DELETE FROM ${TOKEN} WHERE ${q('token')} = $1 RETURNING ${q('id')}`, [token])
}

export function deleteTokenById (id: number): Statement {
  return statement(`DELETE FROM ${TOKEN} WHERE ${q('id')} = $1 RETURNING ${q('id')}`, [id])
}

export function deleteTokensOf (username: string): Statement {
  return statement(
    `DELETE FROM ${TOKEN} t USING ${USER} u WHERE u.${q('id')} = t.${q('user')} AND u.${q('username')} = $1 RETURNING t.${q('id')}`,
    [username])
}
