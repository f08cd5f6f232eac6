import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { createTables } from '../../../lib/db/index.js'
import { sessionTable, tokenTable, userTable } from '../../../lib/table/auth-tables.js'
import { appPool, type TestDatabase } from '../../helpers/db.js'

/** Creates the built-in user, token and session tables once, through a short-lived app. */
export async function createSessionTables (db: TestDatabase): Promise<void> {
  const app = Fastify()
  await app.register(fastifyPostgres, appPool(db, 1))
  await app.ready()
  await createTables(app.pg, [userTable, tokenTable, sessionTable])
  await app.close()
}

/** The `name=value` of a Set-Cookie header, or of the first of several. */
export function cookieOf (header: unknown): string {
  const value = Array.isArray(header) ? header[0] : header
  return String(value).split(';')[0]!
}

/** The token of a Set-Cookie header for `name`. */
export function tokenOf (header: unknown, name = 'id'): string {
  const [key, value] = cookieOf(header).split('=')
  if (key !== name) throw new Error(`no ${name} cookie in ${String(header)}`)
  return value!
}

/** A urlencoded body from pairs (a key may repeat). */
export const form = (pairs: Array<[string, string]>): string => new URLSearchParams(pairs).toString()

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
export const JSON_TYPE = { 'content-type': 'application/json' }
