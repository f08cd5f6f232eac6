import { unscoped } from '../../../lib/query/scope.js'
import t from 'tap'
import { parseFilterQuery, queryContext, type Filter, type RawQuery } from '../../../lib/query/parse.js'
import type { Statement } from '../../../lib/table/statement.js'
import {
  compileBulkDelete, compileDelete, compileDeleteIds, compileExists, compileInsert, compileInsertRows, compileMatchingIds, compileUpdate
} from '../../../lib/sql/write.js'
import { column, defineTable, type TableColumn } from '../../../lib/table/index.js'

const album = defineTable('album', {
  title: column.varchar({ length: 100 }),
  year: column.integer({ null: true }),
  price: column.numeric({ digits: [6, 2] }),
  tags: column.array(column.text()),
  code: column.text({ secret: true })
})
const label = defineTable('label', {
  slug: column.varchar({ length: 20, primaryKey: true }),
  name: column.text()
})

const ctx = queryContext(album, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
const col = (name: string): TableColumn => album.columnMap.get(name)!
const filters = (query: Record<string, string | string[]>): Filter[] =>
  parseFilterQuery(ctx, Object.assign(Object.create(null), query) as RawQuery)
const plain = (s: Statement): { text: string, values: unknown[] } => ({ text: s.text, values: [...s.values] })

const RETURNING = '"id", "title", "year", "price", "tags"'
const RETURNING_ALL = '"id", "title", "year", "price", "tags", "code"'

t.test('compileInsert', async (t) => {
  const cases: Array<[string, Statement, string, unknown[]]> = [
    [
      'given columns, in the order given',
      compileInsert(album, new Map<TableColumn, unknown>([[col('title'), 'Blue'], [col('price'), '9.99'], [col('tags'), ['a', 'b']]]), true),
      `INSERT INTO "album" ("title", "price", "tags") VALUES ($1, $2, $3) RETURNING ${RETURNING}`,
      ['Blue', '9.99', ['a', 'b']]
    ],
    [
      'nulls are values',
      compileInsert(album, new Map<TableColumn, unknown>([[col('year'), null], [col('title'), 'x']]), true),
      `INSERT INTO "album" ("year", "title") VALUES ($1, $2) RETURNING ${RETURNING}`,
      [null, 'x']
    ],
    [
      'a secret column is written, and returned only when secrets are not excluded',
      compileInsert(album, new Map<TableColumn, unknown>([[col('code'), 's3cret']]), false),
      `INSERT INTO "album" ("code") VALUES ($1) RETURNING ${RETURNING_ALL}`,
      ['s3cret']
    ],
    [
      'no columns',
      compileInsert(album, new Map(), true),
      `INSERT INTO "album" DEFAULT VALUES RETURNING ${RETURNING}`,
      []
    ],
    [
      'a varchar key',
      compileInsert(label, new Map<TableColumn, unknown>([[label.columnMap.get('slug')!, "o'neil"], [label.columnMap.get('name')!, 'O']]), true),
      'INSERT INTO "label" ("slug", "name") VALUES ($1, $2) RETURNING "slug", "name"',
      ["o'neil", 'O']
    ]
  ]
  for (const [name, statement, text, values] of cases) {
    t.strictSame(plain(statement), { text, values }, name)
    t.ok(Object.isFrozen(statement), `${name}: frozen`)
  }
})

t.test('compileInsert keeps a text per column list and secrets setting, and writes any past its cap anew', async (t) => {
  const wide = defineTable('wide', Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`c${i}`, column.integer({ null: true })])))
  const w = (name: string): TableColumn => wide.columnMap.get(name)!
  const insert = (names: readonly string[], excludeSecrets = true): Statement =>
    compileInsert(wide, new Map(names.map((name, i) => [w(name), i])), excludeSecrets)
  const first = insert(['c0', 'c1'])
  t.equal(insert(['c0', 'c1']).text, first.text, 'the same list: the same text')
  t.strictSame(insert(['c1', 'c0']).values, [0, 1], 'each statement its own values')
  t.equal(insert(['c1', 'c0']).text, 'INSERT INTO "wide" ("c1", "c0") VALUES ($1, $2) RETURNING "id", "c0", "c1", "c2", "c3", "c4", "c5"', 'another order: another text')
  t.equal(insert(['c0', 'c1'], false).text, first.text, 'no secrets here: the same returning list either way')
  // Every non-empty subset of six columns (63 lists) passes the cap of 16: each text is still right.
  for (let set = 1; set < 64; set++) {
    const names = Array.from({ length: 6 }, (_, i) => `c${i}`).filter((_, i) => (set & (1 << i)) !== 0)
    const text = `INSERT INTO "wide" (${names.map((n) => `"${n}"`).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING "id", "c0", "c1", "c2", "c3", "c4", "c5"`
    t.strictSame(plain(insert(names)), { text, values: names.map((_, i) => i) }, names.join(','))
  }
})

