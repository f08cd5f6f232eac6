import t from 'tap'
import { parseAggregateQuery, FUNCTIONS } from '../../../lib/query/aggregate.js'
import { queryContext } from '../../../lib/query/parse.js'
import { compileAggregate, compileAggregateCount } from '../../../lib/sql/aggregate.js'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { aggregateRowSchema } from '../../../schemas/aggregate.js'

/* `/aggregate/` parsed and compiled, without a database (SPEC §8.3): names, clashes, the SQL text and its values. */

const maker = defineTable('qa_maker', { b: column.varchar({ length: 9 }) }, { readable: 'b' })
const thing = defineTable('qa_thing', {
  a: column.foreignKey((): Table => maker),
  a_b: column.varchar({ length: 9 }),
  at: column.timestamptz({ null: true }),
  n: column.numeric({ digits: [6, 2] })
})
const ctx = queryContext(thing, { pageSize: 10, maxPageSize: 50, maxJoins: 1, excludeSecrets: true })

const caught = (fn: () => unknown): { code?: string, message?: string } => {
  try { fn() } catch (error) { const { code, message } = error as Error & { code: string }; return { code, message } }
  return {}
}

t.test('the functions, one descriptor each', async (t) => {
  t.strictSame(Object.keys(FUNCTIONS), ['count', 'count_distinct', 'avg', 'sum', 'min', 'max'])
  t.ok(Object.isFrozen(FUNCTIONS))
})

