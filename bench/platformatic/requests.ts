/**
 * The one place where a bench case becomes Platformatic DB's request for the same work, and
 * where its answer is checked to hold the same rows (bench/same-answers.ts). A case not listed
 * here has no Platformatic route and is skipped for it: its REST API has no join of a
 * relation's label (`__readable`), filter across a relation, OR across tables, grouped
 * aggregate, embed, full-text search, upsert of many rows in one request, or update of some
 * columns of many rows (its `PUT /?where...` asks for every required column).
 */
import { cases, type Case } from '../cases.js'

/** The probe the bench waits for at start-up, as `/movies/1/` for the others. */
export const PLATFORMATIC_PROBE = '/benchMovie/1'

/** What Platformatic is sent instead of the case's path and body (its method and `setupRequest` stay unless given). */
interface Mapped {
  readonly path: string
  readonly method?: Case['method']
  readonly body?: string
  /** The answer is a row the request inserted: compared by its name, since each server makes its own id. */
  readonly inserts?: true
}

/** The case's JSON body with its column names camelCased, as Platformatic names its fields (`box_office` is `boxOffice`). */
const camelCased = (body: string): string => JSON.stringify(Object.fromEntries(
  Object.entries(JSON.parse(body) as Record<string, unknown>).map(([k, v]) => [k.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()), v])
))
const bodyOf = (label: string): string => cases.find((c) => c.label === label)!.body!

// Platformatic names its routes after the tables, camelCased: bench_movie at /benchMovie/.
const requests = new Map<string, Mapped>([
  // Page 50 of 15 rows: offset 49 × 15, the key descending as TableCRUD's default order.
  ['list, page 50 of 15 rows', { path: '/benchMovie/?limit=15&offset=735&orderby.id=desc' }],
  // TableCRUD's text filter is "contains, any case": ILIKE with the text between %s.
  ['filtered, no index', { path: '/benchMovie/?where.name.ilike=%25Movie%209999%25&orderby.id=desc&limit=15' }],
  ['by id', { path: '/benchMovie/1234' }],
  // Its only count: the X-Total-Count header of a list, an empty page here (two statements: the page, then count(*)).
  ['count', { path: '/benchMovie/?limit=0&totalCount=true' }],
  ['POST one row', { path: '/benchMovie/', body: camelCased(bodyOf('POST one row')), inserts: true }],
  // POST of a row with its key updates it, and inserts it when the UPDATE finds none: the case's rows all exist.
  ['upsert one row (it exists: updated)', { path: '/benchCode/' }]
])
for (const label of requests.keys()) {
  if (!cases.some((c) => c.label === label)) throw new Error(`bench/platformatic/requests.ts maps "${label}", which is no case of bench/cases.ts`)
}

/** The case as Platformatic is sent it, or null where it has no route for the case. */
export function platformaticRequest (c: Case): Case | null {
  const mapped = requests.get(c.label)
  if (mapped === undefined) return null
  const { path, method, body } = { ...c, ...mapped }
  return { ...c, path, ...(method === undefined ? {} : { method }), ...(body === undefined ? {} : { body }) }
}

/** What a server answered: its status, body and headers. */
export interface Answer { readonly status: number, readonly body: string, readonly headers: Headers }

/** The rows of an answer (a bare array, `{ rows }` or one row), each named by its key, or a count. */
function contents (c: Case, answer: Answer): string {
  const total = answer.headers.get('x-total-count')
  if (total !== null) return `count ${total}`
  const body = JSON.parse(answer.body) as unknown
  if (typeof body === 'object' && body !== null && 'count' in body) return `count ${String(body.count)}`
  const rows = (Array.isArray(body) ? body : typeof body === 'object' && body !== null && 'rows' in body ? body.rows : [body]) as Array<Record<string, unknown>>
  const name = (row: Record<string, unknown>): string => requests.get(c.label)?.inserts === true ? `new "${String(row.name)}"` : String(row.id ?? row.code)
  return `${rows.length} rows: ${rows.map(name).join(', ')}`
}

/**
 * Null when Platformatic's answer holds the same rows as the hand-written server's (the same
 * keys in the same order, or the same count), both a success; else what differs. Their shapes
 * differ (a bare array and camelCased names, `{ "rows": [...] }`), so bytes are not compared.
 */
export function differentRows (c: Case, hand: Answer, platformatic: Answer): string | null {
  const ok = (a: Answer): boolean => a.status >= 200 && a.status < 300
  if (!ok(hand) || !ok(platformatic)) return `status ${hand.status} (hand-written) against ${platformatic.status} (Platformatic)`
  const [h, p] = [contents(c, hand), contents(c, platformatic)]
  return h === p ? null : `hand-written: ${h}\n  Platformatic: ${p}`
}
