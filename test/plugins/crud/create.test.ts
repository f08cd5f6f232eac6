import t from 'tap'
import { createHash } from 'node:crypto'
import { column, defineTable } from '../../../lib/table/index.js'
import { DECIMAL_PATTERN, TIMESTAMP_PATTERN } from '../../../schemas/row.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { countOf, create, errorOf, freshApp, json, movie, moviesApp, person, review, rowsOf, studio } from './write-fixtures.js'

/** POST `/` (SPEC §2.5, §6.2, §6.3) and the methods a read-only table refuses (§2.1, §6.13). */

const db = await testDatabase(t)

const JSON_TYPE = 'application/json; charset=utf-8'
const WIRE_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?$/

/** A wire timestamp (UTC, no zone) within a minute of now. */
function isNow (value: unknown): boolean {
  if (typeof value !== 'string' || !WIRE_TIMESTAMP.test(value)) return false
  return Math.abs(Date.parse(value + 'Z') - Date.now()) < 60_000
}

/** The row a POST of `{ name }` alone creates: declared defaults, type defaults, NULLs (§6.2). */
const defaults = (id: number, name: string, released: unknown): Record<string, unknown> => ({
  id,
  name,
  genre: 'drama',
  synopsis: '',
  duration: 0,
  rating: null,
  box_office: '0.00',
  oscar: false,
  released,
  director: null,
  studio: null,
  tags: [],
  grid: [],
  contact: null
})

const invalid = (errors: Array<[string, string]>): Record<string, unknown> => errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request',
  `The body is invalid: ${errors.map(([field, message]) => `${field} ${message}`).join('; ')}`,
  { errors: errors.map(([field, message]) => ({ field, message })) })

t.test('201 with Location and the row as GET /:id/ returns it; left-out columns take their defaults', async (t) => {
  const app = await moviesApp(t, db)
  const res = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Star Wars' } })
  t.equal(res.statusCode, 201)
  t.equal(res.headers.location, '/movies/1/')
  t.equal(res.headers['content-type'], JSON_TYPE)
  const body = json(res)
  t.ok(isNow(body.released), `a left-out NOT NULL timestamp is the current UTC time: ${body.released}`)
  t.strictSame(body, defaults(1, 'Star Wars', body.released))
  t.notOk('password' in body, 'the secret column is absent')

  const got = await app.inject({ method: 'GET', url: res.headers.location as string })
  t.equal(got.statusCode, 200)
  t.strictSame(json(got), body, 'the POST answer is the row as GET returns it')

  const [stored] = await rowsOf(app, movie)
  t.equal(stored!.password, 'hidden', 'the secret column took its declared default')
  t.equal(stored!.rating, null)

  const second = await app.inject({ method: 'POST', url: '/movies', payload: { name: 'Alien' } })
  t.equal(second.statusCode, 201, 'the path without its trailing slash')
  t.equal(second.headers.location, '/movies/2/')
  t.equal(json(second).id, 2)
})

