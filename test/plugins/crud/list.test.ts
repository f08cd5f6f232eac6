import t, { type Test } from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import {
  byIdDescending, category, CATEGORY_ROWS, director, DIRECTOR_EMAILS, DIRECTOR_ROWS, json, movie, MOVIE_COLUMNS,
  MOVIE_FIELDS_JOINED, MOVIE_ROWS, pick, requests, role, ROLE_ROWS, seededApp, studio, STUDIO_ROWS, ticket, ticketRow,
  type Row
} from '../../fixtures/movies.js'

/*
 * GET `/` of TableCRUD (SPEC §2.3, §2.2, §6): rows, filters, ordering, fields, paging, readable
 * representations and Content-Range, against seeded rows.
 */

const { app } = await seededApp(t, async (app) => {
  await app.register(tableCrud, { table: movie, prefix: '/movies', maxJoins: 1 })
  await app.register(tableCrud, { table: movie, prefix: '/movies-flat' })
  await app.register(tableCrud, { table: movie, prefix: '/movies-open', maxJoins: 1, excludeSecrets: false })
  await app.register(tableCrud, { table: director, prefix: '/directors' })
  await app.register(tableCrud, { table: director, prefix: '/directors-open', excludeSecrets: false })
  await app.register(tableCrud, { table: studio, prefix: '/studios' })
  await app.register(tableCrud, { table: role, prefix: '/roles', maxJoins: 2 })
  await app.register(tableCrud, { table: role, prefix: '/roles-shallow', maxJoins: 1 })
  await app.register(tableCrud, { table: category, prefix: '/categories', maxJoins: 1 })
  await app.register(tableCrud, { table: ticket, prefix: '/tickets', maxPageSize: 50 })
  // An integrator's hook that already exposes a header (SPEC §6.20).
  await app.register(async (child) => {
    child.addHook('onRequest', async (request, reply) => {
      reply.header('access-control-expose-headers', request.headers['x-expose'] ?? 'X-Foo')
    })
    await child.register(tableCrud, { table: ticket, prefix: '/exposed' })
  })
})
const { get, expectOk, expectError } = requests(app)

const movies = (...ids: number[]): Row[] => ids.map((id) => MOVIE_ROWS[id - 1]!)
const expectMovies = async (t: Test, query: string, ids: number[]): Promise<unknown> =>
  await expectOk(t, `/movies/?${query}`, { rows: movies(...ids) })
const expectBadQuery = async (t: Test, query: string, code: string, message: string, extra: Row = {}): Promise<unknown> =>
  await expectError(t, `/movies/?${query}`, 400, code, message, extra)
const UNKNOWN = 'TABLECRUD_ERR_QS_UNKNOWN_FIELD'
const NOT_APPLICABLE = 'TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE'
const INVALID_VALUE = 'TABLECRUD_ERR_QS_INVALID_VALUE'

t.test('every row, primary key descending, with values as SPEC §2.2 writes them', async (t) => {
  const response = await expectOk(t, '/movies/', { rows: byIdDescending(MOVIE_ROWS) })
  t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(response.headers['content-range'], undefined, 'no Content-Range unless asked for')
  // Numeric is an exact string, a zero fraction of a timestamp is left out, arrays nest.
  t.match(response.body, '"box_office":"-12.50"')
  t.match(response.body, '"premiere":"2020-01-01T00:00:00"')
  t.match(response.body, '"premiere":"1971-03-11T12:30:00.500000"')
  t.match(response.body, '"premiere":"2003-09-12T18:00:00.000001"')
  t.match(response.body, '"scores":[[9,8],[7,10]]')
  await expectOk(t, '/studios/', { rows: [STUDIO_ROWS[2], STUDIO_ROWS[0], STUDIO_ROWS[1]] })
  await expectOk(t, '/roles/', { rows: byIdDescending(ROLE_ROWS) })
  await expectOk(t, '/categories/', { rows: byIdDescending(CATEGORY_ROWS) })
})

t.test('the path without its trailing slash is answered the same', async (t) => {
  for (const query of ['', '?genre=sci', '?__visible_fields=name,director.name&__readable=1', '?foo=1']) {
    const slash = await get(`/movies/${query}`)
    const bare = await get(`/movies${query}`)
    t.equal(bare.statusCode, slash.statusCode, query)
    t.equal(bare.body, slash.body, query)
    t.equal(bare.headers['content-type'], 'application/json; charset=utf-8', query)
  }
})

t.test('HEAD answers like GET, without a body', async (t) => {
  for (const url of ['/movies/', '/movies', '/tickets/?__range_header=1&__page=2', '/movies/?__visible_fields=director.name&__readable=1']) {
    const got = await get(url)
    const head = await get(url, 'HEAD')
    t.equal(head.statusCode, 200, url)
    t.equal(head.body, '', url)
    for (const name of ['content-type', 'content-length', 'content-range', 'access-control-expose-headers']) {
      t.equal(head.headers[name], got.headers[name], `${url} ${name}`)
    }
  }
  const bad = await get('/movies/?foo=1', 'HEAD')
  t.equal(bad.statusCode, 400)
  t.equal(bad.body, '')
})

