import type { FastifyInstance } from 'fastify'
import type {} from '@fastify/postgres'
import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg'
import { SchemaDriftError } from '../lib/db/check.js'
import { wireTypes } from '../lib/db/types.js'
import { errorFacts, isStalePlan, optionError, setupError } from '../lib/errors.js'
import type { Database, Result, Row, RowCursor, Runner } from '../lib/db/port.js'
import { BEGIN, COMMIT, MAX_NAMED, ROLLBACK, statementName } from '../lib/sql/statements.js'
import type { Statement } from '../lib/table/statement.js'

const guarded = new WeakSet<object>()

/** How often, during an outage, the number of 503s answered is logged. */
export const OUTAGE_LOG_INTERVAL_MS = 10_000

interface WarnLogger { warn: (object: object, message: string) => void }

/** What an outage log line says of its cause: a code and a message, never a stack (the cause is expected). */
export function causeOf (error: unknown): { code: string | null, message: string } {
  const { code, message } = errorFacts(error)
  return { code, message }
}

/**
 * The database as requests see it, up or down, so an outage is a few log lines instead of a
 * stack trace per 503 (hundreds a second under load): the first failure at warn with its
 * cause, then every `intervalMs` the number of 503s answered meanwhile (nothing when there
 * were none), and the return, once, at warn with the outage's length and count.
 */
export class DatabaseHealth {
  private outage: { since: number, cause: { code: string | null, message: string }, total: number, recent: number } | null = null
  private timer: NodeJS.Timeout | null = null

  constructor (private readonly log: WarnLogger, private readonly intervalMs = OUTAGE_LOG_INTERVAL_MS, private readonly now = Date.now) {}

  get down (): boolean {
    return this.outage !== null
  }

  /** A request was answered 503 because of `error`. */
  failed (error: unknown): void {
    if (this.outage === null) {
      this.outage = { since: this.now(), cause: causeOf(error), total: 1, recent: 0 }
      this.log.warn({ cause: this.outage.cause }, 'database unavailable: answering 503 until it is back')
    } else {
      this.outage.total++
      this.outage.recent++
    }
    this.timer ??= setInterval(() => { this.tick() }, this.intervalMs).unref()
  }

  /** The database answered (a connection opened, a statement ran): an outage, if any, is over. */
  answered (): void {
    if (this.outage === null) return
    const { since, cause, total } = this.outage
    this.outage = null
    this.stop()
    this.log.warn({ cause, failed: total, downMs: this.now() - since }, `database available again after ${Math.round((this.now() - since) / 1000)} s; ${total} requests answered 503`)
  }

  /** Stops the interval (at close); the state stays. */
  stop (): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }

  private tick (): void {
    const outage = this.outage!
    // Quiet once nothing fails any more: no line per interval for an idle application.
    if (outage.recent === 0) {
      this.stop()
      return
    }
    this.log.warn({ failed: outage.recent, intervalMs: this.intervalMs }, `database still unavailable: ${outage.recent} requests answered 503 in the last ${this.intervalMs / 1000} s`)
    outage.recent = 0
  }
}

const healths = new WeakMap<object, DatabaseHealth>()

/** The health of the database of this application (one per HTTP server: every context shares it). */
export function databaseHealth (fastify: FastifyInstance): DatabaseHealth {
  let health = healths.get(fastify.server)
  if (health === undefined) {
    health = new DatabaseHealth(fastify.log)
    healths.set(fastify.server, health)
  }
  return health
}

/** A pg pool as the plugins use it: connections checked out of it (`new pg.Pool(...)` is one). */
export interface PoolLike {
  connect: () => Promise<PoolClient>
  on?: ((event: 'error', listener: (error: Error) => void) => unknown) & ((event: 'connect', listener: () => void) => unknown)
}

/**
 * Which database a plugin that queries uses (every such plugin takes these options). Default:
 * `fastify.pg`, the instance of @fastify/postgres registered without a name.
 * @example await app.register(tableCrud, { table: movie, prefix: '/movies', pg: 'main' })
 */
