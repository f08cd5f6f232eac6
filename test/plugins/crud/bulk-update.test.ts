import t from 'tap'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { HttpError } from '../../../lib/errors.js'
import { tableCrud, type Hook, type Row } from '../../../plugins/crud/table-crud.js'
import { appPool, testDatabase } from '../../helpers/db.js'
import { useDatabase } from '../../helpers/app.js'
import { countOf, create, errorOf, json, movie, moviesApp, rowsOf } from './write-fixtures.js'

/** Bulk PATCH `/` and the affected-row limit of bulk PATCH and DELETE `/` (SPEC §8.5). */

const db = await testDatabase(t)
const ONE_SESSION = db.embedded ? 'the embedded server is one session: requests cannot race' : false

const patch = async (app: FastifyInstance, query: string, payload: unknown): Promise<LightMyRequestResponse> =>
  await app.inject({ method: 'PATCH', url: `/movies/${query}`, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } })
const remove = async (app: FastifyInstance, query: string): Promise<LightMyRequestResponse> => await app.inject({ method: 'DELETE', url: `/movies/${query}` })

/** `count` movies `m0`, `m1`, ... with duration i, in one request. */
async function seed (app: FastifyInstance, count: number): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/movies/', payload: Array.from({ length: count }, (_, i) => ({ name: `m${i}`, duration: i })) })
  if (res.statusCode !== 201) throw new Error(res.body)
}

const durations = async (app: FastifyInstance): Promise<unknown[]> => (await rowsOf(app, movie)).map((r) => [r.name, r.duration, r.rating])

const MISSING_FILTER = errorOf(400, 'TABLECRUD_ERR_QS_MISSING_FILTER', 'Bad Request', 'A bulk delete needs at least one filter; to delete every row, filter on the primary key with not_null.')
const tooMany = (matched: number, limit: number): Record<string, unknown> => errorOf(400, 'TABLECRUD_ERR_TOO_MANY_ROWS', 'Bad Request', 'Too many rows would change.', { details: { matched, limit } })

