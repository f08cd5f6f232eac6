import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { HttpError } from '../../../lib/errors.js'
import { tableCrud, type Hook, type HookContext, type Row } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { ALL_TABLES, countOf, create, errorOf, freshApp, json, movie, moviesApp, person, review, rowsOf, studio } from './write-fixtures.js'

/** Hooks (SPEC §2.10, §6.14, §6.15): preSave, prePatch, preDelete. */

const db = await testDatabase(t)

const WIRE_NOW = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/
const snapshot = (value: unknown): any => JSON.parse(JSON.stringify(value))
const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))
const names = async (app: FastifyInstance): Promise<unknown[]> => (await rowsOf(app, movie)).map((r) => r.name)

/** The thrown things a hook may answer with, and the error body each gives. */
const FAILURES: Array<[string, () => unknown, Record<string, unknown>]> = [
  ['an error with statusCode', () => Object.assign(new Error('Only editors may write'), { statusCode: 403 }),
    errorOf(403, 'TABLECRUD_ERR_REFUSED', 'Forbidden', 'Only editors may write')],
  ['an HttpError with its own code', () => new HttpError(409, 'Locked for review', 'APP_LOCKED'),
    errorOf(409, 'APP_LOCKED', 'Conflict', 'Locked for review')],
  ['a plain Error', () => new Error('Titles must not shout'),
    errorOf(400, 'TABLECRUD_ERR_HOOK', 'Bad Request', 'Titles must not shout')],
  ['a TypeError from a bug in the hook', () => new TypeError('row.x is undefined'),
    errorOf(400, 'TABLECRUD_ERR_HOOK', 'Bad Request', 'row.x is undefined')],
  ['a string', () => 'nope', errorOf(400, 'TABLECRUD_ERR_HOOK', 'Bad Request', 'nope')]
]

t.test('preSave on POST: the full row with defaults, no Serial key; chained; the last result is written', async (t) => {
  const seen: Array<[string, Row, string[], string]> = []
  const hooks: Hook[] = [
    {
      hookType: 'preSave',
      callable: (row, context) => {
        seen.push(['first', snapshot(row), Object.keys(context), context.request.method])
        return { ...row, name: String(row.name).toUpperCase(), password: 'from-hook' }
      }
    },
    {
      hookType: 'preSave',
      callable: async (row, { request }) => {
        await sleep(5)
        seen.push(['second', snapshot(row), [], String(request.headers['x-editor'])])
        return { ...row, synopsis: `edited by ${String(request.headers['x-editor'])}` }
      }
    }
  ]
  const app = await moviesApp(t, db, { hooks })
  const res = await app.inject({ method: 'POST', url: '/movies/', payload: { id: null, name: 'Alien', duration: 117 }, headers: { 'x-editor': 'ann' } })
  t.equal(res.statusCode, 201)
  t.equal(res.headers.location, '/movies/1/')

  t.equal(seen.length, 2)
  const [first, second] = seen
  t.equal(first![0], 'first')
  t.match(first![1].released, WIRE_NOW)
  t.strictSame(first![1], {
    name: 'Alien',
    genre: 'drama',
    synopsis: '',
    duration: 117,
    rating: null,
    box_office: 0,
    oscar: false,
    released: first![1].released,
    director: null,
    studio: null,
    tags: [],
    grid: [],
    contact: null,
    password: 'hidden'
  }, 'every column but the Serial key, left-out ones with their defaults (the secret one too)')
  t.strictSame(first![2], ['request'], 'the context is { request }')
  t.equal(first![3], 'POST')
  t.strictSame(second![1], { ...first![1], name: 'ALIEN', password: 'from-hook' }, 'the second hook gets what the first returned')
  t.equal(second![3], 'ann')

  const body = json(res)
  t.match(body, { id: 1, name: 'ALIEN', synopsis: 'edited by ann', duration: 117 })
  t.notOk('password' in body)
  t.strictSame(json(await app.inject({ method: 'GET', url: '/movies/1/' })), body, 'what the last hook returned is written')
  t.equal((await rowsOf(app, movie))[0]!.password, 'from-hook')
})

