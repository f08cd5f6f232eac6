/**
 * TableCRUD against a hand-written Fastify + pg server running the same SQL, each in its own
 * process, in one run (DESIGN §4, issue 17): req/s and server CPU µs per request per case,
 * idle and peak RSS, and start-up with 20 tables. Needs PostgreSQL at DATABASE_URL.
 *
 *   npm run bench                        # 5 s a run; writes docs/bench.svg and docs/bench-results.md
 *   npm run bench:quick                  # 1 s a run, 10,000 rows, writes nothing: a smoke run
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=10 npm run bench
 *   npm run bench -- keyset              # opt-in: SPEC §7.1/7.2/7.5 on a million rows (bench/keyset.ts)
 *   npm run bench -- writes              # opt-in: bulk POST against single POSTs, PATCH with If-Match against without (bench/writes.ts)
 *
 * Every figure is taken in the order hand-written, TableCRUD, TableCRUD, hand-written (ABBA)
 * and the means compared, so drift over the run falls on both sides alike. The last table is
 * the cost of the `rateLimit` plugin on the list (bench/rate-limit.ts).
 */
import { writeFileSync } from 'node:fs'
import pg from 'pg'
import { cases, drop, MOVIES, seed, TABLES } from './cases.js'
import { chart, type Group } from './chart.js'
import { rateLimitCost } from './rate-limit.js'
import { buildServers, memory, run, startServer, type Run, type Server } from './measure.js'

if (process.argv.includes('keyset')) {
  await import('./keyset.js')
  process.exit(0)
}
if (process.argv.includes('writes')) {
  await import('./writes.js')
  process.exit(0)
}

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10)
const write = process.env.BENCH_WRITE !== '0'
const connectionString = process.env.DATABASE_URL
if (connectionString === undefined) throw new Error('bench: set DATABASE_URL (each server runs in its own process with its own pool)')

buildServers()
const admin = new pg.Pool({ connectionString, max: 1 })
await seed(admin)

const env = { BENCH_DATABASE_URL: connectionString, BENCH_POOL: String(connections) }
const probe = '/movies/1/'
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length

// Start-up: one start of each not counted (the OS's file cache), then ABBA.
for (const kind of ['hand', 'crud'] as const) await (await startServer(kind, env, probe)).stop()
const starts: Record<'hand' | 'crud', number[]> = { hand: [], crud: [] }
const idles: Record<'hand' | 'crud', number[]> = { hand: [], crud: [] }
async function start (kind: 'hand' | 'crud'): Promise<Server> {
  const server = await startServer(kind, env, probe)
  starts[kind].push(server.startup)
  idles[kind].push((await server.idle()).rss)
  return server
}
await (await start('hand')).stop()
await (await start('crud')).stop()
const crud = await start('crud')
const hand = await start('hand')

const results: Array<{ label: string, kind: 'read' | 'write', a: Run, b: Run }> = []
// BENCH_ONLY=<part of a label> runs the cases whose label holds it (a look at one case; writes nothing worth keeping).
const only = process.env.BENCH_ONLY
for (const c of cases.filter((c) => only === undefined || c.label.includes(only))) {
  const warm = Math.max(1, Math.round(seconds / 5))
  await run(hand, c, warm, connections)
  await run(crud, c, warm, connections)
  const runs = [await run(hand, c, seconds, connections), await run(crud, c, seconds, connections), await run(crud, c, seconds, connections), await run(hand, c, seconds, connections)]
  const avg = (rs: Run[]): Run => ({ rps: mean(rs.map((r) => r.rps)), cpuPerRequest: mean(rs.map((r) => r.cpuPerRequest)), requests: mean(rs.map((r) => r.requests)) })
  results.push({ label: c.label, kind: c.kind, a: avg([runs[0]!, runs[3]!]), b: avg([runs[1]!, runs[2]!]) })
  console.error(`done: ${c.label}`)
}
const peak = { hand: memory(hand.pid).peak, crud: memory(crud.pid).peak }
await crud.stop()
await hand.stop()
const rateLimits = only === undefined ? await rateLimitCost(connectionString, seconds, connections) : []
await drop(admin)
await admin.end()

const goals = { read: { rps: 0.9, cpu: 1.15 }, write: { rps: 0.85, cpu: 1.25 } }
const ok = (pass: boolean): string => pass ? 'yes' : '**no**'
const lines = [
  `${seconds} s a run, ${connections} connections, ${MOVIES.toLocaleString('en')} movies, PostgreSQL at DATABASE_URL; means of ABBA runs.`,
  '',
  '| case | hand-written req/s | TableCRUD req/s | ratio (goal) | hand-written CPU µs/req | TableCRUD CPU µs/req | CPU ratio (goal) | goals met |',
  '|---|---:|---:|---:|---:|---:|---:|:---:|'
]
for (const r of results) {
  const g = goals[r.kind]
  const ratio = r.b.rps / r.a.rps
  const cpu = r.b.cpuPerRequest / r.a.cpuPerRequest
  lines.push(`| ${r.label} | ${r.a.rps.toFixed(0)} | ${r.b.rps.toFixed(0)} | ${ratio.toFixed(2)} (≥ ${g.rps}) | ${r.a.cpuPerRequest.toFixed(0)} | ${r.b.cpuPerRequest.toFixed(0)} | ${cpu.toFixed(2)} (≤ ${g.cpu}) | ${ok(ratio >= g.rps && cpu <= g.cpu)} |`)
}
const idle = { hand: mean(idles.hand), crud: mean(idles.crud) }
const startup = { hand: mean(starts.hand), crud: mean(starts.crud) }
lines.push(
  '',
  '| process | hand-written | TableCRUD | goal | met |',
  '|---|---:|---:|---|:---:|',
  `| idle RSS after a GC, MB | ${idle.hand.toFixed(1)} | ${idle.crud.toFixed(1)} | ≤ 75 MB | ${ok(idle.crud <= 75)} |`,
  `| peak RSS over the run, MB | ${peak.hand.toFixed(1)} | ${peak.crud.toFixed(1)} | ≤ 1.2× hand-written (${(peak.crud / peak.hand).toFixed(2)}×) | ${ok(peak.crud <= 1.2 * peak.hand)} |`,
  `| spawn to first 200, ms (TableCRUD: ${TABLES} tables) | ${startup.hand.toFixed(0)} | ${startup.crud.toFixed(0)} | ≤ hand-written + 300 ms (+${(startup.crud - startup.hand).toFixed(0)}) | ${ok(startup.crud - startup.hand <= 300)} |`
)
lines.push('', ...rateLimits)
const table = lines.join('\n')
console.log(table)

if (write) {
  const docs = new URL('../docs/', import.meta.url)
  const groups: Group[] = results.map((r) => ({
    label: r.label,
    bars: [
      { label: 'req/s', value: r.b.rps / r.a.rps, goal: goals[r.kind].rps, atLeast: true },
      { label: 'CPU µs/req', value: r.b.cpuPerRequest / r.a.cpuPerRequest, goal: goals[r.kind].cpu, atLeast: false }
    ]
  }))
  groups.push({ label: 'memory', bars: [{ label: 'peak RSS', value: peak.crud / peak.hand, goal: 1.2, atLeast: false }] })
  writeFileSync(new URL('bench.svg', docs), chart(`TableCRUD / hand-written Fastify + pg (${seconds} s runs, ${connections} connections)`, groups))
  writeFileSync(new URL('bench-results.md', docs), `# Bench results\n\nWritten by \`npm run bench\` (bench/run.ts); see [performance.md](performance.md).\n\n${table}\n\n![TableCRUD / hand-written, per case](bench.svg)\n`)
}
