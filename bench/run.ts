/**
 * TableCRUD against a hand-written Fastify + pg server doing the same work, each in its own
 * process, in one run (DESIGN §4, issues 17 and 31): req/s and server CPU µs per request per
 * case, medians of alternating rounds; idle and peak RSS; start-up. Platformatic DB runs in the
 * same rounds on the cases it has a route for (bench/platformatic/), installed by the bench on
 * first use. Needs PostgreSQL at DATABASE_URL (a database of the bench's own: it creates and
 * drops its tables there).
 *
 *   npm run bench                        # 3 rounds of 5 s runs; writes docs/bench.svg and docs/bench-results.md
 *   npm run bench:quick                  # 1 round of 1 s runs, 10,000 rows, writes nothing: a smoke run
 *   BENCH_SECONDS=10 BENCH_ROUNDS=3 npm run bench                 # the record run (docs/performance.md)
 *   BENCH_BEFORE=/path/to/older/checkout npm run bench            # TableCRUD before and now in the same rounds
 *   BENCH_CASES=aggregate npm run bench:quick   # only the cases whose label holds the text
 *   npm run bench -- keyset | writes | topologies | upsert | search   # the opt-in benches (see each file)
 *
 * Settings: BENCH_SECONDS (5) a run, BENCH_ROUNDS (3), BENCH_CONNECTIONS (10), BENCH_ROWS
 * (100,000 movies), BENCH_RATE_SHARE (0.5: the fixed rate of a database-bound case, as a share
 * of the slowest server's req/s, Platformatic DB's left out), BENCH_TOPOLOGIES=0 (skip PgBouncer
 * and the replica), BENCH_WRITE=0 (print only), BENCH_PLATFORMATIC=0 (leave Platformatic DB out,
 * e.g. where its install cannot reach the registry; a failed install leaves it out too, with the
 * reason printed), BENCH_STARTS=0 (no start-up or idle RSS figures: quicker A/B runs of cases).
 */
import { writeFileSync } from 'node:fs'
import pg from 'pg'
import { cases, drop, MOVIES, seed, TABLES, type Case } from './cases.js'
import { chart, type Group } from './chart.js'
import { rateLimitCost } from './rate-limit.js'
import { buildBefore, buildServers, memory, removeBefore, startServer, type Server, type ServerKind } from './measure.js'
import { casesTable, loadAverage, machine, processTable, type Process } from './report.js'
import { measureRounds, median, type Contender, type Measured, type Settings } from './rounds.js'
import { PLATFORMATIC_LABEL, platformaticMissing } from './platformatic/install.js'
import { PLATFORMATIC_PROBE, platformaticRequest } from './platformatic/requests.js'
import { startPgBouncer, pgbouncerMissing } from '../test/helpers/pgbouncer.js'
import { caughtUp, replicaMissing, startPrimary, startReplica } from '../test/helpers/replica.js'

for (const opt of ['keyset', 'topologies', 'upsert', 'search', 'writes']) {
  if (process.argv.includes(opt) || (opt === 'search' && process.env.BENCH_SEARCH === '1')) {
    await import(`./${opt}.js`)
    process.exit(0)
  }
}

const direct = process.env.DATABASE_URL
if (direct === undefined) throw new Error('bench: set DATABASE_URL (each server runs in its own process with its own pool)')
const settings: Settings = {
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  rateShare: Number(process.env.BENCH_RATE_SHARE ?? 0.5)
}
const only = process.env.BENCH_CASES
const chosen = cases.filter((c) => only === undefined || c.label.includes(only))
const before = process.env.BENCH_BEFORE

/**
 * A server to start: the hand-written one, Platformatic DB, TableCRUD of `BENCH_BEFORE`, and
 * TableCRUD of this checkout, last: the goals and the chart are about the last one.
 */
interface Kind { readonly label: string, readonly kind: ServerKind, readonly from?: string }
buildServers()
const notes: string[] = []
const noPlatformatic = platformaticMissing()
if (noPlatformatic !== null) {
  notes.push(`${PLATFORMATIC_LABEL} left out: ${noPlatformatic}.`)
  console.error(`bench: ${notes[0]!}`)
}
const kinds: Kind[] = [
  { label: 'hand-written', kind: 'hand' },
  ...(noPlatformatic === null ? [{ label: PLATFORMATIC_LABEL, kind: 'platformatic' as const }] : []),
  ...(before === undefined ? [] : [{ label: 'TableCRUD before', kind: 'crud' as const, from: buildBefore(before) }]),
  { label: before === undefined ? 'TableCRUD' : 'TableCRUD now', kind: 'crud' }
]
const start = async (k: Kind, env: Record<string, string>): Promise<Server> =>
  await startServer(k.kind, { BENCH_POOL: String(settings.connections), ...env }, k.kind === 'platformatic' ? PLATFORMATIC_PROBE : '/movies/1/', k.from)

