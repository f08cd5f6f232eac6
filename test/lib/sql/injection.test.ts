import { unscoped } from '../../../lib/query/scope.js'
import t, { type Test } from 'tap'
import { createTables } from '../../../lib/db/index.js'
import { bodyOf, fromDatabaseError } from '../../../lib/errors.js'
import { parseFilterQuery, parseIdsQuery, parseListQuery, queryContext, type RawQuery } from '../../../lib/query/parse.js'
import { quoteIdent, quoteLiteral } from '../../../lib/sql/identifier.js'
import { compileCount, compileIds, compileList, compileSingle, shapeRow } from '../../../lib/sql/select.js'
import type { Statement } from '../../../lib/table/statement.js'
import {
  compileBulkDelete, compileDelete, compileDeleteIds, compileExists, compileInsert, compileInsertRows, compileMatchingIds, compileUpdate
} from '../../../lib/sql/write.js'
import { column, defineTable, type TableColumn } from '../../../lib/table/index.js'
import { testDatabase } from '../../helpers/db.js'

const db = await testDatabase(t)

const DROP = "'; drop table inj_x; --"
/** Values a client may send; each is stored and matched as itself. */
const HOSTILE = [
  DROP,
  '"; drop table inj_x; --',
  "') OR 1=1; --",
  '"',
  "'",
  '\\',
  '%',
  '_',
  '50%_off',
  'a\\%b',
  '\\_',
  "O'Brien",
  '$1',
  '{a,"b"}',
  'NULL',
  'ünïcødé 😀 日本',
  'MiXeD',
  '\t\n\r',
  '/* c */ --',
  '%s %I %L'
]

const owner = defineTable('inj_owner', {
  name: column.varchar({ length: 100 })
}, { readable: { template: '%s 100% \'\\ "q"', columns: ['name'] } })
const note = defineTable('inj_note', {
  title: column.varchar({ length: 200 }),
  body: column.text({ null: true }),
  tags: column.array(column.text()),
  owner: column.foreignKey(owner)
}, { readable: 'title' })
const victim = defineTable('inj_x', { v: column.integer() })

const ctx = queryContext(note, { pageSize: 100, maxPageSize: 1000, maxJoins: 1, excludeSecrets: true })
const raw = (query: Record<string, string | string[]>): RawQuery => Object.assign(Object.create(null), query)
const run = async (s: Statement): Promise<Array<Record<string, any>>> =>
  (await db.pool.query({ text: s.text, values: s.values as unknown[] })).rows
const noteColumn = (name: string): TableColumn => note.columnMap.get(name)!
const sorted = (values: string[]): string[] => [...values].sort()

await createTables(db.pool, [owner, note, victim])
await db.pool.query('INSERT INTO inj_x (v) VALUES (1)')

async function stillThere (t: Test): Promise<void> {
  const { rows } = await db.pool.query("SELECT to_regclass('inj_x') IS NOT NULL AS x, to_regclass('inj_note') IS NOT NULL AS note, (SELECT count(*)::int FROM inj_x) AS n")
  t.strictSame(rows, [{ x: true, note: true, n: 1 }], 'the tables are still there')
}

t.test('names with a double quote cannot be defined', async (t) => {
  const IDENT = '(letters, digits and _, not starting with a digit)'
  t.throws(() => defineTable('inj"x', { a: column.text() }), { message: `Table inj"x: "inj"x" is not a valid identifier ${IDENT}` })
  t.throws(() => defineTable('inj_bad', { 'a"b': column.text() }), { message: `Table inj_bad, column a"b: "a"b" is not a valid identifier ${IDENT}` })
  t.throws(() => defineTable('inj_bad', { [`x${DROP}`]: column.text() }), { message: `Table inj_bad, column x${DROP}: "x${DROP}" is not a valid identifier ${IDENT}` })
  t.throws(() => defineTable(`inj${DROP}`, { a: column.text() }), { message: `Table inj${DROP}: "inj${DROP}" is not a valid identifier ${IDENT}` })
})

