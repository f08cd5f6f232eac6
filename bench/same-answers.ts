/**
 * Checks that the hand-written server answers each case as TableCRUD does, byte for byte (a
 * POST's body up to the new row's id), so the bench compares the same work:
 * `DATABASE_URL=... node --import tsx bench/same-answers.ts`. Platformatic DB's answers differ
 * in shape: on each case it has a route for, they are checked to hold the same rows as the
 * hand-written server's (bench/platformatic/requests.ts differentRows). Prints each case and
 * exits 1 on a difference. It seeds the bench's tables (`BENCH_ROWS`) and drops them at the end.
 */
import pg from 'pg'
import { cases, drop, seed } from './cases.js'
import { buildServers, startServer } from './measure.js'
import { platformaticMissing } from './platformatic/install.js'
import { differentRows, PLATFORMATIC_PROBE, platformaticRequest, type Answer } from './platformatic/requests.js'

const connectionString = process.env.DATABASE_URL
if (connectionString === undefined) throw new Error('bench: set DATABASE_URL')
buildServers()
const admin = new pg.Pool({ connectionString, max: 1 })
await seed(admin)
const env = { BENCH_DATABASE_URL: connectionString, BENCH_POOL: '2' }
const servers = { hand: await startServer('hand', env, '/movies/1/'), crud: await startServer('crud', env, '/movies/1/') }
const noPlatformatic = platformaticMissing()
const platformatic = noPlatformatic === null ? await startServer('platformatic', env, PLATFORMATIC_PROBE) : null
if (noPlatformatic !== null) console.log(`Platformatic DB not checked: ${noPlatformatic}`)

type Case = (typeof cases)[number]
interface Sent { path: string, body?: string }

/** The request of a case as its load sends it (`setupRequest`: the first variant), the same for both servers. */
function request (c: Case): Sent {
  const sent: Sent = { path: c.path, ...(c.body === undefined ? {} : { body: c.body }) }
  return c.setupRequest === undefined ? sent : c.setupRequest({ method: c.method ?? 'GET', ...sent }) as Sent
}

/** The body a server answers, a new row's id made `<id>` (each server inserts its own). */
async function answer (url: string, c: Case, sent: Sent): Promise<Answer> {
  const response = await fetch(url + sent.path, { method: c.method ?? 'GET', ...(sent.body === undefined ? {} : { body: sent.body, headers: { 'content-type': 'application/json' } }) })
  const body = await response.text()
  return { status: response.status, headers: response.headers, body: c.method === 'POST' ? body.replace(/^\{"id":\d+,/, '{"id":"<id>",') : body }
}

/** Platformatic's answer to the case, where it has a route for it, checked against the hand-written server's rows: whether it differs. */
async function platformaticDiffers (c: Case, sent: Sent, hand: Answer): Promise<boolean> {
  const mapped = platformatic === null ? null : platformaticRequest(c)
  if (mapped === null) return false
  // Its own path, and its own body where it names the columns otherwise; else the same variant as the others.
  const own = { ...sent, path: mapped.path, ...(mapped.body === c.body ? {} : { body: mapped.body }) }
  const difference = differentRows(c, hand, await answer(platformatic!.url, mapped, own))
  console.log(`${difference === null ? 'same rows' : 'DIFFERENT ROWS'}: ${c.label} (Platformatic DB ${mapped.method ?? 'GET'} ${mapped.path})${difference === null ? '' : `\n  ${difference}`}`)
  return difference !== null
}

let differ = 0
for (const c of cases) {
  const sent = request(c)
  const handSent = c.handPath === undefined ? sent : { ...sent, path: c.handPath }
  const [hand, crud] = [await answer(servers.hand.url, c, handSent), await answer(servers.crud.url, c, sent)]
  const same = hand.status === crud.status && hand.body === crud.body
  if (!same) differ++
  console.log(`${same ? 'same' : 'DIFFERENT'}: ${c.label} (${crud.status}, ${crud.body.length} bytes)${same ? '' : `\n  hand: ${hand.status} ${hand.body.slice(0, 400)}\n  crud: ${crud.status} ${crud.body.slice(0, 400)}`}`)
  if (await platformaticDiffers(c, sent, hand)) differ++
}
await servers.hand.stop()
await servers.crud.stop()
await platformatic?.stop()
await drop(admin)
await admin.end()
process.exit(differ === 0 ? 0 : 1)
