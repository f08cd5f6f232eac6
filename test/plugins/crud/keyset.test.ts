import t, { type Test } from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { buildApp } from '../../helpers/app.js'
import { testDatabase } from '../../helpers/db.js'
import { closeIdleConnections, errorBody, json, type Row } from '../../fixtures/movies.js'

/*
 * Keyset pagination (SPEC §7.1): walking every page by `__cursor` gives exactly the rows of
 * the OFFSET pages, whatever the order; the cursor's errors; no secret in clear.
 */

const owner = defineTable('owner', {
  name: column.varchar({ length: 50, null: true })
}, { readable: 'name' })

const item = defineTable('item', {
  label: column.varchar({ length: 50 }),
  score: column.integer({ null: true }),
  weight: column.real({ null: true }),
  seen: column.timestamp({ null: true }),
  owner: column.foreignKey(owner, { null: true })
})

// A secret primary key: the tiebreaker of every order, so in every cursor.
const vault = defineTable('vault', {
  code: column.varchar({ length: 40, primaryKey: true, secret: true }),
  label: column.varchar({ length: 50 })
})

const db = await testDatabase(t)
if (db.embedded) closeIdleConnections(db.pool)
const app = await buildApp(t, db, [owner, item, vault], async (app) => {
  await app.register(tableCrud, { table: item, prefix: '/items', maxJoins: 1, maxPageSize: 100 })
  await app.register(tableCrud, { table: owner, prefix: '/owners' })
  await app.register(tableCrud, { table: vault, prefix: '/vaults' })
  await app.register(tableCrud, { table: item, prefix: '/items-other', maxJoins: 1, cursorSecret: 'another secret, 16+ chars' })
})
if (db.embedded) closeIdleConnections(app.pg.pool)

// Ties, NULLs in every sort column, owners with NULL names and items with no owner.
await db.pool.query("INSERT INTO owner (name) VALUES ('Ann'), ('Bob'), (NULL), ('Ann')")
await db.pool.query(`INSERT INTO item (label, score, weight, seen, owner)
  SELECT 'item ' || (i % 7),
    CASE WHEN i % 5 = 0 THEN NULL ELSE i % 4 END,
    CASE WHEN i % 6 = 0 THEN NULL ELSE (i % 3) * 0.1 END,
    CASE WHEN i % 4 = 0 THEN NULL ELSE timestamp '2024-01-01 00:00:00.000001' + (i % 3) * interval '1.5 microseconds' END,
    CASE WHEN i % 9 = 0 THEN NULL ELSE 1 + i % 4 END
  FROM generate_series(1, 61) AS i`)
await db.pool.query("INSERT INTO vault (code, label) SELECT 'secret-' || i, 'v' || (i % 3) FROM generate_series(1, 12) AS i")

async function offsetPages (base: string, size: number): Promise<Row[]> {
  const rows: Row[] = []
  for (let page = 1; ; page++) {
    const response = await app.inject(`${base}${base.includes('?') ? '&' : '?'}__page_size=${size}&__page=${page}`)
    const got = json(response).rows as Row[]
    if (got.length === 0) return rows
    rows.push(...got)
  }
}

async function cursorPages (t: Test, base: string, size: number): Promise<Row[]> {
  const rows: Row[] = []
  let url = `${base}${base.includes('?') ? '&' : '?'}__page_size=${size}&__cursor=`
  for (let pages = 0; pages < 100; pages++) {
    const response = await app.inject(url)
    t.equal(response.statusCode, 200, url)
    const body = json(response)
    rows.push(...body.rows)
    if (body.next_cursor === null) {
      t.equal(response.headers.link, undefined, 'no Link on the last page')
      t.ok(body.rows.length <= size)
      return rows
    }
    t.equal(body.rows.length, size, 'a page before the last is full')
    const next = new URL(url, 'http://localhost:80')
    next.searchParams.set('__cursor', body.next_cursor)
    t.equal(response.headers.link, `<${next.href}>; rel="next"`)
    url = next.pathname + next.search
  }
  throw new Error('too many pages')
}

const ORDERS = [
  '', 'id', 'score', '-score', 'score,-weight', '-weight,score', 'seen', '-seen,label',
  'owner.name', '-owner.name,score', 'label,-owner.name,seen', 'owner', '-id'
]

for (const order of ORDERS) {
  t.test(`cursor pages equal OFFSET pages, __order=${order}`, async (t) => {
    const base = `/items/?__order=${order}`
    const expected = await offsetPages(base, 7)
    t.equal(expected.length, 61)
    t.strictSame(await cursorPages(t, base, 7), expected)
  })
}

