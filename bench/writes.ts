/**
 * SPEC §7.4 and §7.3 against the TableCRUD bench server, opt-in:
 *
 *   npm run bench -- writes              # DATABASE_URL; BENCH_SECONDS, BENCH_CONNECTIONS as for the main run
 *
 * In the same run, in ABBA order: rows per second inserted by POSTs of one row and by POSTs of
 * an array of 1,000 rows, and PATCH of one row per request without and with `If-Match` (the
 * conditional write is a transaction holding the row `FOR UPDATE`). Each PATCH goes to the next
 * row of the first 1,000, so concurrent requests do not queue on one row's lock, and writes the
 * name the row already has, so its ETag stays the one read before the run.
 */
import pg from 'pg'
import { drop, movie, MOVIES, seed } from './cases.js'
import { abbaRuns, buildServers, startServer, writeBenchSettings, type Run } from './measure.js'
import type { Case } from './cases.js'

const { seconds, connections, connectionString } = writeBenchSettings()
const BATCH = 1000

buildServers()
const admin = new pg.Pool({ connectionString, max: 1 })
await seed(admin)
const server = await startServer('crud', { BENCH_DATABASE_URL: connectionString, BENCH_POOL: String(connections) }, '/movies/1/')

const row = { name: 'New movie', rating: 7.5, box_office: '1234.50', released: '2024-05-01T20:30:00', director: 3, tags: ['new', 'x'] }
const single: Case = { label: 'POST one row', path: '/movies/', kind: 'write', method: 'POST', body: JSON.stringify(row) }
const bulk: Case = { label: `POST ${BATCH} rows`, path: '/movies/', kind: 'write', method: 'POST', body: JSON.stringify(Array.from({ length: BATCH }, () => row)) }

// The rows PATCHed, with the name each has and its ETag.
const targets = await Promise.all(Array.from({ length: Math.min(BATCH, MOVIES) }, async (_, i) => {
  const response = await fetch(`${server.url}/movies/${i + 1}/`)
  const { name } = await response.json() as { name: string }
  return { path: `/movies/${i + 1}/`, body: JSON.stringify({ name }), etag: response.headers.get('etag')! }
}))
function patch (conditional: boolean): Case {
  let next = 0
  return {
    label: `PATCH ${conditional ? 'with' : 'without'} If-Match`,
    path: '/movies/1/',
    kind: 'write',
    method: 'PATCH',
    setupRequest: (request) => {
      const target = targets[next++ % targets.length]!
      const headers = { ...request.headers, 'content-type': 'application/json', ...(conditional ? { 'if-match': target.etag } : {}) }
      return { ...request, path: target.path, body: target.body, headers }
    }
  }
}
const plain = patch(false)
const conditional = patch(true)

const abba = async (a: Case, b: Case): Promise<[Run, Run]> => await abbaRuns(server, a, b, seconds, connections)

// The PATCHes first: after the inserts, the table's autovacuum and the checkpoint would fall on them.
const [without, withIfMatch] = await abba(plain, conditional)
const [one, many] = await abba(single, bulk)
await server.stop()
const inserted = Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${movie.name}`)).rows[0]!.n) - MOVIES
await drop(admin)
await admin.end()

const f = (x: number): string => Math.round(x).toLocaleString('en')
console.log([
  `${seconds} s a run, ${connections} connections, TableCRUD server in its own process; means of ABBA runs (${f(inserted)} rows inserted in all).`,
  '',
  '| case | req/s | rows/s | server CPU µs per row |',
  '|---|---:|---:|---:|',
  `| ${single.label} | ${f(one.rps)} | ${f(one.rps)} | ${f(one.cpuPerRequest)} |`,
  `| ${bulk.label} | ${f(many.rps)} | ${f(many.rps * BATCH)} | ${(many.cpuPerRequest / BATCH).toFixed(1)} |`,
  '',
  `Bulk / single: ×${(many.rps * BATCH / one.rps).toFixed(1)} rows/s.`,
  '',
  '| case | req/s | server CPU µs/req |',
  '|---|---:|---:|',
  `| ${plain.label} | ${f(without.rps)} | ${f(without.cpuPerRequest)} |`,
  `| ${conditional.label} | ${f(withIfMatch.rps)} | ${f(withIfMatch.cpuPerRequest)} |`,
  '',
  `With / without If-Match: ×${(withIfMatch.rps / without.rps).toFixed(2)} req/s, ×${(withIfMatch.cpuPerRequest / without.cpuPerRequest).toFixed(2)} CPU per request.`
].join('\n'))
