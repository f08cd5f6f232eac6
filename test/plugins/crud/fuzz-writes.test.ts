import t, { type Test } from 'tap'
import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { tableCrud, type Hook, type Row } from '../../../plugins/crud/table-crud.js'
import { contractProblem } from '../../helpers/contract.js'
import { testDatabase } from '../../helpers/db.js'
import { freshApp } from './write-fixtures.js'

/*
 * Property test, the write-side sibling of fuzz.test.ts: random and hostile write bodies
 * (POST of a row or an array, upsert, nested insert, PUT, PATCH, bulk PATCH) never get a 5xx
 * (SPEC §1: 500 is reserved for bugs), every answer is JSON in the SPEC shape, a write that
 * succeeds answers the rows as GET `/:id/` serves them, and a refused write changes nothing
 * (all or nothing, SPEC §7.4, §8.5).
 */

const db = await testDatabase(t)

/** Runs per property; FUZZ_RUNS raises it for a longer hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 200)

const OWNERS = ['0b0e7a5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b', 'f3a1c2d4-5b6e-4f70-8a9b-c0d1e2f3a4b5'] as const

/** A UUID primary key the database draws when a write leaves it out; a required unique Varchar. */
const owner = defineTable('fw_owner', {
  id: column.uuid({ primaryKey: true }),
  handle: column.varchar({ length: 12, required: true, unique: true }),
  bio: column.text({ null: true })
}, { readable: 'handle' })

/** A Serial key and a column of every type a body writes; four unique columns to upsert on. */
const item = defineTable('fw_item', {
  label: column.varchar({ length: 8, unique: true, null: true }),
  slug: column.text({ unique: true, null: true }),
  body: column.text(),
  count: column.integer({ null: true }),
  small: column.smallInt(),
  big: column.bigInt({ unique: true, null: true }),
  ratio: column.real(),
  precise: column.doublePrecision({ null: true }),
  price: column.numeric({ digits: [6, 2] }),
  flag: column.boolean({ null: true }),
  at: column.timestamp(),
  atz: column.timestamptz({ null: true }),
  day: column.date({ null: true }),
  ref: column.uuid({ unique: true, null: true }),
  doc: column.jsonb({ null: true }),
  tags: column.array(column.varchar({ length: 5 })),
  grid: column.array(column.array(column.integer())),
  kind: column.varchar({ length: 6, choices: { plain: 'plain', fancy: { value: 'fancy', displayName: 'Fancy' } }, default: 'plain' }),
  owner: column.foreignKey(owner, { onDelete: 'restrict' })
})

const ITEM_COLUMNS = item.columns.map((c) => c.name).filter((name) => name !== 'id')

/**
 * preSave, by the row's `small`: some rows lose keys, some gain or change some, some get a
 * client's text copied into a Varchar it may not fit (SPEC §2.10: what the hook returns is written).
 */
function reshape (row: Row): Row {
  const out = { ...row }
  switch (Math.abs(Number(row.small)) % 4) {
    case 1:
      delete out.tags
      delete out.doc
      break
    case 2:
      out.count = 7
      out.body = `${[...String(row.body)].slice(0, 10).join('')}!`
      out.flag = row.flag !== true
      break
    case 3:
      out.label = typeof row.slug === 'string' ? row.slug : null
      break
  }
  return out
}

const HOOKS: Hook[] = [
  { hookType: 'preSave', callable: (row) => reshape(row) },
  // A patch without `small` passes as it is; with it, reshaped like a row.
  { hookType: 'prePatch', callable: (_id, values) => Object.hasOwn(values, 'small') ? reshape(values) : values }
]

/** A fresh app: `/items` and `/hooked` (the same table with hooks), bulk PATCH on both, and `/owners` with nested items. */
async function writeApp (t: Test): Promise<FastifyInstance> {
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: owner, prefix: '/owners', readOnly: false, nestedWrites: ['fw_item'] })
    await app.register(tableCrud, { table: item, prefix: '/items', readOnly: false, allowBulkUpdate: true, maxAffected: 6 })
    await app.register(tableCrud, { table: item, prefix: '/hooked', readOnly: false, allowBulkUpdate: true, hooks: HOOKS })
  }, [owner, item])
  const seed = await app.inject({
    method: 'POST',
    url: '/owners/',
    payload: [{ id: OWNERS[0], handle: 'ada' }, { id: OWNERS[1], handle: 'bob', bio: 'b' }]
  })
  const items = await app.inject({
    method: 'POST',
    url: '/items/',
    payload: Array.from({ length: 8 }, (_, i) => ({ label: `seed${i}`, small: i, owner: OWNERS[i % 2], kind: i % 3 === 0 ? 'fancy' : 'plain' }))
  })
  if (seed.statusCode !== 201 || items.statusCode !== 201) throw new Error(`seeding failed: ${seed.body} ${items.body}`)
  return app
}

