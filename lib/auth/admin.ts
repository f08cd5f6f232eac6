import * as sql from '../sql/auth-admin.js'
import type { AuthDb } from './users.js'

/** The daily work of the command line on the built-in user and token tables. */

export interface ListedUser {
  id: number
  username: string
  email: string | null
  active: boolean
  admin: boolean
  superuser: boolean
  last_login: string | null
}

export interface ListedToken { id: number, username: string, token: string }

export async function listUsers (db: AuthDb): Promise<ListedUser[]> {
  const { text, values } = sql.listUsers()
  return (await db.query(text, [...values])).rows
}

/** Deletes a user and its tokens; resolves to its id and how many tokens went with it, or null. */
export async function deleteUser (db: AuthDb, username: string): Promise<{ id: number, tokens: number } | null> {
  const { text, values } = sql.deleteUser(username)
  const { rows } = await db.query(text, [...values])
  return rows[0] ?? null
}

export async function listTokens (db: AuthDb, username: string | null = null): Promise<ListedToken[]> {
  const { text, values } = sql.listTokens(username)
  return (await db.query(text, [...values])).rows
}

/** Revokes tokens: one by its value or id, or all of a user's; resolves to how many went. */
export async function revokeTokens (db: AuthDb, which: { token: string } | { id: number } | { username: string }): Promise<number> {
  const { text, values } = 'token' in which
    ? sql.deleteTokenByValue(which.token)
    : 'id' in which ? sql.deleteTokenById(which.id) : sql.deleteTokensOf(which.username)
  return (await db.query(text, [...values])).rows.length
}