t.test('quoteIdent and quoteLiteral hold hostile text as itself', async (t) => {
  const name = `a"${DROP}"`
  t.equal(quoteIdent(name), '"a""\'; drop table inj_x; --"""')
  const { rows } = await db.pool.query(`SELECT 1 AS ${quoteIdent(name)}, ${quoteLiteral(`${DROP}\\'`)} AS v`)
  t.strictSame(rows, [{ [name]: 1, v: `${DROP}\\'` }])
  t.throws(() => quoteLiteral('a\0'), { message: 'a NUL byte cannot be written in SQL text' })
  await stillThere(t)
})

let ownerId = 0
const ids = new Map<string, number>()

t.test('compileInsert: hostile values are bind parameters', async (t) => {
  const [created] = await run(compileInsert(owner, new Map([[owner.columnMap.get('name')!, DROP]]), true))
  t.strictSame(created, { id: created!.id, name: DROP })
  ownerId = created!.id
  for (const value of HOSTILE) {
    const row = new Map<TableColumn, unknown>([
      [noteColumn('title'), value],
      [noteColumn('body'), value],
      [noteColumn('tags'), [value, 'plain']],
      [noteColumn('owner'), ownerId]
    ])
    const [inserted] = await run(compileInsert(note, row, true))
    t.strictSame(inserted, { id: inserted!.id, title: value, body: value, tags: [value, 'plain'], owner: ownerId }, JSON.stringify(value))
    ids.set(value, inserted!.id)
  }
  const [empty] = await run(compileInsert(victim, new Map(), true))
  t.strictSame(empty, { id: 2, v: 0 }, 'DEFAULT VALUES')
  await db.pool.query('DELETE FROM inj_x WHERE id = 2')
  await stillThere(t)
})

const folded = (s: string): string => s.toLowerCase()
const MATCHES: Record<string, (title: string, value: string) => boolean> = {
  contains: (title, value) => folded(title).includes(folded(value)),
  starts: (title, value) => folded(title).startsWith(folded(value)),
  ends: (title, value) => folded(title).endsWith(folded(value)),
  exact: (title, value) => title === value
}

t.test('compileList and compileCount: text filters match hostile values literally', async (t) => {
  for (const value of HOSTILE) {
    for (const [match, test] of Object.entries(MATCHES)) {
      const query = parseListQuery(ctx, raw({ title: value, title__match: match, __visible_fields: 'title' }))
      const expected = sorted(HOSTILE.filter((title) => test(title, value)))
      const rows = await run(compileList(ctx, query, true))
      t.strictSame(sorted(rows.map((r) => r.title)), expected, `title__match=${match}: ${JSON.stringify(value)}`)
      t.ok(rows.every((r) => Number(r.__total) === expected.length), 'the total column counts them')
      const [count] = await run(compileCount(ctx, parseFilterQuery(ctx, raw({ title: value, title__match: match }))))
      t.equal(Number(count!.count), expected.length, `count ${match}: ${JSON.stringify(value)}`)
    }
    const others = await run(compileCount(ctx, parseFilterQuery(ctx, raw({ body: value, body__operator: 'ne' }))))
    t.equal(Number(others[0]!.count), HOSTILE.length - 1, `body__operator=ne: ${JSON.stringify(value)}`)
  }
  t.strictSame((await run(compileList(ctx, parseListQuery(ctx, raw({ title: 'mixed', __visible_fields: 'title' })), false))).map((r) => r.title), ['MiXeD'], 'case-insensitive')
  t.strictSame((await run(compileList(ctx, parseListQuery(ctx, raw({ title: 'mixed', title__match: 'exact' })), false))), [], 'exact is case-sensitive')
  await stillThere(t)
})

t.test('compileList: array filters match hostile elements literally', async (t) => {
  for (const value of HOSTILE) {
    const rows = await run(compileList(ctx, parseListQuery(ctx, raw({ tags: [value, 'plain'], __visible_fields: 'title' })), false))
    t.strictSame(rows.map((r) => r.title), [value], JSON.stringify(value))
  }
  const all = await run(compileCount(ctx, parseFilterQuery(ctx, raw({ tags: 'plain' }))))
  t.equal(Number(all[0]!.count), HOSTILE.length)
  const none = await run(compileCount(ctx, parseFilterQuery(ctx, raw({ tags: 'plai%' }))))
  t.equal(Number(none[0]!.count), 0, 'no pattern matching in arrays')
  await stillThere(t)
})

t.test('compileIds: search is a literal, case-insensitive substring', async (t) => {
  for (const value of HOSTILE) {
    const rows = await run(compileIds(ctx, parseIdsQuery(ctx, raw({ search: value }))))
    const expected = HOSTILE.filter((title) => MATCHES.contains!(title, value)).map((title) => [ids.get(title), title])
    t.strictSame(rows.map((r) => [r.id, r.readable]), expected.sort((a, b) => (a[0] as number) - (b[0] as number)), JSON.stringify(value))
  }
  const owners = queryContext(owner, { pageSize: 100, maxPageSize: 1000, maxJoins: 0, excludeSecrets: true })
  t.strictSame(await run(compileIds(owners, parseIdsQuery(owners, raw({ search: '100% \'\\ "Q"' })))), [{ id: ownerId, readable: `${DROP} 100% '\\ "q"` }])
  await stillThere(t)
})

t.test('joins, readable and order through a ForeignKey run as compiled', async (t) => {
  const query = parseListQuery(ctx, raw({
    title: 'drop',
    __visible_fields: 'title,owner,owner.name',
    __readable: 'true',
    __order: '-owner.name,id'
  }))
  const statement = compileList(ctx, query, false)
  const rows = (await run(statement)).map((r) => shapeRow(r, statement.shape))
  const readable = `${DROP} 100% '\\ "q"`
  t.strictSame(rows, [
    { title: DROP, owner: { id: ownerId, name: DROP }, owner_readable: readable },
    { title: '"; drop table inj_x; --', owner: { id: ownerId, name: DROP }, owner_readable: readable }
  ])
  const single = compileSingle(ctx, ids.get(DROP), { fields: query.fields, readable: true })
  t.strictSame((await run(single)).map((r) => shapeRow(r, single.shape)), [{ title: DROP, owner: { id: ownerId, name: DROP }, owner_readable: readable }])
  await stillThere(t)
})

t.test('compileUpdate, compileExists, compileDelete with hostile values', async (t) => {
  const id = ids.get('"')!
  const [updated] = await run(compileUpdate(unscoped(note), id, new Map<TableColumn, unknown>([[noteColumn('body'), `${DROP} again`], [noteColumn('tags'), []]]), true))
  t.strictSame(updated, { id, title: '"', body: `${DROP} again`, tags: [], owner: ownerId })
  t.strictSame(await run(compileExists(unscoped(note), id)), [{ '?column?': 1 }])
  const removal = compileDelete(unscoped(note), id)
  t.equal((await db.pool.query({ text: removal.text, values: removal.values as unknown[] })).rowCount, 1)
  t.strictSame(await run(compileExists(unscoped(note), id)), [])
  ids.delete('"')
  await stillThere(t)
})

t.test('compileMatchingIds, compileDeleteIds and compileBulkDelete delete only what matches', async (t) => {
  const percent = parseFilterQuery(ctx, raw({ title: '%' }))
  const client = await db.pool.connect()
  try {
    await client.query('BEGIN')
    const matching = compileMatchingIds(ctx, percent)
    const found = (await client.query({ text: matching.text, values: matching.values as unknown[] })).rows.map((r) => r.id as number)
    t.strictSame(sorted(found.map(String)), sorted(['%', '50%_off', 'a\\%b', '%s %I %L'].map((v) => String(ids.get(v)))))
    const removal = compileDeleteIds(unscoped(note), found)
    t.equal((await client.query({ text: removal.text, values: removal.values as unknown[] })).rowCount, 4)
    await client.query('COMMIT')
  } finally {
    client.release()
  }
  const bulk = compileBulkDelete(ctx, parseFilterQuery(ctx, raw({ title: DROP, title__match: 'exact' })))
  t.equal((await db.pool.query({ text: bulk.text, values: bulk.values as unknown[] })).rowCount, 1)
  const left = (await db.pool.query('SELECT title FROM inj_note')).rows.map((r) => r.title as string)
  const gone = new Set(['"', '%', '50%_off', 'a\\%b', '%s %I %L', DROP])
  t.strictSame(sorted(left), sorted(HOSTILE.filter((v) => !gone.has(v))))
  await stillThere(t)
})

t.test('NUL: refused by the parser; the database refuses it as a data error', async (t) => {
  const INVALID = { code: 'TABLECRUD_ERR_QS_INVALID_VALUE', statusCode: 400 }
  t.throws(() => parseListQuery(ctx, raw({ title: 'a\0b' })), { ...INVALID, message: 'The value "a\\u0000b" of title is not a valid string without NUL characters.' })
  t.throws(() => parseListQuery(ctx, raw({ tags: '\0' })), { ...INVALID, message: 'The value "\\u0000" of tags is not a valid string without NUL characters.' })
  t.throws(() => parseIdsQuery(ctx, raw({ search: '\0' })), { code: 'TABLECRUD_ERR_QS_INVALID_STRING', statusCode: 400 })
  const error = await run(compileInsert(note, new Map<TableColumn, unknown>([[noteColumn('title'), 'a\0b'], [noteColumn('owner'), ownerId]]), true))
    .then(() => null, (e: unknown) => e)
  t.match(error, { code: '22021' })
  const mapped = fromDatabaseError(error)
  t.match(mapped, { code: 'TABLECRUD_ERR_DB_DATA', statusCode: 400 })
  t.equal(bodyOf(mapped), undefined)
  await stillThere(t)
})

t.test('compileInsertRows: hostile values travel inside one JSON parameter and come back as themselves', async (t) => {
  const rows = HOSTILE.map((value) => new Map<TableColumn, unknown>([
    [noteColumn('title'), value], [noteColumn('body'), value], [noteColumn('tags'), [value, 'plain']], [noteColumn('owner'), ownerId]
  ]))
  const inserted = await run(compileInsertRows(note, rows, true))
  t.strictSame(inserted.map(({ title, body, tags, owner }) => ({ title, body, tags, owner })),
    HOSTILE.map((value) => ({ title: value, body: value, tags: [value, 'plain'], owner: ownerId })), 'in the order given')
  await db.pool.query('DELETE FROM inj_note WHERE id = ANY($1)', [inserted.map((r) => r.id)])
  await stillThere(t)
})

t.test('every table is still there at the end, with the rows left', async (t) => {
  const { rows } = await db.pool.query('SELECT (SELECT count(*)::int FROM inj_note) AS notes, (SELECT count(*)::int FROM inj_owner) AS owners')
  t.strictSame(rows, [{ notes: HOSTILE.length - 6, owners: 1 }])
  await stillThere(t)
})
