import t from 'tap'
import { column, defineTable } from '../../../lib/table/index.js'
import { COLUMN_TYPES, isColumnType, sqlLiteral, toDatabase, typeOf, type ColumnTypeDescriptor } from '../../../lib/table/column-types.js'
import type { ColumnType, Json } from '../../../lib/table/column.js'
import type { RowOf } from '../../../lib/table/table.js'
import { createTables, createTablesSql } from '../../../lib/db/index.js'
import { wireTypes } from '../../../lib/db/types.js'
import { ValueError } from '../../../lib/values/index.js'
import { newRow } from '../../../schemas/row.js'
import { testDatabase } from '../../helpers/db.js'

/*
 * The column-type descriptors (lib/table/column-types.ts) and the DDL and wire readers of the
 * types of SPEC §2.2's second table, on the database under test.
 */

const db = await testDatabase(t)

// A type that misses one part of its descriptor does not compile: checked by `npx tsc --noEmit`.
// @ts-expect-error `read` is missing
const incomplete: ColumnTypeDescriptor = { ...COLUMN_TYPES.integer, read: undefined }
// @ts-expect-error every ColumnType needs a descriptor
const partial: Record<ColumnType, ColumnTypeDescriptor> = { integer: COLUMN_TYPES.integer }
t.equal([incomplete, partial].length, 2, 'the two above are type checks')

