import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { ask, freePort, isReady, missingBinary, removeDirectory, serverDirectory, spawnServer, waitFor } from './servers.js'

interface Teardown { teardown: (fn: () => unknown) => void }

/** Debian's PgBouncer (1.18 on Debian 12: no `max_prepared_statements`, so it keeps no prepared statements). */
export const PGBOUNCER = '/usr/sbin/pgbouncer'

/** Why PgBouncer tests cannot run here (binary absent, or no PostgreSQL server to pool), or null. */
export function pgbouncerMissing (databaseUrl: string | null): string | null {
  if (databaseUrl === null) return 'PgBouncer pools a PostgreSQL server: set DATABASE_URL (the embedded server is not one it can reach)'
  return missingBinary(PGBOUNCER)
}

export interface PgBouncerOptions {
  /**
   * The server it pools, as a connection string: host, port, database and user are taken from
   * it, and an `options=-c search_path=<schema>` (testDatabase's) becomes the pool's
   * `connect_query`, since PgBouncer refuses `options` as a startup parameter.
   */
  upstream: string
  poolMode?: 'transaction' | 'session'
  /** Server connections per pool (default 4): a small pool makes clients share them. */
  poolSize?: number
  /**
   * Checks every server connection each time a client's transaction ends (a
   * `server_reset_query` run always): `sessionStateLeft()` lists what any was found holding
   * (a named prepared statement, a cursor, an advisory lock, a LISTEN, a `SET`). Such state
   * makes a transaction-mode pooler fail by chance (another client meets it); the check finds
   * it every time.
   */
  checkSessionState?: boolean
}

export interface PgBouncer {
  port: number
  /** Where clients connect: database `tc`, the upstream's user, nothing but what PgBouncer accepts. */
  connectionString: string
  /** Its log so far (errors, for a failing test's message). */
  log: () => string
  /** With `checkSessionState`: what server connections were found holding after a transaction so far, once each. */
  sessionStateLeft: () => Promise<string[]>
  /** Stops it (SIGTERM: immediate shutdown; clients' connections are cut). */
  stop: () => Promise<void>
  /** Starts it again, on the same port. */
  start: () => Promise<void>
}

/**
 * What sessionStateCheck does not count: the search path testDatabase's `connect_query` sets,
 * and the parameters PgBouncer itself sets to each client's startup values.
 */
const POOLER_SETTINGS = ['search_path', 'client_encoding', 'DateStyle', 'TimeZone', 'standard_conforming_strings', 'application_name', 'IntervalStyle']

/**
 * The statement that records in `table` what a server connection still holds once a
 * transaction is over (one row, naming each thing), and nothing when it holds nothing.
 */
function sessionStateCheck (table: string): string {
  return `INSERT INTO ${table} (what) SELECT left(string_agg(what, ', ' ORDER BY what COLLATE "C"), 4000) FROM (
    SELECT 'prepared statement ' || name AS what FROM pg_prepared_statements
    UNION ALL SELECT 'cursor ' || name FROM pg_cursors
    UNION ALL SELECT 'advisory lock ' || objid FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
    UNION ALL SELECT 'LISTEN ' || channel FROM pg_listening_channels() AS channel
    UNION ALL SELECT 'SET ' || name FROM pg_settings WHERE source = 'session' AND name NOT IN (${POOLER_SETTINGS.map((name) => `'${name}'`).join(', ')})
  ) AS state HAVING count(*) > 0`
}

/**
 * Where sessionStateCheck records what it finds: a table, and a function running the check,
 * in a schema of their own on `upstream` (not the test's, whose tables a test may list), read
 * when asked and once more when PgBouncer has stopped, then dropped. The reset query is a call of the function: PgBouncer
 * 1.18 sends its reset query from a 512-byte buffer and closes the connection when it does
 * not fit, and ignores the reset query's errors (so an error could not report anything).
 */
async function sessionStateRecorder (upstream: string): Promise<{ resetQuery: string, read: () => Promise<string[]>, drop: () => Promise<void> }> {
  const schema = `pgbouncer_state_${randomBytes(6).toString('hex')}`
  await ask(upstream, `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.found (what text);
    CREATE FUNCTION ${schema}.check () RETURNS void LANGUAGE sql AS $$ ${sessionStateCheck(`${schema}.found`)} $$`)
  return {
    resetQuery: `SELECT ${schema}.check()`,
    read: async () => (await ask<{ what: string }>(upstream, `SELECT DISTINCT what FROM ${schema}.found ORDER BY what`)).map((row) => row.what),
    drop: async () => { await ask(upstream, `DROP SCHEMA ${schema} CASCADE`) }
  }
}

