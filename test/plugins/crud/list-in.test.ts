import t, { type Test } from 'tap'
import pg from 'pg'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { byIdDescending, movie, MOVIE_ROWS, requests, seededApp, ticket, ticketRow, type Row } from '../../fixtures/movies.js'

/*
 * The `in` and `not_in` operators of SPEC §7.6 on GET `/`, `/count/` and bulk DELETE: one
 * array parameter whatever the number of values, each value parsed as its column's type.
 */

const { app } = await seededApp(t, async (app) => {
  await app.register(tableCrud, { table: ticket, prefix: '/tickets', maxPageSize: 1000 })
  await app.register(tableCrud, { table: ticket, prefix: '/small', maxPageSize: 3, pageSize: 3, readOnly: false, allowBulkDelete: true })
  await app.register(tableCrud, { table: movie, prefix: '/movies' })
})
const { get, expectOk, expectError } = requests(app)

const expectMovies = async (t: Test, query: string, keep: (row: Row) => boolean): Promise<unknown> =>
  await expectOk(t, `/movies/?${query}`, { rows: byIdDescending(MOVIE_ROWS.filter(keep)) })
const expectBad = async (t: Test, query: string, code: string, message: string): Promise<unknown> =>
  await expectError(t, `/movies/?${query}`, 400, code, message)

t.test('in: the rows whose value is one of the values, each parsed as the column type', async (t) => {
  await expectMovies(t, 'year__operator=in&year=1977&year=2003&year=1', (r) => [1977, 2003].includes(r.year as number))
  await expectMovies(t, 'year=1977&year__operator=in', (r) => r.year === 1977)
  await expectMovies(t, 'rating__operator=in&rating=8.6&rating=-1.25', (r) => [8.6, -1.25].includes(r.rating as number))
  await expectMovies(t, 'box_office__operator=in&box_office=0&box_office=-12.5', (r) => ['0.00', '-12.50'].includes(r.box_office as string))
  await expectMovies(t, 'released__operator=in&released=no', (r) => r.released === false)
  await expectMovies(t, 'premiere__operator=in&premiere=1971-03-11T12:30:00.5&premiere=2020-01-01', (r) => r.id === 2 || r.id === 4)
  await expectMovies(t, 'studio__operator=in&studio=ZOE&studio=A24', (r) => r.studio === 'ZOE' || r.studio === 'A24')
  await expectMovies(t, 'director__operator=in&director=2', (r) => r.director === 2)
  await expectMovies(t, 'id__operator=in&id=5&id=1&id=5', (r) => r.id === 1 || r.id === 5)
})

t.test('in on text compares exactly, case-sensitive, with % and _ literal', async (t) => {
  await expectMovies(t, 'name__operator=in&name=Star%20Wars&name=thx%201138', (r) => r.name === 'Star Wars')
  await expectMovies(t, 'name__operator=in&name=100%25%20_x_', (r) => r.name === '100% _x_')
  await expectMovies(t, 'name__operator=in&name=Star', () => false)
  // __match says how `e` compares; with `in` it changes nothing.
  await expectMovies(t, 'name__operator=in&name=Star%20Wars&name__match=starts', (r) => r.name === 'Star Wars')
})

t.test('not_in: the rows whose value is none of them; NULL is no value, so not among them either', async (t) => {
  await expectMovies(t, 'year__operator=not_in&year=1977&year=2003', (r) => ![1977, 2003].includes(r.year as number))
  await expectMovies(t, 'rating__operator=not_in&rating=8.6', (r) => r.rating !== null && r.rating !== 8.6)
  await expectMovies(t, 'name__operator=not_in&name=star%20wars', () => true)
  await expectMovies(t, 'studio__operator=not_in&studio=ZOE', (r) => r.studio !== null && r.studio !== 'ZOE')
})

t.test('/count/ and bulk DELETE take them too', async (t) => {
  const count = await get('/movies/count/?year__operator=in&year=1977&year=1971')
  t.strictSame(JSON.parse(count.body), { count: 2, page_size: 15 })
  const deleted = await app.inject({ method: 'DELETE', url: '/small/?seat__operator=in&seat=99&seat=100' })
  t.equal(deleted.statusCode, 204)
  t.equal(deleted.headers['x-deleted-count'], '2')
  await expectOk(t, '/tickets/?id__operator=in&id=98&id=99&id=100', { rows: [ticketRow(98)] })
})

t.test('the 400s: a bad value, no value, too many values, an array or a repeat without in', async (t) => {
  await expectBad(t, 'year__operator=in&year=1977&year=x', 'TABLECRUD_ERR_QS_INVALID_VALUE', 'The value "x" of year is not a valid 32-bit integer.')
  await expectBad(t, 'year__operator=in', 'TABLECRUD_ERR_QS_MISSING_VALUE', 'year__operator=in needs a value for year.')
  await expectBad(t, 'year__operator=not_in&year=', 'TABLECRUD_ERR_QS_MISSING_VALUE', 'year__operator=not_in needs a value for year.')
  await expectBad(t, 'tags__operator=in&tags=x', 'TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE', 'The operator in does not apply to tags (type array).')
  await expectBad(t, 'tags__operator=not_in&tags=x&tags=y', 'TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE', 'The operator not_in does not apply to tags (type array).')
  await expectBad(t, 'year=1&year=2', 'TABLECRUD_ERR_QS_REPEATED', 'year is given more than once.')
  await expectBad(t, 'year__operator=ne&year=1&year=2', 'TABLECRUD_ERR_QS_REPEATED', 'year is given more than once.')
  await expectBad(t, 'year=1&year=2&year__operator=in&year__operator=in', 'TABLECRUD_ERR_QS_REPEATED', 'year is given more than once.')
  await expectBad(t, 'year__operator=In&year=1', 'TABLECRUD_ERR_QS_UNKNOWN_OPERATOR', '"In" is not an operator: use one of e, ne, lt, lte, gt, gte, is_null, not_null, in, not_in, search.')
  await expectError(t, '/small/?seat__operator=in&seat=1&seat=2&seat=3&seat=4', 400, 'TABLECRUD_ERR_QS_TOO_MANY_VALUES', 'seat is given more than 3 times.')
  const three = await get('/small/?seat__operator=in&seat=1&seat=2&seat=3')
  t.equal(three.statusCode, 200, 'maxPageSize values are fine')
})

t.test('1 value and 1,000 values run as the same prepared statement', async (t) => {
  const named: Array<{ name: string, text: string }> = []
  const query = pg.Client.prototype.query
  // Every statement the app sends passes through pg's Client#query: count the named ones with ANY.
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as { name?: string, text?: string }
    if (typeof config === 'object' && config?.text?.includes('= ANY(') === true) named.push({ name: config.name!, text: config.text })
    return (query as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof query
  t.teardown(() => { pg.Client.prototype.query = query })
  const ids = Array.from({ length: 1000 }, (_, i) => `id=${i + 1}`).join('&')
  const one = await get('/tickets/?id__operator=in&id=7&__page_size=1000')
  t.strictSame(JSON.parse(one.body), { rows: [ticketRow(7)] })
  const thousand = await get(`/tickets/?id__operator=in&${ids}&__page_size=1000`)
  t.equal(thousand.statusCode, 200)
  t.equal(JSON.parse(thousand.body).rows.length, 98, 'every ticket the bulk DELETE above left, the unknown ids matching none')
  t.equal(named.length, 2)
  t.equal(new Set(named.map((n) => n.name)).size, 1, 'one statement name')
  t.equal(named[0]!.text, named[1]!.text)
  t.match(named[0]!.text, /= ANY\(\$1::integer\[\]\)/)
})