t.test('secret columns are never selected, filtered on, ordered by or asked for', async (t) => {
  await expectOk(t, '/directors/', { rows: byIdDescending(DIRECTOR_ROWS) })
  await expectError(t, '/directors/?email=example', 400, UNKNOWN, "email isn't a valid field name.", { validFields: ['id', 'name'] })
  await expectError(t, '/directors/?email__operator=is_null', 400, UNKNOWN, "email isn't a valid field name.", { validFields: ['id', 'name'] })
  await expectError(t, '/directors/?__order=-email', 400, UNKNOWN, `email isn't a valid field name. Valid names: ${['id', 'name'].join(', ')}.`, { validFields: ['id', 'name'] })
  await expectError(t, '/directors/?__visible_fields=name,email', 400, UNKNOWN, `email isn't a valid field name. Valid names: ${['id', 'name'].join(', ')}.`, { validFields: ['id', 'name'] })
  // A joined table's secret column is refused too, and never selected by a join.
  await expectBadQuery(t, '__visible_fields=director.email', UNKNOWN, `director.email isn't a valid field name. Valid names: ${MOVIE_FIELDS_JOINED.join(', ')}.`, { validFields: MOVIE_FIELDS_JOINED })
  await expectBadQuery(t, '__order=director.email', UNKNOWN, `director.email isn't a valid field name. Valid names: ${MOVIE_FIELDS_JOINED.join(', ')}.`, { validFields: MOVIE_FIELDS_JOINED })
  await expectOk(t, '/movies/?__visible_fields=director.id,director.name&id=1', { rows: [{ director: { id: 1, name: 'George Lucas' } }] })
})

t.test('with excludeSecrets false, secret columns are like any other', async (t) => {
  const withEmail = DIRECTOR_ROWS.map((row, i) => ({ ...row, email: DIRECTOR_EMAILS[i] }))
  await expectOk(t, '/directors-open/', { rows: byIdDescending(withEmail) })
  await expectOk(t, '/directors-open/?email=LUCASFILM', { rows: [withEmail[0]] })
  await expectOk(t, '/directors-open/?email=nobody@example.com&email__match=exact', { rows: [withEmail[2]] })
  await expectOk(t, '/directors-open/?email__operator=is_null', { rows: [withEmail[1]] })
  await expectError(t, '/directors-open/?email__operator=lt&email=a', 400, NOT_APPLICABLE, 'The operator lt does not apply to email (type email).')
  // Descending puts NULL first, as PostgreSQL does.
  await expectOk(t, '/directors-open/?__order=-email', { rows: [withEmail[1], withEmail[2], withEmail[0]] })
  await expectOk(t, '/directors-open/?__visible_fields=email', { rows: [{ email: 'nobody@example.com' }, { email: null }, { email: 'george@lucasfilm.example' }] })
  await expectOk(t, '/movies-open/?__visible_fields=name,director.email&id__operator=lte&id=2', {
    rows: [{ name: 'THX 1138', director: { email: 'george@lucasfilm.example' } }, { name: 'Star Wars', director: { email: 'george@lucasfilm.example' } }]
  })
})

t.test('filters on the primary key (Serial)', async (t) => {
  const cases: Array<[string, number[]]> = [
    ['id=3', [3]],
    ['id=%2B3', [3]],
    ['id__operator=e&id=3', [3]],
    ['id__operator=ne&id=3', [5, 4, 2, 1]],
    ['id__operator=lt&id=3', [2, 1]],
    ['id__operator=lte&id=3', [3, 2, 1]],
    ['id__operator=gt&id=3', [5, 4]],
    ['id__operator=gte&id=3', [5, 4, 3]],
    ['id__operator=is_null', []],
    ['id__operator=not_null', [5, 4, 3, 2, 1]],
    ['id=99', []]
  ]
  for (const [query, ids] of cases) await expectMovies(t, query, ids)
  await expectBadQuery(t, 'id=1.5', INVALID_VALUE, 'The value "1.5" of id is not a valid 32-bit integer.')
  await expectBadQuery(t, 'id=2147483648', INVALID_VALUE, 'The value "2147483648" of id is not a valid 32-bit integer.')
})

t.test('text filters: contains by default, starts, ends, case-insensitive; exact and ne case-sensitive', async (t) => {
  const cases: Array<[string, number[]]> = [
    ['name=TRANS', [3]],
    ['name=wars&name__match=contains', [1]],
    ['name=thx&name__match=starts', [2]],
    ['name=THX&name__match=ends', []],
    ['name=WARS&name__match=ends', [1]],
    ['name=Star%20Wars&name__match=exact', [1]],
    ['name=star%20wars&name__match=exact', []],
    ['name=Star&name__match=exact', []],
    ['name__operator=e&name=wars', [1]],
    ['name__operator=e&name=Star%20Wars&name__match=exact', [1]],
    ['name__operator=ne&name=Star%20Wars', [5, 4, 3, 2]],
    // ne is inequality: case-sensitive, and the match type does not turn it into NOT LIKE.
    ['name__operator=ne&name=star%20wars', [5, 4, 3, 2, 1]],
    ['name__operator=ne&name=Star&name__match=starts', [5, 4, 3, 2, 1]],
    ['name__operator=is_null', []],
    ['name__operator=not_null', [5, 4, 3, 2, 1]],
    ['genre=SCI', [2, 1]],
    ['genre=drama&genre__match=exact', [3]],
    ['genre=Drama&genre__match=exact', []],
    ['genre=horror', []],
    ['genre__operator=is_null', []],
    ['genre__operator=not_null', [5, 4, 3, 2, 1]],
    ['synopsis__operator=is_null', []],
    ['synopsis=tokyo', [3]],
    ['synopsis=.&synopsis__match=ends', [4, 3, 2, 1]],
    ['synopsis=a%20&synopsis__match=starts', [2, 1]],
    ['synopsis__operator=not_null', [5, 4, 3, 2, 1]],
    // An empty value is no filter (an HTML form sends its empty fields).
    ['name=', [5, 4, 3, 2, 1]]
  ]
  for (const [query, ids] of cases) await expectMovies(t, query, ids)
  await expectOk(t, '/categories/?name__operator=is_null', { rows: [CATEGORY_ROWS[3]] })
  // not_null ignores the value, and so the match type.
  await expectOk(t, '/categories/?name__operator=not_null&name=ic&name__match=ends', { rows: [CATEGORY_ROWS[4], CATEGORY_ROWS[2], CATEGORY_ROWS[1], CATEGORY_ROWS[0]] })
})

