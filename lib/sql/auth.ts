import { tokenTable, userTable } from '../table/auth-tables.js'
import type { Table } from '../table/table.js'
import { quoteIdent as q } from './identifier.js'
import type { Statement } from '../table/statement.js'

/** The statements of the auth helpers and plugins, on the built-in tables or an `authTable`. */

const USER = q(userTable.name)
const TOKEN = q(tokenTable.name)
const ROW_COLUMNS = userTable.columns.filter((c) => !c.secret).map((c) => q(c.name)).join(', ')
const NEW_USER_COLUMNS = ['username', 'password', 'email', 'first_name', 'last_name', 'active', 'admin', 'superuser'] as const

const statement = (text: string, values: unknown[]): Statement => Object.freeze({ text, values })

/** `id`, `username`, `active`, `admin`, `superuser` of a user table, the key named `id`. */
const authColumns = (table: Table, alias = ''): string =>
  [`${alias}${q(table.primaryKey.name)} AS ${q('id')}`, ...['username', 'active', 'admin', 'superuser'].map((c) => `${alias}${q(c)}`)].join(', ')

/** A new user of the built-in table, returned without its password. */
export function insertUser (values: readonly unknown[]): Statement {
  return statement(
    `INSERT INTO ${USER} (${NEW_USER_COLUMNS.map(q).join(', ')}) VALUES (${NEW_USER_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING ${ROW_COLUMNS}`,
    [...values])
}

export function insertToken (token: string, userId: number): Statement {
  return statement(`INSERT INTO ${TOKEN} (${q('token')}, ${q('user')}) VALUES ($1, $2)`, [token, userId])
}

export function userIdByName (username: string): Statement {
  return statement(`SELECT ${q('id')} FROM ${USER} WHERE ${q('username')} = $1`, [username])
}

export function updatePassword (username: string, hash: string): Statement {
  return statement(`UPDATE ${USER} SET ${q('password')} = $1 WHERE ${q('username')} = $2 RETURNING ${q('id')}`, [hash, username])
}

/** A user's auth columns and password hash, for a login. */
export function userForLogin (table: Table, username: string): Statement {
  return statement(`SELECT ${authColumns(table)}, ${q('password')} FROM ${q(table.name)} WHERE ${q('username')} = $1`, [username])
}

export function touchLastLogin (table: Table, id: number | string): Statement {
  return statement(`UPDATE ${q(table.name)} SET ${q('last_login')} = (now() AT TIME ZONE 'utc') WHERE ${q(table.primaryKey.name)} = $1`, [id])
}

export function activeUser (table: Table, id: number | string): Statement {
  return statement(`SELECT ${authColumns(table)} FROM ${q(table.name)} WHERE ${q(table.primaryKey.name)} = $1 AND ${q('active')}`, [id])
}

/** A user's newest token. */
export function latestToken (userId: number | string): Statement {
  return statement(`SELECT ${q('token')} FROM ${TOKEN} WHERE ${q('user')} = $1 ORDER BY ${q('id')} DESC LIMIT 1`, [userId])
}

/** The active user a token belongs to, with the stored token. */
export function userOfToken (token: string): Statement {
  return statement(
    `SELECT ${authColumns(userTable, 'u.')}, t.${q('token')} FROM ${TOKEN} t JOIN ${USER} u ON u.${q('id')} = t.${q('user')} ` +
    `WHERE t.${q('token')} = $1 AND u.${q('active')}`, [token])
}
