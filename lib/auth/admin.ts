import { runnerOf, type DatabaseHandle } from '../db/port.js'
import * as sql from '../sql/auth-admin.js'

/** The daily work of the command line on the built-in user and token tables. */

export type ListedUser = {
  id: number
  username: string
  email: string | null
  active: boolean
  admin: boolean
  superuser: boolean
  last_login: string | null
}

export type ListedToken = { id: number, username: string, token: string }

export async function listUsers (db: DatabaseHandle): Promise<ListedUser[]> {
  return (await runnerOf(db).run<ListedUser>(sql.listUsers())).rows
}

/** Deletes a user and its tokens; resolves to its id and how many tokens went with it, or null. */
export async function deleteUser (db: DatabaseHandle, username: string): Promise<{ id: number, tokens: number } | null> {
  return (await runnerOf(db).run<{ id: number, tokens: number }>(sql.deleteUser(username))).rows[0] ?? null
}

export async function listTokens (db: DatabaseHandle, username: string | null = null): Promise<ListedToken[]> {
  return (await runnerOf(db).run<ListedToken>(sql.listTokens(username))).rows
}

/** Revokes tokens: one by its value or id, or all of a user's; resolves to how many went. */
export async function revokeTokens (db: DatabaseHandle, which: { token: string } | { id: number } | { username: string }): Promise<number> {
  const statement = 'token' in which
    ? sql.deleteTokenByValue(which.token)
    : 'id' in which ? sql.deleteTokenById(which.id) : sql.deleteTokensOf(which.username)
  return (await runnerOf(db).run(statement)).rows.length
}