t.test('preSave on PUT: the full row with the key; defaults for left-out columns', async (t) => {
  const seen: Row[] = []
  const app = await moviesApp(t, db, {
    hooks: [{ hookType: 'preSave', callable: async (row) => { seen.push(snapshot(row)); return { ...row, rating: 5 } } }]
  })
  await app.pg.query("INSERT INTO movie (name, synopsis, rating, tags) VALUES ('Alien', 'Space', 8.5, '{scary}')")
  const res = await app.inject({ method: 'PUT', url: '/movies/1/', payload: { name: 'Aliens', oscar: true } })
  t.equal(res.statusCode, 200)
  t.equal(seen.length, 1)
  t.strictSame(Object.keys(seen[0]!), movie.columns.map((c) => c.name), 'every column, the key first')
  t.match(seen[0], { id: 1, name: 'Aliens', oscar: true, synopsis: '', rating: null, tags: [], password: 'hidden' })
  t.match(json(res), { id: 1, name: 'Aliens', oscar: true, synopsis: '', rating: 5, tags: [] })

  const missing = await app.inject({ method: 'PUT', url: '/movies/99/', payload: { name: 'Ghost' } })
  t.equal(missing.statusCode, 404, 'hooks run only for a row that exists')
  t.strictSame(json(missing), errorOf(404, 'TABLECRUD_ERR_ROW_NOT_FOUND', 'Not Found', 'No movie row has the id 99.'))
  t.equal(seen.length, 1, 'the hook did not run')
})

t.test('preSave on a varchar primary key gets the key the client chose', async (t) => {
  const seen: Row[] = []
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, {
      table: studio,
      prefix: '/studios',
      readOnly: false,
      hooks: [{ hookType: 'preSave', callable: (row) => { seen.push(snapshot(row)); return { ...row, code: String(row.code).toLowerCase() } } }]
    })
  }, [studio])
  const res = await app.inject({ method: 'POST', url: '/studios/', payload: { code: 'LF', name: 'Lucasfilm' } })
  t.equal(res.statusCode, 201)
  t.strictSame(seen, [{ code: 'LF', name: 'Lucasfilm' }])
  t.equal(res.headers.location, '/studios/lf/', 'Location names the key as written')
  t.strictSame(json(res), { code: 'lf', name: 'Lucasfilm' })
})

t.test('prePatch(id, values): only the given values, without the key; chained', async (t) => {
  const seen: unknown[] = []
  const app = await moviesApp(t, db, {
    hooks: [
      { hookType: 'prePatch', callable: (id, values, context) => { seen.push([id, snapshot(values), Object.keys(context), context.request.method]); return { ...values, oscar: true } } },
      { hookType: 'prePatch', callable: async (id, values) => { await sleep(5); seen.push([id, snapshot(values)]); return { ...values, rating: Number(values.rating) * 2 } } }
    ]
  })
  await app.pg.query("INSERT INTO movie (name, synopsis) VALUES ('Alien', 'Space')")
  const res = await app.inject({ method: 'PATCH', url: '/movies/1/', payload: { id: 1, rating: 4 } })
  t.equal(res.statusCode, 200)
  t.strictSame(seen, [[1, { rating: 4 }, ['request'], 'PATCH'], [1, { rating: 4, oscar: true }]])
  t.match(json(res), { id: 1, name: 'Alien', synopsis: 'Space', rating: 8, oscar: true })
  t.strictSame(json(await app.inject({ method: 'GET', url: '/movies/1/' })), json(res))

  const missing = await app.inject({ method: 'PATCH', url: '/movies/2/', payload: { rating: 1 } })
  t.equal(missing.statusCode, 404)
  t.equal(seen.length, 2, 'no hook for a missing row')
})

t.test('preDelete(id) on DELETE /:id/: in order, only for a row that exists', async (t) => {
  const seen: unknown[] = []
  const app = await moviesApp(t, db, {
    hooks: [
      { hookType: 'preDelete', callable: async (id, context) => { await sleep(5); seen.push(['first', id, Object.keys(context), context.request.method]) } },
      { hookType: 'preDelete', callable: (id) => { seen.push(['second', id]) } }
    ]
  })
  await app.pg.query("INSERT INTO movie (name) VALUES ('Alien'), ('Heat')")
  const res = await app.inject({ method: 'DELETE', url: '/movies/2/' })
  t.equal(res.statusCode, 204)
  t.strictSame(seen, [['first', 2, ['request'], 'DELETE'], ['second', 2]])
  t.strictSame(await names(app), ['Alien'])
  const missing = await app.inject({ method: 'DELETE', url: '/movies/2/' })
  t.equal(missing.statusCode, 404)
  t.equal(seen.length, 2, 'no hook for a missing row')
})

