import t from 'tap'
import fc from 'fast-check'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { json } from '../../fixtures/movies.js'
import { aggregateApp, film, insertFilms, type Row } from '../../fixtures/aggregates.js'

/*
 * Aggregates on the wire (SPEC §8.3), property-based in the style of the trees' test: over
 * generated films, random combinations of group keys (columns, a ForeignKey path, a truncated
 * date), aggregates, a `__having` tree and a filter, each written twice, as the query string
 * and as SQL written here by hand, independently of lib/sql. The API must answer exactly the
 * rows the hand-written SQL gives, in the same order.
 */

const { db, app } = await aggregateApp(t, async (app) => {
  await app.register(tableCrud, { table: film, prefix: '/films', maxJoins: 1, aggregates: true, maxPageSize: 1000 })
})

const generated = fc.record({
  title: fc.constantFrom('A', 'B', 'C'),
  overview: fc.constant(null),
  genre: fc.constantFrom('sci-fi', 'drama', 'crime', 'war'),
  year: fc.integer({ min: 1970, max: 1975 }),
  rating: fc.option(fc.constantFrom(5.5, 7, 8.25), { nil: null }),
  score: fc.constant(null),
  box_office: fc.option(fc.constantFrom('10.50', '2000.00', '0.25'), { nil: null }),
  votes: fc.constant(null),
  released: fc.option(fc.constantFrom('1970-02-03', '1970-11-30', '1972-06-01', '1975-12-31'), { nil: null }),
  premiere: fc.constant(null),
  shown_at: fc.constant(null),
  director: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null })
})
await insertFilms(db.pool, fc.sample(generated, { numRuns: 120, seed: 25 }) as Row[])

/** A group key or an aggregate: its query-string item, output name and hand-written SQL (as text where pg would make a Date). */
interface Part { readonly item: string, readonly name: string, readonly sql: string }

const KEYS: readonly Part[] = [
  { item: 'genre', name: 'genre', sql: 'f.genre' },
  { item: 'director', name: 'director', sql: 'f.director' },
  { item: 'director.studio', name: 'director_studio', sql: 'p.studio' },
  { item: 'released:year', name: 'released_year', sql: "date_trunc('year', f.released)::date::text" },
  { item: 'year', name: 'year', sql: 'f.year' }
]

const AGGREGATES: readonly Part[] = [
  { item: 'count', name: 'count', sql: 'count(*)' },
  { item: 'count(rating)', name: 'count_rating', sql: 'count(f.rating)' },
  { item: 'count_distinct(genre)', name: 'count_distinct_genre', sql: 'count(DISTINCT f.genre)' },
  { item: 'avg(year)', name: 'avg_year', sql: 'avg(f.year)::float8' },
  { item: 'sum(box_office)', name: 'sum_box_office', sql: 'sum(f.box_office)' },
  { item: 'min(year)', name: 'min_year', sql: 'min(f.year)' },
  { item: 'max(released)', name: 'max_released', sql: 'max(f.released)::text' }
]

const COUNTS = new Set(['count', 'count_rating', 'count_distinct_genre'])

interface Written { readonly param: string, readonly sql: string }

/** Having conditions over the outputs the query has (only those: `__having` names outputs). */
function havingLeaf (aggregates: readonly Part[]): fc.Arbitrary<Written> | null {
  const by = new Map(aggregates.map((a) => [a.name, a.sql]))
  const leaves: Array<fc.Arbitrary<Written>> = []
  if (by.has('count')) {
    leaves.push(fc.tuple(fc.constantFrom('gte', 'lt', 'e'), fc.integer({ min: 0, max: 12 })).map(([op, n]) => ({
      param: `count.${op}.${n}`, sql: `count(*) ${{ gte: '>=', lt: '<', e: '=' }[op]} ${n}`
    })))
  }
  if (by.has('count_rating')) leaves.push(fc.integer({ min: 0, max: 8 }).map((n) => ({ param: `count_rating.gt.${n}`, sql: `count(f.rating) > ${n}` })))
  if (by.has('avg_year')) leaves.push(fc.constantFrom(1971, 1972.5, 1974).map((n) => ({ param: `avg_year.gt.${n}`, sql: `avg(f.year)::float8 > ${n}` })))
  if (by.has('sum_box_office')) leaves.push(fc.constantFrom('100', '2000.75').map((n) => ({ param: `sum_box_office.lte.${n}`, sql: `sum(f.box_office) <= ${n}` })))
  if (by.has('max_released')) leaves.push(fc.constant({ param: 'max_released.is_null', sql: 'max(f.released) IS NULL' }))
  return leaves.length === 0 ? null : fc.oneof(...leaves)
}