t.test('compileInsertRows: one text per column set, whatever the number of rows; the rows as one JSON parameter', async (t) => {
  const notes = defineTable('note', { body: column.text(), data: column.jsonb({ null: true }), grid: column.array(column.array(column.integer())) })
  const n = (name: string): TableColumn => notes.columnMap.get(name)!
  const row = (body: unknown, data: unknown, grid: unknown): Map<TableColumn, unknown> => new Map([[n('body'), body], [n('data'), data], [n('grid'), grid]])
  const text = 'INSERT INTO "note" ("body", "data", "grid") SELECT x."body", x."data", x."grid" FROM jsonb_populate_recordset(NULL::"note", $1::jsonb) AS x RETURNING "id", "body", "data", "grid"'
  const two = compileInsertRows(notes, [row('a "quoted"\n', '{"k":[1,"two"]}', [[1, 2]]), row(null, null, [])], true)
  t.strictSame(plain(two), {
    text,
    values: ['[{"body":"a \\"quoted\\"\\n","data":{"k":[1,"two"]},"grid":[[1,2]]},{"body":null,"data":null,"grid":[]}]']
  }, 'a JSONB value is embedded as the JSON it is; any other value as a JSON value; null as null')
  t.ok(Object.isFrozen(two))
  t.equal(compileInsertRows(notes, [row('x', '"s"', [])], true).text, text, 'one row: the same text')
  t.strictSame(JSON.parse(compileInsertRows(notes, [row('x', '"s"', [])], true).values[0] as string), [{ body: 'x', data: 's', grid: [] }], 'a JSONB string stays a string')
  t.equal(compileInsertRows(album, [new Map([[col('code'), 's']])], false).text,
    `INSERT INTO "album" ("code") SELECT x."code" FROM jsonb_populate_recordset(NULL::"album", $1::jsonb) AS x RETURNING ${RETURNING_ALL}`)

  const refused = { message: 'compileInsertRows: rows must give the same columns, at least one' }
  t.throws(() => compileInsertRows(notes, [], true), refused, 'no rows')
  t.throws(() => compileInsertRows(notes, [new Map()], true), refused, 'no columns')
  t.throws(() => compileInsertRows(notes, [row('a', null, []), new Map([[n('body'), 'b']])], true), refused, 'fewer columns')
  t.throws(() => compileInsertRows(notes, [new Map([[n('body'), 'b']]), new Map([[n('data'), null]])], true), refused, 'other columns')
})

t.test('compileUpdate', async (t) => {
  const s = compileUpdate(unscoped(album), 7, new Map<TableColumn, unknown>([[col('title'), 'Red'], [col('year'), null]]), true)
  t.strictSame(plain(s), { text: `UPDATE "album" AS t0 SET "title" = $1, "year" = $2 WHERE t0."id" = $3 RETURNING ${RETURNING}`, values: ['Red', null, 7] })
  t.ok(Object.isFrozen(s))
  t.strictSame(plain(compileUpdate(unscoped(album), 1, new Map<TableColumn, unknown>([[col('code'), 'x']]), false)), {
    text: `UPDATE "album" AS t0 SET "code" = $1 WHERE t0."id" = $2 RETURNING ${RETURNING_ALL}`,
    values: ['x', 1]
  })
  t.strictSame(plain(compileUpdate(unscoped(label), 'abc', new Map<TableColumn, unknown>([[label.columnMap.get('name')!, 'N']]), true)), {
    text: 'UPDATE "label" AS t0 SET "name" = $1 WHERE t0."slug" = $2 RETURNING "slug", "name"',
    values: ['N', 'abc']
  })
  t.throws(() => compileUpdate(unscoped(album), 7, new Map(), true), { message: 'compileUpdate: nothing to set' })
})

