import t from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { parseListQuery, queryContext } from '../../../lib/query/parse.js'
import { compileList } from '../../../lib/sql/select.js'
import { json } from '../../fixtures/movies.js'
import { aggregateApp, film, person } from '../../fixtures/aggregates.js'

/*
 * Full-text search on the wire (SPEC §8.4): `__search` on GET `/`, `/count/`, exports, keyset
 * pages and aggregates, ranked when no `__order` is given; `search` as a tree and filter
 * operator; the 400s; and EXPLAIN showing that the query's expression is the GIN index's.
 */

const { db, app } = await aggregateApp(t, async (app) => {
  await app.register(tableCrud, { table: film, prefix: '/films', maxJoins: 1, aggregates: true, maxPageSize: 100 })
  await app.register(tableCrud, { table: person, prefix: '/people' })
})

const DOCUMENT = "to_tsvector('english', coalesce(title, '') || ' ' || coalesce(overview, ''))"

/** The ids hand-written SQL finds for a websearch query, most relevant first, then by id. */
async function expected (search: string): Promise<number[]> {
  const sql = `SELECT id FROM agg_film WHERE ${DOCUMENT} @@ websearch_to_tsquery('english', $1) ORDER BY ts_rank(${DOCUMENT}, websearch_to_tsquery('english', $1)) DESC, id`
  return (await db.pool.query<{ id: number }>(sql, [search])).rows.map((r) => r.id)
}

async function ids (query: string): Promise<number[]> {
  const response = await app.inject({ url: `/films/?__visible_fields=id&__page_size=100&${query}` })
  if (response.statusCode !== 200) throw new Error(`${query}: ${response.body}`)
  return (json(response).rows as Array<{ id: number }>).map((r) => r.id)
}

t.test('__search keeps matching rows, most relevant first, as hand-written SQL does', async (t) => {
  for (const search of ['star', 'stars', 'star -empire', '"star destroyer"', 'rebels or tokyo', 'crime family', 'the', 'nothing-matches-this']) {
    const want = await expected(search)
    t.strictSame(await ids(`__search=${encodeURIComponent(search)}`), want, search)
    t.equal(json(await app.inject({ url: `/films/count/?__search=${encodeURIComponent(search)}` })).count, want.length, `/count/ ${search}`)
  }
  t.strictSame(await ids('__search=star'), [1, 8, 3], 'Star Wars, whose title and overview both say it, first')
  t.strictSame(await ids('__search=star&__order=-year'), [8, 3, 1], '__order wins over relevance')
  t.strictSame(await ids('__search=%20'), [8, 7, 6, 5, 4, 3, 2, 1], 'an empty search is no search')
  t.strictSame(await ids('__search=star&year__operator=lt&year=2000'), [1, 3], 'with filters')
})

t.test('__search on exports, keyset pages and aggregates', async (t) => {
  const ndjson = await app.inject({ url: '/films/?__search=star&__format=ndjson&__visible_fields=id' })
  t.equal(ndjson.body, '{"id":1}\n{"id":8}\n{"id":3}\n')
  const first = json(await app.inject({ url: '/films/?__search=star&__page_size=2&__cursor=&__visible_fields=id' }))
  t.strictSame(first.rows, [{ id: 1 }, { id: 8 }])
  const second = json(await app.inject({ url: `/films/?__search=star&__page_size=2&__cursor=${first.next_cursor as string}&__visible_fields=id` }))
  t.strictSame(second, { rows: [{ id: 3 }], next_cursor: null }, 'the rank and the key carry the page on')
  const other = await app.inject({ url: `/films/?__search=stars&__page_size=2&__cursor=${first.next_cursor as string}` })
  t.equal(other.statusCode, 400, 'the cursor binds the search')
  t.equal(json(other).code, 'TABLECRUD_ERR_QS_INVALID_CURSOR')
  const grouped = json(await app.inject({ url: '/films/aggregate/?__search=star&__group_by=director' }))
  t.strictSame(grouped.rows, [{ director: 1, count: 2 }, { director: null, count: 1 }])
})

t.test('search as an operator: one text column, in trees and plain filters, through paths', async (t) => {
  t.strictSame(await ids(`__or=${encodeURIComponent('(overview.search.rebels,title.search.tokyo)')}`), [3, 1])
  t.strictSame(await ids(`__and=${encodeURIComponent('(not.title.search.star,overview.search."river war")')}`), [5])
  t.strictSame(await ids('title__operator=search&title=strikes'), [3])
  // The person table has no search option: its columns are read with the 'simple' configuration.
  t.strictSame(await ids(`__or=${encodeURIComponent('(director.name.search.coppola)')}`), [7, 6, 5, 4])
})

t.test('every bad part of a search is a 400 naming it', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['/people/?__search=lucas', 'TABLECRUD_ERR_QS_SEARCH_UNAVAILABLE', '__search needs full-text search, and the table agg_person has none (its search option).'],
    ['/people/count/?__search=lucas', 'TABLECRUD_ERR_QS_SEARCH_UNAVAILABLE', '__search needs full-text search, and the table agg_person has none (its search option).'],
    ['/films/?__search=a&__search=b', 'TABLECRUD_ERR_QS_REPEATED', '__search is given more than once.'],
    ['/films/?__search=a%00', 'TABLECRUD_ERR_QS_INVALID_STRING', '__search must be a string without NUL characters.'],
    ['/films/?year__operator=search&year=1', 'TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE', 'The operator search does not apply to year (type integer).'],
    [`/films/?__or=${encodeURIComponent('(year.search.x)')}`, 'TABLECRUD_ERR_QS_INVALID_TREE', '__or: the operator search does not apply to year (type integer) at 1.'],
    [`/films/aggregate/?__group_by=genre&__having=${encodeURIComponent('(count.search.x)')}`, 'TABLECRUD_ERR_QS_INVALID_TREE', '__having: the operator search does not apply to count (type bigInt) at 1.']
  ]
  for (const [url, code, message] of cases) {
    const response = await app.inject({ url })
    t.equal(response.statusCode, 400, url)
    t.match(json(response), { code, message }, url)
  }
})

t.test('EXPLAIN: the search uses the GIN index createTables made', async (t) => {
  const ctx = queryContext(film, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
  const statement = compileList(ctx, parseListQuery(ctx, { __search: 'star wars' }), false)
  const client = await db.pool.connect()
  try {
    // Eight rows fit one page, so the planner rightly prefers reading it whole. Disabling
    // sequential scans (in this session only) makes them cost more than any other plan; it
    // cannot make PostgreSQL use an index whose expression is not the query's, so the plan
    // below shows the expressions match.
    await client.query('SET enable_seqscan = off')
    const plan = JSON.stringify((await client.query(`EXPLAIN (FORMAT JSON) ${statement.text}`, [...statement.values])).rows[0])
    t.match(plan, /"Index Name":"agg_film_search_idx"/)
    await client.query('RESET enable_seqscan')
  } finally {
    client.release()
  }
})