t.test('% and _ are literal in every match type', async (t) => {
  const cases: Array<[string, number[]]> = [
    ['name=100%25%20_x_', [4]],
    ['name=100%25', [4]],
    ['name=%25', [4]],
    ['name=_', [4]],
    ['name=0_', []],
    ['name=100_x', []],
    ['name=100%20x', [5]],
    ['name=100%25&name__match=starts', [4]],
    ['name=100_&name__match=starts', []],
    ['name=_x_&name__match=ends', [4]],
    ['name=x&name__match=ends', [5]],
    ['name=%25x&name__match=ends', []],
    ['name=100%25%20_x_&name__match=exact', [4]],
    ['name=100%25%20%25x%25&name__match=exact', []],
    ['name=%5C&name__match=contains', []]
  ]
  for (const [query, ids] of cases) await expectMovies(t, query, ids)
})

t.test('number filters: Integer, Real, Numeric', async (t) => {
  const cases: Array<[string, number[]]> = [
    ['year=2003', [3]],
    ['year=-1', []],
    ['year__operator=ne&year=2003', [5, 4, 2, 1]],
    ['year__operator=lt&year=2000', [2, 1]],
    ['year__operator=lte&year=1977', [2, 1]],
    ['year__operator=gt&year=2003', [5, 4]],
    ['year__operator=gte&year=2003', [5, 4, 3]],
    ['year__operator=is_null', []],
    ['rating=5.5', [4]],
    ['rating=8.6', [1]],
    ['rating=55e-1', [4]],
    // NULL is neither equal nor unequal.
    ['rating__operator=ne&rating=5.5', [5, 3, 1]],
    ['rating__operator=lt&rating=0', [5]],
    ['rating__operator=lte&rating=5.5', [5, 4]],
    ['rating__operator=gt&rating=7.7', [1]],
    ['rating__operator=gte&rating=7.7', [3, 1]],
    ['rating__operator=is_null', [2]],
    ['rating__operator=not_null', [5, 4, 3, 1]],
    ['box_office=0', [4]],
    ['box_office=-12.5', [5]],
    ['box_office=2437000.50', [2]],
    ['box_office__operator=ne&box_office=0', [5, 3, 2, 1]],
    ['box_office__operator=lt&box_office=0', [5]],
    ['box_office__operator=lte&box_office=0.00', [5, 4]],
    ['box_office__operator=gt&box_office=2437000.5', [3, 1]],
    ['box_office__operator=gte&box_office=2437000.5', [3, 2, 1]],
    ['box_office__operator=is_null', []],
    ['box_office__operator=not_null', [5, 4, 3, 2, 1]]
  ]
  for (const [query, ids] of cases) await expectMovies(t, query, ids)
  await expectBadQuery(t, 'year=20.5', INVALID_VALUE, 'The value "20.5" of year is not a valid 32-bit integer.')
  await expectBadQuery(t, 'year=99999999999', INVALID_VALUE, 'The value "99999999999" of year is not a valid 32-bit integer.')
  await expectBadQuery(t, 'year=abc', INVALID_VALUE, 'The value "abc" of year is not a valid 32-bit integer.')
  await expectBadQuery(t, 'rating=abc', INVALID_VALUE, 'The value "abc" of rating is not a valid number.')
  await expectBadQuery(t, 'rating=NaN', INVALID_VALUE, 'The value "NaN" of rating is not a valid number.')
  await expectBadQuery(t, 'box_office=1e3', INVALID_VALUE, 'The value "1e3" of box_office is not a valid decimal number.')
  await expectBadQuery(t, 'box_office=1.2.3', INVALID_VALUE, 'The value "1.2.3" of box_office is not a valid decimal number.')
})

