import t, { type Test } from 'tap'
import fc from 'fast-check'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { movie, MOVIE_COLUMNS, seededApp, studio } from '../../fixtures/movies.js'
import { contractProblem } from '../../helpers/contract.js'

/*
 * Property test: random and hostile query strings and ids never get a 5xx from the read
 * endpoints (SPEC §1: 500 is reserved for bugs), every answer is JSON in the right shape, and
 * nothing a query says changes the tables.
 */

const { app } = await seededApp(t, async (app) => {
  await app.register(tableCrud, { table: movie, prefix: '/movies', maxJoins: 1 })
  await app.register(tableCrud, { table: studio, prefix: '/studios' })
})

/** Runs per endpoint; FUZZ_RUNS raises it for a longer hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300)

/** Row count and a checksum of every seeded table, read through the app's own pool. */
async function snapshot (): Promise<unknown> {
  const out: Record<string, unknown> = {}
  for (const table of ['movie', 'director', 'studio', 'role', 'category', 'ticket']) {
    const { rows } = await app.pg.query(`SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS sum FROM "${table}" AS t`)
    out[table] = rows[0]
  }
  return out
}

const TEXT_COLUMNS = ['name', 'genre', 'synopsis']
const KEYS = [
  ...MOVIE_COLUMNS,
  ...MOVIE_COLUMNS.map((c) => `${c}__operator`),
  ...TEXT_COLUMNS.map((c) => `${c}__match`),
  '__order', '__visible_fields', '__page', '__page_size', '__readable', '__range_header', '__range_header_name',
  'search', 'limit', 'offset',
  '__proto__', 'constructor', 'valueOf', 'toString', 'hasOwnProperty', 'prototype', '__defineGetter__',
  '__proto__[x]', 'constructor.prototype', 'director.name', 'director.email', 'email', 'year__operator__match',
  '__operator', '__match', '__', '', ' ', 'name ', 'NAME', 'id[]', 'a[b]', '%', '&', '='
]
const VALUES = [
  '', ' ', 'e', 'ne', 'lt', 'lte', 'gt', 'gte', 'is_null', 'not_null', 'contains', 'exact', 'starts', 'ends',
  "' OR 1=1 --", "'; DROP TABLE movie; --", '"; DELETE FROM movie; --', '1; UPDATE movie SET name = NULL',
  "') UNION SELECT id, email FROM director --", '1) OR (1=1', '$1', '$$; DROP TABLE studio; $$', 'E\'\\x00\'', '/* */',
  '%', '_', '\\', '%_%', '\\%', "'", '"', '`', ';', '\0', 'a\0b', '\r\n', '\t',
  '1e309', '-1e309', '1e308', '1e-400', '99999999999999999999999999999', '-99999999999999999999', '-0', '+0', '0x10', '0b1', '1_000',
  'NaN', 'Infinity', '-Infinity', '2147483647', '2147483648', '-2147483648', '-2147483649', '9007199254740993', '1.', '.5', '-.5e3',
  'true', 'TRUE', 'yes', 'No', 't', 'f', '1', '0', 'null', 'NULL', 'undefined', '[]', '{}', '{1,2}', '{"a":1}', 'ARRAY[1]',
  'name', '-name', 'director.name', '-director.name', 'id,-id', 'director.email', 'director.id.name', 'studio.code',
  '__proto__', 'constructor', 'valueOf', ',', ',,,', '-', '--',
  '2020-02-30', '0000-01-01', '0001-01-01', '9999-12-31T23:59:59.999999+14:00', '1970-01-01T00:00:00Z',
  '2021-06-15T08:00:00.1234567890', '294277-01-01', 'infinity', '-infinity', 'epoch', 'now', 'today',
  'é', '𝄞', '\u202e', '\uFEFF', '\u0000', '\uD7FF', '日本語', 'ZOE', 'A24', 'classic', 'Space',
  'a'.repeat(10_000), '%'.repeat(3000), '9'.repeat(5000), `${'1,'.repeat(2000)}1`, '-id,'.repeat(500)
]

/** Some characters a well-formed URL would percent-encode, sent raw or half-encoded. */
const MANGLED = fc.constantFrom('%', '%zz', '%C0%AF', '%FF', '%00', '%2', '%%', '+', '%2B', '%26', '%3D', '%E2%82', '%ED%A0%80', '%5B%5D', '[', ']', '|', '^')

const text = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...VALUES) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.string({ minLength: 500, maxLength: 4000 }) }
)

/** A key or value as it goes into the URL: encoded, or with raw and malformed percent-encodings mixed in. */
const encoded = (arbitrary: fc.Arbitrary<string>): fc.Arbitrary<string> => fc.oneof(
  { weight: 6, arbitrary: arbitrary.map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.tuple(arbitrary.map(encodeURIComponent), MANGLED, fc.nat(40)).map(([s, m, at]) => s.slice(0, at) + m + s.slice(at)) },
  { weight: 1, arbitrary: MANGLED }
)

