import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { HttpError } from '../../../lib/errors.js'
import { defineTable } from '../../../lib/table/index.js'
import { insertRows } from '../../../plugins/crud/create.js'
import { queryContext } from '../../../lib/query/parse.js'
import type { CrudContext } from '../../../plugins/crud/context.js'
import { tableCrud, type Hook, type Row } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { countOf, create, errorOf, freshApp, json, movie, moviesApp, person, review, rowsOf, studio } from './write-fixtures.js'

/** POST `/` of an array (SPEC §7.4): all rows or none, in order, failures named by index. */

const db = await testDatabase(t)

const JSON_TYPE = 'application/json; charset=utf-8'
const MAX = 1000

const post = async (app: FastifyInstance, payload: unknown, url = '/movies/'): Promise<ReturnType<FastifyInstance['inject']> extends Promise<infer R> ? R : never> =>
  await app.inject({ method: 'POST', url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } })

/** `count` movies named `m0`, `m1`, ... */
const unscopedContext = queryContext(movie, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
const movies = (count: number): Row[] => Array.from({ length: count }, (_, i) => ({ name: `m${i}`, duration: i }))

/** The 400 of an array body: each failing field with its element's index. */
const invalid = (errors: Array<[number, string, string]>): Record<string, unknown> => errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request',
  `The body is invalid: ${errors.map(([index, field, message]) => `[${index}] ${field} ${message}`).join('; ')}`,
  { errors: errors.map(([index, field, message]) => ({ index, field, message })), details: { indexes: [...new Set(errors.map(([index]) => index))] } })

const rowCount = (count: number): Record<string, unknown> => errorOf(400, 'TABLECRUD_ERR_BODY_ROW_COUNT', 'Bad Request', `An array body must hold 1 to ${MAX} rows, not ${count}.`)

t.test('201 {rows}: every element created, in the order sent, as GET /:id/ returns it; no Location, no ETag', async (t) => {
  const app = await moviesApp(t, db)
  const res = await post(app, [{ name: 'Zulu', rating: 2.5 }, { name: 'Alpha', tags: ['a', 'b'] }, { id: null, name: 'Mike', grid: [[1, 2], [3, 4]] }])
  t.equal(res.statusCode, 201, res.body)
  t.equal(res.headers['content-type'], JSON_TYPE)
  t.equal(res.headers.location, undefined, 'no Location: there is no one row to point at')
  t.equal(res.headers.etag, undefined, 'no ETag: there is no one row to tag')
  const body = json(res)
  t.strictSame(Object.keys(body), ['rows'])
  t.strictSame(body.rows.map((r: Row) => [r.id, r.name]), [[1, 'Zulu'], [2, 'Alpha'], [3, 'Mike']])
  for (const row of body.rows) {
    t.notOk('password' in row, 'the secret column is absent')
    const got = await app.inject({ method: 'GET', url: `/movies/${String(row.id)}/` })
    t.strictSame(json(got), row, 'each row as GET /:id/ returns it')
  }
  t.strictSame(body.rows.map((r: Row) => [r.rating, r.tags, r.grid, r.genre, r.box_office]), [
    [2.5, [], [], 'drama', '0.00'], [null, ['a', 'b'], [], 'drama', '0.00'], [null, [], [[1, 2], [3, 4]], 'drama', '0.00']
  ], 'given values and defaults')
  t.strictSame((await rowsOf(app, movie)).map((r) => r.password), ['hidden', 'hidden', 'hidden'], 'the secret took its default')

  const one = await post(app, [{ name: 'Solo' }], '/movies')
  t.equal(one.statusCode, 201, 'an array of one, on the path without its slash')
  t.strictSame(json(one).rows.map((r: Row) => r.id), [4])
})

