import t from 'tap'
import { HttpError } from '../../../lib/errors.js'
import { testDatabase } from '../../helpers/db.js'
import { countOf, create, errorOf, json, movie, moviesApp, rowsOf } from './write-fixtures.js'

/** PUT and PATCH `/:id/` (SPEC §2.6) and the order of checks (§6.14). */

const db = await testDatabase(t)

const JSON_TYPE = 'application/json; charset=utf-8'
const ID_INVALID = errorOf(400, 'TABLECRUD_ERR_ID_INVALID', 'Bad Request', 'The ID is invalid')
const MISMATCH = (name: string): Record<string, unknown> => errorOf(400, 'TABLECRUD_ERR_BODY_ID_MISMATCH', 'Bad Request', `The body ${name} differs from the id in the path.`)
const invalid = (errors: Array<[string, string]>): Record<string, unknown> => errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request',
  `The body is invalid: ${errors.map(([field, message]) => `${field} ${message}`).join('; ')}`,
  { errors: errors.map(([field, message]) => ({ field, message })) })
const notFound = (table: string, id: string): Record<string, unknown> => errorOf(404, 'TABLECRUD_ERR_ROW_NOT_FOUND', 'Not Found', `No ${table} row has the id ${id}.`)

/** A movie with every column set away from its default. */
async function fullMovie (app: Parameters<typeof create>[0], name = 'Star Wars'): Promise<Record<string, unknown>> {
  const people = await app.inject({ method: 'GET', url: '/persons/?name__match=exact&name=George' })
  const director = json(people).rows[0] ?? await create(app, '/persons', { name: 'George' })
  if ((await app.inject({ method: 'GET', url: '/studios/lf/' })).statusCode === 404) await create(app, '/studios', { code: 'lf', name: 'Lucasfilm' })
  return await create(app, '/movies', {
    name,
    genre: 'action',
    synopsis: 'Space',
    duration: 121,
    rating: 8.5,
    box_office: '775.40',
    oscar: true,
    released: '1977-05-25T10:00:00',
    director: director.id,
    studio: 'lf',
    tags: ['space'],
    grid: [[1]],
    contact: 'g@example.com',
    password: 'secret'
  })
}

t.test('PUT replaces the row: given columns set, left-out ones back to their defaults', async (t) => {
  const app = await moviesApp(t, db)
  const before = await fullMovie(app)
  const res = await app.inject({ method: 'PUT', url: '/movies/1/', payload: { name: 'A New Hope', duration: 125 } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], JSON_TYPE)
  t.equal(res.headers.location, undefined)
  const body = json(res)
  t.not(body.released, before.released, 'a left-out timestamp is now again')
  t.ok(Math.abs(Date.parse(body.released + 'Z') - Date.now()) < 60_000, body.released)
  t.strictSame(body, {
    id: 1,
    name: 'A New Hope',
    genre: 'drama',
    synopsis: '',
    duration: 125,
    rating: null,
    box_office: '0.00',
    oscar: false,
    released: body.released,
    director: null,
    studio: null,
    tags: [],
    grid: [],
    contact: null
  })
  t.strictSame(json(await app.inject({ method: 'GET', url: '/movies/1/' })), body, 'the answer is the row as GET returns it')
  t.equal((await rowsOf(app, movie))[0]!.password, 'hidden', 'the secret column is back to its declared default')

  const withKey = await app.inject({ method: 'PUT', url: '/movies/1', payload: { id: 1, name: 'Star Wars', box_office: 12 } })
  t.equal(withKey.statusCode, 200, 'the key in the body may be given when it equals the path id; no trailing slash')
  t.match(json(withKey), { id: 1, name: 'Star Wars', box_office: '12.00' })
})

