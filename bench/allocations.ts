/**
 * What a bench server promotes to its old generation under one case's load: sampled
 * allocations that live through young-generation GCs, by the code that allocated them.
 * Under load the old generation grows by what is promoted until a full GC, so this is what
 * sets the peak RSS (docs/performance.md, Memory).
 *
 *   DATABASE_URL=... node --import tsx bench/allocations.ts [case label prefix]    # BENCH_KIND=hand for the hand-written server
 */
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import pg from 'pg'
import { cases, drop, seed } from './cases.js'
import { buildServers, run, startServer } from './measure.js'

interface CallFrame { functionName: string, url: string, lineNumber: number }
interface SamplingNode { id: number, callFrame: CallFrame, selfSize: number, children: SamplingNode[] }

const prefix = process.argv[2] ?? ''
const kind = (process.env.BENCH_KIND ?? 'crud') as 'crud' | 'hand'
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connectionString = process.env.DATABASE_URL
if (connectionString === undefined) throw new Error('bench: set DATABASE_URL')
// A file a module, as bench/profile.ts: the summary names the module of each allocating function.
buildServers(false)
const admin = new pg.Pool({ connectionString, max: 1 })
await seed(admin)
const server = await startServer(kind, { BENCH_DATABASE_URL: connectionString, BENCH_POOL: '10' }, '/movies/1/')
const chosen = cases.filter((c) => c.label.startsWith(prefix))
for (const c of chosen) await run(server, c, 2, 10)
const file = `${tmpdir()}/bench-allocations-${server.pid}.json`
await server.command('allocations:start')
let requests = 0
for (const c of chosen) requests += (await run(server, c, seconds, 10)).requests
await server.command(`allocations:stop:${file}`)
await server.stop()
await drop(admin)
await admin.end()

const frame = ({ functionName, url, lineNumber }: CallFrame): string =>
  `${functionName || '(anonymous)'} ${url.replace(/^file:\/\/.*?\/(node_modules\/|\.build\/)?/, '').replace(/^.*node_modules\//, '')}:${lineNumber + 1}`
const byFunction = new Map<string, number>()
const byStack = new Map<string, number>()
let total = 0
const walk = (node: SamplingNode, stack: string[]): void => {
  const here = [...stack, frame(node.callFrame)]
  if (node.selfSize > 0) {
    total += node.selfSize
    const own = here.filter((f) => !f.startsWith('(root)'))
    byFunction.set(here.at(-1)!, (byFunction.get(here.at(-1)!) ?? 0) + node.selfSize)
    const key = own.slice(-6).reverse().join('\n      < ')
    byStack.set(key, (byStack.get(key) ?? 0) + node.selfSize)
  }
  for (const child of node.children) walk(child, here)
}
walk((JSON.parse(readFileSync(file, 'utf8')) as { head: SamplingNode }).head, [])
const perRequest = (bytes: number): string => `${(bytes / requests).toFixed(0).padStart(6)} B/req`
const top = (m: Map<string, number>, n: number): string => [...m].sort((a, b) => b[1] - a[1]).slice(0, n)
  .map(([k, v]) => `${(100 * v / total).toFixed(1).padStart(5)}% ${perRequest(v)}  ${k}`).join('\n')
console.log(`${kind}, ${requests} requests: ${perRequest(total)} outlived a young-generation GC (sampled)\n\nby function:\n${top(byFunction, 20)}\n\nby stack:\n${top(byStack, 12)}`)
