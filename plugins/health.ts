import type { FastifyPluginAsync } from 'fastify'
import { Type } from '@sinclair/typebox'
import { optionError, TABLECRUD_ERR_DB_UNAVAILABLE, withBody } from '../lib/errors.js'
import { causeOf, database, databaseHelper, replicasOf, type Database, type PoolOptions, type ReplicaReader } from './database.js'
import { sendError } from './errors.js'
import { claimOperationIds } from './operation-ids.js'
import { errorResponse, RetryAfterHeader, withHeaders } from '../schemas/responses.js'

/**
 * Options of `health` (SPEC §9.3); all optional.
 * @example app.register(health, { timeout: 1000, closeTimeout: 20_000 } satisfies HealthOptions)
 */
export interface HealthOptions extends PoolOptions {
  /** Milliseconds the primary has to answer `SELECT 1` for `/health/ready` to be 200. Default 2000. */
  timeout?: number
  /**
   * Milliseconds `app.close()` lets in-flight requests (exports included) run before it cuts
   * their connections, so shutdown is bounded. Default 10000.
   */
  closeTimeout?: number
}

const NAME = 'health'
export const HEALTH_TIMEOUT_MS = 2000
export const HEALTH_CLOSE_TIMEOUT_MS = 10_000

/**
 * How the primary answered the readiness check.
 * @example const { primary } = (await app.inject('/health/ready')).json() as { primary: Probe }
 */
export interface Probe {
  ok: boolean
  /** Milliseconds it took, or took before the timeout. */
  ms: number
}

/**
 * How a replica answered it: its replay lag, or null (`ok` false) when it did not answer in time.
 * @example const { replicas } = (await app.inject('/health/ready')).json() as { replicas: ReplicaProbe[] }
 */
export interface ReplicaProbe {
  ok: boolean
  lagMs: number | null
}

const ProbeSchema = Type.Object({ ok: Type.Boolean(), ms: Type.Integer({ minimum: 0 }) })
const ReplicaProbeSchema = Type.Object({ ok: Type.Boolean(), lagMs: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]) })

function positive (name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw optionError(NAME, name, 'must be a positive integer (milliseconds)')
  return value
}

/**
 * `SELECT 1` on `db` within `timeout` ms. The checkout is raced against the timer too: a server
 * that accepts but never answers would hold a connection attempt for as long as TCP allows.
 * The cause of a failure goes to the log, not the body (it names hosts and ports).
 */
export async function probe (db: Database, timeout: number, log: { debug: (object: object, message: string) => void }): Promise<Probe> {
  const started = performance.now()
  const ok = await within(db.query('SELECT 1'), timeout).then(() => true, (error: unknown) => {
    log.debug({ cause: causeOf(error) }, 'readiness check failed')
    return false
  })
  return { ok, ms: Math.round(performance.now() - started) }
}

/** Each replica's replay lag, measured within `timeout` ms; reported, never required (SPEC §9.3). */
export async function probeReplicas (replicas: ReplicaReader | null, timeout: number): Promise<ReplicaProbe[]> {
  if (replicas === null) return []
  const lags = await within(replicas.lags(), timeout).catch(() => Array<null>(replicas.size).fill(null))
  return lags.map((lagMs) => ({ ok: lagMs !== null, lagMs }))
}

/** `work`, or a rejection once `ms` have passed. */
async function within<T> (work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((resolve, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms) })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Health routes for load balancers and orchestrators (SPEC §9.3): `GET /health/live` is 200
 * while the process serves; `GET /health/ready` is 200 when the primary answers `SELECT 1`
 * within `timeout` (the replicas' lags reported beside it, not required), else 503 `TABLECRUD_ERR_DB_UNAVAILABLE` with `Retry-After`. While the
 * application closes, Fastify answers both 503 (its `return503OnClosing`). It also bounds
 * `app.close()`: in-flight requests get `closeTimeout` to finish, then their connections are
 * cut (an export's cursor closes with its stream), and the pools end after that.
 * @example
 * await app.register(health)                   // GET /health/live, GET /health/ready
 */
export const health: FastifyPluginAsync<HealthOptions> = async function health (fastify, options) {
  const timeout = positive('timeout', options.timeout, HEALTH_TIMEOUT_MS)
  const closeTimeout = positive('closeTimeout', options.closeTimeout, HEALTH_CLOSE_TIMEOUT_MS)
  const db = databaseHelper(fastify, NAME, { pg: options.pg, pool: options.pool, queryTimeout: timeout })
  const replicas = replicasOf(database(fastify, NAME, { pg: options.pg, pool: options.pool }))
  const ids = claimOperationIds(fastify, NAME, NAME)
  drainWithin(fastify, closeTimeout)

  fastify.get('/health/live', {
    schema: { operationId: `${ids}.live`, summary: 'Whether the process serves', tags: ['health'], response: { 200: Type.Object({ status: Type.Literal('live') }) } }
  }, async () => ({ status: 'live' as const }))

  fastify.get('/health/ready', {
    schema: {
      operationId: `${ids}.ready`,
      summary: 'Whether the primary database answers',
      tags: ['health'],
      response: {
        200: Type.Object({ status: Type.Literal('ready'), primary: ProbeSchema, replicas: Type.Array(ReplicaProbeSchema) }),
        503: withHeaders(errorResponse('The primary did not answer within the timeout (`primary` says how long it waited).'), { 'Retry-After': RetryAfterHeader })
      }
    }
  }, async (request, reply) => {
    const [primary, replicaProbes] = await Promise.all([probe(db, timeout, request.log), probeReplicas(replicas, timeout)])
    if (!primary.ok) return sendError(reply, withBody(new TABLECRUD_ERR_DB_UNAVAILABLE(), { primary, replicas: replicaProbes }))
    return { status: 'ready' as const, primary, replicas: replicaProbes }
  })
}

/**
 * Bounds `app.close()`: Fastify stops accepting and waits for in-flight requests without a
 * limit; after `ms` the connections still open are cut, so the onClose hooks (the pools'
 * `end()`, which waits for every checked-out connection) run.
 */
function drainWithin (fastify: Parameters<typeof health>[0], ms: number): void {
  let timer: NodeJS.Timeout | undefined
  fastify.addHook('preClose', async () => {
    timer = setTimeout(() => { fastify.server.closeAllConnections() }, ms).unref()
  })
  fastify.addHook('onClose', async () => { clearTimeout(timer) })
}