t.test('two outputs of one name are a 400 naming it', async (t) => {
  t.strictSame(caught(() => parseAggregateQuery(ctx, { __aggregate: 'count(a_b),count(a.b)' })), {
    code: 'TABLECRUD_ERR_QS_OUTPUT_CLASH', message: 'Two outputs of __group_by, __aggregate and __readable are named count_a_b.'
  })
  t.strictSame(caught(() => parseAggregateQuery(ctx, { __group_by: 'a_b,a.b' })).code, 'TABLECRUD_ERR_QS_OUTPUT_CLASH')
  t.strictSame(caught(() => parseAggregateQuery(ctx, { __group_by: ['a', 'a_readable'], __readable: 'true' })).code, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD')
})

t.test('one statement: grouped rows in a subquery, having over their aliases, values as parameters', async (t) => {
  const query = parseAggregateQuery(ctx, {
    __group_by: 'a,at:month',
    __aggregate: 'count,sum(n),max(a.id)',
    __readable: 'yes',
    __having: '(sum_n.gt.10.5)',
    __order: '-count',
    a_b: 'x',
    __page: '2',
    __page_size: '5'
  })
  const statement = compileAggregate(ctx, query, true)
  t.equal(statement.text,
    'SELECT t0."g0" AS "a", t0."r0" AS "a_readable", t0."g1" AS "at_month", t0."a0" AS "count", t0."a1" AS "sum_n", t0."a2" AS "max_a_id", count(*) OVER () AS __total FROM (' +
    'SELECT t0."a" AS "g0", (SELECT format(\'%s\', x0."b") FROM "qa_maker" AS x0 WHERE x0."id" = t0."a") AS "r0", ' +
    'date_trunc(\'month\', t0."at", \'UTC\') AS "g1", count(*) AS "a0", sum(t0."n") AS "a1", max(t1."id") AS "a2" ' +
    'FROM "qa_thing" AS t0 LEFT JOIN "qa_maker" AS t1 ON t1."id" = t0."a" WHERE t0."a_b" ILIKE $1 GROUP BY t0."a", date_trunc(\'month\', t0."at", \'UTC\')' +
    ') AS t0 WHERE (t0."a1" > $2) ORDER BY t0."a0" DESC, t0."g0" ASC, t0."g1" ASC LIMIT $3 OFFSET $4')
  t.strictSame(statement.values, ['%x%', '10.5', 5, 5])
  t.equal(statement.offset, 5)
  const again = compileAggregate(ctx, parseAggregateQuery(ctx, {
    __group_by: 'a,at:month', __aggregate: 'count,sum(n),max(a.id)', __readable: 'yes', __having: '(sum_n.gt.99)', __order: '-count', a_b: 'y'
  }), true)
  t.equal(again.text, statement.text, 'another query of the same shape: the same text')
  t.strictSame(again.values, ['%y%', '99', 10, 0])
  const count = compileAggregateCount(ctx, query)
  t.match(count.text, /^SELECT count\(\*\) AS count FROM \(SELECT .* GROUP BY .*\) AS t0 WHERE \(t0\."a1" > \$2\)$/)
  t.strictSame(count.values, ['%x%', '10.5'])
  t.equal(statement.plan, 'custom', 'a grouping is planned for its page each time (a generic plan is blind to LIMIT)')
  t.equal(count.plan, 'custom')
  t.equal(compileAggregate(ctx, parseAggregateQuery(ctx, {}), false).text, 'SELECT t0."a0" AS "count" FROM (SELECT count(*) AS "a0" FROM "qa_thing" AS t0) AS t0 LIMIT $1 OFFSET $2')
  t.equal(statement.named, true)
})

t.test('a path and a column whose outputs share a name: a statement each, not one cached for both', async (t) => {
  // Each query alone is fine; `a_b` and `a.b` are both named a_b, and a text cached by the
  // names served the second the first one's statement (a 500 when the types differ).
  const own = queryContext(thing, { pageSize: 10, maxPageSize: 50, maxJoins: 1, excludeSecrets: true })
  const text = (raw: Record<string, string>): string => compileAggregate(own, parseAggregateQuery(own, raw), false).text
  t.match(text({ __group_by: 'a_b' }), 'GROUP BY t0."a_b")')
  t.match(text({ __group_by: 'a.b' }), 'GROUP BY t1."b")', 'grouped by the joined column')
  t.match(text({ __group_by: 'a_b', __aggregate: 'count(a_b)' }), 'count(t0."a_b") AS "a0"')
  t.match(text({ __group_by: 'a_b', __aggregate: 'count(a.b)' }), 'count(t1."b") AS "a0"', 'counted on the joined column')
})

t.test('the row schema of a shape: nullable outputs as type lists, else an anyOf', async (t) => {
  const data = defineTable('qa_data', { doc: column.jsonb({ null: true }), n: column.integer() })
  const dataCtx = queryContext(data, { pageSize: 10, maxPageSize: 50, maxJoins: 0, excludeSecrets: true })
  const query = parseAggregateQuery(dataCtx, { __group_by: 'doc', __aggregate: 'count,avg(n),max(n)' })
  t.strictSame(JSON.parse(JSON.stringify(aggregateRowSchema([...query.groups, ...query.aggregates]))), {
    type: 'object',
    properties: {
      doc: { anyOf: [{}, { type: 'null' }] },
      count: { type: 'integer' },
      avg_n: { type: ['number', 'null'] },
      max_n: { type: ['integer', 'null'], minimum: -2147483648, maximum: 2147483647 }
    },
    required: ['doc', 'count', 'avg_n', 'max_n']
  })
})

t.test('outputs are kept per shape, up to a bound; past it they are built each time', async (t) => {
  const own = queryContext(thing, { pageSize: 10, maxPageSize: 50, maxJoins: 1, excludeSecrets: true })
  const first = parseAggregateQuery(own, { __aggregate: 'count' })
  t.equal(parseAggregateQuery(own, { __aggregate: 'count' }).aggregates, first.aggregates, 'the same shape: the same outputs')
  // 'count' n times is one output each time, under as many texts.
  for (let n = 2; n <= 1001; n++) parseAggregateQuery(own, { __aggregate: Array(n).fill('count').join(',') })
  const past = Array(1002).fill('count').join(',')
  t.not(parseAggregateQuery(own, { __aggregate: past }).aggregates, parseAggregateQuery(own, { __aggregate: past }).aggregates, 'past the bound: built anew')
  t.strictSame(parseAggregateQuery(own, { __aggregate: past }).aggregates.map((a) => a.name), ['count'])
})