t.test('every column type given: the written values come back in wire form, the secret does not', async (t) => {
  const app = await moviesApp(t, db)
  const director = await create(app, '/persons', { name: 'George Lucas' })
  await create(app, '/studios', { code: 'lf', name: 'Lucasfilm' })
  const payload = {
    id: null,
    name: 'Star Wars',
    genre: 'action',
    synopsis: 'A long time ago',
    duration: 121,
    rating: 8.5,
    box_office: 12.5,
    oscar: true,
    released: '1977-05-25T10:20:30',
    director: director.id,
    studio: 'lf',
    tags: ['space', 'opera'],
    grid: [[1, 2], [3, 4]],
    contact: 'george@example.com',
    password: 's3cret'
  }
  const res = await app.inject({ method: 'POST', url: '/movies/', payload })
  t.equal(res.statusCode, 201)
  t.equal(res.headers.location, '/movies/1/')
  const expected = { ...payload, id: 1, box_office: '12.50' } as Record<string, unknown>
  delete expected.password
  t.strictSame(json(res), expected)
  t.strictSame(json(await app.inject({ method: 'GET', url: '/movies/1/' })), expected)
  t.equal((await rowsOf(app, movie))[0]!.password, 's3cret', 'a client may write a secret column')

  const asString = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Alien', box_office: '-99.5', released: '1979-05-25', rating: null, contact: null } })
  t.equal(asString.statusCode, 201)
  t.match(json(asString), { box_office: '-99.50', released: '1979-05-25T00:00:00', rating: null, contact: null }, 'Numeric as a decimal string; a date alone is midnight')
  const zoned = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Ikiru', released: '1952-10-09T01:30:00.25+02:00' } })
  t.equal(zoned.statusCode, 201)
  t.equal(json(zoned).released, '1952-10-08T23:30:00.250000', 'a zone offset is applied: timestamps are UTC')
  t.equal((await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Max', box_office: '999999.99' } })).statusCode, 201, 'the largest value of numeric(8, 2)')
})

t.test('declared defaults, type defaults and NULL (§6.2); NOT NULL ForeignKey and Email have no default', async (t) => {
  const app = await moviesApp(t, db)
  await create(app, '/movies', { name: 'Star Wars' })

  const noEmail = await app.inject({ method: 'POST', url: '/reviews/', payload: { movie: 1 } })
  t.equal(noEmail.statusCode, 422)
  t.strictSame(json(noEmail), errorOf(422, 'TABLECRUD_ERR_DB_NOT_NULL', 'Unprocessable Entity',
    'null value in column "reviewer" of relation "review" violates not-null constraint',
    { details: { constraint: null, columns: ['reviewer'], detail: null } }))

  const noMovie = await app.inject({ method: 'POST', url: '/reviews/', payload: { reviewer: 'ann@example.com' } })
  t.equal(noMovie.statusCode, 422)
  t.strictSame(json(noMovie), errorOf(422, 'TABLECRUD_ERR_DB_NOT_NULL', 'Unprocessable Entity',
    'null value in column "movie" of relation "review" violates not-null constraint',
    { details: { constraint: null, columns: ['movie'], detail: null } }))
  t.equal(await countOf(app, review), 0, 'nothing written')

  const ok = await app.inject({ method: 'POST', url: '/reviews/', payload: { movie: 1, reviewer: 'ann@example.com' } })
  t.equal(ok.statusCode, 201)
  t.equal(ok.headers.location, `/reviews/${json(ok).id}/`)
  t.strictSame(json(ok), { id: json(ok).id, movie: 1, reviewer: 'ann@example.com', score: 3 }, 'score took its declared default')
})

t.test('a varchar primary key is the client\'s: required, and in Location (encoded)', async (t) => {
  const app = await moviesApp(t, db)
  const res = await app.inject({ method: 'POST', url: '/studios/', payload: { code: 'lf', name: 'Lucasfilm' } })
  t.equal(res.statusCode, 201)
  t.equal(res.headers.location, '/studios/lf/')
  t.strictSame(json(res), { code: 'lf', name: 'Lucasfilm' })
  t.strictSame(json(await app.inject({ method: 'GET', url: '/studios/lf/' })), { code: 'lf', name: 'Lucasfilm' })

  const spaced = await app.inject({ method: 'POST', url: '/studios/', payload: { code: 'a b/c', name: 'Odd' } })
  t.equal(spaced.statusCode, 201)
  t.equal(spaced.headers.location, '/studios/a%20b%2Fc/')
  const back = await app.inject({ method: 'GET', url: spaced.headers.location as string })
  t.equal(back.statusCode, 200)
  t.strictSame(json(back), { code: 'a b/c', name: 'Odd' })

  const missing = await app.inject({ method: 'POST', url: '/studios/', payload: { name: 'Nameless' } })
  t.equal(missing.statusCode, 400)
  t.strictSame(json(missing), invalid([['code', 'is required']]))

  const duplicate = await app.inject({ method: 'POST', url: '/studios/', payload: { code: 'lf', name: 'Again' } })
  t.equal(duplicate.statusCode, 422)
  t.strictSame(json(duplicate), errorOf(422, 'TABLECRUD_ERR_DB_UNIQUE', 'Unprocessable Entity',
    'duplicate key value violates unique constraint "studio_pkey"',
    { details: { constraint: 'studio_pkey', columns: ['code'], detail: 'Key (code)=(lf) already exists.' } }))
  t.equal(await countOf(app, studio), 2)
})

t.test('a Serial primary key: absent or null, never a client value', async (t) => {
  const app = await moviesApp(t, db)
  const given = await app.inject({ method: 'POST', url: '/movies/', payload: { id: 5, name: 'Star Wars' } })
  t.equal(given.statusCode, 400)
  t.strictSame(json(given), invalid([['id', 'must be null']]))
  t.equal(await countOf(app, movie), 0)

  const nulled = await app.inject({ method: 'POST', url: '/movies/', payload: { id: null, name: 'Star Wars' } })
  t.equal(nulled.statusCode, 201)
  t.equal(json(nulled).id, 1)
  t.equal(nulled.headers.location, '/movies/1/')
})

t.test('body validation: a 400 naming each failing field, no coercion, nothing written', async (t) => {
  const app = await moviesApp(t, db)
  const NUMERIC = 'must be a decimal with at most 6 digits before the point and 2 after it'
  const cases: Array<[string, Record<string, unknown>, Array<[string, string]>]> = [
    ['types are not coerced', { name: 95, rating: '95' }, [['name', 'must be string'], ['rating', 'must be number or null']]],
    ['a string for a boolean', { name: 'A', oscar: 'true' }, [['oscar', 'must be boolean']]],
    ['a number for a timestamp', { name: 'A', released: 1977 }, [['released', 'must be string']]],
    ['a fraction for an integer', { name: 'A', duration: 1.5 }, [['duration', 'must be integer']]],
    ['a Varchar too long', { name: 'x'.repeat(21) }, [['name', 'must NOT have more than 20 characters']]],
    ['Numeric scale, as a string', { name: 'A', box_office: '12.345' }, [['box_office', NUMERIC]]],
    ['Numeric scale, as a number', { name: 'A', box_office: 12.345 }, [['box_office', NUMERIC]]],
    ['Numeric precision, as a string', { name: 'A', box_office: '1234567' }, [['box_office', NUMERIC]]],
    ['Numeric precision, as a number', { name: 'A', box_office: 1234567.1 }, [['box_office', NUMERIC]]],
    ['not a decimal', { name: 'A', box_office: '12,5' }, [['box_office', 'must be number'], ['box_office', `must match pattern "${DECIMAL_PATTERN}"`]]],
    ['a required column missing', { synopsis: 'no name' }, [['name', 'is required']]],
    ['a value outside the choices', { name: 'A', genre: 'comedy' }, [['genre', 'must be equal to one of the allowed values']]],
    ['explicit null for NOT NULL columns', { name: 'A', synopsis: null, duration: null, oscar: null, tags: null },
      [['synopsis', 'must be string'], ['duration', 'must be integer'], ['oscar', 'must be boolean'], ['tags', 'must be array']]],
    ['unknown keys (mass assignment)', { name: 'A', admin: true, owner_id: 1 }, [['admin', 'is not a writable column'], ['owner_id', 'is not a writable column']]],
    ['array elements of the wrong type', { name: 'A', tags: [1], grid: [['a']] }, [['tags.0', 'must be string'], ['grid.0.0', 'must be integer']]],
    ['a 2-D array one level short', { name: 'A', grid: [1, 2] }, [['grid.0', 'must be array'], ['grid.1', 'must be array']]],
    ['an array element too long', { name: 'A', tags: ['ok', 'toolong'] }, [['tags.1', 'must NOT have more than 5 characters']]],
    ['int32 overflow', { name: 'A', duration: 2147483648 }, [['duration', 'must be <= 2147483647']]],
    ['int32 underflow', { name: 'A', duration: -2147483649 }, [['duration', 'must be >= -2147483648']]],
    ['int32 overflow inside an array', { name: 'A', grid: [[2147483648]] }, [['grid.0.0', 'must be <= 2147483647']]],
    ['a timestamp that is not ISO 8601', { name: 'A', released: 'yesterday' }, [['released', `must match pattern "${TIMESTAMP_PATTERN}"`]]],
    ['a date that does not exist', { name: 'A', released: '2021-02-29' }, [['released', 'must be an ISO 8601 date or date-time']]]
  ]
  for (const [name, payload, errors] of cases) {
    const res = await app.inject({ method: 'POST', url: '/movies/', payload })
    t.equal(res.statusCode, 400, name)
    t.strictSame(json(res), invalid(errors), name)
  }

  const email = await app.inject({ method: 'POST', url: '/reviews/', payload: { movie: 1, reviewer: 'not-an-address' } })
  t.equal(email.statusCode, 400)
  t.strictSame(json(email), invalid([['reviewer', 'must match format "email"']]))

  // Nullable columns: the field is named, first with what the value breaks; how the null
  // branch of `anyOf` is reported besides is the error formatter's business.
  const nullable: Array<[string, Record<string, unknown>, string, string]> = [
    ['a nullable Email', { name: 'A', contact: 'nope' }, 'contact', 'must match format "email"'],
    ['int32 overflow of a ForeignKey', { name: 'A', director: 2147483648 }, 'director', 'must be <= 2147483647'],
    ['a ForeignKey of the wrong type', { name: 'A', studio: 5 }, 'studio', 'must be string'],
    ['a string for a nullable real', { name: 'A', rating: '9.5' }, 'rating', 'must be number']
  ]
  for (const [name, payload, field, message] of nullable) {
    const res = await app.inject({ method: 'POST', url: '/movies/', payload })
    t.equal(res.statusCode, 400, name)
    const body = json(res)
    t.match(body, { statusCode: 400, code: 'TABLECRUD_ERR_BODY_INVALID', error: 'Bad Request', message: `The body is invalid: ${field} ${message}` }, name)
    t.strictSame([...new Set(body.errors.map((e: { field: string }) => e.field))], [field], name)
    t.equal(body.errors[0].field, field, name)
    t.ok(body.errors[0].message.startsWith(message), `${name}: ${body.errors[0].message}`)
  }

  t.equal(await countOf(app, movie), 0, 'nothing was written')
  t.equal(await countOf(app, review), 0)
})

t.test('a body that is not JSON is a 400; another media type a 415; nothing written', async (t) => {
  const app = await moviesApp(t, db)
  for (const payload of ['{"name": ', '{name: "A"}', "{'name': 'A'}"]) {
    const res = await app.inject({ method: 'POST', url: '/movies/', payload, headers: { 'content-type': 'application/json' } })
    t.equal(res.statusCode, 400, payload)
    t.strictSame(json(res), errorOf(400, 'TABLECRUD_ERR_BODY_NOT_JSON', 'Bad Request', 'The body is not valid JSON.'))
  }
  // An array is a bulk insert (SPEC §7.4, bulk.test.ts); any other JSON value is not a body.
  for (const payload of ['"A"', 'null', '42', 'true']) {
    const res = await app.inject({ method: 'POST', url: '/movies/', payload, headers: { 'content-type': 'application/json' } })
    t.equal(res.statusCode, 400, payload)
    t.strictSame(json(res), invalid([['(body)', 'must be object']]), payload)
  }
  const empty = await app.inject({ method: 'POST', url: '/movies/' })
  t.equal(empty.statusCode, 400)
  t.strictSame(json(empty), invalid([['(body)', 'must be object']]), 'no body at all')

  const types: Array<[string, string]> = [
    ['text/plain', '{"name": "A"}'],
    ['application/x-www-form-urlencoded', 'name=A'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nA\r\n--x--\r\n'],
    ['application/xml', '<name>A</name>']
  ]
  for (const [type, payload] of types) {
    const res = await app.inject({ method: 'POST', url: '/movies/', payload, headers: { 'content-type': type } })
    t.equal(res.statusCode, 415, type)
    t.equal(res.headers['content-type'], JSON_TYPE)
    const body = json(res)
    t.strictSame(Object.keys(body), ['statusCode', 'code', 'error', 'message'], type)
    t.match(body, { statusCode: 415, code: 'TABLECRUD_ERR_BODY_MEDIA_TYPE', error: 'Unsupported Media Type', message: /^The body must be application\/json, not / }, type)
  }
  t.equal(json(await app.inject({ method: 'POST', url: '/movies/', payload: 'name=A', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).message,
    'The body must be application/json, not "application/x-www-form-urlencoded".')
  t.equal(json(await app.inject({ method: 'POST', url: '/movies/', payload: 'A', headers: { 'content-type': 'text/plain' } })).message,
    'The body must be application/json, not "text/plain".')
  t.equal(await countOf(app, movie), 0, 'nothing was written')

  const charset = await app.inject({ method: 'POST', url: '/movies/', payload: '{"name": "A"}', headers: { 'content-type': 'application/json; charset=utf-8' } })
  t.equal(charset.statusCode, 201, 'application/json with a charset is JSON')
})

t.test('constraint violations are 422s naming the constraint and columns; nothing written', async (t) => {
  const app = await moviesApp(t, db)
  await create(app, '/movies', { name: 'Star Wars' })

  const unique = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Star Wars' } })
  t.equal(unique.statusCode, 422)
  t.strictSame(json(unique), errorOf(422, 'TABLECRUD_ERR_DB_UNIQUE', 'Unprocessable Entity',
    'duplicate key value violates unique constraint "movie_name_key"',
    { details: { constraint: 'movie_name_key', columns: ['name'], detail: 'Key (name)=(Star Wars) already exists.' } }))

  const director = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Alien', director: 99 } })
  t.equal(director.statusCode, 422)
  t.strictSame(json(director), errorOf(422, 'TABLECRUD_ERR_DB_FOREIGN_KEY', 'Unprocessable Entity',
    'insert or update on table "movie" violates foreign key constraint "movie_director_fkey"',
    { details: { constraint: 'movie_director_fkey', columns: ['director'], detail: 'Key (director)=(99) is not present in table "person".' } }))

  const studioKey = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Alien', studio: 'zz' } })
  t.equal(studioKey.statusCode, 422)
  t.strictSame(json(studioKey), errorOf(422, 'TABLECRUD_ERR_DB_FOREIGN_KEY', 'Unprocessable Entity',
    'insert or update on table "movie" violates foreign key constraint "movie_studio_fkey"',
    { details: { constraint: 'movie_studio_fkey', columns: ['studio'], detail: 'Key (studio)=(zz) is not present in table "studio".' } }))

  await app.pg.query('ALTER TABLE movie ADD CONSTRAINT movie_duration_positive CHECK (duration >= 0)')
  const check = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Alien', duration: -1, password: 'do not leak' } })
  t.equal(check.statusCode, 422)
  t.strictSame(json(check), errorOf(422, 'TABLECRUD_ERR_DB_CHECK', 'Unprocessable Entity',
    'new row for relation "movie" violates check constraint "movie_duration_positive"',
    { details: { constraint: 'movie_duration_positive', columns: [], detail: null } }))
  t.notMatch(check.body, 'do not leak', 'the failing row (secret included) is not echoed')

  t.equal(await countOf(app, movie), 1, 'only the first row exists')
  const after = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Alien', duration: 117 } })
  t.equal(after.statusCode, 201, 'the app answers normally after constraint errors')
  t.equal(after.headers.location, `/movies/${json(after).id}/`)
})

t.test('data errors from the database are 400s, never 500s', async (t) => {
  const app = await moviesApp(t, db)
  const jagged = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'A', grid: [[1, 2], [3]] } })
  t.equal(jagged.statusCode, 400)
  const body = json(jagged)
  // Issue 18: caught by body validation, naming the field, before PostgreSQL's "malformed array literal".
  t.strictSame(Object.keys(body), ['statusCode', 'code', 'error', 'message', 'errors'])
  t.match(body, { statusCode: 400, code: 'TABLECRUD_ERR_BODY_INVALID', error: 'Bad Request', message: /^The body is invalid: grid must be a rectangular array/ })

  const cases: Array<[string, Record<string, unknown>]> = [
    ['year 0', { name: 'A', released: '0000-01-01' }],
    ['a real out of range', { name: 'A', rating: 1e39 }],
    ['a NUL character in a string', { name: 'A\u0000B' }]
  ]
  for (const [name, payload] of cases) {
    const res = await app.inject({ method: 'POST', url: '/movies/', payload })
    t.equal(res.statusCode, 400, name)
    t.match(json(res), { statusCode: 400, error: 'Bad Request', code: /^TABLECRUD_ERR_(DB_DATA|BODY_INVALID)$/ }, name)
  }
  t.equal(await countOf(app, movie), 0)
})

t.test('a value over a limit of the database (text too long for its unique index, SQLSTATE 54000) is a 400, never a 500; nothing written', async (t) => {
  const tag = defineTable('tag', { slug: column.text({ unique: true }) })
  const app = await freshApp(t, db, async (app) => { await app.register(tableCrud, { table: tag, prefix: '/tags', readOnly: false }) }, [tag])
  // Hex of hashes does not compress: 4,000 bytes are over the 2,704 a btree index row holds.
  const long = Array.from({ length: 63 }, (_, i) => createHash('sha256').update(String(i)).digest('hex')).join('').slice(0, 4000)
  const one = await app.inject({ method: 'POST', url: '/tags/', payload: { slug: long } })
  t.match([one.statusCode, json(one)], [400, { statusCode: 400, code: 'TABLECRUD_ERR_DB_DATA', error: 'Bad Request', message: /^index row size \d+ exceeds btree version \d maximum \d+ for index "tag_slug_key"$/ }])
  const many = await app.inject({ method: 'POST', url: '/tags/', payload: [{ slug: 'short' }, { slug: long }] })
  t.match([many.statusCode, json(many)], [400, { code: 'TABLECRUD_ERR_DB_DATA', details: { index: 1 } }], 'an array names the element')
  t.equal(await countOf(app, tag), 0)
})

t.test('readOnly is the default: every write method is a 405 with Allow', async (t) => {
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: movie, prefix: '/movies' })
    await app.register(tableCrud, { table: movie, prefix: '/ro-bulk', allowBulkDelete: true })
    await app.register(tableCrud, { table: movie, prefix: '/no-bulk', readOnly: false })
  }, [person, studio, movie])
  await app.pg.query("INSERT INTO movie (name) VALUES ('Star Wars')")
  const requests: Array<[string, string, string]> = [
    ['POST', '/movies/', 'GET, HEAD'],
    ['DELETE', '/movies/', 'GET, HEAD'],
    ['PUT', '/movies/1/', 'GET, HEAD'],
    ['PATCH', '/movies/1/', 'GET, HEAD'],
    ['DELETE', '/movies/1/', 'GET, HEAD'],
    ['PUT', '/movies/1', 'GET, HEAD'],
    ['DELETE', '/ro-bulk/?name=Star', 'GET, HEAD'],
    ['DELETE', '/no-bulk/?name=Star', 'GET, HEAD, POST']
  ]
  for (const [method, url, allow] of requests) {
    const res = await app.inject({ method: method as 'POST', url, payload: { name: 'X' } })
    t.equal(res.statusCode, 405, `${method} ${url}`)
    t.equal(res.headers.allow, allow, `${method} ${url}`)
    t.strictSame(json(res), errorOf(405, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', 'Method Not Allowed', `${method} is not allowed on ${url.split('?')[0]}.`))
  }
  const text = await app.inject({ method: 'POST', url: '/movies/', payload: 'x', headers: { 'content-type': 'text/plain' } })
  t.equal(text.statusCode, 405, 'the method is refused before the body is looked at (§6.14)')
  t.equal(text.headers.allow, 'GET, HEAD')
  t.strictSame(await rowsOf(app, movie).then((rows) => rows.map((r) => r.name)), ['Star Wars'], 'nothing changed')
  const get = await app.inject({ method: 'GET', url: '/movies/1/' })
  t.equal(get.statusCode, 200, 'reads still work')
  t.equal(json(get).name, 'Star Wars')
})