t.test('boolean filters', async (t) => {
  const cases: Array<[string, number[]]> = [
    ['released=no', [5, 4]],
    ['released=TRUE', [3, 2, 1]],
    ['released=t', [3, 2, 1]],
    ['released=F', [5, 4]],
    ['released=1', [3, 2, 1]],
    ['released=0', [5, 4]],
    ['released=Yes', [3, 2, 1]],
    ['released__operator=ne&released=yes', [5, 4]],
    ['released__operator=is_null', []],
    ['released__operator=not_null', [5, 4, 3, 2, 1]]
  ]
  for (const [query, ids] of cases) await expectMovies(t, query, ids)
  await expectBadQuery(t, 'released=maybe', INVALID_VALUE, 'The value "maybe" of released is not a valid boolean (true, false, 1, 0, t, f, yes, no).')
  for (const op of ['lt', 'lte', 'gt', 'gte']) {
    await expectBadQuery(t, `released__operator=${op}&released=1`, NOT_APPLICABLE, `The operator ${op} does not apply to released (type boolean).`)
  }
})

t.test('timestamp filters: ISO 8601 date-time or date, a zone applied', async (t) => {
  const cases: Array<[string, number[]]> = [
    ['premiere=2020-01-01', [4]],
    ['premiere=2020-01-01T00:00:00', [4]],
    ['premiere=2003-09-12T18:00:00.000001', [3]],
    ['premiere=2003-09-12T18:00:00', []],
    ['premiere=1971-03-11%2012:30:00.5', [2]],
    ['premiere=2021-06-15T10:00:00%2B02:00', [5]],
    ['premiere=2021-06-15T08:00:00Z', [5]],
    ['premiere__operator=ne&premiere=2020-01-01', [5, 3, 2, 1]],
    ['premiere__operator=gt&premiere=2003-09-12T18:00:00', [5, 4, 3]],
    ['premiere__operator=lt&premiere=1977-05-25', [2]],
    ['premiere__operator=lte&premiere=1977-05-25', [2, 1]],
    ['premiere__operator=gte&premiere=2020-01-01', [5, 4]],
    ['premiere__operator=is_null', []],
    ['premiere__operator=not_null', [5, 4, 3, 2, 1]]
  ]
  for (const [query, ids] of cases) await expectMovies(t, query, ids)
  await expectBadQuery(t, 'premiere=2021-02-30', INVALID_VALUE, 'The value "2021-02-30" of premiere is not a valid ISO 8601 date or date-time.')
  await expectBadQuery(t, 'premiere=yesterday', INVALID_VALUE, 'The value "yesterday" of premiere is not a valid ISO 8601 date or date-time.')
})

t.test('ForeignKey filters take the referenced key', async (t) => {
  const cases: Array<[string, number[]]> = [
    ['director=1', [2, 1]],
    ['director=99', []],
    ['director__operator=ne&director=1', [5, 3]],
    ['director__operator=lt&director=2', [2, 1]],
    ['director__operator=lte&director=2', [5, 3, 2, 1]],
    ['director__operator=gt&director=1', [5, 3]],
    ['director__operator=gte&director=2', [5, 3]],
    ['director__operator=is_null', [4]],
    ['director__operator=not_null', [5, 3, 2, 1]],
    // A Varchar key: equality is exact, ordering is the text's.
    ['studio=ZOE', [3, 2]],
    ['studio=zoe', []],
    ['studio=ZO', []],
    ['studio__operator=ne&studio=ZOE', [5, 1]],
    ['studio__operator=lt&studio=M', [5, 1]],
    ['studio__operator=gte&studio=M', [3, 2]],
    ['studio__operator=is_null', [4]],
    ['studio__operator=not_null', [5, 3, 2, 1]]
  ]
  for (const [query, ids] of cases) await expectMovies(t, query, ids)
  await expectBadQuery(t, 'director=abc', INVALID_VALUE, 'The value "abc" of director is not a valid 32-bit integer.')
  await expectBadQuery(t, 'director__match=exact&director=1', 'TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE', 'director__match applies to text columns only.')
  await expectOk(t, '/categories/?parent=2', { rows: [CATEGORY_ROWS[2]] })
  await expectOk(t, '/roles/?movie=1', { rows: [ROLE_ROWS[1], ROLE_ROWS[0]] })
})

t.test('array filters: an element at any depth; repeated values must all be there', async (t) => {
  const cases: Array<[string, number[]]> = [
    ['tags=classic', [3, 1]],
    ['tags=space', [1]],
    ['tags=Space', [5]],
    ['tags=clas', []],
    ['tags=classic&tags=space', [1]],
    ['tags=classic&tags=tokyo', [3]],
    ['tags=space&tags=tokyo', []],
    ['tags__operator=ne&tags=classic', [5, 4, 2]],
    ['tags__operator=is_null', []],
    ['tags__operator=not_null', [5, 4, 3, 2, 1]],
    ['scores=9', [5, 1]],
    ['scores=4', [5]],
    ['scores=3', [4]],
    ['scores=4&scores=9', [5]],
    ['scores=7&scores=8', [1]],
    ['scores=9&scores=5', []],
    ['scores=-9', []],
    ['scores__operator=ne&scores=4', [4, 3, 2, 1]],
    ['scores__operator=is_null', []],
    ['scores__operator=not_null', [5, 4, 3, 2, 1]]
  ]
  for (const [query, ids] of cases) await expectMovies(t, query, ids)
  await expectBadQuery(t, 'scores=x', INVALID_VALUE, 'The value "x" of scores is not a valid 32-bit integer.')
  await expectBadQuery(t, 'scores=1&scores=x', INVALID_VALUE, 'The value "x" of scores is not a valid 32-bit integer.')
  await expectBadQuery(t, 'tags__match=exact&tags=x', 'TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE', 'tags__match applies to text columns only.')
  for (const column of ['tags', 'scores']) {
    await expectBadQuery(t, `${column}__operator=gt&${column}=1`, NOT_APPLICABLE, `The operator gt does not apply to ${column} (type array).`)
  }
})

