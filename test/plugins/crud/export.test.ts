import t from 'tap'
import http from 'node:http'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { csvField } from '../../../plugins/crud/export.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { buildApp } from '../../helpers/app.js'
import { testDatabase } from '../../helpers/db.js'
import { closeIdleConnections, errorBody, json } from '../../fixtures/movies.js'

/*
 * Streaming export (SPEC §7.5): NDJSON and CSV of every row matching the filters, in order,
 * with the fields asked for; CSV quoting; the cap; a client that leaves mid-stream.
 */

const maker = defineTable('maker', {
  name: column.varchar({ length: 50 })
}, { readable: 'name' })

const part = defineTable('part', {
  label: column.text(),
  size: column.integer({ null: true }),
  tags: column.array(column.varchar({ length: 10 })),
  secret: column.varchar({ length: 20, secret: true, null: true }),
  maker: column.foreignKey(maker, { null: true })
})

const db = await testDatabase(t)
if (db.embedded) closeIdleConnections(db.pool)
const app = await buildApp(t, db, [maker, part], async (app) => {
  await app.register(tableCrud, { table: part, prefix: '/parts', maxJoins: 1 })
  await app.register(tableCrud, { table: part, prefix: '/capped', maxExportRows: 2 })
})
if (db.embedded) closeIdleConnections(app.pg.pool)

await db.pool.query("INSERT INTO maker (name) VALUES ('Acme, Inc.'), ('Say \"hi\"')")
await db.pool.query(`INSERT INTO part (label, size, tags, secret, maker) VALUES
  ('plain', 1, '{a,b}', 's1', 1),
  ('with, comma', 2, '{}', 's2', 2),
  ('with "quotes"', NULL, '{"x,y"}', 's3', NULL),
  (E'two\\nlines', 4, '{}', NULL, 1)`)

t.test('csvField follows RFC 4180', async (t) => {
  t.equal(csvField(null), '')
  t.equal(csvField(undefined), '')
  t.equal(csvField('plain'), 'plain')
  t.equal(csvField('a,b'), '"a,b"')
  t.equal(csvField('say "hi"'), '"say ""hi"""')
  t.equal(csvField('a\r\nb'), '"a\r\nb"')
  t.equal(csvField(3), '3')
  t.equal(csvField(true), 'true')
  t.equal(csvField(['x,y', 'z']), '"[""x,y"",""z""]"')
})

t.test('NDJSON: every row in order, as GET / gives them', async (t) => {
  const page = json(await app.inject('/parts/?__page_size=100'))
  for (const request of [{ url: '/parts/?__page=2&__page_size=1', headers: { accept: 'application/x-ndjson' } }, { url: '/parts/?__format=ndjson' }]) {
    const response = await app.inject(request)
    t.equal(response.statusCode, 200)
    t.equal(response.headers['content-type'], 'application/x-ndjson; charset=utf-8')
    t.ok(response.body.endsWith('\n'))
    const rows = response.body.trimEnd().split('\n').map((line) => JSON.parse(line))
    t.strictSame(rows, page.rows, 'every row, paging ignored, no secret')
  }
})

t.test('NDJSON with filters, order, visible fields and readable', async (t) => {
  const query = 'size__operator=not_null&__order=-maker.name,label&__visible_fields=label,maker.name&__readable=true'
  const page = json(await app.inject(`/parts/?${query}`))
  const response = await app.inject({ url: `/parts/?${query}`, headers: { accept: 'text/html, application/x-ndjson;q=0.9' } })
  t.equal(response.statusCode, 200)
  const rows = response.body.trimEnd().split('\n').map((line) => JSON.parse(line))
  t.strictSame(rows, page.rows)
  t.strictSame(rows[0], { label: 'with, comma', maker: { name: 'Say "hi"' }, maker_readable: 'Say "hi"' })
})