t.test('values a column cannot take are named in the table\'s order, not the body\'s, on every write, with validators or without', async (t) => {
  // Both pass the schema and fail their conversion (SPEC §2.2); the body lists them backwards.
  const payload = { grid: [[1, 2], [3]], released: '2021-02-29', name: 'A' }
  const writes: Array<[string, 'POST' | 'PUT' | 'PATCH', string, unknown]> = [
    ['POST', 'POST', '/movies/', payload],
    ['POST of an array', 'POST', '/movies/', [payload]],
    ['upsert', 'POST', '/movies/?__on_conflict=name', [payload]],
    ['PUT', 'PUT', '/movies/1/', payload],
    ['PATCH', 'PATCH', '/movies/1/', payload]
  ]
  for (const validators of [undefined, { every: [async () => {}] }]) {
    const app = await moviesApp(t, db, validators === undefined ? {} : { validators })
    await create(app, '/movies', { name: 'B' })
    for (const [name, method, url, body] of writes) {
      const res = await app.inject({ method, url, payload: body as Record<string, unknown> })
      const label = `${name}, ${validators === undefined ? 'no validator' : 'a validator'}`
      t.equal(res.statusCode, 400, label)
      t.strictSame(json(res).errors.map((e: { field: string, index?: number }) => [e.index, e.field]), [[Array.isArray(body) ? 0 : undefined, 'released'], [Array.isArray(body) ? 0 : undefined, 'grid']], label)
    }
    t.strictSame((await rowsOf(app, movie)).map((row) => row.name), ['B'], 'nothing was written')
  }
})