export interface PoolOptions {
  /** The name of an @fastify/postgres instance registered with `name` (`fastify.pg[name]`). */
  pg?: string
  /** Any pg pool (`new pg.Pool(...)`, or anything with its `connect`), instead of @fastify/postgres. */
  pool?: PoolLike
}

/**
 * An 'error' listener on a pool: @fastify/postgres adds none, and a connection dropped while
 * idle (a database restart, `pg_terminate_backend`) would otherwise be an unhandled 'error'
 * event that kills the process (DESIGN §6).
 */
function guard (fastify: FastifyInstance, pool: PoolLike): void {
  if (typeof pool.on === 'function' && !guarded.has(pool)) {
    guarded.add(pool)
    const health = databaseHealth(fastify)
    pool.on('error', (error) => fastify.log.warn({ cause: causeOf(error) }, 'idle PostgreSQL connection lost'))
    pool.on('connect', () => { health.answered() })
    fastify.addHook('onClose', async () => { health.stop() })
  }
}

const isPool = (value: unknown): value is PoolLike =>
  typeof value === 'object' && value !== null && typeof (value as PoolLike).connect === 'function'

/**
 * The pool a plugin uses, checked at registration, its 'error' listener added: the `pool`
 * option, else the @fastify/postgres instance named by `pg`, else `fastify.pg` (an
 * @fastify/postgres instance is guarded by the pool it holds). Throws, naming `plugin` and what to do, when it
 * is not there.
 */
export function database (fastify: FastifyInstance, plugin: string, options: PoolOptions = {}): PoolLike {
  const { pg: name, pool } = options
  if (pool !== undefined && name !== undefined) throw optionError(plugin, 'pool', 'cannot be given with pg: one names the database to use')
  if (pool !== undefined) {
    if (!isPool(pool)) throw optionError(plugin, 'pool', 'must be a pg pool: an object with connect()')
    guard(fastify, (pool as { pool?: PoolLike }).pool ?? pool)
    return pool
  }
  if (!fastify.hasDecorator('pg')) throw setupError(`${plugin}: register @fastify/postgres before this plugin (it uses fastify.pg)`)
  const instances = fastify.pg as unknown as Record<string, { pool?: PoolLike } | undefined>
  if (name !== undefined) {
    const named = typeof name === 'string' && Object.hasOwn(instances, name) ? instances[name] : undefined
    if (named?.pool === undefined) throw optionError(plugin, 'pg', `must name an @fastify/postgres instance registered with that name (${JSON.stringify(name)} is not one)`)
    guard(fastify, named.pool)
    return named as PoolLike
  }
  if (fastify.pg.pool === undefined) {
    const names = Object.keys(instances).filter((key) => instances[key]?.pool !== undefined)
    throw optionError(plugin, 'pg', `must name the database: @fastify/postgres is registered only with names (${names.join(', ')})`)
  }
  guard(fastify, fastify.pg.pool)
  return fastify.pg
}

// The port's types, for the plugins and tests that reach them through here.
export type { Database, Result, Row, RowCursor, Runner } from '../lib/db/port.js'

/** Reads routed to replicas (plugins/replicas.ts): `work` on one, or `primary()` instead. */
export interface ReplicaReader {
  read: <T>(work: (pool: PoolLike) => Promise<T>, primary: () => Promise<T>) => Promise<T>
  /** How many replicas. */
  readonly size: number
  /** Each replica's replay lag in milliseconds, measured now; null where it did not answer. */
  lags: () => Promise<Array<number | null>>
}

/** How the library uses one pool (SPEC §9): what `tablecrudDatabase` sets, and every helper on that pool reads. */
export interface PoolSettings {
  /** Named prepared statements (DESIGN §4), or unnamed ones for a transaction-mode pooler (§9.1). */
  named: boolean
  replicas: ReplicaReader | null
}

const DIRECT: PoolSettings = Object.freeze({ named: true, replicas: null })
const poolSettings = new WeakMap<object, PoolSettings>()
const inUse = new WeakSet<object>()

/**
 * Sets how the library uses `pool`, before any plugin queries it: a helper reads the settings
 * once, when its plugin is registered, so settings given later would be silently ignored.
 */
