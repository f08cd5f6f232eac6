import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { testDatabase } from '../../helpers/db.js'
import { countOf, create, errorOf, json, movie, moviesApp, person, rowsOf, studio } from './write-fixtures.js'

/** DELETE `/:id/` and DELETE `/` (SPEC §2.7, §6.13). */

const db = await testDatabase(t)

const ID_INVALID = errorOf(400, 'TABLECRUD_ERR_ID_INVALID', 'Bad Request', 'The ID is invalid')
const MISSING_FILTER = errorOf(400, 'TABLECRUD_ERR_QS_MISSING_FILTER', 'Bad Request',
  'A bulk delete needs at least one filter; to delete every row, filter on the primary key with not_null.')

const names = async (app: FastifyInstance): Promise<unknown[]> => (await rowsOf(app, movie)).map((r) => r.name)

/** Four movies: two action, two drama; Alien and Heat by person 1 (a RESTRICT reference). */
async function seed (app: FastifyInstance): Promise<void> {
  const ridley = await create(app, '/persons', { name: 'Ridley' })
  await create(app, '/movies', { name: 'Alien', genre: 'action', duration: 117, director: ridley.id, tags: ['space', 'scary'] })
  await create(app, '/movies', { name: 'Amelie', genre: 'drama', duration: 122, tags: ['paris'] })
  await create(app, '/movies', { name: 'Heat', genre: 'action', duration: 170, director: ridley.id })
  await create(app, '/movies', { name: 'Ikiru', genre: 'drama', duration: 143, rating: 8.3 })
}

t.test('DELETE /:id/: 204 without a body, then 404', async (t) => {
  const app = await moviesApp(t, db)
  await seed(app)
  const res = await app.inject({ method: 'DELETE', url: '/movies/2/' })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  t.equal(res.headers['content-type'], undefined)
  t.equal(res.headers['content-length'], undefined)
  t.strictSame(await names(app), ['Alien', 'Heat', 'Ikiru'])

  const get = await app.inject({ method: 'GET', url: '/movies/2/' })
  t.equal(get.statusCode, 404)
  const again = await app.inject({ method: 'DELETE', url: '/movies/2/' })
  t.equal(again.statusCode, 404)
  t.strictSame(json(again), errorOf(404, 'TABLECRUD_ERR_ROW_NOT_FOUND', 'Not Found', 'No movie row has the id 2.'))

  const noSlash = await app.inject({ method: 'DELETE', url: '/movies/4' })
  t.equal(noSlash.statusCode, 204, 'the path without its trailing slash')
  t.strictSame(await names(app), ['Alien', 'Heat'])
})

t.test('DELETE /:id/: an invalid id is a 400; nothing deleted', async (t) => {
  const app = await moviesApp(t, db)
  await seed(app)
  for (const id of ['abc', '0', '-1', '2147483648', '1.0', '0x1']) {
    const res = await app.inject({ method: 'DELETE', url: `/movies/${id}/` })
    t.equal(res.statusCode, 400, id)
    t.strictSame(json(res), ID_INVALID, id)
  }
  const long = await app.inject({ method: 'DELETE', url: '/studios/abcdefghijk/' })
  t.equal(long.statusCode, 400)
  t.strictSame(json(long), ID_INVALID)
  t.equal(await countOf(app, movie), 4)
})

t.test('DELETE /:id/ blocked by a RESTRICT foreign key: 422, and the row is still there', async (t) => {
  const app = await moviesApp(t, db)
  await seed(app)
  const res = await app.inject({ method: 'DELETE', url: '/persons/1/' })
  t.equal(res.statusCode, 422)
  t.strictSame(json(res), errorOf(422, 'TABLECRUD_ERR_DB_FOREIGN_KEY', 'Unprocessable Entity',
    'update or delete on table "person" violates foreign key constraint "movie_director_fkey" on table "movie"',
    { details: { constraint: 'movie_director_fkey', columns: ['id'], detail: 'Key (id)=(1) is still referenced from table "movie".' } }))
  const still = await app.inject({ method: 'GET', url: '/persons/1/' })
  t.equal(still.statusCode, 200)
  t.strictSame(json(still), { id: 1, name: 'Ridley' })

  await create(app, '/studios', { code: 'lf', name: 'Lucasfilm' })
  await create(app, '/studios', { code: 'px', name: 'Pixar' })
  await app.inject({ method: 'PATCH', url: '/movies/1/', payload: { studio: 'lf' } })
  const studioRes = await app.inject({ method: 'DELETE', url: '/studios/lf/' })
  t.equal(studioRes.statusCode, 422)
  t.match(json(studioRes), { code: 'TABLECRUD_ERR_DB_FOREIGN_KEY', details: { constraint: 'movie_studio_fkey', columns: ['code'] } })
  const pixar = await app.inject({ method: 'DELETE', url: '/studios/px/' })
  t.equal(pixar.statusCode, 204, 'a varchar key')
  t.strictSame((await rowsOf(app, studio)).map((r) => r.code), ['lf'])

  t.equal((await app.inject({ method: 'DELETE', url: '/movies/1/' })).statusCode, 204)
  t.equal((await app.inject({ method: 'DELETE', url: '/movies/3/' })).statusCode, 204)
  t.equal((await app.inject({ method: 'DELETE', url: '/persons/1/' })).statusCode, 204, 'once nothing refers to it')
  t.equal(await countOf(app, person), 0)
})