t.test('a column named as a member of Object.prototype is a column like any other in a body', async (t) => {
  // Bodies are plain objects: a check by `body.constructor !== undefined` would find the inherited one.
  const odd = defineTable('proto_named', {
    hasOwnProperty: column.serial({ primaryKey: true }),
    constructor: column.integer({ required: true, unique: true }),
    toString: column.text({ null: true }),
    valueOf: column.integer({ null: true })
  })
  const app = await freshApp(t, db, async (app) => { await app.register(tableCrud, { table: odd, prefix: '/odd', readOnly: false }) }, [odd])
  const created = await app.inject({ method: 'POST', url: '/odd/', payload: { constructor: 7 } })
  t.equal(created.statusCode, 201, created.body)
  t.strictSame(json(created), { hasOwnProperty: 1, constructor: 7, toString: null, valueOf: null })
  const missing = await app.inject({ method: 'POST', url: '/odd/', payload: { toString: 'x' } })
  t.strictSame(json(missing), invalid([['constructor', 'is required']]), 'an inherited member is no value of a required column')
  const replaced = await app.inject({ method: 'PUT', url: '/odd/1/', payload: { constructor: 8, toString: 'y' } })
  t.equal(replaced.statusCode, 200, replaced.body)
  t.strictSame(json(replaced), { hasOwnProperty: 1, constructor: 8, toString: 'y', valueOf: null })
  const patched = await app.inject({ method: 'PATCH', url: '/odd/1/', payload: { valueOf: 3 } })
  t.strictSame(json(patched), { hasOwnProperty: 1, constructor: 8, toString: 'y', valueOf: 3 })
  const upserted = await app.inject({ method: 'POST', url: '/odd/?__on_conflict=constructor', payload: [{ constructor: 8, valueOf: 4 }, { constructor: 9 }] })
  t.equal(upserted.statusCode, 200, upserted.body)
  // The key the database gave the second row is left out: the conflicting row took a sequence value too.
  t.strictSame((await rowsOf(app, odd)).map((row) => [row.constructor, row.toString, row.valueOf]), [[8, 'y', 4], [9, null, null]], 'the first row updated, the second inserted')
})