t.test('a hook that throws: its statusCode (else 400) and message; nothing written', async (t) => {
  for (const [name, thrown, expected] of FAILURES) {
    await t.test(name, async (t) => {
      const fail = (): never => { throw thrown() }
      const failAsync = async (): Promise<never> => { await sleep(1); throw thrown() }
      const calls: string[] = []
      const app = await moviesApp(t, db, {
        allowBulkDelete: true,
        hooks: [
          { hookType: 'preSave', callable: (row) => { calls.push('preSave ok'); return row } },
          { hookType: 'preSave', callable: fail },
          { hookType: 'preSave', callable: (row) => { calls.push('preSave after'); return row } },
          { hookType: 'prePatch', callable: failAsync },
          { hookType: 'preDelete', callable: failAsync }
        ]
      })
      await app.pg.query("INSERT INTO movie (name, rating) VALUES ('Alien', 8.5)")
      const before = json(await app.inject({ method: 'GET', url: '/movies/1/' }))
      const requests = [
        { method: 'POST', url: '/movies/', payload: { name: 'Heat' } },
        { method: 'PUT', url: '/movies/1/', payload: { name: 'Aliens' } },
        { method: 'PATCH', url: '/movies/1/', payload: { rating: 1 } },
        { method: 'DELETE', url: '/movies/1/' },
        { method: 'DELETE', url: '/movies/?name=Alien' }
      ] as const
      for (const request of requests) {
        const res = await app.inject(request)
        t.equal(res.statusCode, expected.statusCode, `${request.method} ${request.url}`)
        t.strictSame(json(res), expected, `${request.method} ${request.url}`)
        t.equal(res.headers['x-deleted-count'], undefined)
      }
      t.strictSame(calls, ['preSave ok', 'preSave ok'], 'the chain stops at the hook that throws')
      t.equal(await countOf(app, movie), 1, 'nothing created or deleted')
      t.strictSame(json(await app.inject({ method: 'GET', url: '/movies/1/' })), before, 'nothing changed')
    })
  }
})

t.test('hooks do not run when the body, a validator or the id is refused', async (t) => {
  const calls: string[] = []
  const app = await moviesApp(t, db, {
    validators: { deleteSingle: [(_crud, request) => { if (request.headers['x-refuse'] !== undefined) throw new HttpError(403, 'No') }] },
    hooks: [
      { hookType: 'preSave', callable: (row) => { calls.push('preSave'); return row } },
      { hookType: 'prePatch', callable: (_id, values) => { calls.push('prePatch'); return values } },
      { hookType: 'preDelete', callable: () => { calls.push('preDelete') } }
    ]
  })
  await app.pg.query("INSERT INTO movie (name) VALUES ('Alien')")
  const requests = [
    { method: 'POST', url: '/movies/', payload: { name: 7 } },
    { method: 'POST', url: '/movies/', payload: { name: 'X', box_office: '0.001' } },
    { method: 'PUT', url: '/movies/1/', payload: { name: 'X', nope: 1 } },
    { method: 'PUT', url: '/movies/1/', payload: { id: 2, name: 'X' } },
    { method: 'PUT', url: '/movies/x/', payload: { name: 'X' } },
    { method: 'PATCH', url: '/movies/1/', payload: { rating: 'high' } },
    { method: 'PATCH', url: '/movies/0/', payload: {} },
    { method: 'DELETE', url: '/movies/1/', headers: { 'x-refuse': '1' } },
    { method: 'DELETE', url: '/movies/x/' }
  ] as const
  for (const request of requests) {
    const res = await app.inject(request)
    t.ok(res.statusCode === 400 || res.statusCode === 403, `${request.method} ${request.url}: ${res.statusCode}`)
  }
  t.strictSame(calls, [])
  t.strictSame(await names(app), ['Alien'])
})

