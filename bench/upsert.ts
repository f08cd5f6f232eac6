/**
 * SPEC §8.5 against the TableCRUD bench server, opt-in:
 *
 *   npm run bench -- upsert              # DATABASE_URL; BENCH_SECONDS, BENCH_CONNECTIONS as for the main run
 *
 * In the same run, in ABBA order: rows per second written, and the server's CPU µs per row, by
 * one POST `/?__on_conflict=code` of an array of 1,000 rows (every row already there, so every
 * row is updated: the costlier way of an upsert) and by PUT `/:id/` of one row per request,
 * each request the next of the same 1,000 rows. Both write the same values over the same rows.
 */
import pg from 'pg'
import { CODES, drop, seed } from './cases.js'
import { abbaRuns, buildServers, startServer, writeBenchSettings, type Run } from './measure.js'
import type { Case } from './cases.js'

const { seconds, connections, connectionString } = writeBenchSettings()
const BATCH = CODES

buildServers()
const admin = new pg.Pool({ connectionString, max: 1 })
// The bench's tables (bench/cases.ts), the code table's CODES rows among them: the server mounts them all.
await seed(admin)
const server = await startServer('crud', { BENCH_DATABASE_URL: connectionString, BENCH_POOL: String(connections) }, '/codes/c0/')

const rowOf = (i: number): Record<string, unknown> => ({ code: `c${i}`, name: `Row ${i}`, rating: 7.5 })
const upsert: Case = {
  label: `POST ?__on_conflict=code, ${BATCH} rows`,
  path: '/codes/?__on_conflict=code',
  kind: 'write',
  method: 'POST',
  body: JSON.stringify(Array.from({ length: BATCH }, (_, i) => rowOf(i)))
}
let next = 0
const put: Case = {
  label: 'PUT /:id/, one row',
  path: '/codes/c0/',
  kind: 'write',
  method: 'PUT',
  setupRequest: (request) => {
    const i = next++ % BATCH
    return { ...request, path: `/codes/c${i}/`, body: JSON.stringify(rowOf(i)), headers: { ...request.headers, 'content-type': 'application/json' } }
  }
}

const abba = async (a: Case, b: Case): Promise<[Run, Run]> => await abbaRuns(server, a, b, seconds, connections)

const [single, many] = await abba(put, upsert)
await server.stop()
const rows = Number((await admin.query<{ n: string }>('SELECT count(*) AS n FROM bench_code')).rows[0]!.n)
await drop(admin)
await admin.end()
if (rows !== BATCH) throw new Error(`bench: ${rows} rows in bench_code, not ${BATCH}: an upsert inserted`)

const f = (x: number): string => Math.round(x).toLocaleString('en')
console.log([
  `${seconds} s a run, ${connections} connections, TableCRUD server in its own process; means of ABBA runs.`,
  '',
  '| case | req/s | rows/s | server CPU µs per row |',
  '|---|---:|---:|---:|',
  `| ${put.label} | ${f(single.rps)} | ${f(single.rps)} | ${f(single.cpuPerRequest)} |`,
  `| ${upsert.label} | ${f(many.rps)} | ${f(many.rps * BATCH)} | ${(many.cpuPerRequest / BATCH).toFixed(1)} |`,
  '',
  `Upsert of ${BATCH} / single PUTs: ×${(many.rps * BATCH / single.rps).toFixed(1)} rows/s, ×${(single.cpuPerRequest / (many.cpuPerRequest / BATCH)).toFixed(1)} less server CPU per row.`
].join('\n'))
