import t from 'tap'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import { HttpError } from '../../../lib/errors.js'
import { createTables } from '../../../lib/db/ddl.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { tableCrud, type Validator, type Validators } from '../../../plugins/crud/table-crud.js'
import { validatorQuery } from '../../../plugins/crud/validator-query.js'
import { testDatabase } from '../../helpers/db.js'
import { useDatabase } from '../../helpers/app.js'

// Issue 27 point 3 (SPEC §8.6): validators see request.query in one shape for every operation,
// so an owner check written the obvious way holds on all of them.
const db = await testDatabase(t)
const note = defineTable('owned_note', { owner: column.integer(), text: column.varchar({ length: 100 }) })

/** The recipe of docs/table-crud.md: `?owner=<your id>`, exactly, or a 403. */
const ownRows: Validator = (_crud, request) => {
  const { owner, owner__operator: operator, owner__match: match } = request.query
  if (owner !== String(request.headers['x-user']) || operator !== undefined || match !== undefined) throw new HttpError(403, 'Filter on your own rows: owner=<your id>')
}

const seen: unknown[] = []
const record: Validator = (_crud, request) => { seen.push(request.query) }
const LISTS = ['getAll', 'getCount', 'deleteAll', 'getIds', 'getSingle', 'putSingle', 'patchSingle', 'deleteSingle', 'postSingle', 'getNew', 'getSchema', 'getReferences'] as const

async function build (): Promise<FastifyInstance> {
  await createTables(db.pool, [note])
  const app = Fastify()
  await useDatabase(app, db)
  const validators: Validators = Object.fromEntries(LISTS.map((list) => [list, [ownRows]]))
  await app.register(tableCrud, { table: note, prefix: '/notes', readOnly: false, allowBulkDelete: true, validators })
  await app.register(tableCrud, { table: note, prefix: '/seen', readOnly: false, allowBulkDelete: true, validators: { every: [record] } })
  t.teardown(async () => await app.close())
  return app
}
const app = await build()
const reset = async (): Promise<void> => {
  await db.pool.query('DELETE FROM owned_note')
  await db.pool.query("INSERT INTO owned_note (owner, text) VALUES (1, 'mine'), (1, 'mine too'), (2, 'theirs'), (3, 'others')")
}
const as = (user: number, options: InjectOptions): InjectOptions => ({ ...options, headers: { ...options.headers, 'x-user': String(user) } })
const owners = async (): Promise<number[]> => (await db.pool.query('SELECT owner FROM owned_note ORDER BY id')).rows.map((r: { owner: number }) => r.owner)

t.test('the shape: the query string as sent, strings, arrays for repeated keys, for every operation', async (t) => {
  await reset()
  seen.length = 0
  const urls: InjectOptions[] = [
    { url: '/seen/?owner=1&text__match=contains&text=m&__page_size=5' },
    { url: '/seen/count/?owner=1&owner=2&owner__operator=in' },
    { url: '/seen/ids/?search=mi' },
    { url: '/seen/1/?__visible_fields=text' },
    { method: 'DELETE', url: '/seen/?owner=9' },
    { method: 'PATCH', url: '/seen/1/', payload: { text: 'x' } }
  ]
  for (const options of urls) t.ok([200, 204].includes((await app.inject(options)).statusCode), options.url as string)
  t.same(seen.map((q) => ({ ...q as object })), [
    { owner: '1', text__match: 'contains', text: 'm', __page_size: '5' },
    { owner: ['1', '2'], owner__operator: 'in' },
    { search: 'mi' },
    { __visible_fields: 'text' },
    { owner: '9' },
    {}
  ])
  t.equal(Object.getPrototypeOf(seen[0]), null, 'no prototype: constructor is a key like any other')
  t.same({ ...validatorQuery({ url: '/x/?constructor=1&a=%20b+c' } as never) }, { constructor: '1', a: ' b c' })
})

t.test('the owner check holds on every operation: no owner, another owner, a widening operator, a repeated owner are 403; nothing leaks or is deleted', async (t) => {
  await reset()
  const refusals: InjectOptions[] = []
  for (const path of ['/notes/', '/notes/count/']) {
    for (const query of ['', '?owner=2', '?owner=1&owner__operator=ne', '?owner=1&owner=2&owner__operator=in', '?owner=1&owner__operator=gt', '?owner=1&owner__operator=not_null', '?text=mine']) refusals.push({ url: path + query })
  }
  refusals.push({ url: '/notes/?__format=csv' }, { url: '/notes/?owner=2&__format=ndjson' }, { url: '/notes/?__order=id&__page_size=1&__cursor=' })
  refusals.push({ method: 'DELETE', url: '/notes/?owner__operator=not_null' }, { method: 'DELETE', url: '/notes/?owner=2' }, { method: 'DELETE', url: '/notes/?owner=1&owner__operator=ne' })
  refusals.push({ url: '/notes/ids/' }, { url: '/notes/3/' }, { method: 'DELETE', url: '/notes/3/' }, { method: 'PATCH', url: '/notes/3/', payload: { text: 'mine now' } })
  refusals.push({ method: 'PUT', url: '/notes/3/', payload: { owner: 3, text: 'mine now' } }, { method: 'POST', url: '/notes/', payload: { owner: 2, text: 'planted' } })
  for (const options of refusals) {
    const res = await app.inject(as(1, options))
    t.equal(res.statusCode, 403, `${options.method ?? 'GET'} ${String(options.url)}`)
    t.equal(res.json().message, 'Filter on your own rows: owner=<your id>')
  }
  t.same(await owners(), [1, 1, 2, 3], 'nothing written or deleted')
})

t.test('with its own owner, each operation passes and sees only the user\'s rows', async (t) => {
  await reset()
  const list = await app.inject(as(1, { url: '/notes/?owner=1&__order=id' }))
  t.same(list.json().rows.map((r: { text: string }) => r.text), ['mine', 'mine too'])
  t.same((await app.inject(as(1, { url: '/notes/count/?owner=1' }))).json().count, 2)
  const csv = await app.inject(as(1, { url: '/notes/?owner=1&__format=csv' }))
  t.equal(csv.statusCode, 200)
  t.notMatch(csv.body, 'theirs', 'the export holds no other owner\'s row')
  const first = await app.inject(as(1, { url: '/notes/?owner=1&__order=id&__page_size=1&__cursor=' }))
  t.equal(first.statusCode, 200, 'a keyset page')
  const next = await app.inject(as(1, { url: `/notes/?owner=1&__order=id&__page_size=1&__cursor=${String(first.json().next_cursor)}` }))
  t.same(next.json().rows.map((r: { text: string }) => r.text), ['mine too'], 'its next page, still filtered')
  const search = await app.inject(as(1, { url: '/notes/?owner=1&__or=(text.e.theirs,text.e.others,owner.ne.1)' }))
  t.same(search.json().rows, [], 'a tree is ANDed with the owner filter: it cannot widen it')
  t.equal((await app.inject(as(1, { method: 'DELETE', url: '/notes/?owner=1' }))).statusCode, 204)
  t.same(await owners(), [2, 3], 'the bulk delete took the user\'s rows only')
})