t.test('the ordering operators are a 400 on text, boolean and array columns', async (t) => {
  for (const [column, type] of [['name', 'varchar'], ['genre', 'varchar'], ['synopsis', 'text'], ['released', 'boolean'], ['tags', 'array'], ['scores', 'array']]) {
    for (const op of ['lt', 'lte', 'gt', 'gte']) {
      await expectBadQuery(t, `${column}__operator=${op}&${column}=1`, NOT_APPLICABLE, `The operator ${op} does not apply to ${column} (type ${type}).`)
    }
  }
})

t.test('filters combine with AND', async (t) => {
  await expectMovies(t, 'genre=sci&year__operator=gt&year=1975', [1])
  await expectMovies(t, 'genre=sci&director=2', [])
  await expectMovies(t, 'released=false&tags__operator=not_null&rating__operator=gt&rating=0', [4])
})

t.test('malformed filters are 400s naming the input', async (t) => {
  await expectBadQuery(t, 'foo=1', UNKNOWN, "foo isn't a valid field name.", { validFields: MOVIE_COLUMNS })
  await expectBadQuery(t, '__foo=1', UNKNOWN, "__foo isn't a valid field name.", { validFields: MOVIE_COLUMNS })
  await expectBadQuery(t, 'director.nope=George', UNKNOWN, "director.nope isn't a valid field name.", { validFields: MOVIE_COLUMNS })
  await expectBadQuery(t, 'director.email=x', UNKNOWN, "director.email isn't a valid field name.", { validFields: MOVIE_COLUMNS })
  await expectBadQuery(t, 'foo__operator=gt', UNKNOWN, "foo isn't a valid field name.", { validFields: MOVIE_COLUMNS })
  await expectBadQuery(t, 'foo__match=exact', UNKNOWN, "foo isn't a valid field name.", { validFields: MOVIE_COLUMNS })
  await expectBadQuery(t, 'year__operator=like&year=1', 'TABLECRUD_ERR_QS_UNKNOWN_OPERATOR', '"like" is not an operator: use one of e, ne, lt, lte, gt, gte, is_null, not_null, in, not_in, search.')
  await expectBadQuery(t, 'name__match=fuzzy&name=a', 'TABLECRUD_ERR_QS_UNKNOWN_MATCH', '"fuzzy" is not a match type: use one of contains, exact, starts, ends.')
  await expectBadQuery(t, 'year__match=exact&year=1', 'TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE', 'year__match applies to text columns only.')
  await expectBadQuery(t, 'year__operator=gt', 'TABLECRUD_ERR_QS_MISSING_VALUE', 'year__operator=gt needs a value for year.')
  await expectBadQuery(t, 'name__operator=ne', 'TABLECRUD_ERR_QS_MISSING_VALUE', 'name__operator=ne needs a value for name.')
  await expectBadQuery(t, 'name=a&name=b', 'TABLECRUD_ERR_QS_REPEATED', 'name is given more than once.')
  await expectBadQuery(t, 'year__operator=gt&year__operator=lt&year=1', 'TABLECRUD_ERR_QS_REPEATED', 'year__operator is given more than once.')
  // is_null and not_null ignore any value, even one of the wrong type.
  await expectMovies(t, 'rating__operator=is_null&rating=abc', [2])
  await expectMovies(t, 'director__operator=not_null&director=x', [5, 3, 2, 1])
})

t.test('__order: columns, descending, joined columns, ties broken by the primary key ascending', async (t) => {
  const cases: Array<[string, number[]]> = [
    ['__order=id', [1, 2, 3, 4, 5]],
    ['__order=-id', [5, 4, 3, 2, 1]],
    ['__order=year', [2, 1, 3, 4, 5]],
    ['__order=genre,-year', [5, 4, 3, 1, 2]],
    ['__order=genre&__order=-year', [5, 4, 3, 1, 2]],
    ['__order=%20genre%20,,-year%20', [5, 4, 3, 1, 2]],
    // Ties: the primary key ascending, whatever the direction of the sort keys.
    ['__order=released', [4, 5, 1, 2, 3]],
    ['__order=-released', [1, 2, 3, 4, 5]],
    ['__order=-genre', [1, 2, 3, 4, 5]],
    ['__order=-released,-id', [3, 2, 1, 5, 4]],
    // NULL sorts last ascending and first descending.
    ['__order=-rating', [2, 1, 3, 4, 5]],
    ['__order=director.name', [1, 2, 3, 5, 4]],
    ['__order=-director.name', [4, 3, 5, 1, 2]],
    ['__order=studio.name,name', [5, 3, 2, 1, 4]],
    ['__order=', [5, 4, 3, 2, 1]]
  ]
  for (const [query, ids] of cases) await expectMovies(t, query, ids)
  await expectBadQuery(t, '__order=-foo', UNKNOWN, `foo isn't a valid field name. Valid names: ${MOVIE_FIELDS_JOINED.join(', ')}.`, { validFields: MOVIE_FIELDS_JOINED })
  await expectBadQuery(t, '__order=studio.founder', UNKNOWN, `studio.founder isn't a valid field name. Valid names: ${MOVIE_FIELDS_JOINED.join(', ')}.`, { validFields: MOVIE_FIELDS_JOINED })
  await expectError(t, '/movies-flat/?__order=director.name', 400, 'TABLECRUD_ERR_QS_MAX_JOIN_DEPTH', 'Max join depth exceeded')
  await expectError(t, '/roles-shallow/?__order=movie.director.name', 400, 'TABLECRUD_ERR_QS_MAX_JOIN_DEPTH', 'Max join depth exceeded')
  await expectOk(t, '/roles/?__order=-movie.director.name,character', { rows: [ROLE_ROWS[3], ROLE_ROWS[2], ROLE_ROWS[1], ROLE_ROWS[0]] })
  await expectOk(t, '/studios/?__order=name', { rows: [STUDIO_ROWS[1], STUDIO_ROWS[2], STUDIO_ROWS[0]] })
  await expectOk(t, '/studios/?__order=-code', { rows: [STUDIO_ROWS[2], STUDIO_ROWS[0], STUDIO_ROWS[1]] })
})

