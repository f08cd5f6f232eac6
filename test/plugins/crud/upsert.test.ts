import t from 'tap'
import Fastify from 'fastify'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { HttpError } from '../../../lib/errors.js'
import { tableCrud, type Hook, type Row } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { useDatabase } from '../../helpers/app.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { countOf, create, errorOf, freshApp, json, movie, moviesApp, rowsOf } from './write-fixtures.js'

/** Upsert (SPEC §8.5): POST `/` with `__on_conflict`, one row or an array. */

const db = await testDatabase(t)

const upsert = async (app: FastifyInstance, payload: unknown, query = '__on_conflict=name', prefix = '/movies'): Promise<LightMyRequestResponse> =>
  await app.inject({ method: 'POST', url: `${prefix}/?${query}`, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } })

const conflictError = (given: string, accepted = 'name', table = 'movie'): Record<string, unknown> => errorOf(400, 'TABLECRUD_ERR_QS_INVALID_CONFLICT', 'Bad Request',
  `__on_conflict must name the primary key or a unique column of ${table} (${accepted}), not ${JSON.stringify(given)}.`)

t.test('one row: 201 with Location and ETag when inserted, 200 with ETag when updated; only the given columns change', async (t) => {
  const app = await moviesApp(t, db)
  const first = await upsert(app, { name: 'Alien', duration: 117, genre: 'action' })
  t.equal(first.statusCode, 201, first.body)
  t.equal(first.headers.location, '/movies/1/')
  const inserted = json(first)
  t.match(inserted, { id: 1, name: 'Alien', duration: 117, genre: 'action', rating: null })
  t.notOk('__inserted' in inserted, 'the flag is not served')
  const got = await app.inject({ method: 'GET', url: '/movies/1/' })
  t.strictSame(json(got), inserted, 'the row as GET /:id/ serves it')
  t.equal(first.headers.etag, got.headers.etag, 'the ETag of the row as served')

  const second = await upsert(app, { name: 'Alien', rating: 8.5 })
  t.equal(second.statusCode, 200, second.body)
  t.equal(second.headers.location, undefined, 'no Location: nothing was created')
  t.strictSame(json(second), { ...inserted, rating: 8.5 }, 'rating set; duration and genre kept, not reset to their defaults')
  const after = await app.inject({ method: 'GET', url: '/movies/1/' })
  t.equal(second.headers.etag, after.headers.etag)
  t.not(second.headers.etag, first.headers.etag)

  const same = await upsert(app, { name: 'Alien' })
  t.equal(same.statusCode, 200, 'a body of the key only: the row as it is')
  t.strictSame(json(same), json(second))
  t.equal(await countOf(app, movie), 1)

  const byKey = await upsert(app, { code: 'wb', name: 'Warner' }, '__on_conflict=code', '/studios')
  t.equal(byKey.statusCode, 201)
  t.equal(byKey.headers.location, '/studios/wb/')
  const renamed = await upsert(app, { code: 'wb', name: 'Warner Bros.' }, '__on_conflict= code ', '/studios')
  t.strictSame([renamed.statusCode, json(renamed)], [200, { code: 'wb', name: 'Warner Bros.' }], 'a client-given primary key, spaces around the name')
})

t.test('__on_conflict must name the primary key or a unique column: anything else a 400 naming the parameter', async (t) => {
  const app = await moviesApp(t, db)
  for (const [query, given] of [['__on_conflict=rating', 'rating'], ['__on_conflict=', ''], ['__on_conflict=id', 'id'], ['__on_conflict=name,id', 'name,id'],
    ['__on_conflict=password', 'password'], ['__on_conflict=bogus', 'bogus'], ['__on_conflict=name&__on_conflict=name', 'name&name']]) {
    const res = await upsert(app, { name: 'Alien' }, query)
    t.strictSame([res.statusCode, json(res)], [400, conflictError(given!)], query!)
  }
  const none = await upsert(app, { name: 'Kubrick' }, '__on_conflict=id', '/persons')
  t.strictSame(json(none), conflictError('id', 'none', 'person'), 'a Serial key is the database\'s: nothing to upsert on')
  const repeatedName = await upsert(app, { name: 'Alien' }, '__on_conflict=name,name')
  t.equal(repeatedName.statusCode, 201, 'a name given twice is the same set')
  t.equal(await countOf(app, movie), 1)
  const other = await app.inject({ method: 'POST', url: '/movies/?anything=1', payload: { name: 'Other' } })
  t.equal(other.statusCode, 201, 'other parameters of POST are passed over, as before')
})

