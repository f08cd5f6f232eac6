import t from 'tap'
import { listBinding, parseFilterQuery, parseListQuery, queryContext, type RawQuery } from '../../../lib/query/parse.js'
import { filtersKey, type Filter } from '../../../lib/query/filter.js'
import { whereClause } from '../../../lib/sql/where.js'
import { film, person } from '../../fixtures/relational.js'

/* The `__or`/`__and` parser (SPEC §8.2): what it builds, the SQL it makes, and every 400 with its offset. */

const ctx = queryContext(film, { pageSize: 15, maxPageSize: 3, maxJoins: 2, excludeSecrets: true })
const raw = (query: Record<string, string | string[]>): RawQuery => Object.assign(Object.create(null), query)
const where = (query: Record<string, string | string[]>): { text: string, values: readonly unknown[] } => whereClause(parseFilterQuery(ctx, raw(query)))

t.test('trees compile to their shape, values as parameters', async (t) => {
  t.strictSame(where({ __or: '(rating.gte.8,and(year.lt.1980,not.title.starts.Star))' }), {
    text: ' WHERE (t0."rating" >= $1 OR (t0."year" < $2 AND NOT (t0."title" ILIKE $3)))',
    values: [8, 1980, 'Star%']
  })
  t.strictSame(where({ __and: '(not.or(year.is_null,year.in.(1,"2")),title.exact."a,\\"b\\\\",tags.e.x)' }), {
    text: ' WHERE (NOT (t0."year" IS NULL OR t0."year" = ANY($1::integer[])) AND t0."title" = $2 AND t0."tags" @> $3)',
    values: [[1, 2], 'a,"b\\', ['x']]
  })
  // Paths: each condition its own EXISTS; a null check ignores a value.
  t.strictSame(where({ __or: '(director.name.e.Lucas,genres.name.ends.ma,director.born.not_null.x)', year: '1977' }), {
    text: ' WHERE t0."year" = $1 AND (EXISTS (SELECT 1 FROM "rel_person" AS r1 WHERE r1."id" = t0."director" AND r1."name" ILIKE $2) OR ' +
      'EXISTS (SELECT 1 FROM "rel_film_genre" AS r2j JOIN "rel_genre" AS r2 ON r2."id" = r2j."genre" WHERE r2j."film" = t0."id" AND r2."name" ILIKE $3) OR ' +
      'EXISTS (SELECT 1 FROM "rel_person" AS r3 WHERE r3."id" = t0."director" AND r3."born" IS NOT NULL))',
    values: [1977, '%Lucas%', '%ma']
  })
  // Several trees, and repeats, all hold.
  t.strictSame(where({ __or: ['(year.e.1)', '(year.e.2)'], __and: '(rating.lt.1)' }).text,
    ' WHERE (t0."year" = $1) AND (t0."year" = $2) AND (t0."rating" < $3)')
  // A column named like an operator still works as a path segment.
  t.strictSame(where({ __or: '(director.mentor.name.exact.x)' }).values, ['x'])
})

t.test('the text depends on the shape only; cursors bind the values', async (t) => {
  const key = (query: Record<string, string>): string => filtersKey(parseFilterQuery(ctx, raw(query)) as Filter[])
  t.equal(key({ __or: '(year.e.1,title.e.a)' }), key({ __or: '(year.e.2,title.e.bbb)' }))
  t.not(key({ __or: '(year.e.1,title.e.a)' }), key({ __and: '(year.e.1,title.e.a)' }))
  t.not(key({ __or: '(year.e.1,title.e.a)' }), key({ __or: '(year.e.1,not.title.e.a)' }))
  t.not(key({ __or: '(year.e.1,title.e.a)' }), key({ __or: '(year.e.1,or(title.e.a))' }))
  const binding = (text: string): string => listBinding(ctx, parseListQuery(ctx, raw({ __or: text })))
  t.not(binding('(year.e.1)'), binding('(year.e.2)'))
})

const INVALID = 'TABLECRUD_ERR_QS_INVALID_TREE'
const deep = (n: number): string => n === 0 ? 'year.e.1' : `and(${deep(n - 1)})`

t.test('every 400 names the parameter, the problem and its offset', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ __or: 'year.e.1' }, '__or: unexpected "y", expecting "(" at 0.'],
    [{ __or: '(year.e.1' }, '__or: unexpected end, expecting "," or ")" at 9.'],
    [{ __or: '(year.e.1))' }, '__or: unexpected ")", expecting the end at 10.'],
    [{ __and: '()' }, '__and: unexpected ")", expecting a field name at 1.'],
    [{ __or: '(year)' }, '__or: unexpected ")", expecting "." and an operator at 5.'],
    [{ __or: '(nope.e.1)' }, '__or: unknown field "nope" at 1.'],
    [{ __or: '(budget_note.e.1)' }, '__or: unknown field "budget_note" at 1.'],
    [{ __or: '(director.pin.e.1)' }, '__or: unknown field "director.pin" at 10.'],
    [{ __or: '(year.like.1)' }, '__or: unknown field "year.like" at 6.'],
    [{ __or: '(year.e.x)' }, '__or: the value "x" of year is not a valid 32-bit integer at 8.'],
    [{ __or: '(year.starts.1)' }, '__or: the match starts applies to text fields only, not year at 1.'],
    [{ __or: '(title.lt.a)' }, '__or: the operator lt does not apply to title (type varchar) at 1.'],
    [{ __or: '(tags.in.(a))' }, '__or: the operator in does not apply to tags (type array) at 1.'],
    [{ __or: '(year.e.)' }, '__or: unexpected ")", expecting a value at 8.'],
    [{ __or: '(year.e)' }, '__or: unexpected ")", expecting a value at 7.'],
    [{ __or: '(year.in.1)' }, '__or: unexpected "1", expecting "(" and a list of values at 9.'],
    [{ __or: '(year.in.(1,2,3,4))' }, '__or: more than 3 values at 18.'],
    [{ __or: '(title.e.a(b)' }, '__or: unexpected "(" in a value (quote it: "...") at 10.'],
    [{ __or: '(title.e."ab)' }, '__or: an unterminated quoted value at 9.'],
    [{ __or: '(title.e."a\\b")' }, '__or: unexpected "b" after "\\" (only \\" and \\\\) at 12.'],
    [{ __or: `(${deep(5)})` }, `__or: nested deeper than 5 at ${4 * 5}.`],
    [{ __or: `(${Array(51).fill('year.e.1').join(',')})` }, `__or: more than 50 conditions at ${1 + 50 * 9}.`]
  ]
  for (const [query, message] of cases) {
    t.throws(() => parseFilterQuery(ctx, raw(query)), { code: INVALID, statusCode: 400, message }, JSON.stringify(query))
  }
  t.doesNotThrow(() => parseFilterQuery(ctx, raw({ __or: `(${deep(4)})` })), 'depth 5 is allowed')
  // The limit counts every tree of the request.
  t.throws(() => parseFilterQuery(ctx, raw({ __or: `(${Array(30).fill('year.e.1').join(',')})`, __and: `(${Array(21).fill('year.e.1').join(',')})` })),
    { code: INVALID, message: `__and: more than 50 conditions at ${1 + 20 * 9}.` })
  // Filters of another table take their own paths.
  const people = queryContext(person, { pageSize: 15, maxPageSize: 3, maxJoins: 1, excludeSecrets: true })
  t.strictSame(whereClause(parseFilterQuery(people, raw({ __or: '(films.year.gt.2000,pupils.name.exact.x)' }))).values, [2000, 'x'])
})
