import { answeredByDatabase, type PoolLike } from './database.js'

/** How long a replica that could not be reached is skipped before it is tried again. */
export const REPLICA_RETRY_MS = 1000
/** How long a lag reading is trusted before a read measures it again. */
export const LAG_CHECK_MS = 250

/**
 * The replica's replay lag in milliseconds: 0 when it has replayed all it received, else the
 * age of the last transaction it replayed (an overestimate after an idle primary: skipping a
 * replica too early is safe, reading stale rows is not). NULL, read as lagging, when it has
 * replayed nothing since it started.
 */
export const LAG_SQL = `SELECT CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
  ELSE (EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8 END AS lag_ms`

/** A read replica's pool, as the router needs it: connections, `query` for the lag, `end` at close. */
export interface ReplicaPool extends PoolLike {
  query: (text: string) => Promise<{ rows: Array<{ lag_ms: number | null }> }>
  end: () => Promise<void>
}

interface Replica {
  readonly pool: ReplicaPool
  /** Until when (ms since the epoch) it is skipped after a failure. */
  downUntil: number
  lag: { ms: number | null, at: number, pending: Promise<number | null> | null }
}

/**
 * Read replicas of one primary (SPEC §9.2): reads go round robin to the next replica that has
 * not failed in the last REPLICA_RETRY_MS and, with `maxLagMs`, lags no more than that. Either
 * way one replica is tried at most: when none fits, or the chosen one fails (unreachable,
 * a recovery conflict 40001, any error), the primary serves the read. No retry loop, and a
 * replica's failure is never the request's.
 */
export class ReplicaSet {
  private readonly replicas: Replica[]
  private next = 0

  constructor (pools: readonly ReplicaPool[], private readonly maxLagMs: number | null, private readonly now: () => number = Date.now) {
    this.replicas = pools.map((pool) => ({ pool, downUntil: 0, lag: { ms: null, at: -Infinity, pending: null } }))
  }

  get size (): number {
    return this.replicas.length
  }

  /**
   * Runs `work` on a replica, or `primary()` when none fits or the one chosen fails. Not async:
   * without a lag to measure, the replica is chosen at once and `work`'s promise, with its
   * fallback, is returned as it is (a read through a replica paid three promises more than one
   * on the primary, issue 31).
   */
  read<T>(work: (pool: PoolLike) => Promise<T>, primary: () => Promise<T>): Promise<T> {
    const chosen = this.choose()
    return chosen instanceof Promise
      ? chosen.then((replica) => this.readOn(replica, work, primary))
      : this.readOn(chosen, work, primary)
  }

  private readOn<T>(replica: Replica | null, work: (pool: PoolLike) => Promise<T>, primary: () => Promise<T>): Promise<T> {
    if (replica === null) return primary()
    return work(replica.pool).catch(async (error: unknown) => {
      this.failed(replica, error)
      return await primary()
    })
  }

  /** Each replica's lag measured now: what `health` reports (null where it did not answer). */
  async lags (): Promise<Array<number | null>> {
    return await Promise.all(this.replicas.map(async (replica) => await this.measure(replica)))
  }

  async end (): Promise<void> {
    await Promise.all(this.replicas.map(async (replica) => await replica.pool.end()))
  }

  /** The replica to read on, or null for the primary; a promise only when its lag must be measured first. */
  private choose (): Replica | null | Promise<Replica | null> {
    const count = this.replicas.length
    const now = this.now()
    for (let i = 0; i < count; i++) {
      const replica = this.replicas[(this.next + i) % count]!
      if (replica.downUntil > now) continue
      this.next = (this.next + i + 1) % count
      const maxLagMs = this.maxLagMs
      if (maxLagMs === null) return replica
      const fits = (lag: number | null): Replica | null => lag !== null && lag <= maxLagMs ? replica : null
      return now - replica.lag.at < LAG_CHECK_MS ? fits(replica.lag.ms) : this.measure(replica).then(fits)
    }
    return null
  }

  /** The replica's lag now (one query shared by the reads that ask meanwhile); null when it cannot say. */
  private async measure (replica: Replica): Promise<number | null> {
    replica.lag.pending ??= replica.pool.query(LAG_SQL).then(({ rows }) => rows[0]?.lag_ms ?? null, (error: unknown) => {
      this.failed(replica, error)
      return null
    }).then((ms) => {
      replica.lag = { ms, at: this.now(), pending: null }
      return ms
    })
    return await replica.lag.pending
  }

  /** A replica that did not answer is skipped for a while; one that answered an error is not. */
  private failed (replica: Replica, error: unknown): void {
    if (!answeredByDatabase(error)) replica.downUntil = this.now() + REPLICA_RETRY_MS
  }
}