t.test('bulk DELETE / is a 405 unless allowBulkDelete', async (t) => {
  const app = await moviesApp(t, db)
  await seed(app)
  const res = await app.inject({ method: 'DELETE', url: '/movies/?genre=drama' })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, HEAD, POST')
  t.strictSame(json(res), errorOf(405, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', 'Method Not Allowed', 'DELETE is not allowed on /movies/.'))
  const bare = await app.inject({ method: 'DELETE', url: '/movies' })
  t.equal(bare.statusCode, 405)
  t.equal(bare.headers.allow, 'GET, HEAD, POST')
  t.equal(await countOf(app, movie), 4)
})

t.test('bulk DELETE /: the filters of GET /, 204 and X-Deleted-Count', async (t) => {
  const app = await moviesApp(t, db, { allowBulkDelete: true })
  await seed(app)
  const deletes = async (query: string): Promise<[number, unknown, string]> => {
    const res = await app.inject({ method: 'DELETE', url: `/movies/?${query}` })
    return [res.statusCode, res.headers['x-deleted-count'], res.body]
  }
  const listed = json(await app.inject({ method: 'GET', url: '/movies/?genre=drama&name__match=starts&name=A' })).rows.map((r: { name: string }) => r.name)
  t.strictSame(listed, ['Amelie'], 'GET / with the same filters')
  t.strictSame(await deletes('genre=drama&name__match=starts&name=A'), [204, '1', ''])
  t.strictSame(await names(app), ['Alien', 'Heat', 'Ikiru'])

  t.strictSame(await deletes('name=nothing-like-this'), [204, '0', ''], 'no match: nothing deleted')
  t.strictSame(await deletes('duration__operator=gt&duration=150'), [204, '1', ''])
  t.strictSame(await names(app), ['Alien', 'Ikiru'])
  t.strictSame(await deletes('rating__operator=is_null'), [204, '1', ''])
  t.strictSame(await names(app), ['Ikiru'])

  const noSlash = await app.inject({ method: 'DELETE', url: '/movies?id__operator=not_null' })
  t.equal(noSlash.statusCode, 204)
  t.equal(noSlash.headers['x-deleted-count'], '1', 'every row, asked for explicitly')
  t.equal(await countOf(app, movie), 0)
})

t.test('bulk DELETE /: no filter is a 400 (a documented decision); bad filters are the 400s of GET /', async (t) => {
  const app = await moviesApp(t, db, { allowBulkDelete: true })
  await seed(app)
  for (const url of ['/movies/', '/movies', '/movies/?__order=name', '/movies/?__page=2&__page_size=1']) {
    const res = await app.inject({ method: 'DELETE', url })
    t.equal(res.statusCode, 400, url)
    t.strictSame(json(res), MISSING_FILTER, url)
    t.equal(res.headers['x-deleted-count'], undefined)
  }
  const unknown = await app.inject({ method: 'DELETE', url: '/movies/?password=x' })
  t.equal(unknown.statusCode, 400)
  t.match(json(unknown), { statusCode: 400, code: 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', message: "password isn't a valid field name." }, 'secret columns are not filters')
  const badValue = await app.inject({ method: 'DELETE', url: '/movies/?duration=long' })
  t.equal(badValue.statusCode, 400)
  t.equal(json(badValue).code, 'TABLECRUD_ERR_QS_INVALID_VALUE')
  const badOperator = await app.inject({ method: 'DELETE', url: '/movies/?genre__operator=gt&genre=a' })
  t.equal(badOperator.statusCode, 400)
  t.equal(json(badOperator).code, 'TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE')
  t.equal(await countOf(app, movie), 4, 'nothing deleted')
})

t.test('bulk DELETE /: a RESTRICT violation by one matched row deletes none of them', async (t) => {
  const app = await moviesApp(t, db, { allowBulkDelete: true })
  await seed(app)
  await create(app, '/reviews', { movie: 3, reviewer: 'critic@example.com' })
  const res = await app.inject({ method: 'DELETE', url: '/movies/?genre=action' })
  t.equal(res.statusCode, 422)
  t.equal(res.headers['x-deleted-count'], undefined)
  t.strictSame(json(res), errorOf(422, 'TABLECRUD_ERR_DB_FOREIGN_KEY', 'Unprocessable Entity',
    'update or delete on table "movie" violates foreign key constraint "review_movie_fkey" on table "review"',
    { details: { constraint: 'review_movie_fkey', columns: ['id'], detail: 'Key (id)=(3) is still referenced from table "review".' } }))
  t.strictSame(await names(app), ['Alien', 'Amelie', 'Heat', 'Ikiru'], 'Alien, matched and unreferenced, is still there')
})

t.test('bulk DELETE / on a read-only table is a 405 even with allowBulkDelete', async (t) => {
  const app = await moviesApp(t, db, { allowBulkDelete: true, readOnly: true })
  await app.pg.query("INSERT INTO movie (name) VALUES ('Alien')")
  const res = await app.inject({ method: 'DELETE', url: '/movies/?name=Alien' })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, HEAD')
  t.equal(await countOf(app, movie), 1)
})