t.test('with filters, fields, readable and a page size that divides the total', async (t) => {
  const base = '/items/?score__operator=gte&score=1&__visible_fields=label,owner.name,score&__readable=true&__order=-owner.name'
  const expected = await offsetPages(base, 5)
  t.ok(expected.length > 10)
  t.strictSame(Object.keys(expected[0]!), ['label', 'owner', 'owner_readable', 'score'])
  t.strictSame(await cursorPages(t, base, 5), expected)
  const all = await offsetPages('/items/?__order=score', 61)
  t.strictSame(await cursorPages(t, '/items/?__order=score', 61), all, 'one full page then an empty last page')
})

t.test('a secret primary key orders the pages but is not in the cursor in clear', async (t) => {
  const base = '/vaults/?__order=label'
  const expected = await offsetPages(base, 5)
  t.equal(expected.length, 12)
  t.notOk('code' in expected[0]!)
  t.strictSame(await cursorPages(t, base, 5), expected)
  const cursor = json(await app.inject('/vaults/?__order=label&__page_size=5&__cursor=')).next_cursor as string
  const decoded = Buffer.from(cursor, 'base64url').toString('latin1')
  t.notMatch(decoded, /secret-/)
  t.notMatch(cursor, /secret/)
})

t.test('an empty table: one empty page, no next', async (t) => {
  const response = await app.inject('/items/?label=nothing&__cursor=')
  t.equal(response.statusCode, 200)
  t.strictSame(json(response), { rows: [], next_cursor: null })
})

t.test('cursor errors', async (t) => {
  const INVALID = ['TABLECRUD_ERR_QS_INVALID_CURSOR', "The cursor doesn't match this query."] as const
  const expectError = async (url: string, code: string, message: string): Promise<void> => {
    const response = await app.inject(url)
    t.equal(response.statusCode, 400, url)
    t.strictSame(json(response), errorBody(400, code, message), url)
  }
  const first = json(await app.inject('/items/?__order=score&score__operator=not_null&__page_size=3&__cursor='))
  const cursor = first.next_cursor as string
  t.equal(json(await app.inject(`/items/?__order=score&score__operator=not_null&__page_size=3&__cursor=${cursor}`)).rows.length, 3)
  // The page size is no part of the binding: a client may change it between pages.
  t.equal(json(await app.inject(`/items/?__order=score&score__operator=not_null&__page_size=10&__cursor=${cursor}`)).rows.length, 10)
  await expectError(`/items/?__cursor=${cursor}&__page=2&__order=score&score__operator=not_null`, 'TABLECRUD_ERR_QS_CURSOR_WITH_PAGE', '__cursor and __page cannot be used together.')
  await expectError('/items/?__cursor=&__page=1', 'TABLECRUD_ERR_QS_CURSOR_WITH_PAGE', '__cursor and __page cannot be used together.')
  await expectError(`/items/?__order=-score&score__operator=not_null&__cursor=${cursor}`, ...INVALID)
  await expectError(`/items/?__order=score&__cursor=${cursor}`, ...INVALID)
  await expectError(`/items/?__order=score&score__operator=is_null&__cursor=${cursor}`, ...INVALID)
  await expectError(`/items-other/?__order=score&score__operator=not_null&__cursor=${cursor}`, ...INVALID)
  // Another table with the same order and filters: its binding names the table.
  const byLabel = json(await app.inject('/items/?__order=label&__page_size=2&__cursor=')).next_cursor as string
  await expectError(`/vaults/?__order=label&__cursor=${byLabel}`, ...INVALID)
  const withValue = json(await app.inject('/items/?label=item%201&__page_size=2&__cursor=')).next_cursor as string
  await expectError(`/items/?label=item%202&__cursor=${withValue}`, ...INVALID)
  const raw = Buffer.from(cursor, 'base64url')
  raw[raw.length - 1] = raw[raw.length - 1]! ^ 1
  await expectError(`/items/?__order=score&score__operator=not_null&__cursor=${raw.toString('base64url')}`, ...INVALID)
  // Other spellings a lenient base64url decoder reads as the same bytes (SPEC §7.1: only as issued).
  for (const spelling of [`${cursor}A`, `${cursor}%3D`, `${cursor.slice(0, 4)}.${cursor.slice(4)}`]) {
    await expectError(`/items/?__order=score&score__operator=not_null&__cursor=${spelling}`, ...INVALID)
  }
  for (const bad of ['x', 'not a cursor', '%00', 'AAAA', Buffer.alloc(40).toString('base64url')]) {
    await expectError(`/items/?__cursor=${bad}`, ...INVALID)
  }
  await expectError(`/items/?__cursor=${cursor}&__cursor=${cursor}`, 'TABLECRUD_ERR_QS_REPEATED', '__cursor is given more than once.')
})
