/**
 * Checks that the hand-written server answers each case as TableCRUD does, byte for byte (a
 * POST's body up to the new row's id), so the bench compares the same work:
 * `DATABASE_URL=... node --import tsx bench/same-answers.ts`. Prints each case and exits 1 on
 * a difference. It seeds the bench's tables (`BENCH_ROWS`) and drops them at the end.
 */
import pg from 'pg'
import { cases, drop, seed } from './cases.js'
import { buildServers, startServer } from './measure.js'

const connectionString = process.env.DATABASE_URL
if (connectionString === undefined) throw new Error('bench: set DATABASE_URL')
buildServers()
const admin = new pg.Pool({ connectionString, max: 1 })
await seed(admin)
const env = { BENCH_DATABASE_URL: connectionString, BENCH_POOL: '2' }
const servers = { hand: await startServer('hand', env, '/movies/1/'), crud: await startServer('crud', env, '/movies/1/') }

type Case = (typeof cases)[number]
interface Sent { path: string, body?: string }

/** The request of a case as its load sends it (`setupRequest`: the first variant), the same for both servers. */
function request (c: Case): Sent {
  const sent: Sent = { path: c.path, ...(c.body === undefined ? {} : { body: c.body }) }
  return c.setupRequest === undefined ? sent : c.setupRequest({ method: c.method ?? 'GET', ...sent }) as Sent
}

/** The body a server answers, a new row's id made `<id>` (each server inserts its own). */
async function answer (url: string, c: Case, sent: Sent): Promise<{ status: number, body: string }> {
  const response = await fetch(url + sent.path, { method: c.method ?? 'GET', ...(sent.body === undefined ? {} : { body: sent.body, headers: { 'content-type': 'application/json' } }) })
  const body = await response.text()
  return { status: response.status, body: c.method === 'POST' ? body.replace(/^\{"id":\d+,/, '{"id":"<id>",') : body }
}

let differ = 0
for (const c of cases) {
  const sent = request(c)
  const handSent = c.handPath === undefined ? sent : { ...sent, path: c.handPath }
  const [hand, crud] = [await answer(servers.hand.url, c, handSent), await answer(servers.crud.url, c, sent)]
  const same = hand.status === crud.status && hand.body === crud.body
  if (!same) differ++
  console.log(`${same ? 'same' : 'DIFFERENT'}: ${c.label} (${crud.status}, ${crud.body.length} bytes)${same ? '' : `\n  hand: ${hand.status} ${hand.body.slice(0, 400)}\n  crud: ${crud.status} ${crud.body.slice(0, 400)}`}`)
}
await servers.hand.stop()
await servers.crud.stop()
await drop(admin)
await admin.end()
process.exit(differ === 0 ? 0 : 1)
