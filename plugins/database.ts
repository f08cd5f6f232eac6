import type { FastifyInstance } from 'fastify'
import type {} from '@fastify/postgres'

const guarded = new WeakSet<object>()

/**
 * `fastify.pg`, with an 'error' listener on its pool: @fastify/postgres adds none, and a
 * connection dropped while idle (a database restart, `pg_terminate_backend`) would otherwise
 * be an unhandled 'error' event that kills the process (DESIGN §6). Throws, naming `plugin`,
 * when @fastify/postgres is not registered.
 */
export function database (fastify: FastifyInstance, plugin: string): FastifyInstance['pg'] {
  if (!fastify.hasDecorator('pg')) throw new Error(`${plugin}: register @fastify/postgres before this plugin (it uses fastify.pg)`)
  const pool = fastify.pg.pool
  if (!guarded.has(pool)) {
    guarded.add(pool)
    pool.on('error', (error) => fastify.log.warn({ err: error }, 'idle PostgreSQL connection lost'))
  }
  return fastify.pg
}
