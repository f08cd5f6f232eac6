import t from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { closeIdleConnections } from '../../fixtures/movies.js'
import { testDatabase } from '../../helpers/db.js'
import { buildApp } from '../../helpers/app.js'

/*
 * An embed is built by PostgreSQL's JSON functions, which write some types otherwise than
 * SPEC §2.2 does (a Numeric or BigInt as a JSON number, a timestamp with its zone, an interval
 * in PostgreSQL's own style). Those go as text and are read as their type's pg parser reads
 * them, so each embedded value equals the one GET `/` gives for the same row. A row wider than
 * json_build_object's 100 arguments is built in pieces.
 */

const owner = defineTable('emb_owner', { name: column.varchar({ length: 20 }) })
const code = defineTable('emb_code', { id: column.bigInt({ primaryKey: true }), label: column.text(), since: column.timestamptz({ null: true }) })
const item = defineTable('emb_item', {
  owner: column.foreignKey(owner, { related: 'items', index: true }),
  code: column.foreignKey(code, { related: 'items' }),
  price: column.numeric({ digits: [8, 2], null: true }),
  big: column.bigInt({ null: true }),
  at: column.timestamp({ null: true }),
  at_zone: column.timestamptz({ null: true }),
  day: column.date({ null: true }),
  clock: column.time({ null: true }),
  span: column.interval({ null: true }),
  ratio: column.doublePrecision({ null: true }),
  score: column.real({ null: true }),
  ratios: column.array(column.doublePrecision(), { null: true }),
  flag: column.boolean({ null: true }),
  key: column.uuid({ null: true }),
  doc: column.jsonb({ null: true }),
  prices: column.array(column.numeric({ digits: [8, 2] }), { null: true }),
  times: column.array(column.array(column.timestamp({ null: true })), { null: true })
})
const WIDE = Array.from({ length: 55 }, (_, i) => `c${i}`)
const wide = defineTable('emb_wide', {
  owner: column.foreignKey(owner, { related: 'wides' }),
  ...Object.fromEntries(WIDE.map((name) => [name, column.integer({ null: true })]))
})
const TABLES: readonly Table[] = [owner, code, item, wide]

const db = await testDatabase(t)
if (db.embedded) closeIdleConnections(db.pool)
const app = await buildApp(t, db, TABLES, async (app) => {
  await app.register(tableCrud, { table: owner, prefix: '/owners', maxJoins: 1 })
  await app.register(tableCrud, { table: owner, prefix: '/deep', maxJoins: 2 })
  await app.register(tableCrud, { table: item, prefix: '/items', aggregates: true })
  await app.register(tableCrud, { table: wide, prefix: '/wides' })
})
if (db.embedded) closeIdleConnections(app.pg.pool)

