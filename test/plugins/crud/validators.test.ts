import t from 'tap'
import { HttpError } from '../../../lib/errors.js'
import type { Crud, Validator, Validators } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { countOf, errorOf, json, movie, moviesApp, rowsOf } from './write-fixtures.js'

/** Validators (SPEC §2.9, §6.14): one list per operation, then `every`, before any query. */

const db = await testDatabase(t)

const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

const LISTS = [
  'getSingle', 'putSingle', 'patchSingle', 'deleteSingle', 'postSingle', 'getAll', 'deleteAll',
  'getReferences', 'getIds', 'getNew', 'getSchema', 'getCount'
] as const
type List = typeof LISTS[number]

/** One request per operation; each succeeds when no validator refuses. */
const OPERATIONS: Array<[List, { method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown> }, number]> = [
  ['getAll', { method: 'GET', url: '/movies/?genre=drama' }, 200],
  ['getSingle', { method: 'GET', url: '/movies/1/' }, 200],
  ['getCount', { method: 'GET', url: '/movies/count/' }, 200],
  ['getIds', { method: 'GET', url: '/movies/ids/' }, 200],
  ['getNew', { method: 'GET', url: '/movies/new/' }, 200],
  ['getSchema', { method: 'GET', url: '/movies/schema/' }, 200],
  ['getReferences', { method: 'GET', url: '/movies/references/' }, 200],
  ['postSingle', { method: 'POST', url: '/movies/', payload: { name: 'Heat' } }, 201],
  ['putSingle', { method: 'PUT', url: '/movies/1/', payload: { name: 'Aliens' } }, 200],
  ['patchSingle', { method: 'PATCH', url: '/movies/1/', payload: { rating: 9 } }, 200],
  ['deleteSingle', { method: 'DELETE', url: '/movies/2/' }, 204],
  ['deleteAll', { method: 'DELETE', url: '/movies/?name=Heat' }, 204]
]

interface Call { list: string, method: string, url: string, crud: Crud, extra: unknown }

/** An app whose every list records its calls; `refuse` makes the named list throw. */
async function recordingApp (t: Parameters<typeof moviesApp>[0]): Promise<{
  app: Awaited<ReturnType<typeof moviesApp>>
  calls: Call[]
  extraContext: Record<string, unknown>
  refuse: { list: string | null, error: () => unknown }
}> {
  const calls: Call[] = []
  const refuse: { list: string | null, error: () => unknown } = { list: null, error: () => new HttpError(403, 'Refused') }
  const record = (list: string, crud: Crud, request: { method: string, url: string }, extra: unknown): void => {
    calls.push({ list, method: request.method, url: request.url, crud, extra })
    if (refuse.list === list) throw refuse.error()
  }
  const sync = (list: string): Validator => (crud, request, extra) => { record(list, crud, request, extra) }
  const async = (list: string): Validator => async (crud, request, extra) => { await sleep(3); record(list, crud, request, extra) }
  const extraContext = { tenant: 'acme' }
  const validators: Validators = { every: [async('every'), sync('every 2')], extraContext }
  for (const list of LISTS) validators[list] = [async(list), sync(`${list} 2`)]
  const app = await moviesApp(t, db, { allowBulkDelete: true, validators })
  await app.pg.query("INSERT INTO movie (name, genre) VALUES ('Alien', 'drama'), ('Amelie', 'drama')")
  return { app, calls, extraContext, refuse }
}

t.test('each operation runs its own list, then every; with (crud, request, extraContext)', async (t) => {
  const { app, calls, extraContext } = await recordingApp(t)
  for (const [list, request, status] of OPERATIONS) {
    calls.length = 0
    const res = await app.inject(request)
    t.equal(res.statusCode, status, `${list}: ${request.method} ${request.url}`)
    t.strictSame(calls.map((c) => c.list), [list, `${list} 2`, 'every', 'every 2'], `${list}: its list in order, then every, sync and async awaited`)
    for (const call of calls) {
      t.equal(call.method, request.method, `${list}: the request is the second argument`)
      t.equal(call.url, request.url)
      t.equal(call.extra, extraContext, `${list}: extraContext, as given, is the third argument`)
      t.equal(call.crud.table, movie, `${list}: crud.table is the table`)
    }
  }
  const crud = calls[0]!.crud
  t.strictSame({ ...crud }, { table: movie, readOnly: false, allowBulkDelete: true, pageSize: 15, maxPageSize: 1000, excludeSecrets: true, maxJoins: 0 })
  t.ok(Object.isFrozen(crud), 'validators cannot change the options in force')

  calls.length = 0
  const head = await app.inject({ method: 'HEAD', url: '/movies/1/' })
  t.equal(head.statusCode, 200)
  t.strictSame(calls.map((c) => c.list), ['getSingle', 'getSingle 2', 'every', 'every 2'], 'HEAD runs the validators of GET')
})