t.test('a hook whose result breaks a constraint: 422, nothing written', async (t) => {
  const app = await moviesApp(t, db, {
    hooks: [
      { hookType: 'preSave', callable: (row) => ({ ...row, name: 'Alien' }) },
      { hookType: 'prePatch', callable: (_id, values) => ({ ...values, director: 77 }) }
    ]
  })
  await app.pg.query("INSERT INTO movie (name) VALUES ('Alien'), ('Heat')")
  const post = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Ikiru' } })
  t.equal(post.statusCode, 422)
  t.match(json(post), { code: 'TABLECRUD_ERR_DB_UNIQUE', details: { constraint: 'movie_name_key', columns: ['name'] } })
  const patch = await app.inject({ method: 'PATCH', url: '/movies/2/', payload: { rating: 1 } })
  t.equal(patch.statusCode, 422)
  t.match(json(patch), { code: 'TABLECRUD_ERR_DB_FOREIGN_KEY', details: { constraint: 'movie_director_fkey', columns: ['director'] } })
  t.strictSame((await rowsOf(app, movie)).map((r) => [r.name, r.rating, r.director]), [['Alien', null, null], ['Heat', null, null]])
})

t.test('bulk DELETE /: preDelete runs for each matched row, in one transaction', async (t) => {
  const seen: unknown[] = []
  let failOn: number | null = null
  const hooks: Hook[] = [{
    hookType: 'preDelete',
    callable: async (id: unknown, { request }: HookContext) => {
      await sleep(1)
      seen.push([id, request.method, request.url])
      if (id === failOn) throw new HttpError(423, `Movie ${String(id)} is locked`)
    }
  }]
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: person, prefix: '/persons', readOnly: false })
    await app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false, allowBulkDelete: true, hooks })
    await app.register(tableCrud, { table: review, prefix: '/reviews', readOnly: false })
  }, ALL_TABLES)
  await app.pg.query("INSERT INTO movie (name, genre) VALUES ('Alien', 'action'), ('Amelie', 'drama'), ('Heat', 'action'), ('Ikiru', 'drama'), ('Ran', 'action')")

  failOn = 3
  const locked = await app.inject({ method: 'DELETE', url: '/movies/?genre=action' })
  t.equal(locked.statusCode, 423)
  t.strictSame(json(locked), errorOf(423, 'TABLECRUD_ERR_REFUSED', 'Locked', 'Movie 3 is locked'))
  t.equal(locked.headers['x-deleted-count'], undefined)
  t.strictSame(await names(app), ['Alien', 'Amelie', 'Heat', 'Ikiru', 'Ran'], 'a hook that throws deletes nothing')
  t.ok(seen.some((s) => (s as unknown[])[0] === 3), 'the hook ran up to the row it refused')

  failOn = null
  seen.length = 0
  await create(app, '/reviews', { movie: 5, reviewer: 'critic@example.com' })
  const restricted = await app.inject({ method: 'DELETE', url: '/movies/?genre=action' })
  t.equal(restricted.statusCode, 422)
  t.match(json(restricted), { code: 'TABLECRUD_ERR_DB_FOREIGN_KEY', details: { constraint: 'review_movie_fkey', columns: ['id'] } })
  t.strictSame(seen.map((s) => (s as unknown[])[0]).sort(), [1, 3, 5], 'every matched row had its hook run')
  t.strictSame(await names(app), ['Alien', 'Amelie', 'Heat', 'Ikiru', 'Ran'], 'a RESTRICT violation deletes nothing')

  await app.pg.query('DELETE FROM review')
  seen.length = 0
  const res = await app.inject({ method: 'DELETE', url: '/movies/?genre=action' })
  t.equal(res.statusCode, 204)
  t.equal(res.headers['x-deleted-count'], '3')
  t.equal(res.body, '')
  t.strictSame(seen.map((s) => (s as unknown[])[0]).sort(), [1, 3, 5])
  t.strictSame(seen[0], [(seen[0] as unknown[])[0], 'DELETE', '/movies/?genre=action'], 'each hook gets { request }')
  t.strictSame(await names(app), ['Amelie', 'Ikiru'])

  seen.length = 0
  const none = await app.inject({ method: 'DELETE', url: '/movies/?genre=action' })
  t.equal(none.statusCode, 204)
  t.equal(none.headers['x-deleted-count'], '0')
  t.strictSame(seen, [], 'no matched row, no hook')
})
