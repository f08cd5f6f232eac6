/** Per-process figures read from /proc (Linux): CPU time and memory of a bench server. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import type { Case } from './cases.js'

/** Clock ticks per second of /proc/<pid>/stat (`getconf CLK_TCK`, 100 on Linux). */
const TICK_US = 1e6 / 100

/** User + system CPU time of a process so far, in µs. */
export function cpuMicros (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_US
}

/** Resident memory now and its peak so far (VmRSS, VmHWM), in MB. */
export function memory (pid: number): { rss: number, peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)![1]) / 1024
  return { rss: kb('VmRSS'), peak: kb('VmHWM') }
}

export interface Server {
  readonly process: ChildProcess
  readonly pid: number
  readonly url: string
  /** Spawn to the first 200 of `probe`, in ms. */
  readonly startup: number
  /** Asks the server to collect garbage, then reads its memory. */
  readonly idle: () => Promise<{ rss: number, peak: number }>
  readonly stop: () => Promise<void>
  /** Sends a command to bench/server.ts (`profile:start`, `profile:stop:<file>`, `heap:<file>`, `stats:<file>`) and waits for it to be done. */
  readonly command: (message: string) => Promise<void>
}

/**
 * The servers run compiled, as an application would in production: under tsx, its loader
 * thread alone added some 40 MB to each process and its transforms most of the start-up.
 */
const entry = fileURLToPath(new URL('./.build/bench/server.js', import.meta.url))

/** Compiles bench/server.ts and what it imports into bench/.build (bench/tsconfig.json). */
export function buildServers (): void {
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url))
  execFileSync(process.execPath, [tsc, '-p', fileURLToPath(new URL('./tsconfig.json', import.meta.url))], { stdio: 'inherit' })
}
/** Extra flags for the servers' node, e.g. `BENCH_NODE_ARGS=--cpu-prof` (see bench/profile.ts). */
const nodeArgs = (): string[] => (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)

/** Starts `bench/server.ts <kind>` and waits for `probe` to answer 200. */
export async function startServer (kind: 'crud' | 'hand', env: Record<string, string>, probe: string): Promise<Server> {
  const started = performance.now()
  const child = spawn(process.execPath, ['--expose-gc', ...nodeArgs(), entry, kind], {
    env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url))
    child.once('exit', (code) => reject(new Error(`bench server ${kind} exited with ${code}`)))
  })
  for (;;) {
    const response = await fetch(url + probe).catch(() => null)
    if (response?.status === 200) { await response.arrayBuffer(); break }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const startup = performance.now() - started
  return {
    process: child,
    pid: child.pid!,
    url,
    startup,
    idle: async () => {
      await command(child, 'gc')
      return memory(child.pid!)
    },
    command: async (message) => { await command(child, message) },
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.disconnect()
      await exited
    }
  }
}

async function command (child: ChildProcess, message: string): Promise<void> {
  await new Promise<void>((resolve) => { child.once('message', () => resolve()); child.send(message) })
}

export interface Run { readonly rps: number, readonly cpuPerRequest: number, readonly requests: number }

/** One autocannon run of a case against a server: req/s, and the server's CPU µs per request. */
export async function run (server: Server, c: Case, seconds: number, connections: number): Promise<Run> {
  const before = cpuMicros(server.pid)
  const result = await autocannon({
    url: server.url + c.path,
    connections,
    duration: seconds,
    method: c.method ?? 'GET',
    ...(c.body === undefined ? {} : { body: c.body, headers: { 'content-type': 'application/json' } }),
    ...(c.setupRequest === undefined ? {} : { requests: [{ setupRequest: c.setupRequest }] })
  })
  const cpu = cpuMicros(server.pid) - before
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${c.label}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return { rps: result.requests.average, cpuPerRequest: cpu / result.requests.total, requests: result.requests.total }
}

/** ABBA runs of two cases on one server after a short warm-up of each: the mean of each pair. */
export async function abbaRuns (server: Server, a: Case, b: Case, seconds: number, connections: number): Promise<[Run, Run]> {
  const warm = Math.max(1, Math.round(seconds / 5))
  await run(server, a, warm, connections)
  await run(server, b, warm, connections)
  const runs = [await run(server, a, seconds, connections), await run(server, b, seconds, connections), await run(server, b, seconds, connections), await run(server, a, seconds, connections)]
  const mean = (x: Run, y: Run): Run => ({ rps: (x.rps + y.rps) / 2, cpuPerRequest: (x.cpuPerRequest + y.cpuPerRequest) / 2, requests: (x.requests + y.requests) / 2 })
  return [mean(runs[0]!, runs[3]!), mean(runs[1]!, runs[2]!)]
}

/** What the opt-in write benches read from the environment: `BENCH_SECONDS`, `BENCH_CONNECTIONS`, `DATABASE_URL` (required). */
export function writeBenchSettings (): { seconds: number, connections: number, connectionString: string } {
  const connectionString = process.env.DATABASE_URL
  if (connectionString === undefined) throw new Error('bench: set DATABASE_URL (the server runs in its own process with its own pool)')
  return { seconds: Number(process.env.BENCH_SECONDS ?? 5), connections: Number(process.env.BENCH_CONNECTIONS ?? 10), connectionString }
}
