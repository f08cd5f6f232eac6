import t from 'tap'
import fc from 'fast-check'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { json } from '../../fixtures/movies.js'
import { film, relationalApp } from '../../fixtures/relational.js'
import { MAX_TREE_CONDITIONS } from '../../../lib/query/tree.js'

/*
 * Logical trees on the wire (SPEC §8.2), property-based: random trees of conditions on a
 * film's own columns, a to-one path and a many-to-many path, each written twice, as the
 * `__or`/`__and` parameter and as SQL written here by hand, independently of lib/sql. The
 * API must answer exactly the rows the hand-written SQL selects, on GET `/` and `/count/`.
 */

const { db, app } = await relationalApp(t, async (app) => {
  await app.register(tableCrud, { table: film, prefix: '/films', maxJoins: 2, maxPageSize: 100 })
})

/** A condition or tree as the parameter and as SQL, with how many conditions it holds. */
interface Written { readonly param: string, readonly sql: string, readonly conditions: number }

const COMPARE = { e: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const
const compare = fc.constantFrom(...(Object.keys(COMPARE) as Array<keyof typeof COMPARE>))
const year = fc.integer({ min: 1965, max: 2035 })
const quote = (text: string): string => `'${text.replace(/'/g, "''")}'`
const genre = fc.constantFrom('sci-fi', 'drama', 'crime', 'none')

const leaf: fc.Arbitrary<Written> = fc.oneof(
  fc.tuple(compare, year).map(([op, y]) => ({ param: `year.${op}.${y}`, sql: `f.year ${COMPARE[op]} ${y}` })),
  fc.constantFrom('is_null', 'not_null').map((op) => ({ param: `rating.${op}`, sql: `f.rating IS ${op === 'is_null' ? '' : 'NOT '}NULL` })),
  fc.constantFrom(6, 7.5, 9).map((r) => ({ param: `rating.gte.${r}`, sql: `f.rating >= ${r}` })),
  fc.constantFrom('Star', 'the', 'Lost in', 'm', 'x,"y').map((p) => ({
    param: `title.starts.${/[,"]/.test(p) ? JSON.stringify(p) : p}`, sql: `f.title ILIKE ${quote(p.replace(/[\\%_]/g, '\\$&') + '%')}`
  })),
  fc.constantFrom('Star Wars', 'THX 1138', 'star wars').map((title) => ({ param: `title.exact.${title}`, sql: `f.title = ${quote(title)}` })),
  fc.array(year, { minLength: 1, maxLength: 3 }).map((ys) => ({ param: `year.in.(${ys.join(',')})`, sql: `f.year IN (${ys.join(', ')})` })),
  fc.tuple(compare, fc.integer({ min: 1935, max: 1975 })).map(([op, born]) => ({
    param: `director.born.${op}.${born}`, sql: `EXISTS (SELECT 1 FROM rel_person p WHERE p.id = f.director AND p.born ${COMPARE[op]} ${born})`
  })),
  genre.map((name) => ({
    param: `genres.name.exact.${name}`,
    sql: `EXISTS (SELECT 1 FROM rel_film_genre fg JOIN rel_genre g ON g.id = fg.genre WHERE fg.film = f.id AND g.name = ${quote(name)})`
  })),
  fc.constantFrom('space', 'classic').map((tag) => ({ param: `tags.e.${tag}`, sql: `${quote(tag)} = ANY(f.tags)` }))
).map((written) => ({ ...written, conditions: 1 }))

const negate = (written: Written, not: boolean): Written => not ? { ...written, param: `not.${written.param}`, sql: `NOT (${written.sql})` } : written

const logic = fc.constantFrom('and', 'or')
const sum = (children: readonly Written[]): number => children.reduce((n, c) => n + c.conditions, 0)
const { node } = fc.letrec<{ node: Written, tree: Written }>((tie) => ({
  node: fc.tuple(fc.oneof({ maxDepth: 3 }, leaf, tie('tree')), fc.boolean()).map(([w, not]) => negate(w, not)),
  tree: fc.tuple(logic, fc.array(tie('node'), { minLength: 1, maxLength: 4 })).map(([l, children]) => ({
    param: `${l}(${children.map((c) => c.param).join(',')})`,
    sql: `(${children.map((c) => c.sql).join(l === 'and' ? ' AND ' : ' OR ')})`,
    conditions: sum(children)
  }))
}))
// Trees the API takes: more conditions than its cap are a 400 (test/lib/query/tree.test.ts).
const top = fc.tuple(logic, fc.array(node, { minLength: 1, maxLength: 4 })).filter(([, children]) => sum(children) <= MAX_TREE_CONDITIONS)

t.test('random trees select the rows hand-written SQL selects', async (t) => {
  let runs = 0
  await fc.assert(fc.asyncProperty(top, async ([l, children]) => {
    runs++
    const param = `(${children.map((c) => c.param).join(',')})`
    const sql = children.map((c) => c.sql).join(l === 'and' ? ' AND ' : ' OR ')
    const expected = (await db.pool.query<{ id: number }>(`SELECT f.id FROM rel_film f WHERE ${sql} ORDER BY f.id DESC`)).rows.map((r) => r.id)
    const query = `__${l}=${encodeURIComponent(param)}`
    const list = await app.inject({ url: `/films/?${query}&__page_size=100&__visible_fields=id` })
    if (list.statusCode !== 200) throw new Error(`${param}: ${list.body}`)
    const got = (json(list).rows as Array<{ id: number }>).map((r) => r.id)
    if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`${param}: got ${JSON.stringify(got)}, SQL ${sql} gives ${JSON.stringify(expected)}`)
    const count = json(await app.inject({ url: `/films/count/?${query}` })).count as number
    if (count !== expected.length) throw new Error(`${param}: /count/ ${count}, expected ${expected.length}`)
  }), { numRuns: 150 })
  t.equal(runs, 150, 'every generated tree was checked')
})

t.test('a 400 from the wire names the part and its offset', async (t) => {
  const response = await app.inject({ url: `/films/?__or=${encodeURIComponent('(year.e.1,and(title.e.a,))')}` })
  t.equal(response.statusCode, 400)
  t.strictSame(json(response), {
    statusCode: 400,
    code: 'TABLECRUD_ERR_QS_INVALID_TREE',
    error: 'Bad Request',
    message: '__or: unexpected ")", expecting a field name at 24.'
  })
})

t.test('keyset pages: the cursor binds the tree and its values', async (t) => {
  const url = (tree: string, cursor: string): string => `/films/?__or=${encodeURIComponent(tree)}&__page_size=2&__cursor=${cursor}&__visible_fields=id`
  const first = json(await app.inject({ url: url('(year.lt.2010,rating.is_null)', '') }))
  t.strictSame(first.rows, [{ id: 6 }, { id: 5 }])
  const second = json(await app.inject({ url: url('(year.lt.2010,rating.is_null)', first.next_cursor as string) }))
  t.strictSame(second.rows, [{ id: 4 }, { id: 3 }])
  const other = await app.inject({ url: url('(year.lt.2011,rating.is_null)', first.next_cursor as string) })
  t.equal(other.statusCode, 400)
  t.equal(json(other).code, 'TABLECRUD_ERR_QS_INVALID_CURSOR')
})