/**
 * Start-up and idle RSS, after a forced GC and once V8 has settled (bench/measure.ts `settled`):
 * one start of each not counted (the OS's file cache), then a start of each per round, in
 * alternating order.
 */
async function starts (env: Record<string, string>, which: readonly Kind[]): Promise<Array<{ startup: number, idle: number, settled: number, unsettled: number }>> {
  for (const k of which) await (await start(k, env)).stop()
  const figures = which.map(() => ({ startup: [] as number[], idle: [] as number[], settled: [] as number[], unsettled: 0 }))
  for (let round = 0; round < settings.rounds; round++) {
    const order = which.map((k, i) => ({ k, i }))
    if (round % 2 === 1) order.reverse()
    for (const { k, i } of order) {
      const server = await start(k, env)
      figures[i]!.startup.push(server.startup)
      figures[i]!.idle.push((await server.idle()).rss)
      const { rss, shrank } = await server.settled()
      figures[i]!.settled.push(rss)
      if (!shrank) figures[i]!.unsettled++
      await server.stop()
    }
  }
  return figures.map((f) => ({ startup: median(f.startup), idle: median(f.idle), settled: median(f.settled), unsettled: f.unsettled }))
}

/** A group's figures widened to every kind, so the report's columns line up: a kind left out of the group serves none of its cases. */
function widened (m: Measured, which: readonly Kind[]): Measured {
  const at = kinds.map((k) => which.indexOf(k))
  return { ...m, serves: at.map((i) => i >= 0 && m.serves[i]!), closed: at.map((i) => i >= 0 ? m.closed[i]! : []), fixed: at.map((i) => i >= 0 ? m.fixed[i]! : []) }
}

/** One group of servers (a topology) through its rounds on the given cases; Platformatic DB runs in the main group only. */
async function group (label: string, env: Record<string, string>, admin: pg.Pool, list: readonly Case[]): Promise<{ measured: Measured[], peaks: number[] }> {
  const which = label === '' ? kinds : kinds.filter((k) => k.kind !== 'platformatic')
  const contenders: Contender[] = []
  for (const k of which) contenders.push({ label: k.label, server: await start(k, env) })
  try {
    const measured = await measureRounds(label, contenders, list, admin, settings)
    return { measured: measured.map((m) => widened(m, which)), peaks: contenders.map((c) => memory(c.server.pid).peak) }
  } finally {
    for (const c of contenders) await c.server.stop()
  }
}

const teardowns: Array<() => unknown> = []
const t = { teardown: (fn: () => unknown) => { teardowns.unshift(fn) } }
const admin = new pg.Pool({ connectionString: direct, max: 1 })
const measured: Measured[] = []
let processes: Process[] = []
let rateLimits: string[] = []
let where = ''
const loadAtStart = loadAverage()
try {
  await seed(admin)
  where = await machine(admin)
  const env = { BENCH_DATABASE_URL: direct }
  // BENCH_STARTS=0: no start-up or idle figures, which take some 10 s a start (each waits for V8 to settle): for A/B runs of cases.
  const startsToo = process.env.BENCH_STARTS !== '0'
  const plain = startsToo ? await starts(env, kinds) : []
  const crudKinds = kinds.filter((k) => k.kind === 'crud')
  const many = startsToo ? await starts({ ...env, BENCH_TABLES: String(TABLES) }, crudKinds) : []
  const main = await group('', env, admin, chosen)
  measured.push(...main.measured)
  const unmapped = chosen.filter((c) => platformaticRequest(c) === null)
  if (noPlatformatic === null && unmapped.length > 0) {
    notes.push(`${PLATFORMATIC_LABEL} has no route for: ${unmapped.map((c) => c.label).join('; ')}; skipped for it (bench/platformatic/requests.ts).`)
  }
  processes = kinds.map((k, i) => {
    const twenty = k.kind === 'crud' ? many[crudKinds.indexOf(k)] : undefined
    return { label: k.label, idle: plain[i]?.idle, settled: plain[i]?.settled, unsettled: plain[i]?.unsettled, peak: main.peaks[i]!, startup: plain[i]?.startup, ...(twenty === undefined ? {} : { startup20: twenty.startup, idle20: twenty.idle, settled20: twenty.settled }) }
  })
  if (only === undefined && process.env.BENCH_RATE_LIMIT !== '0') rateLimits = await rateLimitCost(direct, settings.seconds, settings.connections)

  // SPEC §9: the list and by id through PgBouncer in transaction mode, and with reads on a streaming replica.
  const reads = chosen.filter((c) => c.label.startsWith('list, page') || c.label === 'by id')
  const topologies = process.env.BENCH_TOPOLOGIES !== '0' && reads.length > 0
  const bouncerMissing = topologies ? pgbouncerMissing(direct) : 'BENCH_TOPOLOGIES=0 or no such case chosen'
  if (bouncerMissing === null) {
    const bouncer = await startPgBouncer(t, { upstream: direct, poolSize: settings.connections })
    // TableCRUD with unnamed statements, as SPEC §9.1 asks behind a transaction-mode pooler; pg's are unnamed already.
    measured.push(...(await group('through PgBouncer', { BENCH_DATABASE_URL: bouncer.connectionString, BENCH_PREPARED: 'unnamed' }, admin, reads)).measured)
  } else notes.push(`PgBouncer cases skipped: ${bouncerMissing}.`)
  await drop(admin)
  const noReplica = topologies ? replicaMissing() : 'BENCH_TOPOLOGIES=0 or no such case chosen'
  if (noReplica === null) {
    const primary = await startPrimary(t)
    const replica = await startReplica(t, primary, { logStatements: false })
    const onPrimary = new pg.Pool({ connectionString: primary.url('test'), max: 1 })
    try {
      await seed(onPrimary)
      await caughtUp(primary, replica)
      measured.push(...(await group('reads on a replica', { BENCH_DATABASE_URL: primary.url('test'), BENCH_REPLICA: replica.url('test') }, onPrimary, reads)).measured)
    } finally {
      await onPrimary.end()
    }
  } else notes.push(`Replica cases skipped: ${noReplica}.`)
} finally {
  for (const teardown of teardowns) await teardown()
  // Dropped already unless the run failed; dropping again is a no-op.
  await drop(admin)
  await admin.end()
  if (before !== undefined) removeBefore(before)
}

