import t from 'tap'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { embedsKey, isEmbedControl, pathPastMaxJoins } from '../../../lib/query/embed.js'
import { parseListQuery, queryContext } from '../../../lib/query/parse.js'

/* The parts of embed parsing (SPEC §8.1) a request cannot reach on its own. */

const shop = defineTable('eq_shop', { name: column.text() })
defineTable('eq_order', {
  shop: column.foreignKey(shop, { related: 'orders' }),
  total: column.integer(),
  note: column.text({ secret: true }),
  hidden: column.foreignKey((): Table => shop, { secret: true, related: 'hidden_orders' })
})
const city = defineTable('eq_city', { name: column.text() })
// Two ForeignKeys to eq_city without `related`: a clash that a context with joins refuses.
defineTable('eq_road', { from: column.foreignKey(city), to: column.foreignKey(city) })

t.test('pathPastMaxJoins: a path of relations to a visible column', async (t) => {
  t.equal(pathPastMaxJoins(shop, 'orders.total', true), true)
  t.equal(pathPastMaxJoins(shop, 'orders.shop.name', true), true, 'back through the ForeignKey')
  t.equal(pathPastMaxJoins(shop, 'orders.note', true), false, 'a secret column is no path end')
  t.equal(pathPastMaxJoins(shop, 'orders.note', false), true, 'unless secrets are served')
  t.equal(pathPastMaxJoins(shop, 'hidden_orders.total', true), false, 'a relation through a secret key is no path')
  t.equal(pathPastMaxJoins(shop, 'nope.total', true), false)
  t.equal(pathPastMaxJoins(shop, 'name', true), false, 'a column of the table itself is no join')
  t.equal(pathPastMaxJoins(city, 'eq_road.from', true), false, 'relations that clash make no path (registration with joins names the clash)')
})

t.test('isEmbedControl and embedsKey', async (t) => {
  t.ok(isEmbedControl('films.__order'))
  t.ok(isEmbedControl('a.b.__page_size'))
  t.notOk(isEmbedControl('__order'))
  t.notOk(isEmbedControl('films.__readable'))
  const ctx = queryContext(shop, { pageSize: 15, maxPageSize: 100, maxJoins: 1, excludeSecrets: true })
  t.equal(ctx.maxEmbedRows, 100, 'maxEmbedRows defaults to 100')
  const key = (query: Record<string, string | string[]>): string => embedsKey(parseListQuery(ctx, query).embeds)
  t.equal(key({ 'orders.__page_size': '3' }), '', 'a page size is a bound value, not part of the text')
  t.equal(key({ 'orders.__order': ['-total', 'id'] }), 'orders:-orders.total,orders.id')
  t.equal(key({ 'orders.__order': '' }), 'orders:', 'an empty order is the key alone (ascending)')
})