t.test('CSV: header, quoting, joined fields flattened, arrays as JSON', async (t) => {
  const response = await app.inject({ url: '/parts/?__order=id&__visible_fields=id,label,size,tags,maker.name&__readable=1', headers: { accept: 'text/csv' } })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(response.body, [
    'id,label,size,tags,maker.name,maker_readable',
    '1,plain,1,"[""a"",""b""]","Acme, Inc.","Acme, Inc."',
    '2,"with, comma",2,[],"Say ""hi""","Say ""hi"""',
    '3,"with ""quotes""",,"[""x,y""]",,',
    '4,"two\nlines",4,[],"Acme, Inc.","Acme, Inc."',
    ''
  ].join('\r\n'))
  const filtered = await app.inject('/parts/?__format=csv&label__match=starts&label=with&__order=-id')
  t.equal(filtered.body, 'id,label,size,tags,maker\r\n3,"with ""quotes""",,"[""x,y""]",\r\n2,"with, comma",2,[],2\r\n')
  const none = await app.inject('/parts/?__format=csv&label=nothing')
  t.equal(none.body, 'id,label,size,tags,maker\r\n', 'the header alone when no row matches')
})

t.test('maxExportRows caps the export; JSON stays the default', async (t) => {
  const response = await app.inject('/capped/?__format=ndjson&__order=id')
  t.strictSame(response.body.trimEnd().split('\n').map((l) => JSON.parse(l).id), [1, 2])
  for (const accept of [undefined, '*/*', 'application/json, application/x-ndjson', 'text/html']) {
    const page = await app.inject({ url: '/parts/', headers: accept === undefined ? {} : { accept } })
    t.equal(page.headers['content-type'], 'application/json; charset=utf-8', String(accept))
  }
  t.equal(json(await app.inject({ url: '/parts/?__format=json', headers: { accept: 'text/csv' } })).rows.length, 4)
})

t.test('errors before the first byte are the usual answer', async (t) => {
  const bad = await app.inject('/parts/?__format=xml')
  t.equal(bad.statusCode, 400)
  t.strictSame(json(bad), errorBody(400, 'TABLECRUD_ERR_QS_INVALID_FORMAT', '__format must be json, ndjson or csv.'))
  const unknown = await app.inject({ url: '/parts/?nope=1', headers: { accept: 'text/csv' } })
  t.equal(unknown.statusCode, 400)
  t.equal(json(unknown).code, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD')
  // A value PostgreSQL refuses at execution (past int4): the database's error, before any byte.
  // The statement fails when the cursor first reads: a §1 500, the connection back in the pool.
  await db.pool.query('ALTER TABLE part RENAME COLUMN size TO size_was')
  try {
    const failed = await app.inject('/parts/?__format=ndjson')
    t.equal(failed.statusCode, 500)
    t.equal(json(failed).code, 'TABLECRUD_ERR_INTERNAL')
  } finally {
    await db.pool.query('ALTER TABLE part RENAME COLUMN size_was TO size')
  }
  t.equal(app.pg.pool.totalCount - app.pg.pool.idleCount, 0)
  t.equal(json(await app.inject('/parts/?__page_size=1')).rows.length, 1)
})

t.test('a client that leaves mid-stream: the cursor and its connection are released', async (t) => {
  await db.pool.query("INSERT INTO part (label, size, tags) SELECT 'bulk ' || i, i, '{}' FROM generate_series(1, 200000) AS i")
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const pool = app.pg.pool
  await new Promise<void>((resolve, reject) => {
    const request = http.get(`${address}/parts/?__format=csv`, (response) => {
      t.equal(response.statusCode, 200)
      let bytes = 0
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length
        if (bytes > 100000) {
          t.equal(pool.totalCount - pool.idleCount, 1, 'the export holds one connection while streaming')
          request.destroy()
          resolve()
        }
      })
      response.on('error', () => {})
    })
    request.on('error', () => {})
    request.on('close', () => resolve())
    setTimeout(() => reject(new Error('no data')), 20000).unref()
  })
  for (let i = 0; i < 100 && pool.totalCount !== pool.idleCount; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(pool.totalCount - pool.idleCount, 0, 'no connection checked out')
  t.equal(pool.waitingCount, 0)
  const after = await app.inject('/parts/?__page_size=1&__order=id')
  t.equal(json(after).rows[0].id, 1, 'the pool still serves')
  const full = await app.inject('/parts/?__format=ndjson&__visible_fields=id')
  t.equal(full.body.split('\n').length - 1, 200004, 'a full export of every row')
})
