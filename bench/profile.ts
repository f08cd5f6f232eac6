/**
 * CPU profiles of the TableCRUD server under each chosen case's load, summarised by self time
 * per function and per package: `node --import tsx bench/profile.ts [case label prefix...]`
 * (every case whose label starts with one of the prefixes; all without). One server serves
 * them all, one profile per case, so a comparison of several cases pays for one seed and one
 * start. Profiles (`<case>.cpuprofile`, open in Chrome DevTools) are left in bench/profiles/;
 * with `BENCH_HEAP=1`, heap snapshots before and after the load too. `BENCH_KIND=hand`
 * profiles the hand-written server. `BENCH_RATE=54`: the load at that many requests a second
 * (autocannon's `overallRate`), as the bench measures a database-bound case's CPU.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import pg from 'pg'
import { cases, seed } from './cases.js'
import { buildServers, run, startServer } from './measure.js'
import { heapSummary, readSnapshot } from './heap.js'

interface Node { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, hitCount: number }
interface Profile { nodes: Node[], samples: number[], startTime: number, endTime: number }

const prefixes = process.argv.length > 2 ? process.argv.slice(2) : ['']
const kind = (process.env.BENCH_KIND ?? 'crud') as 'crud' | 'hand'
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const rate = process.env.BENCH_RATE === undefined ? undefined : Number(process.env.BENCH_RATE)
const dir = new URL('./profiles/', import.meta.url).pathname
rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })
const connectionString = process.env.DATABASE_URL!
buildServers(false)
const admin = new pg.Pool({ connectionString, max: 1 })
await seed(admin)
const server = await startServer(kind, { BENCH_DATABASE_URL: connectionString, BENCH_POOL: '10' }, '/movies/1/')
const chosen = cases.filter((c) => prefixes.some((p) => c.label.startsWith(p)))
// Warm: the JIT, the prepared statements, the per-shape caches.
for (const c of chosen) await run(server, c, 2, 10)
if (process.env.BENCH_HEAP !== undefined) await server.command(`heap:${dir}before.heapsnapshot`)
// Heap snapshots are taken without the CPU profiler, whose samples would be counted as growth.
const profiling = process.env.BENCH_HEAP === undefined
const runs: Array<{ label: string, file: string, requests: number }> = []
for (const c of chosen) {
  const file = `${c.label.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`
  if (profiling) await server.command('profile:start')
  const r = await run(server, c, seconds, 10, rate)
  if (profiling) await server.command(`profile:stop:${dir}${file}`)
  runs.push({ label: c.label, file, requests: r.requests })
  console.log(`${c.label}: ${r.rps.toFixed(0)} req/s, ${r.cpuPerRequest.toFixed(0)} µs/req (from /proc)`)
}
if (process.env.BENCH_HEAP !== undefined) await server.command(`heap:${dir}after.heapsnapshot`)
await server.stop()
await admin.end()

/** One case's profile: self time per package and per function, in µs of CPU per request (what compares across servers and runs of different speed). */
function summary (label: string, file: string, requests: number): string {
  const profile = JSON.parse(readFileSync(dir + file, 'utf8')) as Profile
  const total = profile.samples.length
  const byFunction = new Map<string, number>()
  const byPackage = new Map<string, number>()
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame
    const where = url.replace(/^file:\/\/.*?\/(node_modules\/)?/, '').replace(/^.*node_modules\//, '')
    const fn = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.hitCount)
    const pkg = url === '' ? functionName : url.includes('node_modules/') ? url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1') : url.startsWith('node:') ? 'node:' + url.slice(5).split('/')[0] : url.replace(/^file:\/\/.*\/wt\/[^/]+\//, '')
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + node.hitCount)
  }
  const perRequest = (profile.endTime - profile.startTime) / total / requests
  const top = (m: Map<string, number>, n: number): string => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${(100 * v / total).toFixed(1).padStart(5)}% ${(v * perRequest).toFixed(1).padStart(6)} µs/req  ${k}`).join('\n')
  const busy = total - (byPackage.get('(idle)') ?? 0)
  return `\n## ${label}: ${total} samples (${file}), ${requests} requests, ${(busy * perRequest).toFixed(0)} µs/req busy\n\nby package or file:\n${top(byPackage, 25)}\n\nby function:\n${top(byFunction, 30)}`
}

if (profiling) for (const r of runs) console.log(summary(r.label, r.file, r.requests))

if (process.env.BENCH_HEAP !== undefined) {
  const before = heapSummary(readSnapshot(`${dir}before.heapsnapshot`))
  const after = heapSummary(readSnapshot(`${dir}after.heapsnapshot`))
  const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0)
  const mb = (n: number): string => (n / 1048576).toFixed(2)
  console.log(`\nheap after a GC: ${mb(total(before))} MB before the load, ${mb(total(after))} MB after; largest growth:`)
  const growth = [...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).sort((a, b) => b[1] - a[1]).slice(0, 12)
  for (const [k, v] of growth) console.log(`${mb(v).padStart(8)} MB  ${k}`)
}