export function configurePool (pool: PoolLike, settings: PoolSettings, plugin: string): void {
  if (inUse.has(pool)) throw setupError(`${plugin}: register it before the plugins that query this database (one already uses it)`)
  poolSettings.set(pool, settings)
}

/** The replicas of `pool` (what `health` reports), or null. */
export function replicasOf (pool: PoolLike): ReplicaReader | null {
  return poolSettings.get(pool)?.replicas ?? null
}

export interface DatabaseOptions extends PoolOptions {
  /** Milliseconds a statement may take; default: only the pool's own `query_timeout`, if it has one. */
  queryTimeout?: number
}

type ConfigOf = (statement: Statement) => QueryConfig

/**
 * pg's config of a statement, without its values (`clientQuery` gives them to pg apart), kept
 * per text. pg copies a config's own properties with their descriptors before every query
 * (`cloneQueryConfig`), onto an object with the config's prototype: a list's profile showed 9 µs
 * a request for a five-property object, and POST's 3 µs for a config whose values alone were
 * its own. So the config has no own properties: text, name and parsers sit on its prototype,
 * and pg's copy costs an empty object.
 */
function configs (named: boolean): ConfigOf {
  const bases = new Map<string, QueryConfig>()
  let customs = 0
  // BEGIN, COMMIT and ROLLBACK have no parameters and no plan to keep: sent as simple queries
  // (one message, no name), not as prepared statements (Bind, Describe, Execute, Sync and their
  // answers), which every write paid twice.
  const control = new Map([BEGIN, COMMIT, ROLLBACK].map((s): [Statement, QueryConfig] => [s, Object.create({ text: s.text }) as QueryConfig]))
  return (statement) => {
    const simple = control.get(statement)
    if (simple !== undefined) return simple
    let config = bases.get(statement.text)
    if (config === undefined) {
      const name = statement.plan === 'custom' ? undefined : statementName(statement.text)
      // Behind a transaction-mode pooler the name is not sent.
      config = Object.create({ text: statement.text, types: wireTypes, ...(named && name !== undefined ? { name } : {}) }) as QueryConfig
      // Kept with a name, so as bounded as the names are; custom-planned texts (an aggregate, a
      // pattern: built from bounded shape caches too) as many as there may be names. Texts past
      // either cap build their config each time.
      if (name !== undefined) {
        bases.set(statement.text, config)
      } else if (statement.plan === 'custom' && customs < MAX_NAMED) {
        customs += 1
        bases.set(statement.text, config)
      }
    }
    return config
  }
}

/**
 * The one implementation of the database port (lib/db/port.ts) over `database()`'s guarded pool, with
 * - connections checked out so a dropped one cannot crash the process,
 * - a connection kept after an error the database answered (a constraint, bad data): pg-pool's
 *   own `query` would drop it, and every 422 would cost a reconnect,
 * - named prepared statements, so PostgreSQL plans each query shape once per connection, and
 *   one made stale by an online migration run again once and its connection dropped (queryFresh),
 * - transactions whose BEGIN, COMMIT and ROLLBACK are statements like the others, that roll back
 *   on any error and drop a connection whose ROLLBACK fails, or that holds a stale statement
 *   (the request is a 503, the client's retry gets a fresh one),
 * - every answer from the database reported to the application's DatabaseHealth.
 * - the pool's settings (`tablecrudDatabase`): statements unnamed behind a transaction-mode
 *   pooler (SPEC §9.1), and the statements whose intent is `'read'` sent to a replica (§9.2).
 */
