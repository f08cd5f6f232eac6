/**
 * Memory of the two bench servers, quicker than the whole bench and in more detail (issue 31):
 *
 *   DATABASE_URL=... node --import tsx bench/memory.ts          # idle RSS of each, what it is made of
 *   BENCH_LOAD=1 DATABASE_URL=... node --import tsx bench/memory.ts   # and peak RSS under each case
 *
 * Idle: each server started `BENCH_ROUNDS` (3) times, alternately, its RSS read after a forced
 * GC (as bench/run.ts does), then the V8 heap by space and what lies outside it, and RSS once V8
 * has shrunk the young generation start-up grew (`settled` in bench/measure.ts). Then what each
 * step of start-up adds (bench/imports.ts). Under load: the cases of bench/cases.ts in their
 * order on one server of each kind (as bench/run.ts runs them, `BENCH_SECONDS` a run after a
 * warm-up), the peak RSS (VmHWM) read after each case, so the case that raises it shows.
 * `BENCH_HEAP=1`: heap snapshots of both idle servers in bench/profiles/, for bench/heap.ts.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { cases, drop, seed } from './cases.js'
import { buildServers, memory, run, startServer, type HeapStats, type Settled } from './measure.js'

const connectionString = process.env.DATABASE_URL
if (connectionString === undefined) throw new Error('bench: set DATABASE_URL')
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const env = { BENCH_DATABASE_URL: connectionString, BENCH_POOL: '10' }
const kinds = ['hand', 'crud'] as const
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const profiles = fileURLToPath(new URL('./profiles/', import.meta.url))
const mb = (n: number): string => (n / 1048576).toFixed(1)

buildServers()
const admin = new pg.Pool({ connectionString, max: 1 })
await seed(admin)

const idle: Record<typeof kinds[number], Array<{ rss: number, peak: number, stats: HeapStats, settled: Settled }>> = { hand: [], crud: [] }
for (let i = 0; i < rounds; i++) {
  for (const kind of i % 2 === 0 ? kinds : [...kinds].reverse()) {
    const server = await startServer(kind, env, '/movies/1/')
    const { rss, peak } = await server.idle()
    idle[kind].push({ rss, peak, stats: await server.stats(), settled: await server.settled() })
    // For bench/heap.ts: node --import tsx bench/heap.ts bench/profiles/idle-hand.heapsnapshot bench/profiles/idle-crud.heapsnapshot
    if (i === 0 && process.env.BENCH_HEAP !== undefined) {
      mkdirSync(profiles, { recursive: true })
      await server.command(`heap:${profiles}idle-${kind}.heapsnapshot`)
    }
    await server.stop()
  }
}
console.log('| idle, after a GC (median of %d starts) | hand-written | TableCRUD | difference |\n|---|---:|---:|---:|', rounds)
const row = (label: string, of: (x: typeof idle.hand[number]) => number): void => {
  const [h, c] = kinds.map((k) => median(idle[k].map(of)))
  console.log(`| ${label} | ${h!.toFixed(1)} | ${c!.toFixed(1)} | ${(c! - h!).toFixed(1)} |`)
}
row('RSS, MB', (x) => x.rss)
row('RSS once the young generation is given back, MB', (x) => x.settled.rss)
const unsettled = kinds.map((k) => idle[k].filter((x) => !x.settled.shrank).length)
console.log(`| starts in which V8 did not give it back within 30 s (their figure is a just-started one) | ${unsettled[0]!} | ${unsettled[1]!} | |`)
row('peak RSS at start-up, MB', (x) => x.peak)
row('V8 heap committed, MB', (x) => x.stats.usage.heapTotal / 1048576)
row('V8 heap used, MB', (x) => x.stats.usage.heapUsed / 1048576)
row('outside the heap (external), MB', (x) => x.stats.usage.external / 1048576)
for (const space of idle.crud[0]!.stats.spaces.map((s) => s.space_name)) {
  const of = (x: typeof idle.hand[number]): HeapStats['spaces'][number] => x.stats.spaces.find((s) => s.space_name === space)!
  row(`${space}: committed / used, MB`, (x) => of(x).space_size / 1048576)
  row(`${space}: used, MB`, (x) => of(x).space_used_size / 1048576)
}

console.log('\nstart-up, step by step (bench/imports.ts: RSS and heap used after a GC, MB):')
const imports = execFileSync(process.execPath, ['--expose-gc', fileURLToPath(new URL('./.build/bench/imports.js', import.meta.url))], { env: { ...process.env, ...env }, encoding: 'utf8' })
let previous: { rss: number, heapUsed: number } | null = null
for (const line of imports.trim().split('\n')) {
  const s = JSON.parse(line) as { step: string, rss: number, heapUsed: number }
  const delta = previous === null ? '' : ` (+${(s.rss - previous.rss).toFixed(1)} RSS, +${(s.heapUsed - previous.heapUsed).toFixed(1)} heap)`
  console.log(`  ${s.rss.toFixed(1).padStart(6)} RSS ${s.heapUsed.toFixed(1).padStart(5)} heap  ${s.step}${delta}`)
  previous = s
}

if (process.env.BENCH_LOAD === '1') {
  const only = process.env.BENCH_CASES
  const chosen = cases.filter((c) => only === undefined || c.label.includes(only))
  const peaks: Record<typeof kinds[number], number[]> = { hand: [], crud: [] }
  for (const kind of kinds) {
    const server = await startServer(kind, env, '/movies/1/')
    for (const c of chosen) {
      await run(server, c, Math.max(1, Math.round(seconds / 5)), 10)
      await run(server, c, seconds, 10)
      peaks[kind].push(memory(server.pid).peak)
    }
    const after = await server.idle()
    console.error(`${kind}: RSS after the load and a GC ${after.rss.toFixed(1)} MB; heap ${mb((await server.stats()).usage.heapUsed)} MB used`)
    await server.stop()
  }
  console.log('\n| peak RSS after the case (VmHWM, MB) | hand-written | TableCRUD | ratio |\n|---|---:|---:|---:|')
  chosen.forEach((c, i) => console.log(`| ${c.label} | ${peaks.hand[i]!.toFixed(1)} | ${peaks.crud[i]!.toFixed(1)} | ${(peaks.crud[i]! / peaks.hand[i]!).toFixed(2)} |`))
}
await drop(admin)
await admin.end()
