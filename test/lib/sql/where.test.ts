import t from 'tap'
import { parseFilterQuery, queryContext, type RawQuery } from '../../../lib/query/parse.js'
import { Params } from '../../../lib/sql/params.js'
import { NO_SCOPES } from '../../../lib/query/scope.js'
import { ScopedRows } from '../../../lib/sql/scope.js'
import { arrayType, filtersKey, where, whereClause } from '../../../lib/sql/where.js'
import { column, defineTable } from '../../../lib/table/index.js'

const film = defineTable('where_film', {
  title: column.varchar({ length: 100 }),
  rating: column.real({ null: true }),
  tags: column.array(column.text())
}, { readable: 'title' })
const ctx = queryContext(film, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
const filters = (query: Record<string, string | string[]>): ReturnType<typeof parseFilterQuery> =>
  parseFilterQuery(ctx, Object.assign(Object.create(null) as RawQuery, query))

t.test('a WHERE written for one query fetches the values of another of the same shape', async (t) => {
  const first = filters({ title: 'a%', title__match: 'starts', rating: '2', rating__operator: 'gt', tags: ['x'], title__operator: 'e' })
  const params = new Params<typeof first>()
  const text = where(params, new ScopedRows(NO_SCOPES, params.scoped), first, (f) => f)
  t.equal(text, ' WHERE t0."title" ILIKE $1 AND t0."rating" > $2 AND t0."tags" @> $3')
  t.strictSame(params.values(first, NO_SCOPES), ['a\\%%', 2, ['x']])
  const second = filters({ title: 'b_', title__match: 'ends', rating: '4.5', rating__operator: 'gt', tags: ['y', 'z'] })
  t.equal(filtersKey(second), filtersKey(first), 'the same shape')
  t.strictSame(params.values(second, NO_SCOPES), ['%b\\_', 4.5, ['y', 'z']], 'its values, the pattern of its own match type')
})

t.test('the key tells apart what the text depends on: column, operator and kind', async (t) => {
  const keys = [
    filtersKey(filters({ title: 'x' })),
    filtersKey(filters({ title: 'x', title__match: 'exact' })),
    filtersKey(filters({ title: 'x', title__operator: 'ne' })),
    filtersKey(filters({ title__operator: 'is_null' })),
    filtersKey(filters({ title__operator: 'not_null' })),
    filtersKey(filters({ tags: 'x' })),
    filtersKey(filters({ tags: 'x', tags__operator: 'ne' })),
    filtersKey(filters({ rating: '1' }))
  ]
  t.equal(new Set(keys).size, keys.length)
  t.equal(filtersKey(filters({ title: 'x', title__match: 'starts' })), keys[0], 'a match type other than exact only changes the pattern')
})

t.test('whereClause: the clause and its values, nothing for no filter', async (t) => {
  t.strictSame(whereClause(filters({})), { text: '', values: [] })
  t.strictSame(whereClause(filters({ rating__operator: 'is_null', tags: ['a'], tags__operator: 'ne' })), {
    text: ' WHERE NOT (t0."tags" @> $1) AND t0."rating" IS NULL',
    values: [['a']]
  })
})

t.test('in and not_in: one array parameter cast to the column type without its modifier (SPEC §7.6)', async (t) => {
  const one = whereClause(filters({ title: 'A', title__operator: 'in', rating: '2', rating__operator: 'not_in' }))
  t.equal(one.text, ' WHERE t0."title" = ANY($1::varchar[]) AND t0."rating" <> ALL($2::real[])')
  t.strictSame(one.values, [['A'], [2]])
  const many = whereClause(filters({ title: ['A', 'b', 'A'], title__operator: 'in', rating: ['2', '3.5'], rating__operator: 'not_in' }))
  t.equal(many.text, one.text, 'the text does not depend on the number of values')
  t.strictSame(many.values, [['A', 'b', 'A'], [2, 3.5]])
})

t.test('arrayType: serials are integers, modifiers dropped, keys through ForeignKeys', async (t) => {
  const owner = defineTable('where_owner', { code: column.varchar({ length: 5, primaryKey: true }) }, { readable: 'code' })
  const thing = defineTable('where_thing', {
    price: column.numeric({ digits: [5, 2] }),
    owner: column.foreignKey(owner),
    at: column.timestamptz(),
    big: column.bigInt()
  }, { readable: 'price' })
  const types = Object.fromEntries(thing.columns.map((c) => [c.name, arrayType(c)]))
  t.strictSame(types, { id: 'integer[]', price: 'numeric[]', owner: 'varchar[]', at: 'timestamptz[]', big: 'bigint[]' })
  t.equal(arrayType(owner.primaryKey), 'varchar[]')
})
