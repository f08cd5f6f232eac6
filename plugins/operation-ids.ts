import type { FastifyInstance } from 'fastify'
import { optionError } from '../lib/errors.js'

/**
 * Stable, unique OpenAPI `operationId`s (docs/openapi.md): each mount of a plugin claims a name
 * in its application, and its operations are `<name>.<operation>` (`movie.list`) or the name
 * itself for a plugin's one action (`jwtLogin`). The names of each application, keyed by its
 * HTTP server, which every encapsulation context shares.
 */
const claimed = new WeakMap<object, Set<string>>()

/** What `operationIdPrefix` accepts: dot-separated words of letters, digits and `_`. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/

/** A mount's path as a name: `/api/admin/movies` gives `api.admin.movies`. */
export function pathName (prefix: string): string {
  return prefix.split('/').filter((part) => part !== '').map((part) => part.replace(/[^A-Za-z0-9_]/g, '_')).join('.')
}

/**
 * Claims the operationId name of one mount of `plugin` in its application: `given` (the
 * option `operationIdPrefix`) when set; else `preferred` (the table's name, the plugin's);
 * else, when an earlier mount holds that, the mount's path (`api.admin.movies`). A name held
 * already throws: two operations would share an id.
 */
export function claimOperationIds (fastify: FastifyInstance, plugin: string, preferred: string, given?: unknown): string {
  if (given !== undefined && (typeof given !== 'string' || !NAME.test(given))) {
    throw optionError(plugin, 'operationIdPrefix', 'must be a name such as admin or api.admin: letters, digits and _, words joined by dots')
  }
  let names = claimed.get(fastify.server)
  if (names === undefined) claimed.set(fastify.server, names = new Set())
  const name = given ?? (names.has(preferred) ? pathName(fastify.prefix) : preferred)
  if (name === '' || names.has(name)) {
    throw optionError(plugin, 'operationIdPrefix', `must tell this mount apart: the operationIds ${name || preferred}.* are another mount's`)
  }
  names.add(name)
  return name
}