/** Row counts and a checksum of both tables, in one statement through the app's own pool. */
async function snapshot (app: FastifyInstance): Promise<Record<string, number | string>> {
  const { rows } = await app.pg.query(`SELECT
    (SELECT count(*)::int FROM fw_owner) AS owners, (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM fw_owner AS t) AS owners_sum,
    (SELECT count(*)::int FROM fw_item) AS items, (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM fw_item AS t) AS items_sum`)
  return rows[0]
}

/** JSON text sent as it is: what JSON.stringify cannot write (1e309, nesting deeper than its stack). */
const RAW = Symbol('raw JSON')
interface Raw { readonly [RAW]: string }
const raw = (text: string): Raw => ({ [RAW]: text })
const isRaw = (value: unknown): value is Raw => typeof value === 'object' && value !== null && RAW in value

/** JSON text of a value, with raw parts as they are and own `__proto__` keys kept. */
function toJson (value: unknown): string {
  if (isRaw(value)) return value[RAW]
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`
  if (typeof value === 'object' && value !== null) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`
  return JSON.stringify(value)
}

/** The row with `pairs` set as own keys, `__proto__` and `constructor` included (a literal would set the prototype). */
function withKeys (row: Row, pairs: ReadonlyArray<readonly [string, unknown]>): Row {
  const out = { ...row }
  for (const [key, value] of pairs) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  return out
}

const nesting = (depth: number, leaf = '1'): Raw => raw(`${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`)

/** Text that does not compress: a long value in a unique index cannot be squeezed under its limit. */
function noise (length: number): string {
  let seed = 7
  let out = ''
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    out += String.fromCharCode(33 + (seed >> 8) % 94)
  }
  return out
}

/** Values of every wrong kind for any column: wrong JSON types, edges of each type's range, text PostgreSQL refuses, odd shapes. */
const HOSTILE: readonly unknown[] = [
  null, true, false, 0, -1, 0.5, -0.001, 1e308, -1e308, 5e-324, 1e-46, 3.5e38, 2 ** 31, -(2 ** 31) - 1, 32768, -32769, 2 ** 53 + 2, 1e21, 9999.995,
  raw('1e309'), raw('-1e309'), raw('1e-400'), raw('123456789012345678901234567890'), raw('-0'), raw('1.0'), raw('1E2'),
  '', ' ', 'NaN', 'Infinity', '-Infinity', 'infinity', '1e309', '-0', '0x10', '1_000', '12.345', '9999.999', '1e3', ' 1 ', '+5', '.5', '5.',
  'null', 'true', 't', 'yes', 'plain', 'fancy', 'PLAIN', 'abcdefghi', "'; DROP TABLE fw_item; --", '$1', '\\', '"',
  '2020-02-30', '0000-01-01', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00', '2024-01-01T24:00:00', '2024-01-01T10:00:00',
  '2024-01-01T10:00:00+14:00', '2024-01-01t10:00:00z', '2024-01-01', 'epoch', 'now', 'today', '294277-01-01', '10000-01-01',
  '00000000-0000-0000-0000-000000000000', OWNERS[0].toUpperCase(), `{${OWNERS[1]}}`, OWNERS[0].replaceAll('-', ''), '1ab2c3d4-5b6e-4f70-8a9b-c0d1e2f3a4b5',
  '\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\udc00\ud800', '\uFEFF', '𝄞', '\u202e', 'é',
  'a'.repeat(3000), 'é'.repeat(2000), noise(3000), noise(9000), 'b'.repeat(200_000),
  [], [null], [[]], [[], []], [[1], [1, 2]], [1, [2]], [[1, 2], [3, 4]], [['a']], ['abcdef'], ['\u0000'], ['\ud800'], [1.5], [[null]], [[2 ** 31]],
  nesting(3), nesting(7), nesting(60), nesting(5000), nesting(100_000), nesting(3000, '{}'),
  raw(`${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`),
  {}, { a: 1 }, { '\u0000': 1 }, { a: '\ud800' }, { a: 'x\u0000' }, [{}], { value: 1 }, raw('{"__proto__":{"a":1}}'), raw('{"constructor":{"prototype":{}}}')
]