t.test('maxPageSize rows in one request, in order; a table with a client-given key', async (t) => {
  const app = await moviesApp(t, db)
  const res = await post(app, movies(MAX))
  t.equal(res.statusCode, 201)
  const rows = json(res).rows as Row[]
  t.equal(rows.length, MAX)
  t.ok(rows.every((r, i) => r.name === `m${i}` && r.duration === i && r.id === i + 1), 'order kept, keys given in order')
  t.equal(await countOf(app, movie), MAX)

  const studios = await post(app, [{ code: 'b', name: 'B' }, { code: 'a', name: 'A' }], '/studios/')
  t.equal(studios.statusCode, 201)
  t.strictSame(json(studios), { rows: [{ code: 'b', name: 'B' }, { code: 'a', name: 'A' }] })
})

t.test('one bad element in the middle of maxPageSize rows: a 400 naming it, nothing written', async (t) => {
  const app = await moviesApp(t, db)
  const body = movies(MAX)
  body[500] = { name: 'x'.repeat(21), bogus: 1 }
  const res = await post(app, body)
  t.equal(res.statusCode, 400)
  t.strictSame(json(res), invalid([[500, 'bogus', 'is not a writable column'], [500, 'name', 'must NOT have more than 20 characters']]))
  t.equal(await countOf(app, movie), 0, 'nothing written')
})

t.test('a unique violation in the middle of maxPageSize rows: the 422 with details.index, nothing written', async (t) => {
  const app = await moviesApp(t, db)
  await create(app, '/movies', { name: 'Taken' })
  const body = movies(MAX)
  body[500] = { name: 'Taken' }
  const res = await post(app, body)
  t.equal(res.statusCode, 422)
  t.strictSame(json(res), errorOf(422, 'TABLECRUD_ERR_DB_UNIQUE', 'Unprocessable Entity', 'duplicate key value violates unique constraint "movie_name_key"', {
    details: { constraint: 'movie_name_key', columns: ['name'], detail: 'Key (name)=(Taken) already exists.', index: 500 }
  }))
  t.equal(await countOf(app, movie), 1, 'only the row there before')

  // Two elements alike: the second is the one refused.
  const twice = await post(app, [{ name: 'A' }, { name: 'B' }, { name: 'A' }])
  t.equal(twice.statusCode, 422)
  t.equal(json(twice).details.index, 2)
  t.equal(json(twice).details.detail, 'Key (name)=(A) already exists.')
  t.equal(await countOf(app, movie), 1)

  const studios = await post(app, [{ code: 'a', name: 'A' }, { code: 'a', name: 'B' }], '/studios/')
  t.equal(studios.statusCode, 422, 'a duplicate client-given key')
  t.match(json(studios), { code: 'TABLECRUD_ERR_DB_UNIQUE', details: { constraint: 'studio_pkey', columns: ['code'], index: 1 } })
  t.equal(await countOf(app, studio), 0)
})

t.test('foreign key, not-null and data errors of the database: their §1 answer, with details.index', async (t) => {
  const app = await moviesApp(t, db)
  const director = await create(app, '/persons', { name: 'Ridley Scott' })
  const fk = await post(app, [{ name: 'Alien', director: director.id }, { name: 'Heat', director: 999 }])
  t.equal(fk.statusCode, 422)
  t.strictSame(json(fk), errorOf(422, 'TABLECRUD_ERR_DB_FOREIGN_KEY', 'Unprocessable Entity', 'insert or update on table "movie" violates foreign key constraint "movie_director_fkey"', {
    details: { constraint: 'movie_director_fkey', columns: ['director'], detail: 'Key (director)=(999) is not present in table "person".', index: 1 }
  }))

  const alien = await create(app, '/movies', { name: 'Alien' })
  const notNull = await post(app, [{ movie: alien.id, reviewer: 'a@b.cd' }, { movie: alien.id, reviewer: 'a@b.cd' }, { reviewer: 'c@d.ef' }], '/reviews/')
  t.equal(notNull.statusCode, 422)
  t.match(json(notNull), { code: 'TABLECRUD_ERR_DB_NOT_NULL', details: { columns: ['movie'], index: 2 } })
  t.equal(await countOf(app, review), 0)
  t.equal(await countOf(app, movie), 1)
})

