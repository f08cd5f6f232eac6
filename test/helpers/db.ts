import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../lib/db/embedded.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface TestDatabase {
  /** Where this test file's own schema is the search path. */
  connectionString: string
  /** Pool size to use: PGlite is one session. */
  max: number
  embedded: boolean
  pool: pg.Pool
}

/** The server under test, from `DATABASE_URL`; unset means the embedded one. */
export const DATABASE_URL = Object.freeze({ value: process.env.DATABASE_URL ?? null }).value

let embedded: Promise<EmbeddedPostgres> | null = null

/** How long a pool keeps an idle connection to the embedded server (see testDatabase). */
export const EMBEDDED_IDLE_MS = 20

/**
 * Gives the calling test file its own PostgreSQL schema on the `DATABASE_URL` server, or its
 * own embedded server when that is unset, and removes it at the end.
 */
export async function testDatabase (t: Teardown): Promise<TestDatabase> {
  if (DATABASE_URL === null) {
    embedded ??= startEmbeddedPostgres()
    const server = await embedded
    // The embedded server serves one connection at a time: an idle one would hold up the app's.
    const pool = new pg.Pool({ connectionString: server.connectionString, max: 1, idleTimeoutMillis: EMBEDDED_IDLE_MS })
    t.teardown(async () => { await pool.end(); await server.stop() })
    return { connectionString: server.connectionString, max: 1, embedded: true, pool }
  }
  const schema = `test_${process.pid}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  await admin.connect()
  await admin.query(`CREATE SCHEMA "${schema}"`)
  const url = new URL(DATABASE_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  const connectionString = url.toString()
  const pool = new pg.Pool({ connectionString, max: 4 })
  t.teardown(async () => {
    await pool.end()
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
    await admin.end()
  })
  return { connectionString, max: 4, embedded: false, pool }
}