t.test('a refusing validator: its statusCode and message, or 400 Validation error; later validators do not run', async (t) => {
  const { app, calls, refuse } = await recordingApp(t)
  const failures: Array<[string, () => unknown, Record<string, unknown>]> = [
    ['an HttpError', () => new HttpError(403, 'Editors only'), errorOf(403, 'TABLECRUD_ERR_REFUSED', 'Forbidden', 'Editors only')],
    ['an error with statusCode and code', () => Object.assign(new Error('Log in first'), { statusCode: 401, code: 'APP_LOGIN' }),
      errorOf(401, 'APP_LOGIN', 'Unauthorized', 'Log in first')],
    ['a plain Error', () => new Error('tenant mismatch: internal detail'), errorOf(400, 'TABLECRUD_ERR_VALIDATION', 'Bad Request', 'Validation error')],
    ['a thrown string', () => 'no', errorOf(400, 'TABLECRUD_ERR_VALIDATION', 'Bad Request', 'Validation error')],
    ['a statusCode that is no HTTP error', () => Object.assign(new Error('odd'), { statusCode: 200 }), errorOf(400, 'TABLECRUD_ERR_VALIDATION', 'Bad Request', 'Validation error')]
  ]
  for (const [name, error, expected] of failures) {
    refuse.error = error
    for (const [list, request] of OPERATIONS) {
      for (const [refusing, ran] of [[list, [list]], ['every', [list, `${list} 2`, 'every']]] as const) {
        refuse.list = refusing
        calls.length = 0
        const res = await app.inject(request)
        t.equal(res.statusCode, expected.statusCode, `${name} in ${refusing}: ${request.method} ${request.url}`)
        t.strictSame(json(res), expected, `${name} in ${refusing}: ${list}`)
        t.strictSame(calls.map((c) => c.list), ran, `${name} in ${refusing}: ${list}`)
      }
    }
  }
  refuse.list = null
  t.strictSame((await rowsOf(app, movie)).map((r) => [r.name, r.rating]), [['Alien', null], ['Amelie', null]], 'no refused write touched the table')
})

t.test('validators run before any query: refused writes change nothing, ids and rows are not looked at', async (t) => {
  const { app, calls, refuse } = await recordingApp(t)
  refuse.list = 'every'
  const cases: Array<[string, { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown> }]> = [
    ['an invalid id on GET', { method: 'GET', url: '/movies/abc/' }],
    ['a missing row on GET', { method: 'GET', url: '/movies/999/' }],
    ['an invalid id on PUT', { method: 'PUT', url: '/movies/0/', payload: { name: 'X' } }],
    ['a missing row on PATCH', { method: 'PATCH', url: '/movies/999/', payload: { rating: 1 } }],
    ['an invalid id on DELETE', { method: 'DELETE', url: '/movies/-5/' }],
    ['a POST that would break a unique constraint', { method: 'POST', url: '/movies/', payload: { name: 'Alien' } }],
    ['a valid POST', { method: 'POST', url: '/movies/', payload: { name: 'Ran' } }],
    ['a bulk delete', { method: 'DELETE', url: '/movies/?genre=drama' }]
  ]
  for (const [name, request] of cases) {
    const res = await app.inject(request)
    t.equal(res.statusCode, 403, name)
    t.strictSame(json(res), errorOf(403, 'TABLECRUD_ERR_REFUSED', 'Forbidden', 'Refused'), name)
  }
  t.equal(await countOf(app, movie), 2)
  t.strictSame((await rowsOf(app, movie)).map((r) => r.name), ['Alien', 'Amelie'])

  refuse.list = 'getAll'
  calls.length = 0
  const badQuery = await app.inject({ method: 'GET', url: '/movies/?nope=1' })
  t.equal(badQuery.statusCode, 400, 'a malformed query string is refused before the validators (§6.14)')
  t.equal(json(badQuery).code, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD')
  t.strictSame(calls, [])
  refuse.list = 'postSingle'
  const badBody = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 1 } })
  t.equal(badBody.statusCode, 400, 'a bad body is refused before the validators')
  t.equal(json(badBody).code, 'TABLECRUD_ERR_BODY_INVALID')
  t.strictSame(calls, [])
})

t.test('only every: it runs for each operation; no validators: nothing runs', async (t) => {
  const seen: string[] = []
  const app = await moviesApp(t, db, { validators: { every: [(_crud, request, extra) => { seen.push(`${request.method} ${String((extra as Record<string, unknown>).x ?? 'none')}`) }] } })
  const post = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Alien' } })
  t.equal(post.statusCode, 201)
  t.equal((await app.inject({ method: 'GET', url: '/movies/count/' })).statusCode, 200)
  t.strictSame(seen, ['POST none', 'GET none'], 'extraContext defaults to an empty object')
})