t.test('off by default: 405 with Allow, as for bulk DELETE', async (t) => {
  const app = await moviesApp(t, db)
  const res = await patch(app, '?id=1', { rating: 1 })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, HEAD, POST')
  t.strictSame(json(res), errorOf(405, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', 'Method Not Allowed', 'PATCH is not allowed on /movies/.'))
  const both = await moviesApp(t, db, { allowBulkUpdate: true, allowBulkDelete: true })
  const options = await both.inject({ method: 'OPTIONS', url: '/movies/' })
  t.equal(options.headers.allow, 'GET, HEAD, POST, PATCH, DELETE')
  const readOnly = await moviesApp(t, db, { allowBulkUpdate: true, readOnly: true })
  t.equal((await patch(readOnly, '?id=1', { rating: 1 })).statusCode, 405, 'read-only wins')
})

t.test('200 {count}: the body\'s columns on every matching row, one statement; filters and trees as for bulk DELETE', async (t) => {
  const app = await moviesApp(t, db, { allowBulkUpdate: true })
  await seed(app, 6)
  const res = await patch(app, '?duration__operator=gte&duration=3', { rating: 7.5, synopsis: 'late' })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.strictSame(json(res), { count: 3 })
  t.strictSame(await durations(app), [['m0', 0, null], ['m1', 1, null], ['m2', 2, null], ['m3', 3, 7.5], ['m4', 4, 7.5], ['m5', 5, 7.5]])

  const tree = await patch(app, '?__or=(name.exact.m0,and(duration.gt.3,not.name.ends.5))', { rating: 1 })
  t.strictSame(json(tree), { count: 2 }, 'm0 and m4')
  const none = await patch(app, '?name=nothing', { rating: 2 })
  t.strictSame(json(none), { count: 0 })
  const noSlash = await app.inject({ method: 'PATCH', url: '/movies?name=m1', payload: { rating: 3 } })
  t.strictSame([noSlash.statusCode, json(noSlash)], [200, { count: 1 }], 'the path without its slash')
  t.strictSame((await rowsOf(app, movie)).map((r) => r.rating), [1, 3, null, 7.5, 1, 7.5])
  const empty = await patch(app, '?name=m1', {})
  t.strictSame([empty.statusCode, json(empty)], [200, { count: 0 }], 'nothing to set: nothing changes')
})

t.test('a filter is required (the message of bulk DELETE); the query and the body are checked as PATCH checks them', async (t) => {
  const app = await moviesApp(t, db, { allowBulkUpdate: true })
  await seed(app, 2)
  t.strictSame(json(await patch(app, '', { rating: 1 })), MISSING_FILTER)
  t.strictSame(json(await patch(app, '?__order=name', { rating: 1 })), MISSING_FILTER, 'control parameters are no filter')
  const unknown = await patch(app, '?bogus=1', { rating: 1 })
  t.match(json(unknown), { statusCode: 400, code: 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', message: "bogus isn't a valid field name." })
  const badTree = await patch(app, '?__or=(rating.gt.x)', { rating: 1 })
  t.match(json(badTree), { statusCode: 400, code: 'TABLECRUD_ERR_QS_INVALID_TREE' })
  const body = await patch(app, '?name=m1', { rating: 'high', bogus: 1 })
  t.strictSame(json(body), errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request', 'The body is invalid: bogus is not a writable column; rating must be number or null',
    { errors: [{ field: 'bogus', message: 'is not a writable column' }, { field: 'rating', message: 'must be number or null' }] }))
  const values = await patch(app, '?name=m1', { box_office: 1.234 })
  t.match(json(values), { statusCode: 400, errors: [{ field: 'box_office' }] }, 'value checks in code too')
  const key = await patch(app, '?name=m1', { id: 1, rating: 1 })
  t.strictSame(json(key), errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request', 'The body is invalid: id cannot be changed by a bulk update', { errors: [{ field: 'id', message: 'cannot be changed by a bulk update' }] }))
  const notJson = await app.inject({ method: 'PATCH', url: '/movies/?name=m1', payload: 'rating=1', headers: { 'content-type': 'text/plain' } })
  t.equal(notJson.statusCode, 415)
  const unique = await patch(app, '?name=m', { name: 'same' })
  t.match(json(unique), { statusCode: 422, code: 'TABLECRUD_ERR_DB_UNIQUE', details: { constraint: 'movie_name_key' } })
  t.strictSame(await durations(app), [['m0', 0, null], ['m1', 1, null]], 'nothing changed')
})

t.test('validator patchAll, then every; prePatch hooks once with the whole patch (id null); a throwing hook changes nothing', async (t) => {
  const calls: unknown[] = []
  const hooks: Hook[] = [
    { hookType: 'prePatch', callable: (id, values) => { calls.push([id, { ...values }]); return { ...values, synopsis: 'hooked' } } },
    { hookType: 'prePatch', callable: (_id, values) => { if (values.rating === 0) throw new Error('no zero'); if (values.rating === 13) throw new HttpError(409, 'unlucky'); return values } }
  ]
  const order: string[] = []
  const validators = {
    patchAll: [(_c: unknown, request: { headers: Record<string, unknown> }) => { order.push('patchAll'); if (request.headers['x-deny'] !== undefined) throw new HttpError(403, 'Not you') }],
    every: [() => { order.push('every') }]
  }
  const app = await moviesApp(t, db, { allowBulkUpdate: true, hooks, validators })
  await seed(app, 3)
  order.length = 0
  const res = await patch(app, '?duration__operator=lte&duration=1', { rating: 2 })
  t.strictSame(json(res), { count: 2 })
  t.strictSame(calls, [[null, { rating: 2 }]], 'once, with the patch')
  t.strictSame(order, ['patchAll', 'every'])
  t.strictSame((await rowsOf(app, movie)).map((r) => r.synopsis), ['hooked', 'hooked', ''])

  const denied = await app.inject({ method: 'PATCH', url: '/movies/?name=m2', payload: { rating: 1 }, headers: { 'x-deny': '1' } })
  t.strictSame([denied.statusCode, json(denied).message], [403, 'Not you'])
  t.equal(calls.length, 1, 'no hook after a refusing validator')
  const zero = await patch(app, '?name=m2', { rating: 0 })
  t.strictSame([zero.statusCode, json(zero).code, json(zero).message], [400, 'TABLECRUD_ERR_HOOK', 'no zero'])
  const unlucky = await patch(app, '?name=m2', { rating: 13 })
  t.strictSame([unlucky.statusCode, json(unlucky).message], [409, 'unlucky'])
  t.equal((await rowsOf(app, movie))[2]!.rating, null)
})

t.test('maxAffected (default 1000) caps bulk PATCH: more matching rows are a 400 with details.matched, nothing changed', async (t) => {
  const app = await moviesApp(t, db, { allowBulkUpdate: true, allowBulkDelete: true })
  await seed(app, 1000)
  await create(app, '/movies', { name: 'last', duration: 1000 })
  const over = await patch(app, '?id__operator=not_null', { rating: 1 })
  t.strictSame([over.statusCode, json(over)], [400, tooMany(1001, 1000)])
  t.equal((await app.pg.query('SELECT count(*)::int AS n FROM movie WHERE rating IS NOT NULL')).rows[0].n, 0, 'nothing changed')
  const at = await patch(app, '?duration__operator=lt&duration=1000', { rating: 1 })
  t.strictSame(json(at), { count: 1000 }, 'exactly the limit is allowed')
  const overDelete = await remove(app, '?id__operator=not_null')
  t.strictSame([overDelete.statusCode, json(overDelete)], [400, tooMany(1001, 1000)])
  t.equal(await countOf(app, movie), 1001, 'nothing deleted')
})

t.test('__max_affected lowers the limit for one request, never raises it; bulk DELETE alike, with and without preDelete hooks', async (t) => {
  const deleted: unknown[] = []
  const app = await moviesApp(t, db, { allowBulkUpdate: true, allowBulkDelete: true, maxAffected: 5 })
  await seed(app, 8)
  const lowered = await patch(app, '?duration__operator=lt&duration=3&__max_affected=2', { rating: 1 })
  t.strictSame([lowered.statusCode, json(lowered)], [400, tooMany(3, 2)])
  t.strictSame(json(await patch(app, '?duration__operator=lt&duration=3&__max_affected=3', { rating: 1 })), { count: 3 })
  t.strictSame(json(await patch(app, '?id__operator=not_null', { rating: 2 })), tooMany(8, 5), 'the mount\'s limit')
  const invalid = errorOf(400, 'TABLECRUD_ERR_QS_INVALID_MAX_AFFECTED', 'Bad Request', '__max_affected must be an integer from 1 to 5.')
  for (const value of ['6', '0', '-1', 'x', '', '2&__max_affected=3']) {
    t.strictSame(json(await patch(app, `?name=m1&__max_affected=${value}`, { rating: 2 })), invalid, `PATCH __max_affected=${value}`)
    t.strictSame(json(await remove(app, `?name=m1&__max_affected=${value}`)), invalid, `DELETE __max_affected=${value}`)
  }
  t.strictSame(json(await app.inject({ method: 'GET', url: '/movies/?__max_affected=1' })).code, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', 'reads do not take it')

  const overDelete = await remove(app, '?duration__operator=gte&duration=2&__max_affected=4')
  t.strictSame([overDelete.statusCode, json(overDelete)], [400, tooMany(6, 4)])
  const ok = await remove(app, '?duration__operator=gte&duration=6&__max_affected=2')
  t.strictSame([ok.statusCode, ok.headers['x-deleted-count']], [204, '2'])
  t.equal(await countOf(app, movie), 6)

  const hooked = await moviesApp(t, db, { allowBulkDelete: true, maxAffected: 2, hooks: [{ hookType: 'preDelete', callable: (id) => { deleted.push(id) } }] })
  await seed(hooked, 3)
  const refused = await hooked.inject({ method: 'DELETE', url: '/movies/?id__operator=not_null' })
  t.strictSame([refused.statusCode, json(refused)], [400, tooMany(3, 2)])
  t.strictSame(deleted, [], 'no preDelete hook ran')
  t.equal(await countOf(hooked, movie), 3)
  const two = await hooked.inject({ method: 'DELETE', url: '/movies/?id__operator=lte&id=2' })
  t.strictSame([two.statusCode, two.headers['x-deleted-count'], deleted], [204, '2', [1, 2]])
})

t.test('options: allowBulkUpdate a boolean, maxAffected an integer of 1 or more', async (t) => {
  for (const [options, message] of [
    [{ allowBulkUpdate: 'yes' }, 'tableCrud: the option allowBulkUpdate must be a boolean'],
    [{ maxAffected: 0 }, 'tableCrud: the option maxAffected must be an integer of 1 or more'],
    [{ maxAffected: 1.5 }, 'tableCrud: the option maxAffected must be an integer of 1 or more']
  ] as const) {
    const app = Fastify()
    await app.register(fastifyPostgres, appPool(db, 1))
    app.register(tableCrud, { table: movie, readOnly: false, ...options } as never)
    await t.rejects(async () => { await app.ready() }, { code: 'TABLECRUD_ERR_OPTIONS', message }, message)
    await app.close()
  }
})

t.test('a bulk PATCH racing a bulk DELETE: every row acknowledged as changed is there, changed; none is lost unacknowledged', { skip: ONE_SESSION }, async (t) => {
  const app = Fastify()
  await useDatabase(app, db, 4)
  const base = await moviesApp(t, db)
  await base.close()
  await app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false, allowBulkUpdate: true, allowBulkDelete: true })
  await app.ready()
  t.teardown(async () => await app.close())
  for (let round = 0; round < 5; round++) {
    await app.pg.query('DELETE FROM movie')
    await seed(app, 200)
    // The PATCH marks every row; the DELETE removes the rows not marked yet.
    const [patched, removed] = await Promise.all([
      patch(app, '?id__operator=not_null', { rating: 1 }),
      remove(app, '?rating__operator=is_null')
    ])
    t.equal(patched.statusCode, 200, patched.body)
    t.equal(removed.statusCode, 204, removed.body)
    const count = json(patched).count as number
    const gone = Number(removed.headers['x-deleted-count'])
    const rows = await rowsOf(app, movie) as Row[]
    t.equal(count + gone, 200, `round ${round}: ${count} changed + ${gone} deleted`)
    t.equal(rows.length, count, 'every row acknowledged as changed is still there')
    t.ok(rows.every((r) => r.rating === 1), 'and changed')
  }
})