/** The [databases] entry of `upstream`: the pool PgBouncer opens to it. */
export function databaseEntry (upstream: string): string {
  const url = new URL(upstream)
  const database = decodeURIComponent(url.pathname.slice(1))
  const searchPath = /-c search_path=([a-z0-9_]+)/.exec(url.searchParams.get('options') ?? '')?.[1]
  const parts = [`host=${url.hostname}`, `port=${url.port === '' ? '5432' : url.port}`, `dbname=${database}`]
  if (searchPath !== undefined) parts.push(`connect_query='SET search_path TO ${searchPath}'`)
  return `tc = ${parts.join(' ')}`
}

/**
 * A PgBouncer on a loopback port in front of `upstream`, `pool_mode = transaction` by default,
 * trust authentication through a userlist, stopped at the test's end. Runs as the `postgres`
 * user when the tests are root (PgBouncer refuses root).
 */
export async function startPgBouncer (t: Teardown, options: PgBouncerOptions): Promise<PgBouncer> {
  const dir = await serverDirectory('pgbouncer')
  const user = decodeURIComponent(new URL(options.upstream).username) || 'postgres'
  await writeFile(path.join(dir, 'userlist.txt'), `"${user}" ""\n`)
  const state = options.checkSessionState === true ? await sessionStateRecorder(options.upstream) : null
  // What the check found, kept when PgBouncer stops and its table is dropped.
  let stateLeft: string[] | null = null
  let child: ReturnType<typeof spawnServer> | null = null
  let port = 0
  let log = ''
  const configure = async (): Promise<string> => {
    const ini = path.join(dir, 'pgbouncer.ini')
    await writeFile(ini, [
      '[databases]', databaseEntry(options.upstream),
      '[pgbouncer]', 'listen_addr = 127.0.0.1', `listen_port = ${port}`, 'unix_socket_dir =',
      'auth_type = trust', `auth_file = ${path.join(dir, 'userlist.txt')}`, `admin_users = ${user}`,
      `pool_mode = ${options.poolMode ?? 'transaction'}`, `default_pool_size = ${options.poolSize ?? 4}`,
      'max_client_conn = 200', 'log_connections = 0', 'log_disconnections = 0', 'server_login_retry = 1',
      ...(state === null ? [] : [`server_reset_query = ${state.resetQuery}`, 'server_reset_query_always = 1']),
      ''
    ].join('\n'))
    return ini
  }
  const start = async (): Promise<void> => {
    const ini = await configure()
    const started = spawnServer(PGBOUNCER, [ini])
    child = started
    const exited = new Promise<number | null>((resolve) => started.once('exit', resolve))
    const ready = waitFor(`PgBouncer on ${port}`, async () => await isReady(port))
    const first = await Promise.race([ready.then(() => 'ready' as const), exited])
    log += started.output()
    if (first !== 'ready') throw new Error(`PgBouncer exited with ${first}: ${started.output()}`)
    started.once('exit', () => { log += started.output() })
  }
  // A port another test file took between the probe and PgBouncer's bind: try another.
  for (let attempt = 0; ; attempt++) {
    port = await freePort()
    try {
      await start()
      break
    } catch (error) {
      if (attempt === 5 || !/Address already in use/.test(String(error))) throw error
    }
  }
  const stop = async (): Promise<void> => {
    const running = child
    child = null
    if (running === null || running.exitCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGTERM')
    await exited
  }
  t.teardown(async () => {
    await stop()
    if (state !== null) {
      stateLeft = await state.read()
      await state.drop()
    }
    await removeDirectory(dir)
  })
  return {
    port,
    connectionString: `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/tc`,
    log: () => log + (child?.output() ?? ''),
    sessionStateLeft: async () => stateLeft ?? await state?.read() ?? [],
    stop,
    start
  }
}

/** PgBouncer's own console (`SHOW POOLS`, `SHOW SERVERS`...): rows as objects. */
export async function pgbouncerConsole (bouncer: PgBouncer, command: string): Promise<Array<Record<string, unknown>>> {
  const url = new URL(bouncer.connectionString)
  url.pathname = '/pgbouncer'
  return await ask(url.toString(), command)
}