/** Hostile values of each column's own type: the edges its schema lets through, and just past them. */
const TARGETED: Record<string, readonly unknown[]> = {
  id: [OWNERS[0].toUpperCase(), '00000000-0000-0000-0000-000000000000', 'not-a-uuid', null, 1, `{${OWNERS[1]}}`],
  handle: ['', 'x'.repeat(13), '\u0000', '\ud800', 'ada', 'ADA', '𝄞'.repeat(12), 'e\u0301'.repeat(7)],
  bio: ['\u0000', 'x\udfffy', noise(9000), 'b'.repeat(200_000)],
  label: ['abcdefghi', '\u0000', '\ud800', 'é'.repeat(9), '𝄞'.repeat(8), '𝄞'.repeat(9), 'e\u0301'.repeat(5), 'seed1', 'SEED1', ''],
  slug: [noise(3000), noise(9000), 'a'.repeat(100_000), '\u0000', '\ud800', 'x', ''],
  body: ['b'.repeat(200_000), noise(9000), 'a\u0000b', 'x\udfffy', '\udc00\ud800'],
  count: [2 ** 31, -(2 ** 31) - 1, 2147483647, -2147483648, 1.5, raw('1e309'), raw('1.0'), raw('1e2'), '1'],
  small: [32768, -32769, 32767, -32768, raw('1.0'), 1e308, raw('-0')],
  big: [2 ** 53 + 2, '9223372036854775808', '-9223372036854775809', raw('123456789012345678901234567890'), raw('9007199254740993'), '1e3', '+5', ' 1', 1.5, '00000000000000000000001', '-0'],
  ratio: [3.5e38, 3.4028235e38, 1e-46, 1.4e-45, 1e308, 5e-324, raw('1e309'), -3.4028235677973366e38, raw('-0')],
  precise: [1e308, -1.7976931348623157e308, raw('1e309'), raw('-1e309'), 5e-324, raw('1e-400'), 'NaN'],
  price: [9999.995, 9999.99, 10000, -10000, '9999.999', '12.345', '1e3', raw('1e309'), 1e21, 5e-324, '.5', '5.', '+5', '-0', ' 1 ', '0000000000000000000012.50', '12.5000000000000000000000001', -0.001],
  flag: ['true', 1, 0, 't'],
  at: ['2020-02-30', '0000-01-01', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00', '2024-01-01T24:00:00', 'infinity', 'epoch', '294277-01-01', '2024-01-01T10:00:00.1234567890', '2024-01-01 10:00', '2024-01-01T10:00:00+24:00', '2024-01-01T10:00:00+23:59', '2024-01-01T10:00:60'],
  atz: ['2024-01-01T10:00:00', '2024-01-01', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-23:59', '2024-01-01t10:00:00z', '2024-02-30T00:00:00Z', '2024-01-01T10:00:60Z', '2024-01-01T10:00:00.999999999Z', 'infinity'],
  day: ['2020-02-30', '0000-01-01', '10000-01-01', '2024-1-1', '2024-01-01T00:00:00', 'today'],
  ref: [OWNERS[0].toUpperCase(), OWNERS[0], `{${OWNERS[1]}}`, OWNERS[0].replaceAll('-', ''), '00000000-0000-0000-0000-000000000000', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'],
  doc: [nesting(128), nesting(129), nesting(1000), nesting(4120), nesting(5000), nesting(100_000), nesting(3000, '{}'), raw(`${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`), { '\u0000': 1 }, { a: '\ud800' }, raw('1e309'), raw('{"a":1,"a":2}'),
    'x'.repeat(200_000), raw('-0'), [], {}, raw('123456789012345678901234567890'), raw('1e-400'), raw('{"__proto__":{"a":1}}'), [null], 'null'],
  tags: [[null], ['abcdef'], ['\u0000'], ['\ud800'], [[]], nesting(3), Array.from({ length: 1000 }, () => 'a'), [1], ['𝄞𝄞𝄞𝄞𝄞']],
  grid: [[[1], [1, 2]], [[]], [[], []], [1, [2]], [[null]], [[2 ** 31]], nesting(3), nesting(7), [[1.5]], [[[1]]], raw('[[1e309]]'), [[1, 2], [3, 4]], Array.from({ length: 300 }, () => [1, 2, 3])],
  kind: ['PLAIN', 'Fancy', 'drama', '', null],
  owner: ['1ab2c3d4-5b6e-4f70-8a9b-c0d1e2f3a4b5', OWNERS[0].toUpperCase(), null, 'not-a-uuid', 0]
}

/** Keys no write takes: the Serial key, unknown names, names every object has, near misses. */
const EXTRA_KEYS = ['id', 'bogus', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'LABEL', 'label ', '', ' ', 'owner.handle', 'fw_item', 'fw_owner', 'rows', '__on_conflict']

const hostile = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.double() }
)

const LABELS = ['a', 'b', 'seed1', 'seed2', 'Ω']
const iso = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString())
const nullable = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arbitrary, { nil: null, freq: 4 })