const target = defineTable('ctd_target', { id: column.uuid({ primaryKey: true }) })
const bigTarget = defineTable('ctd_big', { id: column.bigInt({ primaryKey: true }) })
const smallTarget = defineTable('ctd_small', { id: column.smallInt({ primaryKey: true }) })
const kinds = defineTable('ctd_kinds', {
  small: column.smallInt({ default: 5 }),
  big: column.bigInt({ default: '9007199254740993' }),
  ratio: column.doublePrecision({ default: 2.5 }),
  token: column.uuid({ null: true, default: 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11' }),
  day: column.date({ default: 'now' }),
  fixed_day: column.date({ default: '2024-02-29' }),
  at: column.time({ default: 'now' }),
  fixed_at: column.time({ default: '12:00:00.25' }),
  stamp: column.timestamptz({ default: 'now' }),
  fixed_stamp: column.timestamptz({ default: '2024-01-01T00:00:00+01:00' }),
  span: column.interval({ default: 'P1D' }),
  data: column.jsonb({ default: { a: [1, "it's"] } }),
  plain_small: column.smallInt(),
  plain_big: column.bigInt(),
  plain_ratio: column.doublePrecision(),
  plain_token: column.uuid({ null: true }),
  plain_day: column.date(),
  plain_at: column.time(),
  plain_stamp: column.timestamptz(),
  plain_span: column.interval(),
  plain_data: column.jsonb({ null: true }),
  target: column.foreignKey<string>(target, { null: true }),
  big_target: column.foreignKey<string>(bigTarget, { null: true }),
  small_target: column.foreignKey(smallTarget, { null: true }),
  days: column.array(column.date()),
  grid: column.array(column.array(column.bigInt()))
})

t.test('sqlLiteral: null is NULL for any type; a value its type writes', async (t) => {
  const year = defineTable('literal_check', { year: column.integer({ null: true }) }).columnMap.get('year')!
  t.equal(sqlLiteral(year, null), 'NULL')
  t.equal(sqlLiteral(year, 1999), '1999')
})

t.test('DDL: each type its SQL type and defaults; a UUID key defaults to a random one', async (t) => {
  t.equal(createTablesSql([target, bigTarget, smallTarget, kinds]), [
    'CREATE TABLE IF NOT EXISTS "ctd_target" (\n  "id" uuid PRIMARY KEY DEFAULT gen_random_uuid()\n)',
    'CREATE TABLE IF NOT EXISTS "ctd_big" (\n  "id" bigint PRIMARY KEY\n)',
    'CREATE TABLE IF NOT EXISTS "ctd_small" (\n  "id" smallint PRIMARY KEY\n)',
    'CREATE TABLE IF NOT EXISTS "ctd_kinds" (\n  ' + [
      '"id" serial PRIMARY KEY',
      '"small" smallint NOT NULL DEFAULT 5',
      '"big" bigint NOT NULL DEFAULT 9007199254740993',
      '"ratio" double precision NOT NULL DEFAULT 2.5',
      "\"token\" uuid DEFAULT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
      "\"day\" date NOT NULL DEFAULT ((now() AT TIME ZONE 'utc')::date)",
      "\"fixed_day\" date NOT NULL DEFAULT '2024-02-29'",
      "\"at\" time NOT NULL DEFAULT ((now() AT TIME ZONE 'utc')::time)",
      "\"fixed_at\" time NOT NULL DEFAULT '12:00:00.250000'",
      '"stamp" timestamptz NOT NULL DEFAULT now()',
      "\"fixed_stamp\" timestamptz NOT NULL DEFAULT '2023-12-31 23:00:00.000000+00'",
      "\"span\" interval NOT NULL DEFAULT 'P1D'",
      "\"data\" jsonb NOT NULL DEFAULT '{\"a\":[1,\"it''s\"]}'",
      '"plain_small" smallint NOT NULL DEFAULT 0',
      '"plain_big" bigint NOT NULL DEFAULT 0',
      '"plain_ratio" double precision NOT NULL DEFAULT 0',
      '"plain_token" uuid',
      "\"plain_day\" date NOT NULL DEFAULT ((now() AT TIME ZONE 'utc')::date)",
      "\"plain_at\" time NOT NULL DEFAULT ((now() AT TIME ZONE 'utc')::time)",
      '"plain_stamp" timestamptz NOT NULL DEFAULT now()',
      "\"plain_span\" interval NOT NULL DEFAULT 'PT0S'",
      '"plain_data" jsonb',
      '"target" uuid REFERENCES "ctd_target" ("id") ON DELETE CASCADE',
      '"big_target" bigint REFERENCES "ctd_big" ("id") ON DELETE CASCADE',
      '"small_target" smallint REFERENCES "ctd_small" ("id") ON DELETE CASCADE',
      "\"days\" date[] NOT NULL DEFAULT '{}'",
      "\"grid\" bigint[][] NOT NULL DEFAULT '{}'"
    ].join(',\n  ') + '\n)'
  ].join(';\n') + ';')
})

t.test('the tables are created, and their values read back in wire form, never through a JS Date', async (t) => {
  await createTables(db.pool, [target, bigTarget, smallTarget, kinds])
  const key = await db.pool.query('INSERT INTO ctd_target DEFAULT VALUES RETURNING id')
  t.match(key.rows[0].id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'gen_random_uuid() made the key')
  await db.pool.query("INSERT INTO ctd_big VALUES ('9223372036854775807')")
  await db.pool.query(`INSERT INTO ctd_kinds (plain_stamp, plain_span, plain_at, plain_day, target, big_target, days, grid)
    VALUES ('2024-01-02 08:34:05.123456+05:30', '1 year 2 mons -3 days 04:05:06.789', '23:59:59.999999', '0044-03-15',
            $1, '9223372036854775807', '{2024-01-01,NULL}', '{{1,9223372036854775807}}')`, [key.rows[0].id])
  const { rows } = await db.pool.query({ text: 'SELECT * FROM ctd_kinds', types: wireTypes })
  const row = rows[0]
  t.match(row, {
    small: 5,
    big: '9007199254740993',
    ratio: 2.5,
    token: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    day: /^\d{4}-\d\d-\d\d$/,
    fixed_day: '2024-02-29',
    at: /^\d\d:\d\d:\d\d(\.\d{6})?$/,
    fixed_at: '12:00:00.250000',
    stamp: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$/,
    fixed_stamp: '2023-12-31T23:00:00Z',
    span: 'P1D',
    data: { a: [1, "it's"] },
    plain_stamp: '2024-01-02T03:04:05.123456Z',
    plain_span: 'P1Y2M-3DT4H5M6.789S',
    plain_at: '23:59:59.999999',
    plain_day: '0044-03-15',
    plain_data: null,
    big_target: '9223372036854775807',
    days: ['2024-01-01', null],
    grid: [['1', '9223372036854775807']]
  })
})

t.test("formatInterval writes what PostgreSQL's own iso_8601 style writes", async (t) => {
  const texts = ['0', '1 day 2 hours', '-1 days +02:00:00', '1 year 2 mons -3 days 04:05:06.789', '-00:01:30.5',
    '-00:00:00.5', 'P1Y-2M3W', '100:00:00.1', '-1 year -2 mons', '1 mon -1 sec', '2 days 1 minute 0.000001 sec']
  const client = await db.pool.connect()
  try {
    for (const text of texts) {
      const ours = await client.query({ text: 'SELECT $1::interval AS v', values: [text], types: wireTypes })
      await client.query("SET intervalstyle = 'iso_8601'")
      const theirs = await client.query('SELECT $1::interval::text AS v', [text])
      await client.query('RESET intervalstyle')
      t.equal(ours.rows[0].v, theirs.rows[0].v, text)
    }
  } finally {
    client.release()
  }
})

t.test('timestamptz values read the same whatever the session zone', async (t) => {
  const client = await db.pool.connect()
  try {
    await client.query("SET TIME ZONE 'Asia/Kolkata'")
    const { rows } = await client.query({ text: "SELECT '2024-01-02T03:04:05.000001Z'::timestamptz AS v, ARRAY['2024-06-30T23:59:59Z'::timestamptz] AS a", types: wireTypes })
    t.equal(rows[0].v, '2024-01-02T03:04:05.000001Z')
    t.strictSame(rows[0].a, ['2024-06-30T23:59:59Z'])
    await client.query('RESET TIME ZONE')
  } finally {
    client.release()
  }
})

t.test('definition checks the descriptors make', async (t) => {
  t.throws(() => defineTable('ctd_bad1', { j: column.array(column.jsonb()) }), /Table ctd_bad1, column j: an array cannot hold jsonb \(a JSON array is one jsonb value\)/)
  for (const [name, col] of [['ratio', column.doublePrecision({ primaryKey: true })], ['day', column.date({ primaryKey: true })],
    ['data', column.jsonb({ primaryKey: true })], ['span', column.interval({ primaryKey: true })]] as const) {
    t.throws(() => defineTable('ctd_bad2', { [name]: col }), new RegExp(`a ${col.type} column cannot be the primary key`))
  }
  t.throws(() => defineTable('ctd_bad3', { x: { ...column.integer(), type: 'money' } as any }), /is not a column/)
  t.ok(isColumnType('jsonb'))
  t.notOk(isColumnType('constructor'), 'an Object.prototype key is no column type')
})

t.test('body values the JSON schema let through, checked to the last rule', async (t) => {
  const bad: Array<[ReturnType<typeof column.integer>, unknown, string]> = [
    [column.bigInt(), '9223372036854775808', 'must be a 64-bit integer (a string of digits past 2^53)'],
    [column.bigInt(), 2 ** 60, 'must be a 64-bit integer (a string of digits past 2^53)'],
    [column.uuid(), 'urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'must be a UUID'],
    [column.date(), '0000-01-01', 'must be a date, YYYY-MM-DD'],
    [column.time(), '24:00:00', 'must be a time, HH:MM:SS[.ffffff]'],
    [column.timestamptz(), '2024-01-01T00:00:00', 'must be an ISO 8601 date-time with Z or an offset'],
    [column.interval(), '1 day', 'must be an ISO 8601 duration such as P1DT2H']
  ]
  for (const [col, value, message] of bad) {
    t.throws(() => toDatabase(col, value), new ValueError(message), `${col.type} ${String(value)}`)
  }
  t.equal(toDatabase(column.jsonb(), [1, 2]), '[1,2]', 'a JSON array is sent as JSON, not as a PostgreSQL array')
  t.equal(toDatabase(column.jsonb(), 'x'), '"x"', 'a JSON string is sent as JSON')
  t.equal(toDatabase(column.foreignKey(bigTarget), 12), '12', "a ForeignKey's value is its key's")
  t.equal(typeOf(column.jsonb()).parse(column.jsonb(), 'x'), undefined, 'no JSONB filter takes a value')
  t.equal(typeOf(column.jsonb()).literal(column.jsonb(), () => 1), undefined, 'a default with no JSON form')
})

t.test('declared defaults in wire form, as /new/ offers them', async (t) => {
  const row = newRow(kinds, true)
  t.match(row, {
    id: null,
    small: 5,
    big: '9007199254740993',
    ratio: 2.5,
    token: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    day: /^\d{4}-\d\d-\d\d$/,
    fixed_day: '2024-02-29',
    at: /^\d\d:\d\d:\d\d$/,
    fixed_at: '12:00:00.250000',
    stamp: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    fixed_stamp: '2023-12-31T23:00:00Z',
    span: 'P1D',
    data: { a: [1, "it's"] },
    plain_big: '0',
    plain_span: 'PT0S',
    plain_data: null,
    target: null
  })
  // A default that does not fit its type passes as it is: the DDL refuses it, naming the column.
  const odd: Array<[ReturnType<typeof column.integer>, unknown]> = [
    [column.bigInt(), 'x'], [column.uuid(), 'x'], [column.time(), 'x'], [column.timestamptz(), 'x'],
    [column.foreignKey(bigTarget), 'x']
  ]
  for (const [col, value] of odd) t.equal(typeOf(col).wire(col, value), value, col.type)
})

t.test('a declared default that does not fit its type is refused by the DDL', async (t) => {
  const cases: Array<[string, ReturnType<typeof column.integer>]> = [
    ['uuid', column.uuid({ default: 'x' })],
    ['date', column.date({ default: '2024-02-30' })],
    ['time', column.time({ default: '25:00:00' })],
    ['timestamptz', column.timestamptz({ default: '2024-01-01T00:00:00' })],
    ['interval', column.interval({ default: '1 day' })],
    ['bigInt', column.bigInt({ default: 1.5 })],
    ['serial', column.serial({ default: 1 })],
    ['foreignKey', column.foreignKey(bigTarget, { default: '1' })],
    ['array', column.array(column.uuid(), { default: ['x'] })]
  ]
  for (const [type, col] of cases) {
    const table = defineTable(`ctd_default_${type}`, { c: col })
    t.throws(() => createTablesSql([table]), new RegExp(`Table ctd_default_${type}, column c: the default .* does not fit the column's type \\(${type}\\)`), type)
  }
})

t.test('the key parts of the descriptors, and an array\'s schema', async (t) => {
  const small = column.smallInt()
  const key = typeOf(small).key!
  t.equal(key.parse(small, '-32768'), -32768)
  t.equal(key.parse(small, '32768'), undefined)
  t.strictSame(JSON.parse(JSON.stringify(key.schema(small, 'The id.'))), { minimum: -32768, maximum: 32767, description: 'The id.', type: 'integer' })
  const grid = column.array(column.array(column.bigInt()))
  t.strictSame(JSON.parse(JSON.stringify(typeOf(grid).schema(grid, 'out'))), { type: 'array', items: { type: 'array', items: { type: 'string' } } })
})

t.test('keys the database assigns: bigserial, and identity columns in place of a sequence', async (t) => {
  const big = defineTable('ctd_bigserial', { id: column.bigSerial({ primaryKey: true }), n: column.bigSerial() })
  const always = defineTable('ctd_always', { id: column.serial({ primaryKey: true, identity: 'always' }), big: column.foreignKey<string>(big) })
  const byDefault = defineTable('ctd_by_default', { id: column.bigSerial({ primaryKey: true, identity: 'by default' }), up: column.foreignKey(always, { null: false }) })
  t.equal(createTablesSql([big, always, byDefault]), [
    'CREATE TABLE IF NOT EXISTS "ctd_bigserial" (\n  "id" bigserial PRIMARY KEY,\n  "n" bigserial NOT NULL\n)',
    'CREATE TABLE IF NOT EXISTS "ctd_always" (\n  "id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY,\n  "big" bigint REFERENCES "ctd_bigserial" ("id") ON DELETE CASCADE\n)',
    'CREATE TABLE IF NOT EXISTS "ctd_by_default" (\n  "id" bigint PRIMARY KEY GENERATED BY DEFAULT AS IDENTITY,\n  "up" integer NOT NULL REFERENCES "ctd_always" ("id") ON DELETE CASCADE\n)'
  ].join(';\n') + ';')
  await createTables(db.pool, [big, always, byDefault])
  const { rows } = await db.pool.query(`SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attidentity AS identity
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname IN ('ctd_bigserial', 'ctd_always', 'ctd_by_default') AND a.attname = 'id' ORDER BY c.relname`)
  t.strictSame(rows, [
    { table: 'ctd_always', name: 'id', type: 'integer', identity: 'a' },
    { table: 'ctd_bigserial', name: 'id', type: 'bigint', identity: '' },
    { table: 'ctd_by_default', name: 'id', type: 'bigint', identity: 'd' }
  ], 'PostgreSQL (or PGlite) made each as written')
  const made = await db.pool.query('INSERT INTO ctd_always DEFAULT VALUES RETURNING id')
  t.strictSame(made.rows, [{ id: 1 }])
  await t.rejects(db.pool.query('INSERT INTO ctd_always (id) VALUES (5)'), { code: '428C9' }, 'ALWAYS: the database refuses a given key')

  const key = typeOf(big.primaryKey).key!
  t.equal(key.parse(big.primaryKey, '+0009007199254740993'), '9007199254740993', 'a path id as its digits, exact')
  t.equal(key.parse(big.primaryKey, '9223372036854775807'), '9223372036854775807')
  for (const bad of ['0', '-1', '9223372036854775808', '1.5', '', 'x']) t.equal(key.parse(big.primaryKey, bad), undefined, bad)
  t.strictSame(JSON.parse(JSON.stringify(key.schema(big.primaryKey, 'The id.'))), { pattern: '^\\+?0*[1-9]\\d*$', description: 'The id. From 1 to 9223372036854775807.', type: 'string' })
  t.strictSame([key.json, key.assigned, key.referencedAs(big.primaryKey), key.sqlDefault], ['string', true, 'bigint', null])
  const n = big.columnMap.get('n')!
  t.strictSame([toDatabase(n, 5), toDatabase(n, '9007199254740993'), typeOf(n).blank(n), sqlLiteral(n, 1)], ['5', '9007199254740993', null, undefined], 'a BigInt as a value; no type or declared default')
  t.throws(() => toDatabase(n, 2 ** 60), new ValueError('must be a 64-bit integer (a string of digits past 2^53)'))
})

t.test('RowOf gives each new type its wire value type (checked by tsc)', async (t) => {
  type Kinds = RowOf<typeof kinds>
  const row: Pick<Kinds, 'small' | 'big' | 'token' | 'data' | 'plain_data' | 'big_target' | 'grid'> = {
    small: 1, big: '1', token: null, data: { a: [1] }, plain_data: null, big_target: null, grid: [['1']]
  }
  // @ts-expect-error a BigInt is a string on the wire
  const big: Kinds['big'] = 1
  // @ts-expect-error a NOT NULL JSONB is never null
  const data: Kinds['data'] = null
  const json: Json = row.data
  t.strictSame([big, data, json], [1, null, { a: [1] }])
})