t.test('__visible_fields: chosen columns, joined ones nested, within maxJoins', async (t) => {
  await expectOk(t, '/movies/?__visible_fields=name,year&id__operator=lte&id=2', { rows: [{ name: 'THX 1138', year: 1971 }, { name: 'Star Wars', year: 1977 }] })
  await expectOk(t, '/movies/?__visible_fields=name&__visible_fields=year&id__operator=lte&id=2', { rows: [{ name: 'THX 1138', year: 1971 }, { name: 'Star Wars', year: 1977 }] })
  await expectOk(t, '/movies/?__visible_fields=name,director.name', {
    rows: [
      { name: '100 x', director: { name: 'Sofia Coppola' } },
      // A NULL ForeignKey: the joined fields are null.
      { name: '100% _x_', director: { name: null } },
      { name: 'Lost in Translation', director: { name: 'Sofia Coppola' } },
      { name: 'THX 1138', director: { name: 'George Lucas' } },
      { name: 'Star Wars', director: { name: 'George Lucas' } }
    ]
  })
  // Asked for with its joined fields, the key goes inside the object.
  await expectOk(t, '/movies/?__visible_fields=director,director.name,studio.name&id=2', {
    rows: [{ director: { id: 1, name: 'George Lucas' }, studio: { name: 'American Zoetrope' } }]
  })
  await expectOk(t, '/movies/?__visible_fields=tags,scores,box_office,premiere&id=2', {
    rows: [{ tags: ['dystopia'], scores: [[5, 6]], box_office: '2437000.50', premiere: '1971-03-11T12:30:00.500000' }]
  })
  await expectOk(t, '/roles/?__visible_fields=character,movie.name,movie.director.name&movie=3', {
    rows: [{ character: 'Bob Harris', movie: { name: 'Lost in Translation', director: { name: 'Sofia Coppola' } } }]
  })
  await expectOk(t, '/categories/?__visible_fields=name,parent.name&id__operator=gte&id=4', {
    rows: [{ name: 'Orphans', parent: { name: null } }, { name: null, parent: { name: 'Space opera' } }]
  })
  await expectOk(t, '/movies/?__visible_fields=%20name%20,&id=1', { rows: [{ name: 'Star Wars' }] })
  await expectOk(t, '/movies/?__visible_fields=&id=1', { rows: movies(1) })
})

t.test('__visible_fields errors list the valid names', async (t) => {
  await expectBadQuery(t, '__visible_fields=name,foo', UNKNOWN, `foo isn't a valid field name. Valid names: ${MOVIE_FIELDS_JOINED.join(', ')}.`, { validFields: MOVIE_FIELDS_JOINED })
  await expectBadQuery(t, '__visible_fields=director.foo', UNKNOWN, `director.foo isn't a valid field name. Valid names: ${MOVIE_FIELDS_JOINED.join(', ')}.`, { validFields: MOVIE_FIELDS_JOINED })
  await expectBadQuery(t, '__visible_fields=name.x', UNKNOWN, `name.x isn't a valid field name. Valid names: ${MOVIE_FIELDS_JOINED.join(', ')}.`, { validFields: MOVIE_FIELDS_JOINED })
  await expectError(t, '/movies-flat/?__visible_fields=name,bar', 400, UNKNOWN, `bar isn't a valid field name. Valid names: ${MOVIE_COLUMNS.join(', ')}.`, { validFields: MOVIE_COLUMNS })
  await expectError(t, '/movies-flat/?__visible_fields=director.name', 400, 'TABLECRUD_ERR_QS_MAX_JOIN_DEPTH', 'Max join depth exceeded')
  await expectError(t, '/roles-shallow/?__visible_fields=movie.director.name', 400, 'TABLECRUD_ERR_QS_MAX_JOIN_DEPTH', 'Max join depth exceeded')
  await expectError(t, '/roles/?__visible_fields=movie.director.name.x', 400, UNKNOWN, `movie.director.name.x isn't a valid field name. Valid names: ${['id', 'movie', ...MOVIE_FIELDS_JOINED.map((f) => `movie.${f}`), 'character'].join(', ')}.`, {
    validFields: ['id', 'movie', ...MOVIE_FIELDS_JOINED.map((f) => `movie.${f}`), 'character']
  })
})

