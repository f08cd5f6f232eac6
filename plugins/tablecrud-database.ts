import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import pg from 'pg'
import { optionError } from '../lib/errors.js'
import { causeOf, configurePool, database, type PoolOptions } from './database.js'
import { ReplicaSet, type ReplicaPool } from './replicas.js'

/**
 * Options of `tablecrudDatabase` (SPEC §9): how every plugin of this library uses one database
 * (`fastify.pg`, or the one named by `pg` or given as `pool`). Register it before them.
 * @example app.register(tablecrudDatabase, { preparedStatements: 'unnamed', replicas: [process.env.REPLICA_URL!], maxReplicaLagMs: 2000 } satisfies TablecrudDatabaseOptions)
 */
export interface TablecrudDatabaseOptions extends PoolOptions {
  /**
   * `'named'` (default): each query shape is a named prepared statement, planned once per
   * connection (fastest on a direct connection or a session-mode pooler). `'unnamed'`: for
   * transaction-mode poolers that keep no prepared statements (PgBouncer before 1.21 or with
   * `max_prepared_statements = 0`, Supavisor).
   */
  preparedStatements?: 'named' | 'unnamed'
  /**
   * Read-only servers (streaming replicas): connection strings or pg pool configs. The reads
   * of GET and HEAD routes go to them round robin; everything else to the primary.
   */
  replicas?: ReadonlyArray<string | pg.PoolConfig>
  /** A replica lagging more than this many milliseconds is skipped (the primary serves). Default: lag is not checked. */
  maxReplicaLagMs?: number
}

const NAME = 'tablecrudDatabase'
/** A replica's connection timeout unless its config sets one: a replica that hangs delays a read this long at most. */
export const REPLICA_CONNECTION_TIMEOUT_MS = 2000

function checkOptions (options: TablecrudDatabaseOptions): void {
  const { preparedStatements, replicas, maxReplicaLagMs } = options
  if (preparedStatements !== undefined && preparedStatements !== 'named' && preparedStatements !== 'unnamed') {
    throw optionError(NAME, 'preparedStatements', "must be 'named' or 'unnamed'")
  }
  if (replicas !== undefined && (!Array.isArray(replicas) || replicas.length === 0 ||
      !replicas.every((replica) => typeof replica === 'string' || (typeof replica === 'object' && replica !== null && !Array.isArray(replica))))) {
    throw optionError(NAME, 'replicas', 'must be a non-empty array of connection strings or pg pool configs')
  }
  if (maxReplicaLagMs !== undefined && (typeof maxReplicaLagMs !== 'number' || !Number.isInteger(maxReplicaLagMs) || maxReplicaLagMs < 0)) {
    throw optionError(NAME, 'maxReplicaLagMs', 'must be an integer of milliseconds, 0 or more')
  }
  if (maxReplicaLagMs !== undefined && replicas === undefined) throw optionError(NAME, 'maxReplicaLagMs', 'needs replicas')
}

/** A replica's pool: its config, a connection timeout by default, and an 'error' listener (DESIGN §6). */
function replicaPool (replica: string | pg.PoolConfig, log: { warn: (object: object, message: string) => void }): ReplicaPool {
  const config = typeof replica === 'string' ? { connectionString: replica } : replica
  const pool = new pg.Pool({ connectionTimeoutMillis: REPLICA_CONNECTION_TIMEOUT_MS, ...config })
  pool.on('error', (error) => { log.warn({ cause: causeOf(error) }, 'idle replica connection lost') })
  return pool as unknown as ReplicaPool
}

const tablecrudDatabasePlugin: FastifyPluginAsync<TablecrudDatabaseOptions> = async function tablecrudDatabase (fastify, options) {
  checkOptions(options)
  const pool = database(fastify, NAME, { pg: options.pg, pool: options.pool })
  const replicas = options.replicas === undefined
    ? null
    : new ReplicaSet(options.replicas.map((replica) => replicaPool(replica, fastify.log)), options.maxReplicaLagMs ?? null)
  configurePool(pool, { named: options.preparedStatements !== 'unnamed', replicas }, NAME)
  // The replicas' pools are this plugin's: they end with the application, after its requests.
  if (replicas !== null) fastify.addHook('onClose', async () => { await replicas.end() })
}

/**
 * How the plugins of this library use a database (SPEC §9): prepared statements named or
 * unnamed (a transaction-mode pooler), and read replicas. Registered once per database, before
 * the plugins that query it.
 * @example
 * await app.register(fastifyPostgres, { connectionString: process.env.PGBOUNCER_URL })
 * await app.register(tablecrudDatabase, { preparedStatements: 'unnamed', replicas: [process.env.REPLICA_URL!] })
 * await app.register(tableCrud, { table: movie, prefix: '/movies' })
 */
export const tablecrudDatabase = fp(tablecrudDatabasePlugin, { name: 'fastify-tablecrud/database', fastify: '5.x' })