t.test('a value only the database refuses (a hook\'s integer out of range): the 400 with details.index', async (t) => {
  const hooks: Hook[] = [{ hookType: 'preSave', callable: (row) => row.name === 'Big' ? { ...row, duration: 2 ** 40 } : row }]
  const app = await moviesApp(t, db, { hooks })
  const res = await post(app, [{ name: 'Small' }, { name: 'Big' }])
  t.equal(res.statusCode, 400)
  t.strictSame(json(res), errorOf(400, 'TABLECRUD_ERR_DB_DATA', 'Bad Request', 'value "1099511627776" is out of range for type integer', { details: { index: 1 } }))
  t.equal(await countOf(app, movie), 0)
})

t.test('each failing element named: details.indexes and errors[].index, from the schema and from the value checks', async (t) => {
  const app = await moviesApp(t, db)
  const res = await post(app, [{ name: 'Good' }, { rating: 'high' }, { name: 'Fine' }, { name: 'Odd', oscar: 1, tags: ['toolong'] }])
  t.equal(res.statusCode, 400)
  t.strictSame(json(res), invalid([
    [1, 'name', 'is required'], [1, 'rating', 'must be number or null'],
    [3, 'oscar', 'must be boolean'], [3, 'tags.0', 'must NOT have more than 5 characters']
  ]))

  const key = await post(app, [{ id: null, name: 'A' }, { id: 5, name: 'B' }])
  t.strictSame([key.statusCode, json(key)], [400, invalid([[1, 'id', 'must be null']])], 'a Serial key may only be null, in any element')

  // Precision and scale are checked in code, after the schema: every element still named.
  const numeric = await post(app, [{ name: 'A', box_office: 1.234 }, { name: 'B' }, { name: 'C', box_office: 12345678.9 }])
  t.equal(numeric.statusCode, 400)
  const [first, second] = json(numeric).errors
  t.strictSame([first.index, first.field, second.index, second.field], [0, 'box_office', 2, 'box_office'])
  t.strictSame(json(numeric).details, { indexes: [0, 2] })
  t.equal(json(numeric).message, `The body is invalid: [0] box_office ${String(first.message)}; [2] box_office ${String(second.message)}`)
  t.equal(await countOf(app, movie), 0)
})