t.test('__readable adds <fk>_readable after each top-level ForeignKey', async (t) => {
  const readable = (row: Row): Row => {
    const out: Row = {}
    for (const [key, value] of Object.entries(row)) {
      out[key] = value
      if (key === 'director') out.director_readable = ({ 1: 'George Lucas', 2: 'Sofia Coppola' } as Row)[String(value)] ?? null
      if (key === 'studio') out.studio_readable = STUDIO_ROWS.find((s) => s.code === value)?.name ?? null
    }
    return out
  }
  const expected = byIdDescending(MOVIE_ROWS).map(readable)
  for (const spelling of ['1', 'true', 'TRUE', 'yes', 't']) {
    await expectOk(t, `/movies/?__readable=${spelling}`, { rows: expected })
  }
  const response = await get('/movies/?__readable=1&id=1')
  t.strictSame(Object.keys(json(response).rows[0]), [
    'id', 'name', 'genre', 'synopsis', 'year', 'rating', 'box_office', 'released', 'premiere',
    'director', 'director_readable', 'studio', 'studio_readable', 'tags', 'scores'
  ], 'each readable key follows its ForeignKey')
  for (const spelling of ['0', 'false', 'no', 'F']) {
    await expectOk(t, `/movies/?__readable=${spelling}&id=1`, { rows: movies(1) })
  }
  await expectBadQuery(t, '__readable=maybe', 'TABLECRUD_ERR_QS_INVALID_BOOLEAN', '__readable must be true or false.')
  await expectBadQuery(t, '__readable=', 'TABLECRUD_ERR_QS_INVALID_BOOLEAN', '__readable must be true or false.')
  await expectBadQuery(t, '__readable=1&__readable=1', 'TABLECRUD_ERR_QS_REPEATED', '__readable is given more than once.')
  // The template's NULL renders as "", a NULL key gives null; a self-reference works like any other.
  await expectOk(t, '/categories/?__readable=true', {
    rows: [
      { id: 5, name: 'Orphans', parent: 4, parent_readable: '' },
      { id: 4, name: null, parent: 3, parent_readable: 'Space opera' },
      { id: 3, name: 'Space opera', parent: 2, parent_readable: 'Science fiction' },
      { id: 2, name: 'Science fiction', parent: 1, parent_readable: 'Fiction' },
      { id: 1, name: 'Fiction', parent: null, parent_readable: null }
    ]
  })
  // With joined fields, the readable value sits next to the nested object; a joined
  // table's ForeignKey gets none (SPEC §6.9).
  await expectOk(t, '/movies/?__readable=1&__visible_fields=name,director.name&id__operator=gte&id=4', {
    rows: [
      { name: '100 x', director: { name: 'Sofia Coppola' }, director_readable: 'Sofia Coppola' },
      { name: '100% _x_', director: { name: null }, director_readable: null }
    ]
  })
  await expectOk(t, '/roles/?__readable=1&__visible_fields=character,movie.name,movie.director&movie=3', {
    rows: [{ character: 'Bob Harris', movie: { name: 'Lost in Translation', director: 2 }, movie_readable: 'Lost in Translation (2003)' }]
  })
  await expectOk(t, '/roles/?__readable=1&movie=4', { rows: [{ id: 4, movie: 4, movie_readable: '100% _x_ (2020)', character: 'X' }] })
  // No ForeignKey in the output, nothing to add.
  await expectOk(t, '/movies/?__readable=1&__visible_fields=name&id=1', { rows: [{ name: 'Star Wars' }] })
  await expectOk(t, '/studios/?__readable=1&code=A24', { rows: [STUDIO_ROWS[1]] })
})

t.test('__page and __page_size', async (t) => {
  await expectMovies(t, '__page_size=2', [5, 4])
  await expectMovies(t, '__page_size=2&__page=2', [3, 2])
  await expectMovies(t, '__page_size=2&__page=3', [1])
  await expectMovies(t, '__page_size=2&__page=4', [])
  await expectMovies(t, '__page=1', [5, 4, 3, 2, 1])
  await expectMovies(t, '__page=2', [])
  await expectMovies(t, '__page_size=1000', [5, 4, 3, 2, 1])
  await expectMovies(t, '__page_size=2&__page=2&__order=id', [3, 4])
  const tickets = (ids: number[]): { rows: Row[] } => ({ rows: ids.map(ticketRow) })
  const range = (from: number, to: number): number[] => Array.from({ length: Math.abs(to - from) + 1 }, (_, i) => from > to ? from - i : from + i)
  await expectOk(t, '/tickets/', tickets(range(100, 86)))
  await expectOk(t, '/tickets/?__page=7', tickets(range(10, 1)))
  await expectOk(t, '/tickets/?__page_size=50&__page=2', tickets(range(50, 1)))
  const PAGE_SIZE = 'TABLECRUD_ERR_QS_INVALID_PAGE_SIZE'
  const PAGE = 'TABLECRUD_ERR_QS_INVALID_PAGE'
  await expectError(t, '/tickets/?__page_size=51', 400, PAGE_SIZE, '__page_size must be an integer from 1 to 50.')
  await expectBadQuery(t, '__page_size=1001', PAGE_SIZE, '__page_size must be an integer from 1 to 1000.')
  for (const value of ['0', '-1', '1.5', 'abc', '', '1e2']) {
    await expectBadQuery(t, `__page_size=${value}`, PAGE_SIZE, '__page_size must be an integer from 1 to 1000.')
    await expectBadQuery(t, `__page=${value}`, PAGE, '__page must be an integer of 1 or more.')
  }
  await expectBadQuery(t, '__page=99999999999', PAGE, '__page must be an integer of 1 or more.')
  await expectBadQuery(t, '__page=1&__page=2', 'TABLECRUD_ERR_QS_REPEATED', '__page is given more than once.')
  await expectBadQuery(t, '__page_size=1&__page_size=1', 'TABLECRUD_ERR_QS_REPEATED', '__page_size is given more than once.')
})

