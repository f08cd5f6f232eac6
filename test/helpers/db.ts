import pg from 'pg'
import tap from 'tap'
import { randomBytes } from 'node:crypto'
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../lib/db/embedded.js'
import { pgbouncerMissing, startPgBouncer, type PgBouncer } from './pgbouncer.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface TestDatabase {
  /**
   * Where the app connects, this test's own schema the search path: the server itself, or in
   * the pooled mode (TEST_POOLER) a PgBouncer in transaction mode in front of it.
   */
  connectionString: string
  /** The server itself, this test's schema the search path: `connectionString` but never pooled. */
  directConnectionString: string
  /** The pooled mode (TEST_POOLER): the app must use unnamed statements (helpers/app.ts `usePooler`). */
  pooled: boolean
  /** Pool size to use: PGlite is one session. */
  max: number
  embedded: boolean
  /** A pool straight to the server (never pooled), for set-up and assertions. */
  pool: pg.Pool
}

/** The server under test, from `DATABASE_URL`; unset means the embedded one. */
export const DATABASE_URL = Object.freeze({ value: process.env.DATABASE_URL ?? null }).value

/** How long a pool keeps an idle connection to the embedded server (see testDatabase). */
export const EMBEDDED_IDLE_MS = 20

/**
 * The pooled mode: `TEST_POOLER=pgbouncer` puts a real PgBouncer in transaction mode between
 * each test's app and the server (docs/testing.md). Anything else set is refused, as is the
 * mode where PgBouncer cannot run: asked for, it never quietly runs direct.
 */
export const TEST_POOLER = Object.freeze({ value: pooler(process.env.TEST_POOLER) }).value

function pooler (value: string | undefined): 'pgbouncer' | null {
  if (value === undefined || value === '') return null
  if (value !== 'pgbouncer') throw new Error(`TEST_POOLER=${value}: the one pooler the tests know is pgbouncer`)
  const missing = pgbouncerMissing(DATABASE_URL)
  if (missing !== null) throw new Error(`TEST_POOLER=pgbouncer: ${missing}`)
  return value
}

/** PgBouncer's server connections per test in the pooled mode: fewer than the app's four, so they are shared. */
export const POOLED_SERVER_CONNECTIONS = 2

let embedded: Promise<EmbeddedPostgres> | null = null

/**
 * The embedded server of this test file: started by the first test that asks (it takes seconds),
 * shared by the file's tests, each in its own schema, and stopped when the file's tests end.
 */
function embeddedServer (): Promise<EmbeddedPostgres> {
  // The stop is registered once the server is up, as tap ends a file whose root has a teardown
  // as soon as it is idle: registered at once, the root could end while PGlite still starts
  // under a top-level `await testDatabase(t)`. Teardowns run last first, so this one runs
  // after the schema drops of the tests that asked later.
  embedded ??= startEmbeddedPostgres().then((server) => {
    tap.teardown(async () => { await server.stop() })
    return server
  })
  return embedded
}

/** Runs one statement on a connection of its own (the embedded server serves one at a time). */
async function runAlone (connectionString: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try { await client.query(text) } finally { await client.end() }
}

/** The pg.Pool options of an app of the test (fastify-postgres's). */
export interface AppPool { connectionString: string, max: number, idleTimeoutMillis?: number }

/**
 * The pool options of an app on `db`, `max` connections: on the embedded server, which serves one
 * connection at a time, an idle connection is let go at once, or it would hold up the test's own
 * queries until pg's idle timeout (10 s) ends it.
 */
export function appPool (db: TestDatabase, max = db.max): AppPool {
  return { connectionString: db.connectionString, max, ...(db.embedded ? { idleTimeoutMillis: EMBEDDED_IDLE_MS } : {}) }
}

/**
 * Gives the calling test its own PostgreSQL schema, on the `DATABASE_URL` server or, when that
 * is unset, on this file's embedded server, and drops it at the test's end. In the pooled mode
 * the app's connection string goes through a PgBouncer of the test's own (stopped before the
 * schema is dropped), and `pool` still goes straight to the server.
 */
export async function testDatabase (t: Teardown): Promise<TestDatabase> {
  const isEmbedded = DATABASE_URL === null
  const server = DATABASE_URL ?? (await embeddedServer()).connectionString
  const schema = `test_${process.pid}_${randomBytes(4).toString('hex')}`
  await runAlone(server, `CREATE SCHEMA "${schema}"`)
  const url = new URL(server)
  url.searchParams.set('options', `-c search_path=${schema}`)
  const directConnectionString = url.toString()
  // The embedded server serves one connection at a time: an idle one would hold up the app's.
  const max = isEmbedded ? 1 : 4
  const pool = new pg.Pool({ connectionString: directConnectionString, max, ...(isEmbedded ? { idleTimeoutMillis: EMBEDDED_IDLE_MS } : {}) })
  let bouncer: PgBouncer | null = null
  t.teardown(async () => {
    await pool.end()
    await runAlone(server, `DROP SCHEMA "${schema}" CASCADE`)
    // Last, so a failure leaves nothing behind (a teardown that throws skips the rest).
    const left = await bouncer?.sessionStateLeft() ?? []
    if (left.length > 0) throw new Error(`PgBouncer found session state left on a server connection after a transaction:\n${left.join('\n')}`)
  })
  // Started after the drop's teardown is registered, so it stops before it (teardowns run last first).
  if (TEST_POOLER !== null) bouncer = await startPgBouncer(t, { upstream: directConnectionString, poolSize: POOLED_SERVER_CONNECTIONS, checkSessionState: true })
  const connectionString = bouncer?.connectionString ?? directConnectionString
  return { connectionString, directConnectionString, pooled: TEST_POOLER !== null, max, embedded: isEmbedded, pool }
}
