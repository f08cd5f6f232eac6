import t from 'tap'
import { queryContext, withScopes, type Filter, type QueryContext } from '../../../lib/query/parse.js'
import { parseScope, scopesOf, UNRESOLVED_SCOPES } from '../../../lib/query/scope.js'
import { compileCount, compileIds, compileSingle } from '../../../lib/sql/select.js'
import { compileDelete, compileInScope, compileInsert, compileUpdate } from '../../../lib/sql/write.js'
import { upsertTail } from '../../../lib/sql/upsert.js'
import { column, defineTable, type Table } from '../../../lib/table/index.js'

const folder = defineTable('scope_folder', {
  name: column.varchar({ length: 20 }),
  owner: column.integer()
})
const doc = defineTable('scope_doc', {
  title: column.varchar({ length: 20 }),
  owner: column.integer(),
  folder: column.foreignKey(folder, { null: true })
})

const base = queryContext(doc, { pageSize: 15, maxPageSize: 100, maxJoins: 1, excludeSecrets: true })
const under = (byTable: Array<[Table, unknown]>): QueryContext =>
  withScopes(base, scopesOf(new Map(byTable.map(([table, conditions]) => [table, parseScope(table, conditions)]))))

t.test('a scoped table is read as the subquery of its rows in scope; values bound, the text shared by every value', async (t) => {
  const one = compileCount(under([[doc, { owner: 1 }]]), [])
  t.equal(one.text, 'SELECT count(*) AS count FROM (SELECT * FROM "scope_doc" AS t0s WHERE t0s."owner" = $1) AS t0')
  t.strictSame([...one.values], [1])
  const two = compileCount(under([[doc, { owner: 2 }]]), [])
  t.equal(two.text, one.text, 'the same shape, the same text (and prepared statement)')
  t.strictSame([...two.values], [2])
  t.equal(compileCount(base, []).text.includes('UNRESOLVED'), false)
  t.equal(compileCount(withScopes(base, scopesOf(new Map())), []).text, 'SELECT count(*) AS count FROM "scope_doc" AS t0', 'no scope: the text as before')
})

t.test('a related table is read through its own scope; a tree scope through a relation', async (t) => {
  const ctx = under([[doc, '(folder.name.exact.x)'], [folder, { owner: 7 }]])
  const single = compileSingle(ctx, 5, { fields: [ctx.fields.get('title')!, ctx.fields.get('folder.name')!], readable: false })
  t.equal(single.text, 'SELECT t0."title" AS "c0", t1."name" AS "c1" FROM (SELECT * FROM "scope_doc" AS t0s WHERE ' +
    '(EXISTS (SELECT 1 FROM (SELECT * FROM "scope_folder" AS t0sr2_1s WHERE t0sr2_1s."owner" = $2) AS t0sr2_1 WHERE t0sr2_1."id" = t0s."folder" AND t0sr2_1."name" = $3))) AS t0' +
    ' LEFT JOIN (SELECT * FROM "scope_folder" AS t1s WHERE t1s."owner" = $1) AS t1 ON t1."id" = t0."folder" WHERE t0."id" = $4')
  t.strictSame([...single.values], [7, 7, 'x', 5])
})

t.test('writes: UPDATE and DELETE only in scope, an upsert updates only a conflicting row in scope, the check after a write', async (t) => {
  const ctx = under([[doc, { owner: 1, title: null }]])
  const owner = doc.columnMap.get('owner')!
  t.strictSame({ ...compileUpdate(ctx, 3, new Map([[owner, 2]]), true) }, {
    text: 'UPDATE "scope_doc" AS t0 SET "owner" = $1 WHERE t0."id" = $2 AND t0."owner" = $3 AND t0."title" IS NULL RETURNING "id", "title", "owner", "folder"',
    values: [2, 3, 1]
  })
  t.strictSame({ ...compileDelete(ctx, 3) }, { text: 'DELETE FROM "scope_doc" AS t0 WHERE t0."id" = $1 AND t0."owner" = $2 AND t0."title" IS NULL', values: [3, 1] })
  t.strictSame({ ...compileInScope(ctx, [3, 4]) }, {
    text: 'SELECT count(*)::int AS count FROM (SELECT * FROM "scope_doc" AS t0s WHERE t0s."owner" = $1 AND t0s."title" IS NULL) AS t0 WHERE t0."id" = ANY($2)',
    values: [1, [3, 4]]
  })
  const upsert = compileInsert(doc, new Map([[owner, 1]]), true, { ...upsertTail([doc.primaryKey], [owner]), scoped: ctx })
  t.equal(upsert.text, 'INSERT INTO "scope_doc" ("owner") VALUES ($1) ON CONFLICT ("id") DO UPDATE SET "owner" = EXCLUDED."owner" WHERE "scope_doc"."owner" = $2 AND "scope_doc"."title" IS NULL RETURNING "id", "title", "owner", "folder", (xmax = 0) AS "__inserted"')
  t.strictSame([...upsert.values], [1, 1])
  const none = compileInsert(doc, new Map(), true, { ...upsertTail([doc.primaryKey], []), scoped: ctx })
  t.equal(none.text, 'INSERT INTO "scope_doc" DEFAULT VALUES ON CONFLICT ("id") DO UPDATE SET "id" = EXCLUDED."id" WHERE "scope_doc"."owner" = $1 AND "scope_doc"."title" IS NULL RETURNING "id", "title", "owner", "folder", (xmax = 0) AS "__inserted"')
  t.strictSame(compileIds(ctx, { search: null, limit: 5, offset: 0 }).values, [1, 5, 0])
})

t.test('a statement compiled without the request\'s scopes throws', async (t) => {
  const unresolved = withScopes(base, UNRESOLVED_SCOPES)
  t.throws(() => compileCount(unresolved, []), /compiled without the request's scopes/)
  t.throws(() => compileDelete(unresolved, 1), /compiled without the request's scopes/)
})

t.test('parseScope: values as their column reads them, and what a scope may not be', async (t) => {
  const flag = defineTable('scope_flag', { on: column.boolean(), big: column.bigInt(), name: column.text() })
  t.strictSame(parseScope(flag, { on: true, big: 12n, name: 'x' }).map((f) => f.kind === 'tree' ? null : [f.field.name, f.kind, f.values]),
    [['on', 'compare', [true]], ['big', 'compare', ['12']], ['name', 'compare', ['x']]])
  t.strictSame(parseScope(flag, ''), [], 'an empty tree: no condition')
  const invalid = (conditions: unknown, message: string): void => {
    t.throws(() => parseScope(flag, conditions), { code: 'TABLECRUD_ERR_SCOPE_INVALID', statusCode: 500, message: `The scope of scope_flag is invalid: ${message}` })
  }
  invalid({ on: 'maybe' }, '"maybe" is not a value of the column on (type boolean)')
  invalid({ on: undefined }, 'undefined is not a value of the column on (type boolean)')
  invalid({ on: { a: 1 } }, '{"a":1} is not a value of the column on (type boolean)')
  invalid(null, 'a scope function must answer an object of column → value or a tree string')
  invalid([], 'a scope function must answer an object of column → value or a tree string')
  invalid({ constructor: 1 }, '"constructor" is not a column; the columns are id, on, big, name')
  t.equal(scopesOf(new Map<Table, Filter[]>([[flag, parseScope(flag, { on: true })], [doc, []]])).key, 'scope_flag{on:e:compare}', 'the key holds the structure only')
})
