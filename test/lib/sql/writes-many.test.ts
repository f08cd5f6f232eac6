import t from 'tap'
import { parseFilterQuery, queryContext, type RawQuery } from '../../../lib/query/parse.js'
import { conflictTargets, parseBulkQuery, parseOnConflict } from '../../../lib/query/writes.js'
import { compileBulkUpdate } from '../../../lib/sql/bulk.js'
import { MAX_TAILS, upsertTail } from '../../../lib/sql/upsert.js'
import { compileInsert, compileInsertRows } from '../../../lib/sql/write.js'
import { column, defineTable, type TableColumn } from '../../../lib/table/index.js'

/** The SQL and query parameters of the writes of many rows (SPEC §8.5): exact texts, every value bound. */

const album = defineTable('album', {
  title: column.varchar({ length: 100, unique: true }),
  year: column.integer({ null: true }),
  code: column.text({ secret: true, unique: true })
})
const label = defineTable('label', { slug: column.varchar({ length: 20, primaryKey: true }), name: column.text() })

const ctx = queryContext(album, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
const col = (name: string): TableColumn => album.columnMap.get(name)!
const raw = (query: Record<string, string | string[]>): RawQuery => Object.assign(Object.create(null), query) as RawQuery

const tailTarget = [col('title')]

t.test('upsertTail: ON CONFLICT DO UPDATE of the given columns, the target set to itself when none; the inserted flag', async (t) => {
  const tail = upsertTail([col('title')], [col('year')])
  t.strictSame({ ...tail }, { onConflict: ' ON CONFLICT ("title") DO UPDATE SET "year" = EXCLUDED."year"', returning: ', (xmax = 0) AS "__inserted"' })
  t.equal(upsertTail([col('title')], []).onConflict, ' ON CONFLICT ("title") DO UPDATE SET "title" = EXCLUDED."title"')
  t.throws(() => upsertTail([], [col('year')]), /a conflict target needs a column/)
  t.equal(upsertTail(tailTarget, [col('year')]), upsertTail(tailTarget, [col('year')]), 'a shape seen before: the same tail')
  // An array's rows go without the flag: a tail of its own, kept as the flagged one is.
  const unflagged = upsertTail(tailTarget, [col('year')], false)
  t.strictSame({ ...unflagged }, { onConflict: tail.onConflict, returning: '' })
  t.equal(upsertTail(tailTarget, [col('year')], false), unflagged, 'unflagged, seen before: the same tail')
  t.not(upsertTail(tailTarget, [col('year')]), unflagged)
  // Past MAX_TAILS shapes of one target, a tail is written each time, alike.
  const other = [col('title')]
  for (let i = 0; i < MAX_TAILS; i++) upsertTail(other, [{ ...col('year'), name: `c${i}` }])
  const late = upsertTail(other, [col('year')])
  t.not(late, upsertTail(other, [col('year')]))
  t.strictSame({ ...late }, { ...tail })
  const one = compileInsert(album, new Map<TableColumn, unknown>([[col('title'), 'A'], [col('year'), 1]]), true, tail)
  t.strictSame({ text: one.text, values: [...one.values] }, {
    text: 'INSERT INTO "album" ("title", "year") VALUES ($1, $2) ON CONFLICT ("title") DO UPDATE SET "year" = EXCLUDED."year" RETURNING "id", "title", "year", (xmax = 0) AS "__inserted"',
    values: ['A', 1]
  })
  // The insert's texts are kept with each tail: another tail, then the first again, and no tail, each its own.
  const titleYear = (): Map<TableColumn, unknown> => new Map<TableColumn, unknown>([[col('title'), 'B'], [col('year'), 2]])
  t.equal(compileInsert(album, titleYear(), true, upsertTail(tailTarget, [])).text, 'INSERT INTO "album" ("title", "year") VALUES ($1, $2) ON CONFLICT ("title") DO UPDATE SET "title" = EXCLUDED."title" RETURNING "id", "title", "year", (xmax = 0) AS "__inserted"')
  t.equal(compileInsert(album, titleYear(), true, tail).text, one.text)
  t.equal(compileInsert(album, titleYear(), true).text, 'INSERT INTO "album" ("title", "year") VALUES ($1, $2) RETURNING "id", "title", "year"')
  t.equal(compileInsert(album, new Map(), true, tail).text, 'INSERT INTO "album" DEFAULT VALUES ON CONFLICT ("title") DO UPDATE SET "year" = EXCLUDED."year" RETURNING "id", "title", "year", (xmax = 0) AS "__inserted"')
  const rows = compileInsertRows(album, [new Map<TableColumn, unknown>([[col('title'), 'A']]), new Map<TableColumn, unknown>([[col('title'), 'B']])], true, tail)
  t.equal(rows.text, 'INSERT INTO "album" ("title") SELECT x."title" FROM jsonb_populate_recordset(NULL::"album", $1::jsonb) AS x ON CONFLICT ("title") DO UPDATE SET "year" = EXCLUDED."year" RETURNING "id", "title", "year", (xmax = 0) AS "__inserted"')
  t.strictSame(rows.values, ['[{"title":"A"},{"title":"B"}]'])
})

t.test('compileInsertRows: a text kept by its columns binds each request\'s own rows; other columns, secrets or tails have their own', async (t) => {
  const rows = (...titles: string[]): Array<Map<TableColumn, unknown>> => titles.map((title) => new Map<TableColumn, unknown>([[col('title'), title], [col('year'), 1]]))
  const head = 'INSERT INTO "album" ("title", "year") SELECT x."title", x."year" FROM jsonb_populate_recordset(NULL::"album", $1::jsonb) AS x'
  const first = compileInsertRows(album, rows('A'), true)
  t.strictSame({ text: first.text, values: [...first.values] }, { text: `${head} RETURNING "id", "title", "year"`, values: ['[{"title":"A","year":1}]'] })
  const again = compileInsertRows(album, rows('B', 'C'), true)
  t.strictSame({ text: again.text, values: [...again.values] }, { text: first.text, values: ['[{"title":"B","year":1},{"title":"C","year":1}]'] }, 'the same columns: the same text, this request\'s rows')
  t.equal(compileInsertRows(album, rows('D'), false).text, `${head} RETURNING "id", "title", "year", "code"`, 'secrets included: its own')
  const yearTitle = [new Map<TableColumn, unknown>([[col('year'), 1], [col('title'), 'E']])]
  t.equal(compileInsertRows(album, yearTitle, true).text, 'INSERT INTO "album" ("year", "title") SELECT x."year", x."title" FROM jsonb_populate_recordset(NULL::"album", $1::jsonb) AS x RETURNING "id", "title", "year"', 'the columns in another order: its own')
  const tail = upsertTail(tailTarget, [col('year')])
  t.equal(compileInsertRows(album, rows('F'), true, tail).text, `${head} ON CONFLICT ("title") DO UPDATE SET "year" = EXCLUDED."year" RETURNING "id", "title", "year", (xmax = 0) AS "__inserted"`)
  t.equal(compileInsertRows(album, rows('G'), true, upsertTail(tailTarget, [col('year')], false)).text, `${head} ON CONFLICT ("title") DO UPDATE SET "year" = EXCLUDED."year" RETURNING "id", "title", "year"`, 'unflagged: its own')
  t.equal(compileInsertRows(album, rows('G'), true).text, first.text, 'no tail again: the INSERT alone')
  // One row's INSERT of the same columns is another statement.
  t.equal(compileInsert(album, rows('H')[0]!, true).text, 'INSERT INTO "album" ("title", "year") VALUES ($1, $2) RETURNING "id", "title", "year"')
})

t.test('compileBulkUpdate: SET values first, then the filters, all bound; no filter or nothing to set refused', async (t) => {
  const filters = parseFilterQuery(ctx, raw({ year__operator: 'gte', year: '2000', __or: '(title.starts.A,title.ends.Z)' }))
  const statement = compileBulkUpdate(ctx, filters, new Map<TableColumn, unknown>([[col('year'), 1999], [col('title'), 'x']]))
  t.strictSame({ text: statement.text, values: [...statement.values] }, {
    text: 'UPDATE "album" AS t0 SET "year" = $1, "title" = $2 WHERE t0."year" >= $3 AND (t0."title" ILIKE $4 OR t0."title" ILIKE $5) RETURNING t0."id" AS id',
    values: [1999, 'x', 2000, 'A%', '%Z']
  })
  t.throws(() => compileBulkUpdate(ctx, [], new Map([[col('year'), 1]])), /needs a filter/)
  t.throws(() => compileBulkUpdate(ctx, filters, new Map()), /nothing to set/)
})

t.test('compileBulkUpdate: a text kept by its shape binds each request\'s own values; another shape has its own text', async (t) => {
  const update = (query: Record<string, string>, values: Array<[string, unknown]>): { text: string, values: unknown[] } => {
    const statement = compileBulkUpdate(ctx, parseFilterQuery(ctx, raw(query)), new Map(values.map(([name, value]) => [col(name), value])))
    return { text: statement.text, values: [...statement.values] }
  }
  const first = update({ year: '2000' }, [['title', 'a']])
  const again = update({ year: '1990' }, [['title', 'b']])
  t.equal(again.text, first.text, 'the same shape: the same text')
  t.strictSame(again.values, ['b', 1990], 'with the values of the second request')
  t.strictSame(update({ year: '1990' }, [['year', 5]]), { text: 'UPDATE "album" AS t0 SET "year" = $1 WHERE t0."year" = $2 RETURNING t0."id" AS id', values: [5, 1990] }, 'another column set')
  t.strictSame(update({ title: 'x' }, [['title', 'c']]), { text: 'UPDATE "album" AS t0 SET "title" = $1 WHERE t0."title" ILIKE $2 RETURNING t0."id" AS id', values: ['c', '%x%'] }, 'another filter')
  t.strictSame(update({ year: '1990' }, [['year', 1], ['title', 'd']]).values, [1, 'd', 1990], 'two columns, in the order given')
})

t.test('conflictTargets and parseOnConflict: the key unless Serial, unique columns, secret ones while excluded', async (t) => {
  t.strictSame(conflictTargets(album, true).map((c) => c.map((x) => x.name)), [['title']])
  t.strictSame(conflictTargets(album, false).map((c) => c.map((x) => x.name)), [['title'], ['code']])
  t.strictSame(conflictTargets(label, true).map((c) => c.map((x) => x.name)), [['slug']])
  t.equal(parseOnConflict(album, false, 'code')[0], col('code'))
  t.equal(parseOnConflict(album, false, ' code'), parseOnConflict(album, false, 'code'), 'spelt otherwise: the same target')
  t.equal(conflictTargets(album, true), conflictTargets(album, true), 'one list per table')
  t.throws(() => parseOnConflict(album, true, 'code'), { code: 'TABLECRUD_ERR_QS_INVALID_CONFLICT', message: '__on_conflict must name the primary key or a unique column of album (title), not "code".' })
  t.throws(() => parseOnConflict(album, true, ['title', 'title']), { message: /not "title&title"/ })
})

t.test('parseBulkQuery: __max_affected from 1 to the mount\'s limit, taken out before the filters', async (t) => {
  t.strictSame(parseBulkQuery(ctx, 10, raw({ year: '1' })).maxAffected, 10)
  const lowered = parseBulkQuery(ctx, 10, raw({ year: '1', __max_affected: '3' }))
  t.strictSame([lowered.maxAffected, lowered.filters.length], [3, 1])
  for (const bad of ['11', '0', 'x', ['1', '2']]) {
    t.throws(() => parseBulkQuery(ctx, 10, raw({ year: '1', __max_affected: bad })), { code: 'TABLECRUD_ERR_QS_INVALID_MAX_AFFECTED', message: '__max_affected must be an integer from 1 to 10.' })
  }
})