export function databaseHelper (fastify: FastifyInstance, plugin: string, options: DatabaseOptions = {}): Database {
  const pool = database(fastify, plugin, options)
  const { named, replicas } = poolSettings.get(pool) ?? DIRECT
  inUse.add(pool)
  const health = databaseHealth(fastify)
  const configOf = configs(named)
  const timeout = options.queryTimeout
  const send: Send = (client, statement) => clientQuery(client, configOf(statement), statement.values, timeout)
  // On the primary by default; a replica's answers say nothing of the primary's health. Every
  // read comes here: `work` and `runOn` return their promises as they are, and the connection
  // is taken without checkout's own layer, a promise less each (issue 31, docs/performance.md).
  const onConnection = async <T>(work: (client: PoolClient) => Promise<{ result: T, stale: boolean }>, on = pool): Promise<T> => {
    const client = listen(await on.connect())
    try {
      const { result, stale } = await work(client)
      client.release(stale)
      if (on === pool) health.answered()
      return result
    } catch (error) {
      client.release(answeredByDatabase(error) ? undefined : error as Error)
      throw error
    }
  }
  const runOn = <R extends Row>(statement: Statement, on: PoolLike): Promise<Result<R>> =>
    onConnection((client) => queryFresh<R>(client, configOf(statement), statement.values, timeout), on)
  const cursorOn = async <R extends Row>(statement: Statement, on: PoolLike, prelude: readonly Statement[] = []): Promise<RowCursor<R>> =>
    await openCursor<R>(await checkout(on), statement, send, named, prelude)
  const transaction: Transact = async (work, client) =>
    await inTransaction(client ?? await checkout(pool), send, work).then((result) => {
      health.answered()
      return result
    })
  const single = singleStatements(pool, configOf, timeout, health, transaction)
  return {
    // Not async: the primary's promise is returned as it is, without a layer of its own.
    run: (statement, intent) => replicas === null || intent !== 'read'
      ? runOn(statement, pool)
      : replicas.read((replica) => runOn(statement, replica), () => runOn(statement, pool)),
    // An integrator's own SQL, as fastify.pg.query runs it (unnamed, pg's parsers), under the same connection policy.
    query: async (text, values) => await onConnection(async (client) => ({ result: await clientQuery(client, { text }, values, timeout), stale: false })),
    cursor: async (statement, intent, prelude) => replicas === null || intent !== 'read' || prelude !== undefined
      ? await cursorOn(statement, pool, prelude)
      : await replicas.read(async (replica) => primaryAfterFirstFailure(await cursorOn(statement, replica), async () => await cursorOn(statement, pool)), async () => await cursorOn(statement, pool)),
    transaction: async (work) => await transaction(work),
    single
  }
}

type Transact = <T>(work: (tx: Runner) => Promise<T>, client?: PoolClient) => Promise<T>

/** `statement` run on `client` as the port runs every statement: its config (`configs`), its values, its timeout. */
type Send = <R extends QueryResultRow>(client: PoolClient, statement: Statement) => Promise<QueryResult<R>>

/**
 * The port's `single` over `pool`: a write alone in autocommit on a connection that has shown
 * it prepared the statement with the result types asked for, else in `transaction` on that
 * connection, which teaches it (lib/db/port.ts says why this is as safe as BEGIN ... COMMIT).
 */
function singleStatements (pool: PoolLike, configOf: ConfigOf, timeout: number | undefined, health: DatabaseHealth, transaction: Transact): Database['single'] {
  // The texts each connection has prepared, with the types `single` was asked for and saw them
  // return: kept with the connection, so a new one (which prepares afresh) is taught in a transaction.
  const trusted = new WeakMap<PoolClient, Map<string, readonly number[]>>()
  const trustedOn = (client: PoolClient): Map<string, readonly number[]> => {
    let texts = trusted.get(client)
    if (texts === undefined) trusted.set(client, texts = new Map())
    return texts
  }
  const single: Database['single'] = async <T, R extends Row>(statement: Statement, types: readonly number[] | null, answer: (result: Result<R>) => T) => {
    const config = configOf(statement)
    const client = await checkout(pool)
    if (types === null || config.name === undefined || trustedOn(client).get(statement.text) !== types) {
      return await transaction(async (tx) => {
        const result = await tx.run<R>(statement) as QueryResult<R>
        const answered = answer(result)
        if (types !== null && config.name !== undefined && sameTypes(result, types)) trustedOn(client).set(statement.text, types)
        return answered
      }, client)
    }
    let result: QueryResult<R>
    try {
      result = await clientQuery<R>(client, config, statement.values, timeout)
    } catch (error) {
      // Refused before it wrote anything; a plan made stale by a migration (the result's types
      // changed) drops its connection, and the write goes the transaction's way on another.
      client.release(answeredByDatabase(error) ? isStalePlan(error) : error as Error)
      if (!isStalePlan(error)) throw error
      return await single(statement, types, answer)
    }
    client.release()
    health.answered()
    try {
      return answer(result)
    } catch (error) {
      if (error instanceof SchemaDriftError) error.committed = true
      throw error
    }
  }
  return single
}