const pair = fc.tuple(encoded(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: text })), encoded(text), fc.constantFrom('=', '=', '=', '', '==')).map(([k, v, eq]) => eq === '' ? k : `${k}${eq}${v}`)

/** Query strings: several parameters, repeats likely (the keys come from a short list), stray separators. */
const scattered = fc.tuple(fc.array(pair, { maxLength: 8 }), fc.constantFrom('&', '&', '&', '&&', ';')).map(([pairs, sep]) => pairs.join(sep))

/** A few real parameters with hostile values: these reach the SQL more often than scattered ones. */
const REAL_KEYS = KEYS.slice(0, KEYS.indexOf('offset') + 1)
const focused = fc.array(fc.tuple(fc.constantFrom(...REAL_KEYS), encoded(text)).map(([k, v]) => `${k}=${v}`), { minLength: 1, maxLength: 3 }).map((pairs) => pairs.join('&'))

const queryString = fc.oneof(scattered, focused)

/** Ids: numbers of every size and sign, hostile text, long strings. */
const movieId = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -2, max: 7 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('ZOE', 'A24', 'LUCAS') },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
  { weight: 3, arbitrary: encoded(text) }
).filter((id) => !['', '.', '..'].includes(decoded(id))) // `/movies/`, `/movies/./` and `/movies/../` are other routes

function decoded (text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const TOP_KEYS = new Set([...MOVIE_COLUMNS, 'director_readable', 'studio_readable'])

function listShape (body: any): string | null {
  if (!isObject(body) || Object.keys(body).join() !== 'rows' || !Array.isArray(body.rows)) return 'not {rows: [...]}'
  if (body.rows.length > 5) return `${body.rows.length} rows`
  for (const row of body.rows) {
    if (!isObject(row)) return 'a row that is not an object'
    const stray = Object.keys(row).find((key) => !TOP_KEYS.has(key))
    if (stray !== undefined) return `a row with ${stray}`
    if ('email' in row || (isObject(row.director) && 'email' in row.director)) return 'a secret column'
  }
  return null
}

function countShape (body: any): string | null {
  if (!isObject(body) || Object.keys(body).sort().join() !== 'count,page_size') return 'not {count, page_size}'
  if (!Number.isInteger(body.count) || (body.count as number) < 0 || (body.count as number) > 5) return `count ${String(body.count)}`
  return body.page_size === 15 ? null : `page_size ${String(body.page_size)}`
}

function idsShape (body: any): string | null {
  if (!isObject(body)) return 'not an object'
  for (const [key, value] of Object.entries(body)) {
    if (!['1', '2', '3', '4', '5'].includes(key) || typeof value !== 'string') return `entry ${key}: ${String(value)}`
  }
  return null
}

function rowShape (body: any): string | null {
  if (!isObject(body)) return 'not an object'
  const stray = Object.keys(body).find((key) => !TOP_KEYS.has(key))
  return stray === undefined ? null : `a key ${stray}`
}

async function check (t: Test, name: string, arbitrary: fc.Arbitrary<string>, allowed: readonly number[], okShape: (body: any) => string | null): Promise<void> {
  const before = await snapshot()
  const statuses = new Map<number, number>()
  let runs = 0
  await fc.assert(fc.asyncProperty(arbitrary, async (url) => {
    runs++
    const response = await app.inject({ method: 'GET', url })
    statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
    const found = contractProblem(response, allowed, okShape)
    if (found !== null) throw new Error(`GET ${url.slice(0, 300)}: ${found.slice(0, 500)}`)
  }), { numRuns: RUNS })
  t.ok(runs >= RUNS, `${name}: ${runs} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  // The arbitraries reach valid queries too: not everything is a 400.
  t.ok((statuses.get(200) ?? 0) >= RUNS / 50, `${name}: some requests succeed`)
  t.strictSame(await snapshot(), before, `${name}: every table unchanged`)
}

t.test('GET / never fails on a hostile query string', async (t) => {
  await check(t, 'GET /', queryString.map((q) => `/movies/?${q}`), [200, 400], listShape)
})

t.test('GET /count/ never fails on a hostile query string', async (t) => {
  await check(t, 'GET /count/', queryString.map((q) => `/movies/count/?${q}`), [200, 400], countShape)
})

t.test('GET /ids/ never fails on a hostile query string', async (t) => {
  await check(t, 'GET /ids/', queryString.map((q) => `/movies/ids/?${q}`), [200, 400], idsShape)
})

t.test('GET /:id/ never fails on a hostile id or query string', async (t) => {
  // A 404 is a missing row, or a path an id with a slash turned into another route.
  await check(t, 'GET /:id/', fc.tuple(movieId, queryString).map(([id, q]) => `/movies/${id}/?${q}`), [200, 400, 404], rowShape)
  await check(t, 'GET /:id/ (Varchar key)', fc.tuple(movieId, fc.boolean()).map(([id, slash]) => `/studios/${id}${slash ? '/' : ''}`), [200, 400, 404], (body) =>
    isObject(body) && Object.keys(body).sort().join() === 'code,name' ? null : 'not a studio row')
})
