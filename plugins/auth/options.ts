import type { FastifyInstance } from 'fastify'
import type {} from '@fastify/postgres'
import { optionError } from '../../lib/errors.js'
import { COST_RULE, isCost, resolveCost } from '../../lib/auth/password.js'
import { parseDuration } from '../../lib/auth/duration.js'
import { excludedPathsProblem, pathMatcher } from '../../lib/auth/paths.js'
import { sessionTableProblem } from '../../lib/auth/sessions.js'
import { authTableProblem } from '../../lib/auth/users.js'
import type { Database } from '../../lib/db/port.js'
import { isTable, type Table } from '../../lib/table/index.js'
import type { PageLink } from '../../lib/html/index.js'
import { databaseHelper, type PoolOptions } from '../database.js'

/** The option checks the auth plugins share; each throws `optionError` naming the plugin and option. */

/**
 * The database helper of plugins/database.ts over the plugin's pool (its `pg` or `pool`
 * option, else `fastify.pg`), checked at registration (null when nothing will query and none
 * is there). lib/auth's reads and writes run through it, under the same connection policy as
 * TableCRUD's.
 */
export function databaseOf (fastify: FastifyInstance, plugin: string, options: PoolOptions, needed = true): Database | null {
  const chosen = options.pg !== undefined || options.pool !== undefined
  return needed || chosen || fastify.hasDecorator('pg') ? databaseHelper(fastify, plugin, { pg: options.pg, pool: options.pool }) : null
}

/** The `bcryptCost` option, checked; when absent, `TABLECRUD_BCRYPT_COST` or 12. */
export function costOption (plugin: string, cost: unknown): number {
  if (cost !== undefined && !isCost(cost)) throw optionError(plugin, 'bcryptCost', COST_RULE)
  return resolveCost(cost as number | undefined)
}

/** Whether `secret` can sign HS256 tokens: a non-empty string or Buffer. */
export function secretProblem (secret: unknown): string | null {
  const ok = (typeof secret === 'string' || Buffer.isBuffer(secret)) && secret.length > 0
  return ok ? null : 'is required: a non-empty string or Buffer'
}

/** The `authTable` option, checked: a table with the columns of the built-in user table. */
export function tableOption (plugin: string, table: unknown): Table {
  if (!isTable(table)) throw optionError(plugin, 'authTable', 'must be a table made by defineTable')
  const problem = authTableProblem(table)
  if (problem !== null) throw optionError(plugin, 'authTable', `cannot hold users: ${problem}`)
  return table
}

/** A duration option (seconds, or `"15m"`, `"12h"`, `"7d"`), checked, in seconds. */
export function durationOption (plugin: string, option: string, value: unknown): number {
  const seconds = parseDuration(value)
  if (seconds === undefined) throw optionError(plugin, option, 'must be a positive number of seconds or a duration such as "15m", "12h", "7d"')
  return seconds
}

/** A boolean option, checked, with its default. */
export function booleanOption (plugin: string, option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') throw optionError(plugin, option, 'must be true or false')
  return value
}

/** The `excludedPaths` option (SPEC §3.1), checked, as a matcher of request URLs. */
export function excludedPathsOption (plugin: string, value: unknown): (url: string) => boolean {
  const problem = excludedPathsProblem(value ?? [])
  if (problem !== null) throw optionError(plugin, 'excludedPaths', problem)
  return pathMatcher((value ?? []) as string[])
}

/** The `sessionTable` option, checked: a table with the columns of the built-in session table. */
export function sessionTableOption (plugin: string, table: unknown): Table {
  if (!isTable(table)) throw optionError(plugin, 'sessionTable', 'must be a table made by defineTable')
  const problem = sessionTableProblem(table)
  if (problem !== null) throw optionError(plugin, 'sessionTable', `cannot hold sessions: ${problem}`)
  return table
}

/** A cookie name as RFC 6265 allows it (a token). */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

export function cookieNameOption (plugin: string, value: unknown): string {
  if (value === undefined) return 'id'
  if (typeof value !== 'string' || !COOKIE_NAME.test(value)) throw optionError(plugin, 'cookieName', 'must be a cookie name: letters, digits and !#$%&\'*+-.^_`|~')
  return value
}

/** A `template` option: a function of the page's data, or the default. */
export function templateOption<T extends (...args: any[]) => string> (plugin: string, value: unknown, fallback: T): T {
  if (value === undefined) return fallback
  if (typeof value !== 'function') throw optionError(plugin, 'template', 'must be a function (data) => string returning the page')
  return value as T
}

const REDIRECT_RULE = 'must be a path starting with / or an http(s) URL'

function isRedirectTarget (value: unknown): value is string {
  return typeof value === 'string' && (/^\/(?![/\\])/.test(value) || /^https?:\/\/[^/\\]/.test(value)) && !/[\s\0]/.test(value)
}

/**
 * A redirect target. It is an option, never taken from the request (no open redirect, SPEC
 * §5): a path of this site (not `//host`) or an absolute http(s) URL the integrator chose.
 */
export function redirectOption (plugin: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback
  if (!isRedirectTarget(value)) throw optionError(plugin, 'redirectTo', REDIRECT_RULE)
  return value
}

/** A redirect target that may be null (none), as `redirectOption`. */
export function nullableRedirectOption (plugin: string, value: unknown, name = 'redirectTo'): string | null {
  if (value === undefined || value === null) return null
  if (!isRedirectTarget(value)) throw optionError(plugin, name, `${REDIRECT_RULE}, or null`)
  return value
}

/** The `links` option of a plugin with a page: `{ href, text }` pairs, hrefs as redirect targets. */
export function linksOption (plugin: string, value: unknown): PageLink[] {
  if (value === undefined) return []
  const ok = Array.isArray(value) && value.every((link: Record<string, unknown> | null) =>
    typeof link === 'object' && link !== null && isRedirectTarget(link.href) && typeof link.text === 'string' && link.text !== '')
  if (!ok) throw optionError(plugin, 'links', `must be an array of { href, text }: href ${REDIRECT_RULE}, text not empty`)
  return (value as PageLink[]).map(({ href, text }) => ({ href, text }))
}