t.test('mixed content: an element that is not an object is named; the whole body must still be an object or an array', async (t) => {
  const app = await moviesApp(t, db)
  const res = await post(app, [{ name: 'A' }, 1, null, 'x', [], [{ name: 'B' }]])
  t.equal(res.statusCode, 400)
  t.strictSame(json(res), invalid([[1, '(row)', 'must be object'], [2, '(row)', 'must be object'], [3, '(row)', 'must be object'], [4, '(row)', 'must be object'], [5, '(row)', 'must be object']]))
  for (const payload of ['"A"', '42', 'null', 'true']) {
    const scalar = await app.inject({ method: 'POST', url: '/movies/', payload, headers: { 'content-type': 'application/json' } })
    t.strictSame([scalar.statusCode, json(scalar)], [400, errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request', 'The body is invalid: (body) must be object', { errors: [{ field: '(body)', message: 'must be object' }] })], payload)
  }
  t.equal(await countOf(app, movie), 0)
})

t.test('an empty array, and one over maxPageSize, are 400s', async (t) => {
  const app = await moviesApp(t, db)
  const empty = await post(app, [])
  t.strictSame([empty.statusCode, json(empty)], [400, rowCount(0)])
  const over = await post(app, movies(MAX + 1))
  t.strictSame([over.statusCode, json(over)], [400, rowCount(MAX + 1)])
  t.equal(await countOf(app, movie), 0)

  const small = await moviesApp(t, db, { maxPageSize: 2, pageSize: 2 })
  const three = await post(small, movies(3))
  t.strictSame([three.statusCode, json(three).message], [400, 'An array body must hold 1 to 2 rows, not 3.'], 'the limit follows maxPageSize')
  t.equal((await post(small, movies(2))).statusCode, 201)
})

t.test('an array on a read-only table is a 405; on PUT and PATCH a 400 as before', async (t) => {
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: person, prefix: '/persons', readOnly: false })
    await app.register(tableCrud, { table: movie, prefix: '/movies' })
  })
  const readOnly = await post(app, [{ name: 'A' }])
  t.equal(readOnly.statusCode, 405)
  t.equal(json(readOnly).code, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED')
  t.equal(readOnly.headers.allow, 'GET, HEAD')

  const ann = await create(app, '/persons', { name: 'Ann' })
  for (const method of ['PUT', 'PATCH'] as const) {
    const res = await app.inject({ method, url: `/persons/${String(ann.id)}/`, payload: JSON.stringify([{ name: 'Bo' }]), headers: { 'content-type': 'application/json' } })
    t.strictSame([res.statusCode, json(res)], [400, errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request', 'The body is invalid: (body) must be object', { errors: [{ field: '(body)', message: 'must be object' }] })], method)
  }
  t.strictSame((await rowsOf(app, person)).map((r) => r.name), ['Ann'])
})

t.test('preSave runs per element, in order, after the validators; postSingle and every run once', async (t) => {
  const calls: string[] = []
  const hooks: Hook[] = [
    { hookType: 'preSave', callable: (row) => { calls.push(`first ${String(row.name)} ${'id' in row ? 'with' : 'without'} id`); return { ...row, name: String(row.name).toUpperCase() } } },
    { hookType: 'preSave', callable: async (row) => { calls.push(`second ${String(row.name)}`); return { ...row, synopsis: `about ${String(row.name)}` } } }
  ]
  const validators = {
    postSingle: [() => { calls.push('postSingle') }],
    every: [() => { calls.push('every') }]
  }
  const app = await moviesApp(t, db, { hooks, validators })
  const res = await post(app, [{ name: 'one' }, { name: 'two' }])
  t.equal(res.statusCode, 201)
  t.strictSame(calls, ['postSingle', 'every', 'first one without id', 'second ONE', 'first two without id', 'second TWO'])
  t.strictSame(json(res).rows.map((r: Row) => [r.name, r.synopsis]), [['ONE', 'about ONE'], ['TWO', 'about TWO']], 'what the last hook returns is written')

  calls.length = 0
  const bad = await post(app, [{ name: 'three' }, { rating: 'x' }])
  t.equal(bad.statusCode, 400)
  t.strictSame(calls, [], 'a body that fails validation runs no validator and no hook')
})

t.test('a validator refusing a bulk POST: its answer, no hook run, nothing written', async (t) => {
  let hooks = 0
  const app = await moviesApp(t, db, {
    hooks: [{ hookType: 'preSave', callable: (row) => { hooks++; return row } }],
    validators: { postSingle: [() => { throw new HttpError(403, 'Editors only') }] }
  })
  const res = await post(app, movies(3))
  t.strictSame([res.statusCode, json(res)], [403, errorOf(403, 'TABLECRUD_ERR_REFUSED', 'Forbidden', 'Editors only')])
  t.equal(hooks, 0)
  t.equal(await countOf(app, movie), 0)
})

t.test('a hook refusing an element: its status and message with details.index; the hooks of later elements do not run; nothing written', async (t) => {
  const seen: unknown[] = []
  const hooks: Hook[] = [{
    hookType: 'preSave',
    callable: (row) => {
      seen.push(row.name)
      if (row.name === 'Locked') throw new HttpError(409, 'Locked for review', 'APP_LOCKED')
      if (row.name === 'Shout') throw new Error('Titles must not shout')
      return row
    }
  }]
  const app = await moviesApp(t, db, { hooks })
  const locked = await post(app, [{ name: 'A' }, { name: 'Locked' }, { name: 'B' }])
  t.strictSame([locked.statusCode, json(locked)], [409, errorOf(409, 'APP_LOCKED', 'Conflict', 'Locked for review', { details: { index: 1 } })])
  t.strictSame(seen, ['A', 'Locked'])
  const shout = await post(app, [{ name: 'Shout' }])
  t.strictSame([shout.statusCode, json(shout)], [400, errorOf(400, 'TABLECRUD_ERR_HOOK', 'Bad Request', 'Titles must not shout', { details: { index: 0 } })])
  t.equal(await countOf(app, movie), 0)
})

t.test('a hook handing back a value that does not fit: the 400 of its field, with the element\'s index', async (t) => {
  const hooks: Hook[] = [{ hookType: 'preSave', callable: (row) => row.name === 'Bad' ? { ...row, tags: 'not an array' } : row }]
  const app = await moviesApp(t, db, { hooks })
  const res = await post(app, [{ name: 'Good' }, { name: 'Bad' }])
  t.strictSame([res.statusCode, json(res)], [400, invalid([[1, 'tags', 'must be an array']])])
  t.equal(await countOf(app, movie), 0)
})

t.test('rows whose columns differ (a hook dropping a key) are inserted one by one in one transaction: order kept, all or none', async (t) => {
  const hooks: Hook[] = [{
    hookType: 'preSave',
    callable: (row) => {
      if (row.name !== 'Lean') return row
      const { synopsis: _dropped, ...rest } = row
      return rest
    }
  }]
  const app = await moviesApp(t, db, { hooks })
  const res = await post(app, [{ name: 'Full', synopsis: 'long' }, { name: 'Lean', synopsis: 'dropped' }, { name: 'Last' }])
  t.equal(res.statusCode, 201)
  t.strictSame(json(res).rows.map((r: Row) => [r.id, r.name, r.synopsis]), [[1, 'Full', 'long'], [2, 'Lean', ''], [3, 'Last', '']])

  const refused = await post(app, [{ name: 'Lean' }, { name: 'New' }, { name: 'Full' }])
  t.equal(refused.statusCode, 422)
  t.match(json(refused), { code: 'TABLECRUD_ERR_DB_UNIQUE', details: { index: 0 } })
  t.equal(await countOf(app, movie), 3, 'nothing of the refused request written')
})

t.test('a table with no column but its Serial key: rows of nothing but defaults', async (t) => {
  const tick = defineTable('tick', {})
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: tick, prefix: '/ticks', readOnly: false })
  }, [tick])
  const res = await post(app, [{}, { id: null }, {}], '/ticks/')
  t.strictSame([res.statusCode, json(res)], [201, { rows: [{ id: 1 }, { id: 2 }, { id: 3 }] }])
})