t.test('body validation, validators (postSingle) and preSave hooks run as for POST', async (t) => {
  const seen: Row[] = []
  const hooks: Hook[] = [{ hookType: 'preSave', callable: (row) => { seen.push({ ...row }); return { ...row, synopsis: `saved ${String(row.name)}` } } }]
  const validators = { postSingle: [(_c: unknown, request: { headers: Record<string, unknown> }) => { if (request.headers['x-deny'] !== undefined) throw new HttpError(403, 'No upserts') }] }
  const app = await moviesApp(t, db, { hooks, validators })
  const bad = await upsert(app, { name: 'Alien', duration: 'long', bogus: 1 })
  t.strictSame(json(bad), errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request', 'The body is invalid: bogus is not a writable column; duration must be integer',
    { errors: [{ field: 'bogus', message: 'is not a writable column' }, { field: 'duration', message: 'must be integer' }] }))
  const denied = await app.inject({ method: 'POST', url: '/movies/?__on_conflict=name', payload: { name: 'Alien' }, headers: { 'x-deny': '1' } })
  t.strictSame([denied.statusCode, json(denied).message], [403, 'No upserts'])
  t.equal(seen.length, 0, 'no hook before the validators')

  const created = await upsert(app, { name: 'Alien', duration: 117 })
  t.equal(json(created).synopsis, 'saved Alien', 'the hook\'s value written')
  await app.pg.query('UPDATE movie SET synopsis = $1', ['edited'])
  const updated = await upsert(app, { name: 'Alien', rating: 9 })
  t.equal(updated.statusCode, 200)
  t.match(json(updated), { synopsis: 'saved Alien', duration: 117, rating: 9 }, 'a column the hook changed is updated too; others kept')
  t.equal(seen[1]!.duration, 0, 'the hook got the full row, defaults filled in, as for POST')
})

t.test('an array: 200 {rows} in order, inserted and updated alike; one statement per column set, all or nothing', async (t) => {
  const app = await moviesApp(t, db)
  await create(app, '/movies', { name: 'B', duration: 2, rating: 1 })
  const res = await upsert(app, [{ name: 'A', duration: 10 }, { name: 'B', rating: 5 }, { name: 'C' }, { name: 'D', rating: 4 }])
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.headers.location, undefined)
  t.equal(res.headers.etag, undefined)
  const rows = json(res).rows as Row[]
  t.strictSame(rows.map((r) => [r.id, r.name, r.duration, r.rating]), [[2, 'A', 10, null], [1, 'B', 2, 5], [4, 'C', 0, null], [5, 'D', 0, 4]],
    'in the order sent; B keeps its duration')
  for (const row of rows) t.strictSame(json(await app.inject({ method: 'GET', url: `/movies/${String(row.id)}/` })), row)
  t.equal(await countOf(app, movie), 4)

  const repeat = await upsert(app, [{ name: 'X' }, { name: 'Y' }, { name: 'X', rating: 1 }])
  t.strictSame(json(repeat), errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request', 'The body is invalid: [2] name repeats the __on_conflict value of element 0',
    { errors: [{ index: 2, field: 'name', message: 'repeats the __on_conflict value of element 0' }], details: { indexes: [2] } }))

  const fk = await upsert(app, [{ name: 'A', rating: 9 }, { name: 'E', duration: 1 }, { name: 'F', director: 999 }])
  t.equal(fk.statusCode, 422)
  t.match(json(fk), { code: 'TABLECRUD_ERR_DB_FOREIGN_KEY', details: { constraint: 'movie_director_fkey', index: 2 } })
  const one = await upsert(app, [{ name: 'A', rating: 9 }, { name: 'G', director: 999 }])
  t.match(json(one), { code: 'TABLECRUD_ERR_DB_FOREIGN_KEY', details: { index: 1 } }, 'one column set: one statement, then the failing row named')
  t.strictSame((await rowsOf(app, movie)).map((r) => [r.name, r.rating]), [['B', 5], ['A', null], ['C', null], ['D', 4]], 'nothing changed')

  const invalid = await upsert(app, [{ name: 'A' }, { name: 5 }])
  t.match(json(invalid), { statusCode: 400, errors: [{ index: 1, field: 'name' }] })
})

t.test('an array whose rows give different columns (a hook drops one, a UUID key given for some): each run one statement, no 5xx', async (t) => {
  const hooks: Hook[] = [{ hookType: 'preSave', callable: (row) => { const out = { ...row }; if (row.name === 'bare') delete out.synopsis; return out } }]
  const app = await moviesApp(t, db, { hooks })
  const res = await upsert(app, [{ name: 'bare' }, { name: 'full' }, { name: 'bare2' }])
  t.equal(res.statusCode, 200, res.body)
  t.strictSame((json(res).rows as Row[]).map((r) => [r.id, r.name, r.synopsis]), [[1, 'bare', ''], [2, 'full', ''], [3, 'bare2', '']],
    'in order; the column the hook dropped takes its database default')

  const token = defineTable('token', { id: column.uuid({ primaryKey: true }), label: column.varchar({ length: 10, unique: true }) })
  const tokens = await freshApp(t, db, async (app) => { await app.register(tableCrud, { table: token, prefix: '/tokens', readOnly: false }) }, [token])
  const given = '0b0e7a5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b'
  const keys = await upsert(tokens, [{ label: 'drawn' }, { id: given, label: 'given' }, { label: 'drawn2' }], '__on_conflict=label', '/tokens')
  t.equal(keys.statusCode, 200, keys.body)
  const rows = json(keys).rows as Row[]
  t.strictSame(rows.map((r) => r.label), ['drawn', 'given', 'drawn2'])
  t.equal(rows[1]!.id, given, 'the key given is written')
  t.equal(new Set(rows.map((r) => r.id)).size, 3, 'the others drawn by the database')
})