/** Whether a result's columns have the type OIDs `types`, in order. */
function sameTypes (result: QueryResult, types: readonly number[]): boolean {
  return result.fields.length === types.length && result.fields.every((field, i) => field.dataTypeID === types[i])
}

/** Runs `work` in a transaction on `client`, every statement (BEGIN and COMMIT too) through `send`, and releases it. */
async function inTransaction<T> (client: PoolClient, send: Send, work: (tx: Runner) => Promise<T>): Promise<T> {
  const run = async <R extends Row>(statement: Statement): Promise<Result<R>> => await send<R>(client, statement)
  try {
    await run(BEGIN)
    const result = await work({ run })
    await run(COMMIT)
    client.release()
    return result
  } catch (error) {
    // A connection whose ROLLBACK fails is broken: released with the error, the pool drops it.
    // So is one holding a statement a migration made stale: the retry gets a fresh one. A
    // statement past its timeout still runs on it, and a ROLLBACK would wait behind it.
    const rollback = error instanceof StatementTimeout ? error : await run(ROLLBACK).then(() => undefined, (failure: Error) => failure)
    client.release(rollback ?? isStalePlan(error))
    throw error
  }
}

/**
 * A cursor on a replica whose first read, should it fail (a recovery conflict, the replica
 * going away), is read again from a cursor on the primary: the first batch is what an export
 * reads before it answers, so a replica's failure there is never the request's. After it, a
 * failure ends the stream as on the primary (SPEC §7.5).
 */
function primaryAfterFirstFailure<R extends Row> (replica: RowCursor<R>, primary: () => Promise<RowCursor<R>>): RowCursor<R> {
  let current = replica
  let first = true
  return {
    read: async (count) => {
      if (!first) return await current.read(count)
      first = false
      return await current.read(count).catch(async () => {
        await current.close()
        current = await primary()
        return await current.read(count)
      })
    },
    close: async () => { await current.close() }
  }
}

/**
 * A pg-cursor over `statement` on `client`, which it holds until closed. With unnamed
 * statements (a transaction-mode pooler) it runs inside BEGIN ... COMMIT, so the pooler keeps
 * the server connection for it and no session state outlives it (SPEC §9.1).
 */
async function openCursor<R extends Row> (client: PoolClient, statement: Statement, send: Send, named: boolean, prelude: readonly Statement[]): Promise<RowCursor<R>> {
  // Loaded on the first export, not at import (like every package only some features use).
  const { default: Cursor } = await import('pg-cursor')
  const inTransaction = !named || prelude.length > 0
  if (inTransaction) {
    try {
      for (const first of [BEGIN, ...prelude]) await send(client, first)
    } catch (error) {
      client.release(error as Error)
      throw error
    }
  }
  const cursor = client.query(new Cursor<R>(statement.text, statement.values as unknown[], { types: wireTypes }))
  let released = false
  let failure: Error | null = null
  const close = async (): Promise<void> => {
    if (released) return
    released = true
    // A failed cursor is not closed again (pg-cursor synced after the error); a connection
    // that failed is released with its error, so the pool drops it.
    let error = failure ?? await cursor.close().then(() => null, (e: Error) => e)
    if (inTransaction && (error === null || answeredByDatabase(error))) {
      error = await send(client, error === null ? COMMIT : ROLLBACK).then(() => error, (e: Error) => e)
    }
    client.release(error === null || answeredByDatabase(error) ? undefined : error)
  }
  return {
    read: async (count) => await cursor.read(count).catch((error: Error) => {
      failure = error
      throw error
    }),
    close
  }
}

/**
 * A pooled connection that cannot crash the process: a checked-out pg client emits 'error'
 * when its connection drops, and with no listener that is an uncaught exception. The query
 * in flight rejects as well, which is how the request learns of it. The listener stays for
 * the client's life (pg-pool's own, while it is idle, still removes it from the pool): added
 * and removed at every checkout, it cost each statement an `on`, an `off` and a wrapped release.
 */