t.test('insertRows: an error that is not the client\'s (a 503) is thrown as it came, from either way of inserting', async (t) => {
  const down = new Error('Connection terminated unexpectedly')
  const unique = Object.assign(new Error('duplicate key value violates unique constraint "movie_name_key"'), { code: '23505', severity: 'ERROR' })
  const fail = (error: Error) => async (): Promise<never> => { throw error }
  // The one statement runs alone (the port's single), the rows one by one in a transaction: the first fails with `first`, the second's with `second`.
  const fake = (first: () => Promise<never>, second: () => Promise<never>): CrudContext => ({
    table: movie,
    options: { excludeSecrets: true },
    db: {
      single: async () => await first(),
      transaction: async (work: (tx: unknown) => Promise<unknown>) => await work({ run: second })
    }
  }) as unknown as CrudContext
  const rows = [new Map([[movie.columnMap.get('name')!, 'A']])]
  const answer = (created: unknown[]): unknown[] => created
  t.equal(await insertRows(fake(fail(down), fail(unique)), unscopedContext, rows, answer).catch((e: unknown) => e), down, 'the one statement')
  t.equal(await insertRows(fake(fail(unique), fail(down)), unscopedContext, rows, answer).catch((e: unknown) => e), down, 'one by one, after a refusal')
})

t.test('the database away: a 503 with Retry-After, as for one row', async (t) => {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 1000 })
  await app.register(tableCrud, { table: person, prefix: '/persons', readOnly: false })
  t.teardown(async () => await app.close())
  const res = await post(app, [{ name: 'A' }, { name: 'B' }], '/persons/')
  t.strictSame([res.statusCode, res.headers['retry-after'], json(res)],
    [503, '5', errorOf(503, 'TABLECRUD_ERR_DB_UNAVAILABLE', 'Service Unavailable', 'The database is unavailable; try again shortly.')])
})