t.test('__range_header: Content-Range with the total of the filtered rows', async (t) => {
  const expectRange = async (url: string, range: string, rows: number): Promise<void> => {
    const response = await get(url)
    t.equal(response.statusCode, 200, url)
    t.equal(response.headers['content-range'], range, url)
    t.equal(response.headers['access-control-expose-headers'], 'Content-Range', url)
    t.equal(json(response).rows.length, rows, url)
  }
  await expectRange('/tickets/?__range_header=1', 'ticket 0-14/100', 15)
  await expectRange('/tickets/?__range_header=true&__page=2', 'ticket 15-29/100', 15)
  await expectRange('/tickets/?__range_header=yes&__page=7', 'ticket 90-99/100', 10)
  await expectRange('/tickets/?__range_header=1&__page=8', 'ticket 105-105/100', 0)
  await expectRange('/tickets/?__range_header=1&__page_size=50&__page=2', 'ticket 50-99/100', 50)
  await expectRange('/tickets/?__range_header=1&__page_size=50&__page=3', 'ticket 100-100/100', 0)
  await expectRange('/tickets/?__range_header=1&row_letter=A&__page_size=10&__page=2', 'ticket 10-19/20', 10)
  await expectRange('/tickets/?__range_header=1&seat__operator=gt&seat=95', 'ticket 0-4/5', 5)
  await expectRange('/tickets/?__range_header=1&seat__operator=gt&seat=95&__page=2', 'ticket 15-15/5', 0)
  await expectRange('/tickets/?__range_header=1&seat=1000', 'ticket 0-0/0', 0)
  await expectRange('/tickets/?__range_header=1&seat=1000&__page=3', 'ticket 30-30/0', 0)
  await expectRange('/tickets/?__range_header=1&__range_header_name=seats', 'seats 0-14/100', 15)
  await expectRange('/tickets/?__range_header=1&__range_header_name=', 'ticket 0-14/100', 15)
  await expectRange('/movies/?__range_header=1&__page_size=2&__page=2', 'movie 2-3/5', 2)
  await expectRange('/movies/?__range_header=1&__visible_fields=director.name&__readable=1&genre=sci', 'movie 0-1/2', 2)
  for (const url of ['/tickets/', '/tickets/?__range_header=0', '/tickets/?__range_header=false&__range_header_name=x']) {
    const response = await get(url)
    t.equal(response.headers['content-range'], undefined, url)
    t.equal(response.headers['access-control-expose-headers'], undefined, url)
  }
  await expectError(t, '/tickets/?__range_header=2', 400, 'TABLECRUD_ERR_QS_INVALID_BOOLEAN', '__range_header must be true or false.')
  await expectError(t, '/tickets/?__range_header=1&__range_header=1', 400, 'TABLECRUD_ERR_QS_REPEATED', '__range_header is given more than once.')
  await expectError(t, '/tickets/?__range_header=1&__range_header_name=a&__range_header_name=b', 400, 'TABLECRUD_ERR_QS_REPEATED', '__range_header_name is given more than once.')
})

t.test('Access-Control-Expose-Headers keeps the names already there', async (t) => {
  const expose = async (given: string | undefined, wanted: string): Promise<void> => {
    const headers: Record<string, string> = given === undefined ? {} : { 'x-expose': given }
    const response = await app.inject({ url: '/exposed/?__range_header=1', headers })
    t.equal(response.statusCode, 200)
    t.equal(response.headers['content-range'], 'ticket 0-14/100')
    t.equal(response.headers['access-control-expose-headers'], wanted, String(given))
  }
  await expose(undefined, 'X-Foo, Content-Range')
  await expose('X-Foo, X-Bar', 'X-Foo, X-Bar, Content-Range')
  await expose('Content-Range, X-Foo', 'Content-Range, X-Foo')
  await expose('x-foo,content-range', 'x-foo,content-range')
  const without = await app.inject({ url: '/exposed/' })
  t.equal(without.headers['access-control-expose-headers'], 'X-Foo', 'left alone without a range header')
})

t.test('control parameters other than __order and __visible_fields may not repeat', async (t) => {
  await expectBadQuery(t, '__page_size=2&__page_size=3', 'TABLECRUD_ERR_QS_REPEATED', '__page_size is given more than once.')
  await expectMovies(t, '__order=-year&__order=id&__visible_fields=', [5, 4, 3, 1, 2])
  await expectOk(t, '/movies/?__visible_fields=id&__visible_fields=id&__page_size=2', { rows: pick(movies(5, 4), 'id') })
})
