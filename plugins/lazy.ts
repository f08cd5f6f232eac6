import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

type Plugin = (fastify: FastifyInstance, options: any) => Promise<void>

/**
 * A plugin of the package's index whose code is imported when an application registers it,
 * not when it imports the package: one that mounts TableCRUD alone does not load the login,
 * web, health and OpenAPI plugins (32 modules: some 30 ms of its start-up and 0.5 MB of heap,
 * docs/performance.md). The shell runs the plugin in its own place, so registering either is
 * the same: `name` is the plugin function's for one that has a scope of its own, or, with
 * `shared`, the fastify-plugin name of one that decorates the scope it is registered in (the
 * shell then carries that name, so other plugins' `dependencies` find it). test/index.test.ts
 * checks each shell against the plugin it loads.
 */
export function lazyPlugin<P extends Plugin> (load: () => Promise<P>, name: string, shared = false): P {
  const shell = { [name]: async (fastify: FastifyInstance, options: unknown): Promise<void> => { await (await load())(fastify, options) } }[name]!
  return (shared ? fp(shell, { name, fastify: '5.x' }) : shell) as P
}