t.test('two spellings of one key in an array ({"a":1,"b":2} and {"b":2,"a":1}): the later element wins, no 5xx', async (t) => {
  const price = defineTable('price', { tags: column.jsonb({ unique: true, null: true }), label: column.varchar({ length: 10 }) })
  const app = await freshApp(t, db, async (app) => { await app.register(tableCrud, { table: price, prefix: '/prices', readOnly: false }) }, [price])
  const res = await upsert(app, [{ tags: { a: 1, b: 2 }, label: 'first' }, { tags: { b: 2, a: 1 }, label: 'second' }], '__on_conflict=tags', '/prices')
  t.equal(res.statusCode, 200, res.body)
  const [first, second] = json(res).rows as Row[]
  t.strictSame([first!.label, second!.label, first!.id === second!.id], ['first', 'second', true], 'each element as written, in order, one row')
  t.strictSame((await rowsOf(app, price)).map((r) => r.label), ['second'])
  const nulls = await upsert(app, [{ tags: null, label: 'a' }, { label: 'b' }, { tags: null, label: 'c' }], '__on_conflict=tags', '/prices')
  t.strictSame([nulls.statusCode, json(nulls).rows.map((r: Row) => r.label)], [200, ['a', 'b', 'c']], 'NULL never conflicts: no repeat, three rows')
  t.equal(await countOf(app, price), 4)
})

t.test('an array target repeated in an array: refused by its value, not by reference', async (t) => {
  const slot = defineTable('slot', { hours: column.array(column.integer(), { unique: true }), label: column.varchar({ length: 10 }) })
  const app = await freshApp(t, db, async (app) => { await app.register(tableCrud, { table: slot, prefix: '/slots', readOnly: false }) }, [slot])
  const repeat = await upsert(app, [{ hours: [9, 10], label: 'a' }, { hours: [10, 9], label: 'b' }, { hours: [9, 10], label: 'c' }], '__on_conflict=hours', '/slots')
  t.strictSame(json(repeat), errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request', 'The body is invalid: [2] hours repeats the __on_conflict value of element 0',
    { errors: [{ index: 2, field: 'hours', message: 'repeats the __on_conflict value of element 0' }], details: { indexes: [2] } }))
  t.equal(await countOf(app, slot), 0, 'nothing written')
  const fine = await upsert(app, [{ hours: [9, 10], label: 'a' }, { hours: [10, 9], label: 'b' }], '__on_conflict=hours', '/slots')
  t.equal(fine.statusCode, 200, fine.body)
  t.strictSame(json(fine).rows.map((r: Row) => [r.hours, r.label]), [[[9, 10], 'a'], [[10, 9], 'b']])
})

t.test('an integer target repeated in an array: refused as a text one is', async (t) => {
  const seat = defineTable('seat', { number: column.integer({ unique: true }), label: column.varchar({ length: 10 }) })
  const app = await freshApp(t, db, async (app) => { await app.register(tableCrud, { table: seat, prefix: '/seats', readOnly: false }) }, [seat])
  const repeat = await upsert(app, [{ number: 1, label: 'a' }, { number: 2, label: 'b' }, { number: 1, label: 'c' }], '__on_conflict=number', '/seats')
  t.match(json(repeat), { statusCode: 400, errors: [{ index: 2, field: 'number', message: 'repeats the __on_conflict value of element 0' }] })
  const fine = await upsert(app, [{ number: 1, label: 'a' }, { number: 2, label: 'b' }], '__on_conflict=number', '/seats')
  t.equal(fine.statusCode, 200, fine.body)
})

const ONE_SESSION = db.embedded ? 'the embedded server is one session: requests cannot race' : false

t.test('20 clients upserting one key at once: one row, one 201, nineteen 200s, no 5xx', { skip: ONE_SESSION }, async (t) => {
  const app = Fastify()
  await useDatabase(app, db, 20)
  const base = await moviesApp(t, db)
  await base.close()
  await app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false })
  await app.ready()
  t.teardown(async () => await app.close())
  for (let round = 0; round < 3; round++) {
    const name = `Race ${round}`
    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => await upsert(app, { name, duration: i })))
    const statuses = answers.map((a) => a.statusCode).sort()
    t.strictSame(statuses, [200, ...Array<number>(19).fill(200)].map((s, i) => i === 0 ? 201 : s).sort(), `round ${round}: ${statuses.join(',')}`)
    const { rows } = await app.pg.query('SELECT count(*)::int AS n FROM movie WHERE name = $1', [name])
    t.equal(rows[0].n, 1)
  }
})