/** A rectangular 2-D array of integers, or none. */
const grid = fc.oneof(
  fc.constant([]),
  fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 })).chain(([rows, cols]) =>
    fc.array(fc.array(fc.integer(), { minLength: cols, maxLength: cols }), { minLength: rows, maxLength: rows }))
)

/** A value of a unique column: now and then one of a short list, so upserts conflict. */
const unique = <T>(often: readonly T[], rarely: fc.Arbitrary<T>): fc.Arbitrary<T | null> =>
  nullable(fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...often) }, { weight: 3, arbitrary: rarely }))

/** Valid values of each item column. */
const ITEM_VALUES = {
  label: unique(LABELS, fc.string({ minLength: 4, maxLength: 8 })),
  slug: unique(['x', 'y', 'z'], fc.string({ unit: 'grapheme', minLength: 4, maxLength: 30 })),
  body: fc.string({ unit: 'grapheme', maxLength: 40 }),
  count: nullable(fc.integer()),
  small: fc.integer({ min: -32768, max: 32767 }),
  big: unique(['1', '9223372036854775807', '-9223372036854775808'], fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String), fc.maxSafeInteger())),
  ratio: fc.float({ noNaN: true, noDefaultInfinity: true }),
  precise: nullable(fc.double({ noNaN: true, noDefaultInfinity: true })),
  price: fc.oneof(fc.integer({ min: -999999, max: 999999 }).map((n) => (n / 100).toFixed(2)), fc.integer({ min: -9999, max: 9999 })),
  flag: nullable(fc.boolean()),
  at: fc.oneof(iso, iso.map((s) => s.slice(0, 10))),
  atz: nullable(iso),
  day: nullable(iso.map((s) => s.slice(0, 10))),
  ref: unique(OWNERS, fc.uuid()),
  doc: nullable(fc.jsonValue({ maxDepth: 3 })),
  tags: fc.array(fc.string({ maxLength: 5 }), { maxLength: 4 }),
  grid,
  kind: fc.constantFrom('plain', 'fancy'),
  owner: fc.oneof({ weight: 6, arbitrary: nullable(fc.constantFrom(...OWNERS)) }, { weight: 1, arbitrary: fc.uuid() })
} satisfies Record<string, fc.Arbitrary<unknown>>

/** A clean row (some columns, the `required` ones always), or one with one to three keys set to hostile values or unknown keys added. */
function rows (values: Record<string, fc.Arbitrary<unknown>>, columns: readonly string[], required: string[] = []): fc.Arbitrary<Row> {
  const clean = fc.record(values, { requiredKeys: required }) as fc.Arbitrary<Row>
  const key = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...columns) }, { weight: 1, arbitrary: fc.constantFrom(...EXTRA_KEYS) })
  // A hostile value of the column's own type reaches past the schema more often than one of any kind.
  const targeted = fc.constantFrom(...columns.filter((c) => Object.hasOwn(TARGETED, c))).chain((c) => fc.constantFrom(...TARGETED[c]!).map((v) => [c, v] as const))
  const pair = fc.oneof({ weight: 2, arbitrary: fc.tuple(key, hostile) }, { weight: 3, arbitrary: targeted })
  const dirty = fc.tuple(clean, fc.array(pair, { minLength: 1, maxLength: 3 })).map(([row, pairs]) => withKeys(row, pairs))
  return fc.oneof({ weight: 3, arbitrary: clean }, { weight: 2, arbitrary: dirty })
}

const itemRow = rows(ITEM_VALUES, ITEM_COLUMNS)

/** Bodies no row schema takes: not JSON, not an object, empty, too many rows, poisoned prototypes. */
const ODD_BODIES = [
  '', ' ', 'null', '0', '"x"', 'true', '[]', '[1]', '[null]', '["a"]', '[[]]', '[[{}]]', '{', '}', '{"a":}', '{"label":"a",}', "{'label':'a'}",
  '{"label":"a"}{"label":"b"}', '{"label":"\\ud800"}', '{"label":"\\u0000"}', '{"body":"\\udfff"}', '{"__proto__":{"label":"x"}}',
  '{"constructor":{"prototype":{"label":"x"}}}', '[{"__proto__":{}}]', '{"label":"a","label":"b"}', '\uFEFF{}', '{}', '[{}]',
  `[${'{},'.repeat(1000)}{}]`, `{"body":"${'x'.repeat(1_100_000)}"}`, '{"doc":1e309}', '{"precise":1e309}', '{"ratio":-1e309}'
]

