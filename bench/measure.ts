/** Per-process figures read from /proc (Linux): CPU time and memory of a bench server. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import type { Case } from './cases.js'
import { platformaticRequest } from './platformatic/requests.js'

/** Clock ticks per second of /proc/<pid>/stat (`getconf CLK_TCK`, 100 on Linux). */
const TICK_US = 1e6 / 100

/**
 * CPU time of a process so far, in µs: the sum of its threads' time on a CPU
 * (`/proc/<pid>/task/<tid>/schedstat`, nanoseconds), or user + system time from
 * `/proc/<pid>/stat` where schedstat is missing. The ticks of `stat` are 10 ms: a run at a
 * fixed low rate (a database-bound case uses some 75 ms of CPU in 5 s) would be read to
 * within ±25%; schedstat is exact. A Node process's threads (V8's platform workers, libuv's
 * pool) live as long as it does, so no thread's time is lost by its exiting.
 */
export function cpuMicros (pid: number): number {
  try {
    let ns = 0
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    return ns / 1000
  } catch {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * TICK_US
  }
}

/** Resident memory now and its peak so far (VmRSS, VmHWM), in MB. */
export function memory (pid: number): { rss: number, peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)![1]) / 1024
  return { rss: kb('VmRSS'), peak: kb('VmHWM') }
}

/** Which server bench/server.ts runs: TableCRUD, the hand-written one, or Platformatic DB (bench/platformatic/). */
export type ServerKind = 'crud' | 'hand' | 'platformatic'

export interface Server {
  readonly kind: ServerKind
  readonly process: ChildProcess
  readonly pid: number
  readonly url: string
  /** Spawn to the first 200 of `probe`, in ms. */
  readonly startup: number
  /** Asks the server to collect garbage, then reads its memory. */
  readonly idle: () => Promise<{ rss: number, peak: number }>
  /** Its RSS once V8 has given back what start-up grew, on its own, and whether it did (see `settled`). */
  readonly settled: () => Promise<Settled>
  /** Its V8 heap by space and its memory outside the heap, read without a GC. */
  readonly stats: () => Promise<HeapStats>
  readonly stop: () => Promise<void>
  /** Sends a command to bench/server.ts (`profile:start`, `profile:stop:<file>`, `heap:<file>`, `stats:<file>`) and waits for it to be done. */
  readonly command: (message: string) => Promise<void>
}

export interface HeapStats {
  readonly usage: NodeJS.MemoryUsage
  readonly spaces: ReadonlyArray<{ space_name: string, space_size: number, space_used_size: number }>
}

const newSpace = (stats: HeapStats): number => stats.spaces.find((s) => s.space_name === 'new_space')!.space_size

/** An idle server's RSS once settled, and whether V8 gave the young generation back (`settled`). */
export interface Settled { readonly rss: number, readonly shrank: boolean }

/**
 * RSS of a server left idle, once V8 has given back the young generation its start-up grew (20
 * tables' schemas and routes survive enough collections to double it twice: docs/performance.md,
 * "Memory"). No GC is forced: V8's memory reducer collects by itself some 8 s after allocation
 * stops and then shrinks the new space, as it does in any idle Node process, and a forced GC
 * does not shrink it. Read twice a second until the new space is smaller than at the first
 * reading and RSS has held for a second; at most 30 s, then the last reading. V8 does not
 * always run its memory reducer within those 30 s (seen on a slower machine, for either server
 * in some starts), so `shrank` says whether it did: a reading without it is the just-started one.
 */
async function settled (server: Pick<Server, 'pid' | 'stats'>): Promise<Settled> {
  const first = newSpace(await server.stats())
  let held = 0
  let last = memory(server.pid).rss
  for (let i = 0; i < 60; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    const { rss } = memory(server.pid)
    held = Math.abs(rss - last) < 0.1 ? held + 1 : 0
    last = rss
    if (held >= 2 && newSpace(await server.stats()) < first) return { rss, shrank: true }
  }
  return { rss: last, shrank: false }
}

/**
 * The servers run compiled, as an application would in production: under tsx, its loader
 * thread alone added some 40 MB to each process and its transforms most of the start-up. The
 * library's modules are linked as the package ships them (scripts/bundle.mjs), from the index.
 */
const entry = fileURLToPath(new URL('./.build/bench/server.js', import.meta.url))
const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url))
const bundler = fileURLToPath(new URL('../scripts/bundle.mjs', import.meta.url))
const bundle = (build: string, script = bundler): void => { execFileSync(process.execPath, [script, build, 'index.js'], { stdio: 'inherit' }) }

/**
 * Compiles bench/server.ts and what it imports into bench/.build (bench/tsconfig.json), the
 * library linked unless `linked` is false: bench/profile.ts keeps a file a module, so that its
 * summary names each function's module (the code a request runs is the same).
 */
export function buildServers (linked = true): void {
  execFileSync(process.execPath, [tsc, '-p', fileURLToPath(new URL('./tsconfig.json', import.meta.url))], { stdio: 'inherit' })
  if (linked) bundle(fileURLToPath(new URL('./.build', import.meta.url)))
}