t.test('compileDelete and compileExists', async (t) => {
  const cases: Array<[Statement, string, unknown[]]> = [
    [compileDelete(unscoped(album), 7), 'DELETE FROM "album" AS t0 WHERE t0."id" = $1', [7]],
    [compileDelete(unscoped(label), 'a"b'), 'DELETE FROM "label" AS t0 WHERE t0."slug" = $1', ['a"b']],
    [compileExists(unscoped(album), 7), 'SELECT 1 FROM "album" AS t0 WHERE t0."id" = $1', [7]],
    [compileExists(unscoped(label), 'x'), 'SELECT 1 FROM "label" AS t0 WHERE t0."slug" = $1', ['x']]
  ]
  for (const [statement, text, values] of cases) {
    t.strictSame(plain(statement), { text, values }, text)
    t.ok(Object.isFrozen(statement))
  }
})

t.test('compileMatchingIds and compileBulkDelete: the filters of GET /', async (t) => {
  const cases: Array<[Record<string, string | string[]>, string, unknown[]]> = [
    [{ title: '50%' }, ' WHERE t0."title" ILIKE $1', ['%50\\%%']],
    [{ title: 'Blue', title__match: 'exact', year__operator: 'gte', year: '1990' }, ' WHERE t0."title" = $1 AND t0."year" >= $2', ['Blue', 1990]],
    [{ year__operator: 'is_null' }, ' WHERE t0."year" IS NULL', []],
    [{ id__operator: 'not_null' }, ' WHERE t0."id" IS NOT NULL', []],
    [{ tags: ['a', 'b'] }, ' WHERE t0."tags" @> $1', [['a', 'b']]],
    [{ price: '1.5', price__operator: 'ne' }, ' WHERE t0."price" <> $1', ['1.5']]
  ]
  for (const [query, where, values] of cases) {
    const matching = compileMatchingIds(ctx, filters(query))
    t.strictSame(plain(matching), { text: `SELECT t0."id" AS id FROM "album" AS t0${where} FOR UPDATE`, values }, `ids ${JSON.stringify(query)}`)
    t.ok(Object.isFrozen(matching))
    const bulk = compileBulkDelete(ctx, filters(query))
    t.strictSame(plain(bulk), { text: `DELETE FROM "album" AS t0${where}`, values }, `delete ${JSON.stringify(query)}`)
    t.ok(Object.isFrozen(bulk))
  }
  const labels = queryContext(label, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
  t.strictSame(plain(compileMatchingIds(labels, parseFilterQuery(labels, { name: 'x' }))), {
    text: 'SELECT t0."slug" AS id FROM "label" AS t0 WHERE t0."name" ILIKE $1 FOR UPDATE',
    values: ['%x%']
  })
})

t.test('a bulk delete without filters is refused by the compiler', async (t) => {
  t.throws(() => compileBulkDelete(ctx, []), { message: 'compileBulkDelete: a bulk delete needs a filter' })
  t.throws(() => compileMatchingIds(ctx, []), { message: 'compileMatchingIds: a bulk delete needs a filter' })
  // Empty values and control parameters are no filters.
  t.throws(() => compileBulkDelete(ctx, filters({ title: '', __order: 'x' })), { message: 'compileBulkDelete: a bulk delete needs a filter' })
})

t.test('compileDeleteIds', async (t) => {
  const cases: Array<[Statement, string, unknown[]]> = [
    [compileDeleteIds(unscoped(album), [1, 2, 3]), 'DELETE FROM "album" AS t0 WHERE t0."id" = ANY($1)', [[1, 2, 3]]],
    [compileDeleteIds(unscoped(album), []), 'DELETE FROM "album" AS t0 WHERE t0."id" = ANY($1)', [[]]],
    [compileDeleteIds(unscoped(label), ['a', 'b,c', '"']), 'DELETE FROM "label" AS t0 WHERE t0."slug" = ANY($1)', [['a', 'b,c', '"']]]
  ]
  for (const [statement, text, values] of cases) {
    t.strictSame(plain(statement), { text, values }, JSON.stringify(values))
    t.ok(Object.isFrozen(statement))
  }
})
