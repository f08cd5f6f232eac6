import type { Statement } from '../table/statement.js'

/**
 * The one port to the database (DESIGN §5, STYLE "One port to the database"). Every statement
 * of lib/auth, lib/media and TableCRUD, BEGIN and COMMIT included, goes through `run` (kysely's
 * `executeQuery(compiledQuery)` is the model), so the pooler mode (SPEC §9.1: named or unnamed
 * prepared statements), replicas (§9.2), timeouts and the stale-plan retry are decided in its
 * one implementation (plugins/database.ts `databaseHelper`) and nowhere else.
 */

export type Row = Record<string, unknown>

/** What a statement gives back: its rows, and how many rows it touched (null when pg does not say). */
export interface Result<R extends Row = Row> {
  readonly rows: R[]
  readonly rowCount: number | null
}

/**
 * Where a statement may run (SPEC §9.2). `'read'`: a statement of a GET or HEAD that is not part
 * of a write (a list, `/:id/`, a count, ids, an export), which a read replica may serve. `'write'`
 * (the default): everything else, writes and the reads a write depends on, and the auth lookups
 * (a token made a moment ago must be found), which run on the primary.
 */
export type Intent = 'read' | 'write'

/** Runs statements: on a pooled connection per statement, or on a transaction's. */
export interface Runner {
  run: <R extends Row = Row>(statement: Statement, intent?: Intent) => Promise<Result<R>>
}

/** Batches of a statement's rows; `close()` releases the connection and may be called more than once. */
export interface RowCursor<R extends Row = Row> {
  /** Up to `count` rows; an empty batch at the end. */
  read: (count: number) => Promise<R[]>
  close: () => Promise<void>
}

/**
 * The database as the plugins use it: the port. Providers (token, MFA) get it in their
 * context as `db`.
 * @example const { rows } = await context.db.run({ text: 'SELECT username FROM auth_user WHERE id = $1', values: [userId] })
 */
export interface Database extends Runner {
  /** Runs `work` in BEGIN ... COMMIT on one connection (every statement of it through `run`); any error rolls back and is rethrown. */
  transaction: <T>(work: (tx: Runner) => Promise<T>) => Promise<T>
  /**
   * One write and `answer` of its result, with the guarantee of `transaction` (the answer is
   * written before the write is committed: a row it cannot write is not, issue 27), in one
   * statement when that guarantee holds without BEGIN and COMMIT: on a connection that has run
   * this named prepared statement before and got result columns of the type OIDs `types`,
   * PostgreSQL returns those types again or refuses to run it (0A000) before writing anything.
   * Otherwise (`types` null, unnamed statements, another connection, another type) it runs in a
   * transaction, which teaches the connection the statement's types. A connection trusts the
   * very `types` array it was shown (lib/db/types.ts `resultTypes` keeps one per table): another
   * array, even of the same OIDs, is met as new, and runs in a transaction.
   */
  single: <T, R extends Row = Row>(statement: Statement, types: readonly number[] | null, answer: (result: Result<R>) => T) => Promise<T>
  /**
   * A server-side cursor over a statement, on a connection of its own until `close()`: rows
   * are read in batches, so a result of any size never sits in memory whole. `prelude`
   * statements run first, in the cursor's transaction (a `claims` mount's `set_config`, SPEC
   * §8.6); with any, the cursor is in BEGIN ... COMMIT whatever the pooler mode.
   */
  cursor: <R extends Row = Row>(statement: Statement, intent?: Intent, prelude?: readonly Statement[]) => Promise<RowCursor<R>>
  /**
   * pg's `query(text, values)`, for an integrator's own SQL in a provider: run as
   * `fastify.pg.query` runs it (unnamed, pg's own type parsers), under the port's connection
   * policy. The library's own statements use `run`.
   */
  query: (text: string, values?: readonly unknown[]) => Promise<Result<any>>
}

/**
 * Anything with pg's `query(text, values)`: a `pg.Pool`, a client or `fastify.pg` (SPEC §6.23),
 * what the public helpers (`createTables`, `createUser`, `createToken`, `createSession`, ...) accept.
 * @example const db: Queryable = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 */
export interface Queryable {
  query: (text: string, values?: unknown[]) => Promise<unknown>
}

/** What a public helper accepts: the port itself, or a `Queryable` it adapts once. */
export type DatabaseHandle = Runner | Queryable

/**
 * The port over what a public helper was given: a `Runner` as it is, a `Queryable` adapted
 * (its `query(text, values)`, with the pool's own parsers, as SPEC §6.23 promises).
 */
export function runnerOf (db: DatabaseHandle): Runner {
  if ('run' in db && typeof db.run === 'function') return db
  const queryable = db as Queryable
  return {
    run: async <R extends Row>(statement: Statement) => await queryable.query(statement.text, [...statement.values]) as Result<R>
  }
}