/** How a body goes out: mostly the generated value as JSON, now and then odd text instead, now and then not as application/json. */
const envelope = fc.tuple(
  fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_BODIES) }),
  fc.oneof({ weight: 20, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/jsonx') })
)

/** What a write sends: the body as JSON (raw parts kept), or odd text, and its content type. */
function payloadOf (body: fc.Arbitrary<unknown>): fc.Arbitrary<{ payload: string, type: string }> {
  return fc.tuple(body, envelope).map(([value, [odd, type]]) => ({ payload: odd ?? toJson(value), type }))
}

/** A row, or an array of 1 to 4 rows (`element`s), now and then with an element that is not an object. */
const rowsBody = (row: fc.Arbitrary<Row>, element = row): fc.Arbitrary<unknown> => fc.oneof(
  { weight: 4, arbitrary: row },
  { weight: 3, arbitrary: fc.array(fc.oneof({ weight: 12, arbitrary: element }, { weight: 1, arbitrary: fc.constantFrom(null, 1, 'x', [], [{}], true) }), { minLength: 1, maxLength: 4 }) }
)

/** One write as sent, and what a success must look like. */
interface Sent {
  readonly method: 'POST' | 'PUT' | 'PATCH'
  readonly url: string
  readonly payload: string
  readonly type: string
  /** `row`: one row answered; `rows`: `{rows}`; `count`: bulk PATCH's `{count}`. */
  readonly answer: 'row' | 'rows' | 'count'
  /** An If-Match header (SPEC §7.3), now and then on PUT and PATCH. */
  readonly ifMatch?: string
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The table a path writes to, and its prefix. */
function target (url: string): { table: Table, prefix: string } {
  const prefix = url.slice(0, url.indexOf('/', 1))
  return { table: prefix === '/owners' ? owner : item, prefix }
}

/** Why a row answered is not the row GET `/:id/` serves, with every column (and, unless `etag` is null, its ETag); or null. */
async function served (app: FastifyInstance, prefix: string, table: Table, row: unknown, etag: unknown = null): Promise<string | null> {
  if (!isObject(row)) return 'a row that is not an object'
  const keys = Object.keys(row).filter((k) => k !== 'fw_item').sort().join()
  const expected = table.columns.map((c) => c.name).sort().join()
  if (keys !== expected) return `a row with the keys ${keys}`
  const got = await app.inject({ method: 'GET', url: `${prefix}/${encodeURIComponent(String(row[table.primaryKey.name]))}/` })
  if (got.statusCode !== 200) return `GET of the row written: ${got.statusCode} ${got.body}`
  const { fw_item: _children, ...own } = row
  if (JSON.stringify(JSON.parse(got.body)) !== JSON.stringify(own)) return `answered ${JSON.stringify(own)}, GET serves ${got.body}`
  if (etag !== null && etag !== got.headers.etag) return `the ETag ${String(etag)}, not the row's ${String(got.headers.etag)}`
  return null
}

/** Item columns whose values come back as a body gives them (others are made canonical: a UUID's case, a Numeric's scale). */
const EXACT = ['label', 'slug', 'body', 'count', 'small', 'precise', 'flag', 'kind', 'tags', 'grid']

/** The same JSON value; a number and null differ (1e309 is Infinity, which JSON.stringify writes as null). */
const same = (a: unknown, b: unknown): boolean => Array.isArray(a) ? Array.isArray(b) && a.length === b.length && a.every((v, i) => same(v, b[i])) : a === b

/** Why an item answered does not hold the values sent for it (written without hooks), or null. */
function fidelity (sent: unknown, answered: unknown): string | null {
  if (!isObject(sent) || !isObject(answered)) return null
  const differs = EXACT.find((c) => Object.hasOwn(sent, c) && !same(sent[c], answered[c]))
  return differs === undefined ? null : `${differs} sent as ${String(sent[differs]).slice(0, 100)}, answered as ${JSON.stringify(answered[differs])?.slice(0, 100)}`
}

/** Why the items answered do not hold what was sent for them, or null; `/hooked` writes what its hooks make of them. */
function fidelities (prefix: string, sent: unknown, body: Record<string, unknown>, rows: unknown[] | null): string | null {
  if (prefix === '/owners') return isObject(sent) && Array.isArray(sent.fw_item) && Array.isArray(body.fw_item) ? fidelities('/items', sent.fw_item, body, body.fw_item) : null
  if (prefix !== '/items') return null
  if (rows === null) return fidelity(sent, body)
  return Array.isArray(sent) ? sent.map((one, i) => fidelity(one, rows[i])).find((found) => found !== null) ?? null : null
}

/** Why a 2xx breaks the contract: its shape, the rows against GET and what was sent, the row counts against what was written. */
async function success (app: FastifyInstance, sent: Sent, response: LightMyRequestResponse, before: Record<string, number | string>): Promise<string | null> {
  const { table, prefix } = target(sent.url)
  const body = JSON.parse(response.body)
  if (sent.answer !== 'count') {
    // A body may open with a byte order mark, which Fastify's parser passes over.
    const found = fidelities(prefix, JSON.parse(sent.payload.replace(/^\uFEFF/, '')), body, sent.answer === 'rows' ? body.rows : null)
    if (found !== null) return found
  }
  const after = await snapshot(app)
  const added = (after[table === owner ? 'owners' : 'items'] as number) - (before[table === owner ? 'owners' : 'items'] as number)
  if (sent.answer === 'count') {
    if (!isObject(body) || Object.keys(body).join() !== 'count' || !Number.isInteger(body.count)) return `not {count}: ${response.body}`
    if (body.count === 0 && after.items_sum !== before.items_sum) return 'no row counted, yet rows changed'
    return added === 0 && after.owners === before.owners ? null : 'rows added by an update'
  }
  if (sent.answer === 'rows') {
    const sentRows = JSON.parse(sent.payload.replace(/^\uFEFF/, '')) as unknown[]
    if (!isObject(body) || Object.keys(body).join() !== 'rows' || !Array.isArray(body.rows) || body.rows.length !== sentRows.length) return `not {rows} of ${sentRows.length}: ${response.body.slice(0, 300)}`
    const inserted = response.statusCode === 201
    if (inserted ? added !== sentRows.length : added < 0 || added > sentRows.length) return `${added} rows added by ${sentRows.length} (status ${response.statusCode})`
    // An upsert may write one row twice (two elements with different targets): the last answer holds.
    const last = new Map(body.rows.map((r: Row) => [r[table.primaryKey.name], r]))
    for (const row of last.values()) {
      const found = await served(app, prefix, table, row)
      if (found !== null) return found
    }
    return null
  }
  if (response.statusCode === 201) {
    const children: unknown[] = isObject(body) && Array.isArray(body.fw_item) ? body.fw_item : []
    if (added !== 1 || (table === owner && (after.items as number) - (before.items as number) !== children.length)) return `201, ${added} rows added`
    if (response.headers.location !== `${prefix}/${encodeURIComponent(String(body[table.primaryKey.name]))}/`) return `Location ${String(response.headers.location)}`
    // Nested items (SPEC §8.5) as inserted: as `/items` serves them, their ForeignKey set to the owner.
    for (const child of children) {
      const found = isObject(child) && child.owner !== body.id ? `an item of owner ${String(child.owner)}` : await served(app, '/items', item, child)
      if (found !== null) return found
    }
  } else if (added !== 0) {
    return `${response.statusCode}, ${added} rows added`
  }
  return await served(app, prefix, table, body, String(response.headers.etag))
}

/**
 * Sends each write of `arbitrary`; a 5xx, an answer not in `allowed` or out of shape, a success
 * that is not what was written, or a refused write that changed anything fails the property.
 */
async function check (t: Test, app: FastifyInstance, name: string, arbitrary: fc.Arbitrary<Sent>, allowed: readonly number[]): Promise<void> {
  const statuses = new Map<number, number>()
  let runs = 0
  await fc.assert(fc.asyncProperty(arbitrary, async (sent) => {
    runs++
    const before = await snapshot(app)
    const headers = { 'content-type': sent.type, ...(sent.ifMatch === undefined ? {} : { 'if-match': sent.ifMatch }) }
    const response = await app.inject({ method: sent.method, url: sent.url, payload: sent.payload, headers })
    statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
    let found = contractProblem(response, allowed, () => null)
    if (found === null && response.statusCode < 300) found = await success(app, sent, response, before)
    if (found === null && response.statusCode >= 300) {
      const after = await snapshot(app)
      if (JSON.stringify(after) !== JSON.stringify(before)) found = `a refused write (${response.statusCode}: ${response.body.slice(0, 200)}) changed the tables`
    }
    if (found !== null) throw new Error(`${sent.method} ${sent.url} ${sent.type} ${sent.payload.slice(0, 300)}: ${found.slice(0, 500)}`)
  }), { numRuns: RUNS })
  t.ok(runs >= RUNS, `${name}: ${runs} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  // The arbitraries reach valid writes too: not everything is refused.
  const succeeded = [...statuses].filter(([status]) => status < 300).reduce((n, [, count]) => n + count, 0)
  t.ok(succeeded >= RUNS / 10, `${name}: some writes succeed (${succeeded})`)
}

const writable = fc.constantFrom('/items', '/hooked')

t.test('POST / of a row or an array never fails, and writes all or nothing', async (t) => {
  const app = await writeApp(t)
  const sent = fc.tuple(writable, payloadOf(rowsBody(itemRow))).map(([prefix, { payload, type }]): Sent =>
    ({ method: 'POST', url: `${prefix}/`, payload, type, answer: payload.startsWith('[') ? 'rows' : 'row' }))
  await check(t, app, 'POST /', sent, [201, 400, 413, 415, 422])
})

/** Valid values of an owner's columns but its key. */
const OWNER_FIELDS = {
  handle: fc.oneof({ weight: 1, arbitrary: fc.constantFrom('ada', 'bob', 'cy', 'dee') }, { weight: 3, arbitrary: fc.string({ minLength: 3, maxLength: 12 }) }),
  bio: nullable(fc.string({ unit: 'grapheme', maxLength: 20 }))
}

/** An owner row, its key given now and then: a seeded owner's (a conflict) or a new one. */
const ownerRow = rows({ ...OWNER_FIELDS, id: fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...OWNERS) }, { weight: 3, arbitrary: fc.uuid() }) }, ['id', 'handle', 'bio'], ['handle'])

/** Items inserted with an owner (nested insert): clean ones leave the ForeignKey to it out. */
const { owner: _owner, ...CHILD_VALUES } = ITEM_VALUES
const childRow = rows(CHILD_VALUES, ITEM_COLUMNS)

/** An owner row, now and then with items to insert with it. */
const nestedOwner = fc.tuple(ownerRow, fc.option(fc.array(childRow, { maxLength: 3 }), { freq: 2 }))
  .map(([row, children]) => children === null ? row : withKeys(row, [['fw_item', children]]))

t.test('POST / of owners, with nested items: no 5xx, the owner and its items written all or nothing', async (t) => {
  const app = await writeApp(t)
  const sent = payloadOf(rowsBody(nestedOwner, ownerRow)).map(({ payload, type }): Sent =>
    ({ method: 'POST', url: '/owners/', payload, type, answer: payload.startsWith('[') ? 'rows' : 'row' }))
  await check(t, app, 'POST /owners/', sent, [201, 400, 413, 415, 422])
})

/** `__on_conflict` targets: each unique column and the UUID key, and some no upsert takes. */
const ITEM_TARGETS = ['label', 'slug', 'big', 'ref', 'label', 'slug']
const BAD_TARGETS = ['id', 'label,slug', 'body', '', 'bogus', '__proto__', 'label&__on_conflict=slug', 'LABEL', ' label ']

t.test('upsert (__on_conflict) of a row or an array: no 5xx, all or nothing', async (t) => {
  const app = await writeApp(t)
  const conflict = (targets: readonly string[]): fc.Arbitrary<string> => fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...targets) }, { weight: 1, arbitrary: fc.constantFrom(...BAD_TARGETS) })
  const items = fc.tuple(writable, conflict(ITEM_TARGETS), payloadOf(rowsBody(itemRow)))
  // Nested items with an upsert are a 400 (SPEC §8.5): sent now and then all the same.
  const owners = fc.tuple(fc.constant('/owners'), conflict(['handle', 'id']), payloadOf(rowsBody(fc.oneof({ weight: 4, arbitrary: ownerRow }, { weight: 1, arbitrary: nestedOwner }), ownerRow)))
  const sent = fc.oneof({ weight: 3, arbitrary: items }, { weight: 1, arbitrary: owners }).map(([prefix, on, { payload, type }]): Sent =>
    ({ method: 'POST', url: `${prefix}/?__on_conflict=${on}`, payload, type, answer: payload.startsWith('[') ? 'rows' : 'row' }))
  await check(t, app, 'upsert', sent, [200, 201, 400, 413, 415, 422])
})

/** Ids of the seeded items and of none; ids no Serial takes; a helper path PUT and PATCH are not allowed on. */
const itemId = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 8 }).map(String) },
  { weight: 2, arbitrary: fc.constantFrom('9', '99999', '0', '-1', '2147483647', '2147483648', '1.0', '01', ' 1', 'abc', '%00', '%F0', 'schema', 'new', '1e3', '%ud800', '🙂') }
)
const ownerId = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...OWNERS) },
  { weight: 2, arbitrary: fc.oneof(fc.uuid(), fc.constantFrom(OWNERS[0].toUpperCase(), 'not-a-uuid', '0', '%00', `${OWNERS[1]}x`, 'ids')) }
)

/** A path id as a body gives the key: a number for a Serial's digits. */
const asKey = (id: string): unknown => /^\d+$/.test(id) ? Number(id) : id

/** Stands for the path's id in a body's key. */
const PATH_ID = Symbol('the path id')

/** PUT or PATCH `/:id/`: a row, now and then with a key in the body: the path's, another id, or a hostile value. */
function toOne (method: 'PUT' | 'PATCH'): fc.Arbitrary<Sent> {
  const key = (id: fc.Arbitrary<string>): fc.Arbitrary<unknown> => fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.oneof(fc.constant(PATH_ID), id.map(asKey), hostile) })
  const items = fc.tuple(writable, itemId, itemRow, key(itemId))
  const owners = fc.tuple(fc.constant('/owners'), ownerId, rows(OWNER_FIELDS, ['handle', 'bio'], ['handle']), key(ownerId))
  const ifMatch = fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('*', '"x"', 'W/"x"', '', '"', '*, "x"', 'null', '\u0000') })
  return fc.tuple(fc.oneof({ weight: 3, arbitrary: items }, { weight: 1, arbitrary: owners }), envelope, ifMatch).map(([[prefix, id, row, pk], [odd, type], ifMatch]): Sent => {
    const body = pk === null ? row : withKeys(row, [['id', pk === PATH_ID ? asKey(id) : pk]])
    return { method, url: `${prefix}/${id}/`, payload: odd ?? toJson(body), type, answer: 'row', ifMatch }
  })
}

t.test('PUT /:id/ of existing and missing rows: no 5xx, a refused write changes nothing', async (t) => {
  const app = await writeApp(t)
  await check(t, app, 'PUT /:id/', toOne('PUT'), [200, 400, 404, 405, 412, 413, 415, 422])
})

t.test('PATCH /:id/ of existing and missing rows: no 5xx, a refused write changes nothing', async (t) => {
  const app = await writeApp(t)
  await check(t, app, 'PATCH /:id/', toOne('PATCH'), [200, 400, 404, 405, 412, 413, 415, 422])
})

/** Filters of a bulk PATCH: some match a few rows, some every row (over `/items`'s maxAffected of 6), some are refused. */
const FILTERS = [
  'id=1', 'id=99', 'id__operator=lte&id=3', 'id__operator=gte&id=5', 'kind=fancy', 'label=seed2', 'label__match=exact&label=a', 'small__operator=lt&small=4',
  'flag__operator=is_null', 'id__operator=in&id=2&id=4', '__or=(id.lt.3,kind.e.fancy)', '__and=(id.gt.2,not.kind.e.plain)', 'id__operator=not_null',
  'id__operator=not_null&__max_affected=2', 'owner=' + OWNERS[0], 'count__operator=is_null&__max_affected=20',
  '', 'bogus=1', 'id=abc', '__max_affected=0', '__max_affected=1', 'id=1&id=2', 'doc=1', '__or=(id.lt.3', 'small=99999', 'label=%00', '__proto__=1'
]

t.test('bulk PATCH / with filters: no 5xx, every matching row changed or none', async (t) => {
  const app = await writeApp(t)
  // One value of a unique column on two rows is a 422: mostly left out, so that some patches succeed.
  const patch = rows({ ...ITEM_VALUES, label: fc.constantFrom(null, 'a'), slug: fc.constant(null), big: fc.constant(null), ref: fc.constant(null) }, ITEM_COLUMNS)
  const sent = fc.tuple(writable, fc.constantFrom(...FILTERS), payloadOf(patch)).map(([prefix, filter, { payload, type }]): Sent =>
    ({ method: 'PATCH', url: `${prefix}/?${filter}`, payload, type, answer: 'count' }))
  await check(t, app, 'PATCH /', sent, [200, 400, 413, 415, 422])
})
