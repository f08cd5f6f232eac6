import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { ask, freePort, missingBinary, PG_BIN, removeDirectory, runAsServer, serverDirectory, waitFor } from './servers.js'

interface Teardown { teardown: (fn: () => unknown) => void }

const bin = (name: string): string => path.join(PG_BIN, name)

/** Why the replica tests cannot run here, or null. */
export function replicaMissing (): string | null {
  return missingBinary(bin('initdb'), bin('pg_ctl'), bin('pg_basebackup'), bin('postgres'))
}

/** A PostgreSQL cluster of our own, on a loopback port of this branch's range. */
export interface Cluster {
  port: number
  dataDir: string
  /** `postgres://postgres@127.0.0.1:<port>/<database>` (default `postgres`). */
  url: (database?: string) => string
  start: () => Promise<void>
  /** `fast` disconnects clients and shuts down cleanly; `immediate` is a crash. */
  stop: (mode?: 'fast' | 'immediate') => Promise<void>
}

function cluster (dataDir: string, port: number, extra: readonly string[] = []): Cluster {
  // Settings on the command line, not in postgresql.conf, so a base backup of the primary
  // (which copies its files) does not carry the primary's port to the replica.
  const settings = [`-p ${port}`, '-c listen_addresses=127.0.0.1', `-c unix_socket_directories=${dataDir}`, '-c fsync=off', '-c max_connections=60', ...extra]
  return {
    port,
    dataDir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start: async () => {
      const log = path.join(dataDir, 'server.log')
      await runAsServer(bin('pg_ctl'), ['-D', dataDir, '-l', log, '-w', '-t', '60', '-o', settings.join(' '), 'start']).catch(async (error: Error) => {
        // pg_ctl only says to look at the log: the reason is there.
        const said = await readFile(log, 'utf8').catch(() => '')
        throw new Error(`${error.message}\n${log}:\n${said.trim().split('\n').slice(-10).join('\n')}`)
      })
    },
    stop: async (mode = 'fast') => { await runAsServer(bin('pg_ctl'), ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop']) }
  }
}

/**
 * `server(port)` started on a free port of this branch's range. Another process (the other test
 * job) can bind the port between freePort's probe and PostgreSQL's bind: then another port.
 */
async function startOnFreePort (server: (port: number) => Cluster, avoid: ReadonlySet<number> = new Set()): Promise<Cluster> {
  const tried = new Set(avoid)
  for (let attempt = 1; ; attempt++) {
    const started = server(await freePort(tried))
    try {
      await started.start()
      return started
    } catch (error) {
      if (attempt === 5 || !(error as Error).message.includes('Address already in use')) throw error
      tried.add(started.port)
    }
  }
}

async function stopQuietly (server: Cluster): Promise<void> {
  // Already stopped by the test: pg_ctl says so and fails, which is fine here.
  await server.stop('immediate').catch(() => {})
  await removeDirectory(path.dirname(server.dataDir))
}

/**
 * A primary of our own (initdb, trust authentication, `wal_level = replica`, replication
 * allowed from 127.0.0.1 by initdb's pg_hba.conf), started and ready; removed at the end.
 */
export async function startPrimary (t: Teardown): Promise<Cluster> {
  const dir = await serverDirectory('primary')
  const dataDir = path.join(dir, 'data')
  await runAsServer(bin('initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'])
  const primary = await startOnFreePort((port) => cluster(dataDir, port))
  t.teardown(async () => await stopQuietly(primary))
  await ask(primary.url(), 'CREATE DATABASE test')
  return primary
}

/**
 * A streaming replica of `primary` (`pg_basebackup -R`: standby.signal and primary_conninfo),
 * started, and returned once the primary reports it streaming in pg_stat_replication.
 * `settings` (`name=value`) are given on its command line.
 */
export async function startReplica (t: Teardown, primary: Cluster, { logStatements = true, settings = [] as readonly string[] } = {}): Promise<Cluster> {
  const dir = await serverDirectory('replica')
  const dataDir = path.join(dir, 'data')
  const name = `replica_${path.basename(dir).replace(/[^a-z0-9]/gi, '_').toLowerCase()}`
  await runAsServer(bin('pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'])
  // Named, so the primary's pg_stat_replication tells this replica apart.
  await runAsServer('sh', ['-c', `echo "primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=${name}'" >> ${dataDir}/postgresql.auto.conf`])
  // Every statement logged, so a test can see which reads reached it (statementsSeen); the
  // bench turns it off, as it costs the replica time.
  const replica = await startOnFreePort((port) => cluster(dataDir, port, [...(logStatements ? ['-c log_statement=all'] : []), ...settings.map((setting) => `-c ${setting}`)]), new Set([primary.port]))
  t.teardown(async () => await stopQuietly(replica))
  await waitFor('the replica to stream', async () => await isStreaming(primary, name))
  return Object.assign(replica, { applicationName: name })
}

/** Whether the primary has a replica named `name` streaming from it. */
export async function isStreaming (primary: Cluster, name: string): Promise<boolean> {
  const rows = await ask(primary.url(), "SELECT 1 FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'", [name])
  return rows.length === 1
}

/** Waits until the replica has replayed everything the primary had written when called. */
export async function caughtUp (primary: Cluster, replica: Cluster): Promise<void> {
  const { lsn } = (await ask<{ lsn: string }>(primary.url(), 'SELECT pg_current_wal_lsn()::text AS lsn'))[0]!
  await waitFor('the replica to replay the primary\'s WAL', async () =>
    (await ask<{ done: boolean }>(replica.url(), 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [lsn]))[0]!.done)
}

/** How many statements the replica has logged (it logs all) whose text contains `fragment`. */
export async function statementsSeen (replica: Cluster, fragment: string): Promise<number> {
  const log = await readFile(path.join(replica.dataDir, 'server.log'), 'utf8')
  return log.split('\n').filter((line) => / LOG: {2}(execute|statement)/.test(line) && line.includes(fragment)).length
}

/**
 * How many statements whose text contains `fragment` the replica canceled with 40001 for a
 * conflict with recovery, from its log: the error line (its SQLSTATE there with
 * `log_error_verbosity=verbose`), then the same process's STATEMENT line. Written as it
 * happens, where pg_stat_database_conflicts counts a cancel when the backend next reports, up
 * to 10 s later.
 */
export async function recoveryConflictsSeen (replica: Cluster, fragment: string): Promise<number> {
  const lines = (await readFile(path.join(replica.dataDir, 'server.log'), 'utf8')).split('\n')
  let seen = 0
  lines.forEach((line, i) => {
    const pid = / \[(\d+)\] ERROR: {2}40001: canceling statement due to conflict with recovery$/.exec(line)?.[1]
    if (pid === undefined) return
    const statement = lines.slice(i + 1).find((next) => next.includes(`[${pid}] STATEMENT:`))
    if (statement?.includes(fragment) === true) seen++
  })
  return seen
}