/** Where this run's bench server is compiled into another checkout (buildBefore). */
const GRAFT = '.bench-now'

/**
 * The TableCRUD server of another checkout (`BENCH_BEFORE`, e.g. a worktree of an older
 * commit with its own node_modules): this run's bench/server.ts, cases.ts and hand.ts, copied
 * into `<checkout>/.bench-now/` and compiled there, so they import that checkout's library.
 * Both TableCRUD servers then mount the same tables and routes and differ only in the
 * library: the checkout's own bench server would lack the routes of cases added since, and
 * mount what its bench mounted then. Its type errors (an option the older library does not
 * know) are printed, not fatal: tsc still writes the JavaScript. Returns the entry to start.
 */
export function buildBefore (checkout: string): string {
  const dir = path.join(path.resolve(checkout), GRAFT)
  if (!existsSync(path.join(checkout, 'index.ts')) || !existsSync(path.join(checkout, 'node_modules'))) {
    throw new Error(`BENCH_BEFORE=${checkout}: not a TableCRUD checkout with its node_modules (index.ts, node_modules)`)
  }
  rmSync(dir, { recursive: true, force: true })
  // Not Platformatic's node_modules (bench/platformatic/, some 240 MB): only this checkout runs it.
  const copied = (source: string): boolean => !['.build', 'profiles', 'node_modules'].some((skipped) => source.includes(`${path.sep}${skipped}`))
  cpSync(fileURLToPath(new URL('.', import.meta.url)), dir, { recursive: true, filter: copied })
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { stdio: 'inherit' })
  } catch {
    console.error(`BENCH_BEFORE: the bench server compiled against ${checkout} with type errors (above); running what tsc wrote`)
  }
  const built = path.join(dir, '.build', GRAFT, 'server.js')
  if (!existsSync(built)) throw new Error(`BENCH_BEFORE: ${built} was not written`)
  // Linked as that checkout's package is, by its own bundler (what it links in is its code too),
  // or by this run's where it has none.
  const own = path.join(path.resolve(checkout), 'scripts', 'bundle.mjs')
  bundle(path.join(dir, '.build'), existsSync(own) ? own : bundler)
  return built
}

/** Removes what buildBefore wrote into the checkout. */
export function removeBefore (checkout: string): void {
  rmSync(path.join(path.resolve(checkout), GRAFT), { recursive: true, force: true })
}
/** Extra flags for the servers' node, e.g. `BENCH_NODE_ARGS=--cpu-prof` (see bench/profile.ts). */
const nodeArgs = (): string[] => (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)

/** Starts `bench/server.ts <kind>` (or the compiled server at `from`, see buildBefore) and waits for `probe` to answer 200. */
export async function startServer (kind: ServerKind, env: Record<string, string>, probe: string, from: string = entry): Promise<Server> {
  const started = performance.now()
  const child = spawn(process.execPath, ['--expose-gc', ...nodeArgs(), from, kind], {
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
  const server: Server = {
    kind,
    process: child,
    pid: child.pid!,
    url,
    startup,
    idle: async () => {
      await command(child, 'gc')
      return memory(child.pid!)
    },
    settled: async () => await settled(server),
    stats: async () => {
      const file = `${tmpdir()}/bench-stats-${child.pid!}.json`
      await command(child, `stats:${file}`)
      const out = JSON.parse(readFileSync(file, 'utf8')) as HeapStats
      rmSync(file)
      return out
    },
    command: async (message) => { await command(child, message) },
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.disconnect()
      await exited
    }
  }
  return server
}

async function command (child: ChildProcess, message: string): Promise<void> {
  await new Promise<void>((resolve) => { child.once('message', () => resolve()); child.send(message) })
}

export interface Run { readonly rps: number, readonly cpuPerRequest: number, readonly requests: number }

/**
 * The case as a server is sent it: the hand-written server gets its `handPath` where it has one,
 * Platformatic its own request (bench/platformatic/requests.ts); null where it has no route for it.
 */
export function requestFor (kind: ServerKind, c: Case): Case | null {
  if (kind === 'platformatic') return platformaticRequest(c)
  return kind === 'hand' && c.handPath !== undefined ? { ...c, path: c.handPath } : c
}

/**
 * One autocannon run of a case against a server: req/s, and the server's CPU µs per request,
 * each server sent the case's request for it (requestFor). With `rate`, autocannon
 * offers that many requests a second in all (`overallRate`, an open loop) instead of as many
 * as the server answers.
 */
export async function run (server: Server, asked: Case, seconds: number, connections: number, rate?: number): Promise<Run> {
  const c = requestFor(server.kind, asked)
  if (c === null) throw new Error(`${asked.label}: no route on the ${server.kind} server`)
  const before = cpuMicros(server.pid)
  const result = await autocannon({
    url: server.url + c.path,
    connections,
    duration: seconds,
    ...(rate === undefined ? {} : { overallRate: rate }),
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