function havingTree (aggregates: readonly Part[]): fc.Arbitrary<Written | null> {
  const leaf = havingLeaf(aggregates)
  if (leaf === null) return fc.constant(null)
  const node = fc.tuple(leaf, fc.boolean()).map(([w, not]) => not ? { param: `not.${w.param}`, sql: `NOT (${w.sql})` } : w)
  return fc.tuple(fc.constantFrom('and', 'or'), fc.array(node, { minLength: 1, maxLength: 3 })).map(([logic, children]) => ({
    param: `${logic}(${children.map((c) => c.param).join(',')})`,
    sql: `(${children.map((c) => c.sql).join(logic === 'and' ? ' AND ' : ' OR ')})`
  }))
}

const filter = fc.constantFrom<Written>(
  { param: '', sql: 'TRUE' },
  { param: 'year__operator=gte&year=1972', sql: 'f.year >= 1972' },
  { param: `__or=${encodeURIComponent('(rating.is_null,genre.exact.drama)')}`, sql: "(f.rating IS NULL OR f.genre = 'drama')" }
)

const query = fc.tuple(
  fc.subarray([...KEYS], { maxLength: 3 }),
  fc.subarray([...AGGREGATES], { minLength: 1, maxLength: 4 }),
  filter
).chain(([keys, aggregates, where]) => fc.tuple(fc.constant(keys), fc.constant(aggregates), fc.constant(where), fc.option(havingTree(aggregates), { nil: null }).map((h) => h ?? null)))

const wire = (row: Row): Row => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, COUNTS.has(k) ? Number(v) : v]))

t.test('random groups, aggregates and having give the rows hand-written SQL gives', async (t) => {
  let runs = 0
  await fc.assert(fc.asyncProperty(query, async ([keys, aggregates, where, having]) => {
    runs++
    const list = [...keys, ...aggregates].map((p) => `${p.sql} AS "${p.name}"`).join(', ')
    const groupBy = keys.length === 0 ? '' : ` GROUP BY ${keys.map((k) => k.sql).join(', ')}`
    const orderBy = keys.length === 0 ? '' : ` ORDER BY ${keys.map((k) => k.sql).join(', ')}`
    const sql = `SELECT ${list} FROM agg_film f LEFT JOIN agg_person p ON p.id = f.director WHERE ${where.sql}${groupBy}${having === null ? '' : ` HAVING ${having.sql}`}${orderBy}`
    const expected = (await db.pool.query<Row>(sql)).rows.map(wire)
    const params = [
      keys.length === 0 ? '' : `__group_by=${keys.map((k) => k.item).join(',')}`,
      `__aggregate=${encodeURIComponent(aggregates.map((a) => a.item).join(','))}`,
      having === null ? '' : `__having=${encodeURIComponent(`(${having.param})`)}`,
      where.param,
      '__page_size=1000'
    ].filter((p) => p !== '').join('&')
    const response = await app.inject({ url: `/films/aggregate/?${params}` })
    if (response.statusCode !== 200) throw new Error(`${params}: ${response.body}`)
    const got = json(response).rows as Row[]
    if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`${params}: got ${JSON.stringify(got)}, SQL ${sql} gives ${JSON.stringify(expected)}`)
  }), { numRuns: 120 })
  t.equal(runs, 120, 'every generated query was checked')
})
