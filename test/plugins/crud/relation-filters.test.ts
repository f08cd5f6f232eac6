import t, { type Test } from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { requests } from '../../fixtures/movies.js'
import { AWARDS, FILM_GENRES, FILMS, GENRES, PEOPLE, film, genre, person, relationalApp, type Row } from '../../fixtures/relational.js'

/*
 * Filters across relations (SPEC §8.2): a to-one path keeps the rows whose related row
 * matches, a to-many path the rows with at least one matching related row (EXISTS), on GET
 * `/`, `/count/`, keyset pages, exports and bulk DELETE. Expected rows are computed here from
 * the seeded data, independently of the SQL.
 */

const { app } = await relationalApp(t, async (app) => {
  await app.register(tableCrud, { table: person, prefix: '/people', maxJoins: 2, readOnly: false, allowBulkDelete: true })
  await app.register(tableCrud, { table: film, prefix: '/films', maxJoins: 2 })
  await app.register(tableCrud, { table: genre, prefix: '/genres', maxJoins: 1 })
  await app.register(tableCrud, { table: film, prefix: '/flat' })
})
const { get, expectError } = requests(app)

const ids = (rows: readonly Row[]): number[] => rows.map((r) => r.id as number).sort((a, b) => b - a)
const personOf = (id: unknown): Row | undefined => PEOPLE.find((p) => p.id === id)
const filmsOf = (personId: unknown): Row[] => FILMS.filter((f) => f.director === personId)
const genresOf = (filmId: unknown): string[] => FILM_GENRES.filter(([f]) => f === filmId).map(([, g]) => GENRES.find((x) => x.id === g)!.name as string)

async function expectIds (t: Test, url: string, expected: readonly Row[]): Promise<void> {
  const response = await get(url)
  t.equal(response.statusCode, 200, `${url} status`)
  t.strictSame(JSON.parse(response.body).rows.map((r: Row) => r.id), ids(expected), url)
}

t.test('a to-one path keeps the rows whose related row matches', async (t) => {
  await expectIds(t, '/films/?director.name=coppola', FILMS.filter((f) => /coppola/i.test(String(personOf(f.director)?.name))))
  await expectIds(t, '/films/?director.name=Sofia%20Coppola&director.name__match=exact', filmsOf(2))
  await expectIds(t, '/films/?director.born__operator=lt&director.born=1950', FILMS.filter((f) => (personOf(f.director)?.born as number) < 1950))
  await expectIds(t, '/films/?director.born__operator=in&director.born=1971&director.born=1939', FILMS.filter((f) => [1971, 1939].includes(personOf(f.director)?.born as number)))
  // Two hops; a film without a director has no director whose mentor matches.
  await expectIds(t, '/films/?director.mentor.name=francis', filmsOf(2))
  // EXISTS semantics: is_null on a path needs a related row whose value is NULL.
  await expectIds(t, '/films/?director.born__operator=is_null', filmsOf(4))
  await expectIds(t, '/films/?director__operator=is_null', FILMS.filter((f) => f.director === null))
})

t.test('a to-many path keeps the rows with at least one matching related row', async (t) => {
  await expectIds(t, '/people/?films.rating__operator=gte&films.rating=8', PEOPLE.filter((p) => filmsOf(p.id).some((f) => (f.rating as number) >= 8)))
  // Conditions on one path hold for the same related row.
  await expectIds(t, '/people/?films.rating__operator=gte&films.rating=7&films.year__operator=gt&films.year=2000',
    PEOPLE.filter((p) => filmsOf(p.id).some((f) => (f.rating as number) >= 7 && (f.year as number) > 2000)))
  await expectIds(t, '/people/?films.tags=classic', PEOPLE.filter((p) => filmsOf(p.id).some((f) => (f.tags as string[]).includes('classic'))))
  await expectIds(t, '/people/?pupils.name=sofia', PEOPLE.filter((p) => PEOPLE.some((q) => q.mentor === p.id && /sofia/i.test(q.name as string))))
  // Many-to-many, then two to-many hops.
  await expectIds(t, '/films/?genres.name=drama&genres.name__match=exact', FILMS.filter((f) => genresOf(f.id).includes('drama')))
  await expectIds(t, '/genres/?films.year__operator=lt&films.year=1975', GENRES.filter((g) => FILM_GENRES.some(([f, x]) => x === g.id && (FILMS[f - 1]!.year as number) < 1975)))
  await expectIds(t, '/people/?films.awards.name=Oscar&films.awards.name__match=exact', PEOPLE.filter((p) => filmsOf(p.id).some((f) => AWARDS.some(([a, n]) => a === f.id && n === 'Oscar'))))
  // A path with a plain filter beside it.
  await expectIds(t, '/people/?films.genres.name=crime&born__operator=lt&born=1940', PEOPLE.filter((p) => p.id === 3))
})

