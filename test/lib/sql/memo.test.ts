import t from 'tap'
import { column, defineTable } from '../../../lib/table/index.js'
import { parseListQuery, parseSingleQuery, parseFilterQuery, queryContext } from '../../../lib/query/parse.js'
import { compileCount, compileList, compileSingle } from '../../../lib/sql/select.js'

const owner = defineTable('memo_owner', { name: column.varchar({ length: 10 }) }, { readable: 'name' })
const item = defineTable('memo_item', { name: column.varchar({ length: 10 }), owner: column.foreignKey(owner), tags: column.array(column.text()) })
const ctx = queryContext(item, { pageSize: 15, maxPageSize: 100, maxJoins: 1, excludeSecrets: true })

t.test('a query shape seen before reuses its text; only the values change', async (t) => {
  const a = compileList(ctx, parseListQuery(ctx, { name: 'x%', __page: '2', tags: ['a', 'b'] }), true)
  const b = compileList(ctx, parseListQuery(ctx, { name: 'y_', __page: '3', tags: ['c', 'd'] }), true)
  t.equal(b.text, a.text)
  t.equal(b.shape, a.shape, 'the same shape object')
  t.same(a.values, ['%x\\%%', ['a', 'b'], 15, 15])
  t.same(b.values, ['%y\\_%', ['c', 'd'], 15, 30])
})

t.test('what changes the text makes another shape', async (t) => {
  const base = compileList(ctx, parseListQuery(ctx, { name: 'x' }), false)
  const variants = [
    compileList(ctx, parseListQuery(ctx, { name: 'x' }), true),
    compileList(ctx, parseListQuery(ctx, { name: 'x', name__match: 'exact' }), false),
    compileList(ctx, parseListQuery(ctx, { name: 'x', name__operator: 'ne' }), false),
    compileList(ctx, parseListQuery(ctx, { name: 'x', __order: '-name' }), false),
    compileList(ctx, parseListQuery(ctx, { name: 'x', __visible_fields: 'name,owner.name' }), false),
    compileList(ctx, parseListQuery(ctx, { name: 'x', __readable: 'true' }), false),
    compileList(ctx, parseListQuery(ctx, { owner: '1' }), false)
  ]
  const texts = new Set([base.text, ...variants.map((v) => v.text)])
  t.equal(texts.size, variants.length + 1, 'every variant has its own text')
  t.equal(compileList(ctx, parseListQuery(ctx, { name: 'x', name__match: 'exact' }), false).values[0], 'x', 'exact sends the value as it is')
  const starts = compileList(ctx, parseListQuery(ctx, { name: 'x', name__match: 'starts' }), false)
  t.equal(starts.text, base.text, 'contains and starts differ only in the pattern sent')
  t.same([base.values[0], starts.values[0]], ['%x%', 'x%'])
})

t.test('count and single reuse their texts too', async (t) => {
  const c1 = compileCount(ctx, parseFilterQuery(ctx, { owner__operator: 'is_null' }))
  const c2 = compileCount(ctx, parseFilterQuery(ctx, { owner__operator: 'is_null' }))
  t.equal(c1.text, c2.text)
  t.same(c1.values, [])
  const s1 = compileSingle(ctx, 1, parseSingleQuery(ctx, { __readable: '1' }))
  const s2 = compileSingle(ctx, 2, parseSingleQuery(ctx, { __readable: '1' }))
  t.equal(s1.text, s2.text)
  t.same([s1.values, s2.values], [[1], [2]])
})