async function checkout (pool: PoolLike): Promise<PoolClient> {
  return listen(await pool.connect())
}

/** `connection`, with checkout's 'error' listener added the first time it is seen. */
function listen (connection: PoolClient): PoolClient {
  if (!listening.has(connection)) {
    listening.add(connection)
    connection.on('error', ignore)
  }
  return connection
}

const listening = new WeakSet<PoolClient>()
const ignore = (): void => {}

/** An error message from the server (it has a severity) that leaves the connection usable: not a shutdown. */
export function answeredByDatabase (error: unknown): boolean {
  const { code, severity } = errorFacts(error)
  return severity !== null && severity !== 'FATAL' && severity !== 'PANIC' &&
    code !== null && !code.startsWith('08') && !code.startsWith('57P')
}

/**
 * Runs `config` on `client`, a connection checked out for this one statement (no
 * transaction). A named statement prepared before an online migration changed its result type
 * (`ALTER COLUMN ... TYPE`) fails with 0A000 `cached plan must not change result type`, on
 * every warm connection, until they are replaced. PostgreSQL raises it when it revalidates the
 * plan, before executing anything, so even a write has not taken effect: the statement runs
 * again once, unnamed (planned afresh), and `stale` tells the caller to discard the connection,
 * whose other prepared statements may be stale too and whose pg client remembers them as
 * prepared.
 */
export async function queryFresh<R extends QueryResultRow> (client: PoolClient, config: QueryConfig, values?: readonly unknown[], timeout?: number): Promise<{ result: QueryResult<R>, stale: boolean }> {
  try {
    return { result: await clientQuery<R>(client, config, values, timeout), stale: false }
  } catch (error) {
    if (config.name === undefined || !isStalePlan(error)) throw error
    // The same config without its name; the rest may sit on its prototype (configOf), which a
    // spread would not copy.
    const unnamed = Object.create(config, { name: { value: undefined, enumerable: true } }) as QueryConfig
    return { result: await clientQuery<R>(client, unnamed, values, timeout), stale: true }
  }
}

/**
 * `client.query(config, values)` as one promise, which fails with pg's own message after `timeout`
 * milliseconds, its statement left running: whoever holds the connection then releases it with
 * that error, so the pool drops it.
 * - Not pg's promise form: it makes two promises (its own and a `.catch` that rewrites the
 *   error's stack), a cost every statement paid in the profiles of issue 31.
 * - Not pg's `query_timeout`: pg wraps the query's callback in a closure over its whole `query`
 *   call, and with that closure V8 found every finished result still reachable at the next
 *   young-generation collection, pretenured pg's result rows and promoted every request's result
 *   (290 kB a scavenge on by id, 1,100 kB on the list, against 1 kB without it;
 *   docs/performance.md, "what made V8 pretenure the results"). pg's promise form makes such a
 *   closure too.
 */
function clientQuery<R extends QueryResultRow> (client: PoolClient, config: QueryConfig, values: readonly unknown[] | undefined, timeout: number | undefined): Promise<QueryResult<R>> {
  const connection = client as unknown as { query: QueryWithValues<R> }
  return new Promise((resolve, reject) => {
    const timer = timeout === undefined ? undefined : setTimeout(timedOut, timeout, reject)
    connection.query(config, values, (error, result) => {
      clearTimeout(timer)
      if (error === null) resolve(result); else reject(error)
    })
  })
}

/** A statement that took longer than the timeout, with pg's own message (lib/errors.ts makes it a 503). */
class StatementTimeout extends Error {
  constructor () { super('Query read timeout') }
}

/**
 * pg's `query(config, values, callback)`, which its types list for a text only (pg/lib/utils.js
 * `normalizeQueryConfig` takes a config too). Its callback gets null on success, where the types
 * say an Error always.
 */
type QueryWithValues<R extends QueryResultRow> = (config: QueryConfig, values: readonly unknown[] | undefined, callback: (error: Error | null, result: QueryResult<R>) => void) => void

const timedOut = (reject: (error: Error) => void): void => { reject(new StatementTimeout()) }