t.test('path filters on /count/, keyset pages, exports and bulk DELETE', async (t) => {
  const count = await get('/people/count/?films.year__operator=gt&films.year=2000')
  t.strictSame(JSON.parse(count.body), { count: 1, page_size: 15 })
  const first = JSON.parse((await get('/people/?films.year__operator=lt&films.year=2010&__cursor=&__page_size=1')).body)
  t.strictSame(first.rows.map((r: Row) => r.id), [3])
  const second = JSON.parse((await get(`/people/?films.year__operator=lt&films.year=2010&__cursor=${String(first.next_cursor)}&__page_size=1`)).body)
  t.strictSame(second.rows.map((r: Row) => r.id), [2])
  // The cursor is bound to the path filter and its value.
  await expectError(t, `/people/?films.year__operator=lt&films.year=2011&__cursor=${String(first.next_cursor)}&__page_size=1`, 400, 'TABLECRUD_ERR_QS_INVALID_CURSOR', "The cursor doesn't match this query.")
  const ndjson = await get('/films/?director.name=lucas&__format=ndjson&__visible_fields=id')
  t.equal(ndjson.body, '{"id":2}\n{"id":1}\n')
  const deleted = await app.inject({ method: 'DELETE', url: '/people/?films.title=nothing-matches' })
  t.equal(deleted.headers['x-deleted-count'], '0')
})

t.test('the 400s name the path; secrets and paths past maxJoins are unknown', async (t) => {
  const valid = JSON.parse((await get('/films/?nope=1')).body).validFields as string[]
  t.strictSame(valid, ['id', 'title', 'year', 'rating', 'director', 'tags'], 'the table\'s own columns (SPEC §6.10)')
  t.notOk(valid.some((v) => v.includes('budget_note') || v.includes('pin') || v.includes('hidden_awards') || v.includes('secret_film')), 'no secret column or relation through a secret key')
  await expectError(t, '/films/?director.pin=1', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "director.pin isn't a valid field name.", { validFields: valid })
  await expectError(t, '/films/?hidden_awards.name=x', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "hidden_awards.name isn't a valid field name.", { validFields: valid })
  await expectError(t, '/films/?director.mentor.mentor.name=x', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "director.mentor.mentor.name isn't a valid field name.", { validFields: valid })
  await expectError(t, '/flat/?director.name=x', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "director.name isn't a valid field name.", { validFields: ['id', 'title', 'year', 'rating', 'director', 'tags'] })
  await expectError(t, '/people/?films.year=x', 400, 'TABLECRUD_ERR_QS_INVALID_VALUE', 'The value "x" of films.year is not a valid 32-bit integer.')
  await expectError(t, '/people/?films.title__operator=lt&films.title=x', 400, 'TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE', 'The operator lt does not apply to films.title (type varchar).')
})

t.test('bulk DELETE through a to-many path deletes the rows it keeps', async (t) => {
  const gone = await app.inject({ method: 'DELETE', url: '/people/?pupils.name=nobody' })
  t.equal(gone.statusCode, 204)
  t.equal(gone.headers['x-deleted-count'], '1')
  // George Lucas went, and what cascades from him: his films and his pupil.
  await expectIds(t, '/people/', PEOPLE.filter((p) => p.id === 2 || p.id === 3))
})
