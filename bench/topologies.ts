/**
 * SPEC §9 topologies (issue 23), opt-in: `npm run bench -- topologies`. Needs DATABASE_URL,
 * Debian's pgbouncer and the PostgreSQL 15 server binaries (.ci/server-deps).
 *
 * 1. TableCRUD with `preparedStatements: 'unnamed'` against `'named'` (the default), straight to
 *    the server: the cost of planning every statement. Then through PgBouncer in transaction
 *    mode (`'unnamed'`) against straight (`'named'`): that cost plus PgBouncer's hop, on list
 *    and by-id.
 * 2. TableCRUD with one streaming replica serving its reads against the same on the primary
 *    alone (a primary and a replica of our own, both on this machine: the figure is the cost
 *    of routing, not a gain in capacity, which one machine cannot show).
 *
 * Each pair is measured ABBA and printed as a markdown table: TableCRUD against itself. The
 * main run (bench/run.ts) measures the list and by id through PgBouncer and with a replica
 * against the hand-written server, in its table of all cases.
 */
import pg from 'pg'
import { cases, drop, seed } from './cases.js'
import { buildServers, run, startServer, type Run, type Server } from './measure.js'
import { startPgBouncer } from '../test/helpers/pgbouncer.js'
import { caughtUp, startPrimary, startReplica } from '../test/helpers/replica.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10)
const direct = process.env.DATABASE_URL
if (direct === undefined) throw new Error('bench: set DATABASE_URL')

const teardowns: Array<() => unknown> = []
const t = { teardown: (fn: () => unknown) => { teardowns.unshift(fn) } }
const reads = cases.filter((c) => c.label.startsWith('list, page') || c.label === 'by id')
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length
const average = (rs: Run[]): Run => ({ rps: mean(rs.map((r) => r.rps)), cpuPerRequest: mean(rs.map((r) => r.cpuPerRequest)), requests: mean(rs.map((r) => r.requests)) })

/** A against B on each read case, ABBA: rows of the markdown table. */
async function compare (a: Record<string, string>, b: Record<string, string>): Promise<string[]> {
  const serverA = await startServer('crud', { BENCH_POOL: String(connections), ...a }, '/movies/1/')
  const serverB = await startServer('crud', { BENCH_POOL: String(connections), ...b }, '/movies/1/')
  const rows: string[] = []
  for (const c of reads) {
    const once = async (server: Server): Promise<Run> => await run(server, c, seconds, connections)
    await run(serverA, c, 1, connections)
    await run(serverB, c, 1, connections)
    const runs = [await once(serverA), await once(serverB), await once(serverB), await once(serverA)]
    const [ra, rb] = [average([runs[0]!, runs[3]!]), average([runs[1]!, runs[2]!])]
    rows.push(`| ${c.label} | ${ra.rps.toFixed(0)} | ${rb.rps.toFixed(0)} | ${(rb.rps / ra.rps).toFixed(2)} | ${(rb.cpuPerRequest / ra.cpuPerRequest).toFixed(2)} |`)
  }
  await serverA.stop()
  await serverB.stop()
  return rows
}

buildServers()
try {
  const admin = new pg.Pool({ connectionString: direct, max: 1 })
  await seed(admin)
  const unnamed = await compare({ BENCH_DATABASE_URL: direct, BENCH_PREPARED: 'named' }, { BENCH_DATABASE_URL: direct, BENCH_PREPARED: 'unnamed' })
  const bouncer = await startPgBouncer(t, { upstream: direct, poolSize: connections })
  const pooled = await compare({ BENCH_DATABASE_URL: direct, BENCH_PREPARED: 'named' }, { BENCH_DATABASE_URL: bouncer.connectionString, BENCH_PREPARED: 'unnamed' })
  await drop(admin)
  await admin.end()

  const primary = await startPrimary(t)
  const replica = await startReplica(t, primary, { logStatements: false })
  const onPrimary = new pg.Pool({ connectionString: primary.url('test'), max: 1 })
  await seed(onPrimary)
  await onPrimary.end()
  await caughtUp(primary, replica)
  const replicated = await compare({ BENCH_DATABASE_URL: primary.url('test') }, { BENCH_DATABASE_URL: primary.url('test'), BENCH_REPLICA: replica.url('test') })

  console.log(`${seconds} s per run, ${connections} connections, ABBA means, ${new Date().toISOString().slice(0, 10)}\n`)
  console.log('| case | named: req/s | unnamed: req/s | req/s ratio | CPU per request ratio |\n|---|---:|---:|---:|---:|')
  console.log(unnamed.join('\n'))
  console.log('\n| case | direct, named: req/s | PgBouncer transaction, unnamed: req/s | req/s ratio | CPU per request ratio |\n|---|---:|---:|---:|---:|')
  console.log(pooled.join('\n'))
  console.log('\n| case | primary only: req/s | reads on one replica: req/s | req/s ratio | CPU per request ratio |\n|---|---:|---:|---:|---:|')
  console.log(replicated.join('\n'))
} finally {
  for (const teardown of teardowns) await teardown()
}