t.test('PUT: required columns, unknown keys, key mismatch, ids, 404 and 422', async (t) => {
  const app = await moviesApp(t, db)
  const star = await fullMovie(app)
  await fullMovie(app, 'Alien')
  const put = async (url: string, payload: unknown): Promise<{ status: number, body: unknown }> => {
    const res = await app.inject({ method: 'PUT', url, payload: payload as Record<string, unknown> })
    return { status: res.statusCode, body: json(res) }
  }

  t.strictSame(await put('/movies/1/', { synopsis: 'No name' }), { status: 400, body: invalid([['name', 'is required']]) })
  t.strictSame(await put('/movies/1/', { name: 'X', producer: 'Y' }), { status: 400, body: invalid([['producer', 'is not a writable column']]) })
  t.strictSame(await put('/movies/1/', { name: 'X', synopsis: null }), { status: 400, body: invalid([['synopsis', 'must be string']]) })
  t.strictSame(await put('/movies/1/', { name: 'X', box_office: '0.001' }),
    { status: 400, body: invalid([['box_office', 'must be a decimal with at most 6 digits before the point and 2 after it']]) })
  t.strictSame(await put('/movies/1/', { id: 2, name: 'X' }), { status: 400, body: MISMATCH('id') })
  t.strictSame(await put('/movies/1/', { id: '1', name: 'X' }), { status: 400, body: invalid([['id', 'must be integer']]) })
  t.strictSame(await put('/movies/1/', { id: null, name: 'X' }), { status: 400, body: invalid([['id', 'must be integer']]) })
  for (const id of ['abc', '0', '-1', '1.5', '2147483648', '1e3']) {
    t.strictSame(await put(`/movies/${id}/`, { name: 'X' }), { status: 400, body: ID_INVALID }, `id ${id}`)
  }
  t.strictSame(await put('/movies/99/', { name: 'X' }), { status: 404, body: notFound('movie', '99') })
  t.strictSame(await put('/movies/2/', { name: 'Star Wars' }), {
    status: 422,
    body: errorOf(422, 'TABLECRUD_ERR_DB_UNIQUE', 'Unprocessable Entity', 'duplicate key value violates unique constraint "movie_name_key"',
      { details: { constraint: 'movie_name_key', columns: ['name'], detail: 'Key (name)=(Star Wars) already exists.' } })
  })
  t.strictSame(await put('/movies/2/', { name: 'Alien', director: 42 }), {
    status: 422,
    body: errorOf(422, 'TABLECRUD_ERR_DB_FOREIGN_KEY', 'Unprocessable Entity', 'insert or update on table "movie" violates foreign key constraint "movie_director_fkey"',
      { details: { constraint: 'movie_director_fkey', columns: ['director'], detail: 'Key (director)=(42) is not present in table "person".' } })
  })
  const text = await app.inject({ method: 'PUT', url: '/movies/1/', payload: 'name=X', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(text.statusCode, 415)
  t.equal(json(text).code, 'TABLECRUD_ERR_BODY_MEDIA_TYPE')
  const notJson = await app.inject({ method: 'PUT', url: '/movies/1/', payload: '{"name"', headers: { 'content-type': 'application/json' } })
  t.equal(notJson.statusCode, 400)
  t.strictSame(json(notJson), errorOf(400, 'TABLECRUD_ERR_BODY_NOT_JSON', 'Bad Request', 'The body is not valid JSON.'))

  t.strictSame(json(await app.inject({ method: 'GET', url: '/movies/1/' })), star, 'the row is unchanged by every refused PUT')
  t.equal(await countOf(app, movie), 2)
})

t.test('PUT and PATCH on a varchar primary key', async (t) => {
  const app = await moviesApp(t, db)
  await create(app, '/studios', { code: 'lf', name: 'Lucasfilm' })
  const put = await app.inject({ method: 'PUT', url: '/studios/lf/', payload: { name: 'Lucasfilm Ltd.' } })
  t.equal(put.statusCode, 200)
  t.strictSame(json(put), { code: 'lf', name: 'Lucasfilm Ltd.' })
  const same = await app.inject({ method: 'PUT', url: '/studios/lf/', payload: { code: 'lf', name: 'LF' } })
  t.equal(same.statusCode, 200)
  t.strictSame(json(same), { code: 'lf', name: 'LF' })
  const other = await app.inject({ method: 'PATCH', url: '/studios/lf/', payload: { code: 'pixar' } })
  t.equal(other.statusCode, 400)
  t.strictSame(json(other), MISMATCH('code'))
  const long = await app.inject({ method: 'PATCH', url: '/studios/abcdefghijk/', payload: { name: 'X' } })
  t.equal(long.statusCode, 400, 'longer than the varchar key: not an id')
  t.strictSame(json(long), ID_INVALID)
  const missing = await app.inject({ method: 'PATCH', url: '/studios/pixar/', payload: { name: 'Pixar' } })
  t.equal(missing.statusCode, 404)
  t.strictSame(json(missing), notFound('studio', '"pixar"'))
  t.strictSame(json(await app.inject({ method: 'GET', url: '/studios/lf/' })), { code: 'lf', name: 'LF' })
})

t.test('PATCH changes only the given columns; {} returns the row unchanged', async (t) => {
  const app = await moviesApp(t, db)
  const before = await fullMovie(app)
  const empty = await app.inject({ method: 'PATCH', url: '/movies/1/', payload: {} })
  t.equal(empty.statusCode, 200)
  t.equal(empty.headers['content-type'], JSON_TYPE)
  t.strictSame(json(empty), before)

  const res = await app.inject({ method: 'PATCH', url: '/movies/1/', payload: { rating: null, box_office: 1.5, tags: ['a', 'b'], grid: [[1, 2], [3, 4]] } })
  t.equal(res.statusCode, 200)
  const expected = { ...before, rating: null, box_office: '1.50', tags: ['a', 'b'], grid: [[1, 2], [3, 4]] }
  t.strictSame(json(res), expected)
  t.strictSame(json(await app.inject({ method: 'GET', url: '/movies/1/' })), expected, 'the answer is the row as GET returns it')
  t.equal((await rowsOf(app, movie))[0]!.password, 'secret', 'columns left out keep their value, secret ones too')

  const withKey = await app.inject({ method: 'PATCH', url: '/movies/1', payload: { id: 1, oscar: false } })
  t.equal(withKey.statusCode, 200)
  t.strictSame(json(withKey), { ...expected, oscar: false })

  const secret = await app.inject({ method: 'PATCH', url: '/movies/1/', payload: { password: 'changed' } })
  t.equal(secret.statusCode, 200)
  t.strictSame(json(secret), { ...expected, oscar: false }, 'writing only a secret column answers the row without it')
  t.equal((await rowsOf(app, movie))[0]!.password, 'changed')
})

t.test('PATCH: validation, key mismatch, ids, 404 and 422 change nothing', async (t) => {
  const app = await moviesApp(t, db)
  const star = await fullMovie(app)
  await fullMovie(app, 'Alien')
  const patch = async (url: string, payload: unknown): Promise<{ status: number, body: unknown }> => {
    const res = await app.inject({ method: 'PATCH', url, payload: payload as Record<string, unknown> })
    return { status: res.statusCode, body: json(res) }
  }
  t.strictSame(await patch('/movies/1/', { name: null }), { status: 400, body: invalid([['name', 'must be string']]) })
  t.strictSame(await patch('/movies/1/', { rating: '9' }), { status: 400, body: invalid([['rating', 'must be number or null']]) })
  t.strictSame(await patch('/movies/1/', { genre: 'horror', is_admin: true }),
    { status: 400, body: invalid([['is_admin', 'is not a writable column'], ['genre', 'must be equal to one of the allowed values']]) })
  t.strictSame(await patch('/movies/1/', { duration: 2 ** 31 }), { status: 400, body: invalid([['duration', 'must be <= 2147483647']]) })
  t.strictSame(await patch('/movies/1/', { id: 2 }), { status: 400, body: MISMATCH('id') })
  for (const id of ['abc', '0', '99999999999', ' 1']) {
    t.strictSame(await patch(`/movies/${encodeURIComponent(id)}/`, { rating: 1 }), { status: 400, body: ID_INVALID }, `id ${JSON.stringify(id)}`)
  }
  t.strictSame(await patch('/movies/99/', { rating: 1 }), { status: 404, body: notFound('movie', '99') })
  t.strictSame(await patch('/movies/99/', {}), { status: 404, body: notFound('movie', '99') }, 'an empty PATCH of a missing row')
  t.strictSame(await patch('/movies/1/', { name: 'Alien' }), {
    status: 422,
    body: errorOf(422, 'TABLECRUD_ERR_DB_UNIQUE', 'Unprocessable Entity', 'duplicate key value violates unique constraint "movie_name_key"',
      { details: { constraint: 'movie_name_key', columns: ['name'], detail: 'Key (name)=(Alien) already exists.' } })
  })
  t.strictSame(await patch('/movies/1/', { studio: 'nope' }), {
    status: 422,
    body: errorOf(422, 'TABLECRUD_ERR_DB_FOREIGN_KEY', 'Unprocessable Entity', 'insert or update on table "movie" violates foreign key constraint "movie_studio_fkey"',
      { details: { constraint: 'movie_studio_fkey', columns: ['studio'], detail: 'Key (studio)=(nope) is not present in table "studio".' } })
  })
  await app.pg.query('ALTER TABLE movie ADD CONSTRAINT movie_rating_range CHECK (rating BETWEEN 0 AND 10)')
  t.strictSame(await patch('/movies/1/', { rating: 11 }), {
    status: 422,
    body: errorOf(422, 'TABLECRUD_ERR_DB_CHECK', 'Unprocessable Entity', 'new row for relation "movie" violates check constraint "movie_rating_range"',
      { details: { constraint: 'movie_rating_range', columns: [], detail: null } })
  })
  const jagged = await patch('/movies/1/', { grid: [[1], [2, 3]] })
  t.equal(jagged.status, 400)
  // Issue 18: caught by body validation, naming the field, before PostgreSQL's "malformed array literal".
  t.match(jagged.body, { code: 'TABLECRUD_ERR_BODY_INVALID', message: /^The body is invalid: grid must be a rectangular array/ })
  const text = await app.inject({ method: 'PATCH', url: '/movies/1/', payload: 'rating=1', headers: { 'content-type': 'text/plain' } })
  t.equal(text.statusCode, 415)
  t.equal(json(text).code, 'TABLECRUD_ERR_BODY_MEDIA_TYPE')

  t.strictSame(json(await app.inject({ method: 'GET', url: '/movies/1/' })), star, 'the row is unchanged by every refused PATCH')
})

t.test('order of checks (§6.14): body, then validators, then the id, then the row', async (t) => {
  const refuse = new HttpError(403, 'Not yours')
  let refusing = false
  const validator = (): void => { if (refusing) throw refuse }
  const app = await moviesApp(t, db, { validators: { putSingle: [validator], patchSingle: [validator], deleteSingle: [validator] } })
  await fullMovie(app)
  const send = async (method: 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown): Promise<{ status: number, code: string }> => {
    const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
    return { status: res.statusCode, code: json(res).code }
  }

  t.strictSame(await send('PUT', '/movies/abc/', { name: 5 }), { status: 400, code: 'TABLECRUD_ERR_BODY_INVALID' }, 'a bad body before a bad id')
  t.strictSame(await send('PATCH', '/movies/abc/', { nope: 1 }), { status: 400, code: 'TABLECRUD_ERR_BODY_INVALID' })
  t.strictSame(await send('PATCH', '/movies/abc/', { box_office: '1.001' }), { status: 400, code: 'TABLECRUD_ERR_BODY_INVALID' }, 'Numeric scale is body validation too')
  t.strictSame(await send('PUT', '/movies/abc/', { name: 'X' }), { status: 400, code: 'TABLECRUD_ERR_ID_INVALID' })
  t.strictSame(await send('PATCH', '/movies/2/', { id: 3 }), { status: 400, code: 'TABLECRUD_ERR_BODY_ID_MISMATCH' }, 'a key mismatch before the row lookup')

  refusing = true
  t.strictSame(await send('PATCH', '/movies/abc/', { nope: 1 }), { status: 400, code: 'TABLECRUD_ERR_BODY_INVALID' }, 'body validation before validators')
  const text = await app.inject({ method: 'PUT', url: '/movies/1/', payload: 'x', headers: { 'content-type': 'text/plain' } })
  t.equal(text.statusCode, 415, 'the media type before validators')
  t.strictSame(await send('PUT', '/movies/abc/', { name: 'X' }), { status: 403, code: 'TABLECRUD_ERR_REFUSED' }, 'validators before the id')
  t.strictSame(await send('PATCH', '/movies/0/', {}), { status: 403, code: 'TABLECRUD_ERR_REFUSED' })
  t.strictSame(await send('DELETE', '/movies/abc/'), { status: 403, code: 'TABLECRUD_ERR_REFUSED' })
  t.strictSame(await send('PUT', '/movies/99/', { name: 'X' }), { status: 403, code: 'TABLECRUD_ERR_REFUSED' }, 'validators before the row lookup')
  t.strictSame(await send('PATCH', '/movies/1/', { id: 2 }), { status: 403, code: 'TABLECRUD_ERR_REFUSED' }, 'validators before the key comparison')
  const refused = await app.inject({ method: 'PATCH', url: '/movies/1/', payload: { name: 'Changed' } })
  t.strictSame(json(refused), errorOf(403, 'TABLECRUD_ERR_REFUSED', 'Forbidden', 'Not yours'))
  t.equal((await rowsOf(app, movie))[0]!.name, 'Star Wars', 'nothing written')
})

t.test('twenty concurrent PATCHes of one row all answer 200; the row ends in one written state', async (t) => {
  const app = await moviesApp(t, db)
  await fullMovie(app)
  const writes = Array.from({ length: 20 }, (_, i) => ({ duration: i, synopsis: `take ${i}`, tags: [`t${i}`] }))
  const answers = await Promise.all(writes.map(async (payload) => await app.inject({ method: 'PATCH', url: '/movies/1/', payload })))
  answers.forEach((res, i) => {
    t.equal(res.statusCode, 200, `PATCH ${i}`)
    t.match(json(res), { id: 1, name: 'Star Wars', ...writes[i] }, `PATCH ${i} answers its own write`)
  })
  const final = json(await app.inject({ method: 'GET', url: '/movies/1/' }))
  const k = final.duration as number
  t.ok(Number.isInteger(k) && k >= 0 && k < 20, `duration ${k} is one of the written values`)
  t.match(final, writes[k], 'every column of the row comes from the same write')
  t.equal(await countOf(app, movie), 1)
})
