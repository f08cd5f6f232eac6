import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chown, mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'

/**
 * What the pooler and replica harnesses share: loopback ports from this branch's range, a
 * temporary directory and processes run as the `postgres` user when the tests run as root
 * (initdb, postgres and PgBouncer refuse root), and waiting on conditions, never on sleeps.
 */

/** The loopback ports these harnesses may use (COMMON.md gives this branch 15500-15599). */
export const PORTS = Object.freeze({ first: 15500, last: 15599 })

/** The PostgreSQL 15 server binaries of Debian's postgresql-15 package. */
export const PG_BIN = '/usr/lib/postgresql/15/bin'

/** Why a server binary cannot be used here, or null. */
export function missingBinary (...binaries: string[]): string | null {
  const missing = binaries.filter((binary) => !existsSync(binary))
  return missing.length === 0 ? null : `not installed: ${missing.join(', ')} (apt-get install pgbouncer postgresql-15; .ci/server-deps does it in CI)`
}

/** A free loopback port of PORTS, from a random start so parallel test files rarely collide. */
export async function freePort (avoid: ReadonlySet<number> = new Set()): Promise<number> {
  const size = PORTS.last - PORTS.first + 1
  const start = Math.floor(Math.random() * size)
  for (let i = 0; i < size; i++) {
    const port = PORTS.first + (start + i) % size
    if (!avoid.has(port) && await bindable(port)) return port
  }
  throw new Error(`no free port in ${PORTS.first}-${PORTS.last}`)
}

async function bindable (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const probe = net.createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}

let account: { uid: number, gid: number } | null | undefined

/** The uid and gid to run servers as: `postgres` when the tests are root, else none (run as ourselves). */
export function serverAccount (): { uid: number, gid: number } | null {
  if (account !== undefined) return account
  if (process.getuid?.() !== 0) return (account = null)
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return (account = { uid: id('-u'), gid: id('-g') })
}

/** A new temporary directory the server account owns (mode 0700, as initdb wants). */
export async function serverDirectory (prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), `tc-prod-${prefix}-`))
  const owner = serverAccount()
  if (owner !== null) await chown(dir, owner.uid, owner.gid)
  return dir
}

export async function removeDirectory (dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
}

/** Spawns `command` as the server account, its output kept for error messages. */
export function spawnServer (command: string, args: string[], options: SpawnOptions = {}): ChildProcess & { output: () => string } {
  const owner = serverAccount()
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(owner ?? {}), ...options })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  return Object.assign(child, { output: () => output })
}

/** Runs `command` as the server account to its end; rejects with its output when it fails. */
export async function runAsServer (command: string, args: string[]): Promise<string> {
  const child = spawnServer(command, args)
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  if (code !== 0) throw new Error(`${path.basename(command)} ${args.join(' ')} exited with ${code}: ${child.output()}`)
  return child.output()
}

/**
 * Polls `condition` until it holds, at most `ms` milliseconds: the wait of a test on a server,
 * bounded so a busy machine passes and a broken server fails with `what`.
 */
export async function waitFor (what: string, condition: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await condition().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Whether a server answers `pg_isready` on `port` (it accepts connections). */
export async function isReady (port: number): Promise<boolean> {
  const child = spawn('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' })
  return await new Promise((resolve) => child.once('close', (code) => resolve(code === 0)))
}

/** One statement on a short-lived connection (what the harnesses ask a server). */
export async function ask<R extends pg.QueryResultRow = Record<string, any>> (connectionString: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return (await client.query<R>(text, values)).rows
  } finally {
    await client.end().catch(() => {})
  }
}
