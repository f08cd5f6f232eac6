import t from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { HttpError } from '../../../lib/errors.js'
import { json } from '../../fixtures/movies.js'
import { aggregateApp, film, long, LONG_NAME, person } from '../../fixtures/aggregates.js'

/*
 * GET `/aggregate/` (SPEC §8.3) on the wire: exact answers and wire types, paths, truncation,
 * readable keys, having, order, pages, Content-Range, the disabled mount, and a 400 naming
 * the part for every kind of bad input.
 */

const { app } = await aggregateApp(t, async (app) => {
  await app.register(tableCrud, { table: film, prefix: '/films', maxJoins: 1, aggregates: true, pageSize: 3 })
  await app.register(tableCrud, { table: person, prefix: '/people' })
  await app.register(tableCrud, { table: long, prefix: '/long', aggregates: true })
  await app.register(tableCrud, {
    table: person,
    prefix: '/guarded',
    maxJoins: 1,
    aggregates: true,
    validators: { getAggregate: [(_crud, request) => { if ((request.query as Record<string, unknown>).__group_by !== undefined) throw new HttpError(403, 'No grouping here') }] }
  })
})

async function rows (query: string): Promise<unknown[]> {
  const response = await app.inject({ url: `/films/aggregate/?${query}` })
  if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`)
  return json(response).rows as unknown[]
}

t.test('without __group_by: one row; without __aggregate: count', async (t) => {
  t.strictSame(await rows(''), [{ count: 8 }])
  t.strictSame(await rows('year__operator=gt&year=2100'), [{ count: 0 }], 'no row matches: still one row')
  t.strictSame(await rows('year__operator=gt&year=2100&__aggregate=avg(rating),sum(box_office),min(year)'), [{ avg_rating: null, sum_box_office: null, min_year: null }])
})

t.test('every function, with the wire types of SPEC §2.2', async (t) => {
  const all = 'count,count(rating),count_distinct(genre),avg(rating),avg(year),avg(box_office),sum(year),sum(box_office),sum(votes),sum(score),min(released),max(premiere),max(shown_at),min(box_office),max(votes)'
  t.strictSame(await rows(`__aggregate=${all}&director=1`), [{
    count: 3,
    count_rating: 2,
    count_distinct_genre: 1,
    avg_rating: 8.625,
    avg_year: 1976,
    avg_box_office: '438466666.83333333',
    sum_year: 5928,
    sum_box_office: '1315400000.50',
    sum_votes: '17000000012',
    sum_score: 23.75,
    min_released: '1971-03-11',
    max_premiere: '1980-05-17T18:00:00',
    max_shown_at: '1980-05-21T12:00:00Z',
    min_box_office: '2400000.50',
    max_votes: '9000000000'
  }])
})

t.test('group keys: columns, ForeignKey paths, truncated dates, readable representations', async (t) => {
  t.strictSame(await rows('__group_by=director&__aggregate=count,max(year)&__readable=true&__page_size=10'), [
    { director: 1, director_readable: 'George Lucas (1944)', count: 3, max_year: 1980 },
    { director: 2, director_readable: 'Francis Coppola (1939)', count: 2, max_year: 1979 },
    { director: 3, director_readable: 'Sofia Coppola (1971)', count: 2, max_year: 2006 },
    { director: null, director_readable: null, count: 1, max_year: 2030 }
  ])
  t.strictSame(await rows('__group_by=director.studio&__readable=1&__page_size=10'), [
    { director_studio: 1, director_studio_readable: 'Lucasfilm', count: 3 },
    { director_studio: 2, director_studio_readable: 'Zoetrope', count: 4 },
    { director_studio: null, director_studio_readable: null, count: 1 }
  ])
  t.strictSame(await rows('__group_by=released:month&released__operator=lt&released=1975-01-01'), [
    { released_month: '1971-03-01', count: 1 }, { released_month: '1972-03-01', count: 1 }
  ])
  t.strictSame(await rows('__group_by=premiere:day,shown_at:hour&year=1977'), [
    { premiere_day: '1977-05-25T00:00:00', shown_at_hour: '1977-05-26T01:00:00Z', count: 1 }
  ])
  // A timestamptz is truncated in UTC, not in the session's zone: 00:30Z stays on the 24th.
  t.strictSame(await rows('__group_by=shown_at:day&year=1972'), [{ shown_at_day: '1972-03-24T00:00:00Z', count: 1 }])
  t.strictSame(await rows('__group_by=released:year&__aggregate=count&year__operator=lt&year=1975&__order=-released_year'), [
    { released_year: '1972-01-01', count: 1 }, { released_year: '1971-01-01', count: 1 }
  ])
})

t.test('filters and trees (WHERE), __having (HAVING), order and pages', async (t) => {
  t.strictSame(await rows('__group_by=genre&__having=(count.gte.2)&__order=-count,genre'), [
    { genre: 'sci-fi', count: 4 }, { genre: 'drama', count: 2 }
  ])
  t.strictSame(await rows('__group_by=genre&__aggregate=count,avg(rating)&__having=(or(avg_rating.gt.9,genre.exact.drama))&__order=genre'), [
    { genre: 'crime', count: 1, avg_rating: 9.25 }, { genre: 'drama', count: 2, avg_rating: 7.125 }
  ])
  t.strictSame(await rows('__group_by=genre&__having=(count.e.1)&__having=(genre.starts.w)'), [{ genre: 'war', count: 1 }], 'several __having all hold')
  t.strictSame(await rows(`__group_by=genre&__or=${encodeURIComponent('(director.born.lt.1940,year.gt.2005)')}&__page_size=10`), [
    { genre: 'crime', count: 1 }, { genre: 'drama', count: 1 }, { genre: 'sci-fi', count: 1 }, { genre: 'war', count: 1 }
  ])
  t.strictSame(await rows('__group_by=genre&__page=2'), [{ genre: 'war', count: 1 }], 'pageSize 3: the fourth group on page 2')
  t.strictSame(await rows('__group_by=genre,director&__order=-count&__page_size=2'), [
    { genre: 'sci-fi', director: 1, count: 3 }, { genre: 'drama', director: 3, count: 2 }
  ], 'ties broken by the group keys, in order')
})

t.test('__range_header counts groups', async (t) => {
  const first = await app.inject({ url: '/films/aggregate/?__group_by=genre&__range_header=true' })
  t.equal(first.headers['content-range'], 'agg_film 0-2/4')
  t.equal(first.headers['access-control-expose-headers'], 'Content-Range')
  const beyond = await app.inject({ url: '/films/aggregate/?__group_by=genre&__range_header=true&__range_header_name=g&__page=3' })
  t.strictSame(json(beyond).rows, [])
  t.equal(beyond.headers['content-range'], 'g 6-6/4')
  const none = await app.inject({ url: '/films/aggregate/?__group_by=genre&__range_header=true&year=1' })
  t.equal(none.headers['content-range'], 'agg_film 0-0/0')
})

t.test('the route: HEAD, methods, the disabled mount', async (t) => {
  const head = await app.inject({ method: 'HEAD', url: '/films/aggregate' })
  t.equal(head.statusCode, 200)
  const post = await app.inject({ method: 'POST', url: '/films/aggregate/' })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET, HEAD')
  for (const method of ['GET', 'HEAD', 'POST', 'OPTIONS'] as const) {
    const off = await app.inject({ method, url: '/people/aggregate/' })
    t.equal(off.statusCode, 405, `${method} with aggregates off`)
    t.equal(off.headers.allow, '', 'an empty Allow: disabled by configuration')
    if (method !== 'HEAD') t.equal(json(off).code, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED')
  }
})

t.test('every bad part is a 400 naming it', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['__aggregate=median(rating)', 'TABLECRUD_ERR_QS_INVALID_AGGREGATE', '__aggregate item "median(rating)": not an aggregate (use count, count(<field>), count_distinct(<field>), avg(<field>), sum(<field>), min(<field>) or max(<field>)).'],
    ['__aggregate=count(', 'TABLECRUD_ERR_QS_INVALID_AGGREGATE', '__aggregate item "count(": not an aggregate (use count, count(<field>), count_distinct(<field>), avg(<field>), sum(<field>), min(<field>) or max(<field>)).'],
    ['__aggregate=avg', 'TABLECRUD_ERR_QS_INVALID_AGGREGATE', '__aggregate item "avg": needs a field: avg(<field>).'],
    ['__aggregate=sum()', 'TABLECRUD_ERR_QS_INVALID_AGGREGATE', '__aggregate item "sum()": needs a field: sum(<field>).'],
    ['__aggregate=avg(title)', 'TABLECRUD_ERR_QS_INVALID_AGGREGATE', '__aggregate item "avg(title)": avg applies to number fields, not title (type varchar).'],
    ['__aggregate=sum(director)', 'TABLECRUD_ERR_QS_INVALID_AGGREGATE', '__aggregate item "sum(director)": sum applies to number fields, not director (type foreignKey).'],
    ['__aggregate=max(genre)', 'TABLECRUD_ERR_QS_INVALID_AGGREGATE', '__aggregate item "max(genre)": max applies to fields with an order (numbers, dates and times, foreign keys), not genre (type varchar).'],
    ['__aggregate=count(secret_note)', 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "secret_note isn't a valid field name."],
    ['__aggregate=count(director.pin)', 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "director.pin isn't a valid field name."],
    ['__aggregate=max(director.studio.name)', 'TABLECRUD_ERR_QS_MAX_JOIN_DEPTH', 'Max join depth exceeded'],
    ['__group_by=secret_note', 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "secret_note isn't a valid field name."],
    ['__group_by=title:year', 'TABLECRUD_ERR_QS_INVALID_GROUP_BY', '__group_by item "title:year": only date and timestamp fields are truncated, and title is a varchar.'],
    ['__group_by=released:hour', 'TABLECRUD_ERR_QS_INVALID_GROUP_BY', '__group_by item "released:hour": truncate released by year, month, day.'],
    ['__group_by=premiere:week', 'TABLECRUD_ERR_QS_INVALID_GROUP_BY', '__group_by item "premiere:week": truncate premiere by year, month, day, hour.'],
    ['__group_by=premiere:day:x', 'TABLECRUD_ERR_QS_INVALID_GROUP_BY', '__group_by item "premiere:day:x": truncate premiere by year, month, day, hour.'],
    ['__having=(count.gte.x)', 'TABLECRUD_ERR_QS_INVALID_TREE', '__having: the value "x" of count is not a valid 64-bit integer at 11.'],
    ['__having=(avg_rating.gt.1)', 'TABLECRUD_ERR_QS_INVALID_TREE', '__having: unknown field "avg_rating" at 1.'],
    ['__having=(count.gte.1', 'TABLECRUD_ERR_QS_INVALID_TREE', '__having: unexpected end, expecting "," or ")" at 12.'],
    ['__order=-nope', 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "-nope isn't a valid field name. Valid names: count."],
    ['__order=rating', 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "rating isn't a valid field name. Valid names: count."],
    ['__page=0', 'TABLECRUD_ERR_QS_INVALID_PAGE', '__page must be an integer of 1 or more.'],
    ['__page_size=1001', 'TABLECRUD_ERR_QS_INVALID_PAGE_SIZE', '__page_size must be an integer from 1 to 1000.'],
    ['__readable=maybe', 'TABLECRUD_ERR_QS_INVALID_BOOLEAN', '__readable must be true or false.'],
    ['__range_header=2', 'TABLECRUD_ERR_QS_INVALID_BOOLEAN', '__range_header must be true or false.'],
    ['__visible_fields=title', 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "__visible_fields isn't a valid field name."],
    ['__cursor=', 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "__cursor isn't a valid field name."],
    ['nope=1', 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "nope isn't a valid field name."],
    ['year=abc', 'TABLECRUD_ERR_QS_INVALID_VALUE', 'The value "abc" of year is not a valid 32-bit integer.'],
    ['__or=(year.lt.1', 'TABLECRUD_ERR_QS_INVALID_TREE', '__or: unexpected end, expecting "," or ")" at 10.']
  ]
  for (const [query, code, message] of cases) {
    const response = await app.inject({ url: `/films/aggregate/?${query}` })
    t.equal(response.statusCode, 400, query)
    t.match(json(response), { code, message }, query)
  }
  // A to-many path (agg_person's reverse relation agg_film) would count a person once per film.
  const toMany: Array<[string, string, string]> = [
    ['__group_by=agg_film.year', 'TABLECRUD_ERR_QS_INVALID_GROUP_BY', '__group_by item "agg_film.year": agg_film is a to-many relation; aggregate on its own table\'s /aggregate/ instead.'],
    ['__aggregate=avg(agg_film.rating)', 'TABLECRUD_ERR_QS_INVALID_AGGREGATE', '__aggregate item "avg(agg_film.rating)": agg_film is a to-many relation; aggregate on its own table\'s /aggregate/ instead.']
  ]
  for (const [query, code, message] of toMany) {
    const response = await app.inject({ url: `/guarded/aggregate/?${query}` })
    t.equal(response.statusCode, 400, query)
    t.match(json(response), { code, message }, query)
  }
  const clash = await app.inject({ url: '/films/aggregate/?__group_by=director&__aggregate=count,count' })
  t.strictSame(json(clash).rows[0], { director: 1, count: 3 }, 'the same aggregate twice is one output')
})

t.test('validators: getAggregate, with the query string as sent', async (t) => {
  t.strictSame(json(await app.inject({ url: '/guarded/aggregate/' })).rows, [{ count: 4 }])
  const refused = await app.inject({ url: '/guarded/aggregate/?__group_by=studio' })
  t.equal(refused.statusCode, 403)
  t.equal(json(refused).message, 'No grouping here')
})

t.test('outputs named past 63 bytes: selected by alias and named in JS', async (t) => {
  const response = await app.inject({ url: `/long/aggregate/?__group_by=${LONG_NAME}&__aggregate=count,count_distinct(${LONG_NAME})` })
  t.strictSame(json(response).rows, [
    { [LONG_NAME]: 1, count: 2, [`count_distinct_${LONG_NAME}`]: 1 },
    { [LONG_NAME]: 2, count: 1, [`count_distinct_${LONG_NAME}`]: 1 }
  ])
})
