/**
 * Platformatic DB as the bench runs it (bench/server.ts `platformatic`): its programmatic
 * `buildServer`, in the bench server's own process, so /proc counts all of its CPU and memory
 * and the bench's IPC (a GC before idle RSS, profiles) works as for the other servers. Its CLI,
 * `plt-db start`, calls the same `buildServer` from a config file, and on a terminal logs
 * through pino-pretty in a worker thread.
 */
import { createRequire } from 'node:module'

/**
 * What bench/server.ts uses of the Fastify instance Platformatic builds: typed here, as the
 * types of its own Fastify are there only once it is installed.
 */
export interface App {
  listen: (options: { port: number, host: string }) => Promise<string>
  close: () => Promise<unknown>
}

interface PlatformaticDb {
  buildServer: (config: Record<string, unknown>) => Promise<App>
}

// Resolved from bench/platformatic/, where it is installed: this file runs compiled from bench/.build.
const load = createRequire(new URL('../../../platformatic/package.json', import.meta.url))

/**
 * The REST API Platformatic generates from the tables the other servers serve (bench/cases.ts;
 * their names written out so that this process loads nothing of TableCRUD), and nothing else:
 * no GraphQL, no events (each write would be published to an in-process emitter), no
 * migrations, no metrics; the OpenAPI plugin stays, as it mounts the REST routes. Logging off:
 * a silent pino instance, as Platformatic replaces `logger: false` by its default logger.
 */
export async function platformaticApp (connectionString: string, poolSize: number): Promise<App> {
  const { buildServer } = load('@platformatic/db') as PlatformaticDb
  const pino = load('pino') as (options: { level: string }) => unknown
  return await buildServer({
    server: { hostname: '127.0.0.1', port: 0, loggerInstance: pino({ level: 'silent' }) },
    db: {
      connectionString,
      poolSize,
      graphql: false,
      openapi: true,
      events: false,
      include: { bench_movie: true, bench_director: true, bench_code: true, bench_doc: true }
    }
  })
}