const labels = kinds.map((k) => k.label)
const rival = kinds.findIndex((k) => k.kind === 'platformatic')
const { lines, ratios } = casesTable(measured, labels, settings, rival < 0 ? undefined : rival)
const table = [
  `Machine: ${where}. Load average (1, 5, 15 min) at the start ${loadAtStart}, at the end ${loadAverage()}.`,
  '',
  `${settings.rounds} round${settings.rounds === 1 ? '' : 's'}, each running every case on every server for ${settings.seconds} s (servers in alternating order, after a warm-up); ` +
  `${settings.connections} connections; ${MOVIES.toLocaleString('en')} movies; medians over the rounds, the range of the per-round ratios in brackets. ` +
  'Server CPU from /proc (the threads\' schedstat). "PgBouncer": transaction mode, TableCRUD with unnamed statements; "replica": a streaming replica of a primary of the bench\'s own, both on this machine.' +
  (before === undefined ? '' : ` TableCRUD before: ${before}, its library with this run's bench server (bench/measure.ts buildBefore).`),
  '',
  ...lines,
  ...notes.flatMap((n) => ['', n]),
  '',
  ...processTable(processes),
  ...(rateLimits.length === 0 ? [] : ['', ...rateLimits])
].join('\n')
console.log(table)

if (process.env.BENCH_WRITE !== '0') {
  const docs = new URL('../docs/', import.meta.url)
  const others = labels.slice(1)
  // TableCRUD against the hand-written server: Platformatic's ratios to it have no goal to draw.
  const drawn = (i: number): boolean => i + 1 !== rival
  const groups: Group[] = ratios.map((r) => ({
    label: r.label,
    bars: others.flatMap((l, i) => [
      ...(r.rps[i] == null || !drawn(i) ? [] : [{ label: `req/s, ${l}`, value: r.rps[i]!, goal: r.goal.rps, atLeast: true }]),
      ...(r.cpu[i] == null || !drawn(i) ? [] : [{ label: `CPU µs/req, ${l}`, value: r.cpu[i]!, goal: r.goal.cpu, atLeast: false }])
    ])
  }))
  const last = processes.at(-1)!
  groups.push({ label: 'memory', bars: [{ label: 'peak RSS', value: last.peak / processes[0]!.peak, goal: 1.2, atLeast: false }] })
  writeFileSync(new URL('bench.svg', docs), chart(`TableCRUD / hand-written Fastify + pg (medians of ${settings.rounds} rounds of ${settings.seconds} s, ${settings.connections} connections)`, groups))
  writeFileSync(new URL('bench-results.md', docs), `# Bench results\n\nThe one table of every case, written by \`npm run bench\` (bench/run.ts); how to read it: [performance.md](performance.md).\n\n${table}\n\n![TableCRUD / hand-written, per case](bench.svg)\n`)
}