await db.pool.query("INSERT INTO emb_owner (name) VALUES ('a'), ('b')")
await db.pool.query("INSERT INTO emb_code (id, label, since) VALUES (9007199254740993, 'past 2^53', '2024-01-01 00:00:00+01')")
await db.pool.query(`INSERT INTO emb_item (owner, code, price, big, at, at_zone, day, clock, span, ratio, flag, key, doc, prices, times) VALUES
  (1, 9007199254740993, 12.50, 9007199254740993, '2024-05-17 20:00:00.123', '2024-05-17 20:00:00+02', '2024-05-17', '10:11:12.5', '1 day 2 hours', 0.1, true,
   'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{"a": [1, null]}', '{1.00,2.50}', '{{"2024-01-01 00:00:00","2024-01-01 00:00:00.000001",NULL}}'),
  (1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (1, NULL, NULL, NULL, 'infinity', '-infinity', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (1, NULL, NULL, NULL, '0044-03-15 12:00:00 BC', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (1, NULL, NULL, NULL, '2024-05-17 20:00:00', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
await db.pool.query(`INSERT INTO emb_wide (owner, ${WIDE.join(', ')}) VALUES (1, ${WIDE.map((_, i) => String(i)).join(', ')})`)

const body = async (url: string): Promise<any> => {
  const response = await app.inject(url)
  t.equal(response.statusCode, 200, `${url}: ${response.body.slice(0, 300)}`)
  return JSON.parse(response.body)
}

t.test('each embedded value is the value GET / serves for the same row', async (t) => {
  const columns = item.columns.filter((c) => c.name !== 'owner').map((c) => c.name)
  const direct = (await body(`/items/?owner=1&__visible_fields=${columns.join(',')}`)).rows
  t.equal(direct[4].price, '12.50', 'the reference is exact: a Numeric is its text')
  t.equal(direct[4].big, '9007199254740993')
  t.strictSame(direct.slice(0, 4).map((r: { at: unknown }) => r.at), ['2024-05-17T20:00:00', '0044-03-15 12:00:00 BC', 'infinity', null], 'timestamps past the wire form keep their text')
  const embedded = (await body(`/owners/?id=1&__visible_fields=items.${columns.join(',items.')}`)).rows[0].items
  t.strictSame(embedded, direct)
  t.strictSame((await body(`/owners/1/?__visible_fields=items.${columns.join(',items.')}`)).items, direct, 'GET /:id/ too')
  const ndjson = await app.inject(`/owners/?id=1&__format=ndjson&__visible_fields=items.${columns.join(',items.')}`)
  t.strictSame(JSON.parse(ndjson.body).items, direct, 'and an NDJSON export')
  t.strictSame((await body('/owners/?id=2&__visible_fields=items.price')).rows, [{ items: [] }])
})

t.test('a value to put in wire form inside a joined object of an embed', async (t) => {
  t.strictSame((await body('/deep/1/?__visible_fields=items.code.id,items.code.label,items.code.since')).items.slice(-2), [
    { code: { id: null, label: null, since: null } },
    { code: { id: '9007199254740993', label: 'past 2^53', since: '2023-12-31T23:00:00Z' } }
  ])
})

t.test('a row of more than 50 fields', async (t) => {
  const direct = (await body(`/wides/?__visible_fields=${WIDE.join(',')}`)).rows
  t.strictSame((await body(`/owners/1/?__visible_fields=wides.${WIDE.join(',wides.')}`)).wides, direct)
})

t.test('a double JSON cannot write: embedded, the answer GET / gives for it', async (t) => {
  await db.pool.query("INSERT INTO emb_owner (name) VALUES ('c'), ('d')")
  await db.pool.query("INSERT INTO emb_item (owner, ratio, score, ratios) VALUES (3, 'Infinity', '-Infinity', '{1.5,NULL}'), (4, 'NaN', NULL, NULL), (4, NULL, NULL, '{{1,Infinity}}')")
  const fields = ['ratio', 'score']
  const direct = (await body(`/items/?owner=3&__visible_fields=${fields.join(',')}`)).rows
  t.strictSame(direct, [{ ratio: null, score: null }], 'an infinity is null, as fast-json-stringify writes it')
  t.strictSame((await body(`/owners/?id=3&__visible_fields=items.${fields.join(',items.')}`)).rows, [{ items: direct }])
  t.strictSame((await body(`/owners/3/?__visible_fields=items.${fields.join(',items.')}`)).items, direct)
  t.strictSame((await body('/owners/3/?__visible_fields=items.ratios')).items, [{ ratios: [1.5, null] }], 'an array of finite doubles')
  // An export writes the page's values: an infinity is null (an empty CSV field), not PostgreSQL's text.
  const exportOf = async (url: string): Promise<string> => {
    const response = await app.inject(url)
    t.equal(response.statusCode, 200, url)
    return response.body
  }
  t.equal(await exportOf('/items/?owner=3&__format=ndjson&__visible_fields=ratio,score,ratios'), '{"ratio":null,"score":null,"ratios":[1.5,null]}\n')
  t.equal(await exportOf('/items/?owner=3&__format=csv&__visible_fields=ratio,score,ratios'), 'ratio,score,ratios\r\n,,"[1.5,null]"\r\n')
  t.equal(await exportOf('/owners/?id=3&__format=csv&__visible_fields=items.ratio'), 'items\r\n"[{""ratio"":null}]"\r\n', 'embedded too')
  const failed = { statusCode: 500, code: 'TABLECRUD_ERR_INTERNAL', error: 'Internal Server Error', message: 'Internal Server Error' }
  // NaN (a value a trigger may write), and an infinity inside an array, fail the answer (docs/tables.md).
  for (const fields of ['ratio', 'ratios']) {
    for (const url of [`/items/?owner=4&__visible_fields=${fields}`, `/items/?owner=4&__visible_fields=${fields},owner&__readable=true`, `/owners/?id=4&__visible_fields=items.${fields}`,
      `/owners/?id=4&__visible_fields=items.${fields}&__cursor=`, `/owners/4/?__visible_fields=items.${fields}`,
      `/items/?owner=4&__visible_fields=${fields}&__format=ndjson`, `/items/?owner=4&__visible_fields=${fields}&__format=csv`]) {
      const response = await app.inject(url)
      t.equal(response.statusCode, 500, url)
      t.strictSame(JSON.parse(response.body), failed, `${url}: the error's own body, not a serialiser's message`)
    }
  }
  const aggregate = await app.inject('/items/aggregate/?owner=4&__aggregate=max(ratio)')
  t.equal(aggregate.statusCode, 500)
  t.strictSame(JSON.parse(aggregate.body), failed, 'an aggregate of NaN too')
  // An export writes embeds as the JSON answer does: before the first byte, the usual 500.
  const exported = await app.inject('/owners/?id=4&__format=ndjson&__visible_fields=items.ratio')
  t.equal(exported.statusCode, 500)
  t.strictSame(JSON.parse(exported.body), failed, 'an export too, its cursor closed')
  t.equal(app.pg.pool.totalCount - app.pg.pool.idleCount, 0, 'no connection checked out')
})

t.test('an export past its first batch: a value it cannot write cuts it short, its connection released', async (t) => {
  // Past the 500 rows of the first batch, an owner whose embedded row holds NaN.
  await db.pool.query("INSERT INTO emb_owner (name) SELECT 'many ' || i FROM generate_series(1, 600) AS i")
  await db.pool.query("INSERT INTO emb_item (owner, ratio) SELECT max(id), 'NaN' FROM emb_owner")
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const response = await fetch(`${address}/owners/?id__operator=gt&id=4&__format=ndjson&__order=id&__visible_fields=id,items.ratio`)
  t.equal(response.status, 200, 'the first batch went out')
  const read = await response.text().then(() => 'whole', (error: Error) => `cut short: ${error.message}`)
  t.equal(read, 'cut short: terminated')
  const pool = app.pg.pool
  for (let i = 0; i < 100 && pool.totalCount !== pool.idleCount; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(pool.totalCount - pool.idleCount, 0, 'no connection checked out')
})
