import t from 'tap'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { column, defineTable, type TableColumn } from '../../../lib/table/index.js'
import { tableCrud, type Hook, type TableCrudOptions } from '../../../plugins/crud/table-crud.js'
import { insertNested, nestedRelations } from '../../../plugins/crud/nested.js'
import { queryContext } from '../../../lib/query/parse.js'
import type { CrudContext } from '../../../plugins/crud/context.js'
import { appPool, testDatabase } from '../../helpers/db.js'
import { countOf, errorOf, freshApp, json, rowsOf } from './write-fixtures.js'

/** Nested insert (SPEC §8.5): a POST body holding the to-many relations of `nestedWrites`. */

const db = await testDatabase(t)

const director = defineTable('director', {
  name: column.varchar({ length: 50, required: true, unique: true })
}, { readable: 'name' })
const film = defineTable('film', {
  name: column.varchar({ length: 20, required: true, unique: true }),
  year: column.integer({ null: true }),
  budget: column.numeric({ digits: [6, 2], null: true }),
  director: column.foreignKey(director, { null: false, onDelete: 'cascade', related: 'films' }),
  secret: column.varchar({ length: 10, secret: true, default: 'hidden' })
})
const award = defineTable('award', {
  title: column.varchar({ length: 30, required: true }),
  director: column.foreignKey(director, { onDelete: 'cascade' })
})
const TABLES = [director, film, award]

async function app (t: { teardown: (fn: () => unknown) => void }, options: Partial<TableCrudOptions> = {}): Promise<FastifyInstance> {
  return await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: director, prefix: '/directors', readOnly: false, nestedWrites: ['films', 'award'], ...options })
    await app.register(tableCrud, { table: film, prefix: '/films', readOnly: false })
  }, TABLES)
}

const post = async (app: FastifyInstance, payload: unknown): Promise<LightMyRequestResponse> =>
  await app.inject({ method: 'POST', url: '/directors/', payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } })

const invalid = (errors: Array<[string, string]>): Record<string, unknown> => errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request',
  `The body is invalid: ${errors.map(([f, m]) => `${f} ${m}`).join('; ')}`, { errors: errors.map(([field, message]) => ({ field, message })) })

t.test('201: the row, then its children with their ForeignKey set, embedded as inserted; Location and ETag of the row', async (t) => {
  const a = await app(t)
  const res = await post(a, { name: 'Ridley Scott', films: [{ name: 'Alien', year: 1979 }, { name: 'Blade Runner' }], award: [{ title: 'Knighthood' }] })
  t.equal(res.statusCode, 201, res.body)
  t.equal(res.headers.location, '/directors/1/')
  t.strictSame(json(res), {
    id: 1,
    name: 'Ridley Scott',
    films: [{ id: 1, name: 'Alien', year: 1979, budget: null, director: 1 }, { id: 2, name: 'Blade Runner', year: null, budget: null, director: 1 }],
    award: [{ id: 1, title: 'Knighthood', director: 1 }]
  }, 'children in the order sent, the secret column left out')
  const got = await a.inject({ method: 'GET', url: '/directors/1/' })
  t.equal(res.headers.etag, got.headers.etag, 'the ETag of the row as GET /:id/ serves it')
  t.strictSame((await rowsOf(a, film)).map((r) => [r.name, r.director, r.secret]), [['Alien', 1, 'hidden'], ['Blade Runner', 1, 'hidden']])

  const empty = await post(a, { name: 'Nobody', films: [] })
  t.strictSame([empty.statusCode, json(empty)], [201, { id: 2, name: 'Nobody', films: [] }], 'an empty list: embedded as []')
  const plain = await post(a, { name: 'Plain' })
  t.strictSame(json(plain), { id: 3, name: 'Plain' }, 'without children: the row as before')
  const many = await post(a, [{ name: 'X' }, { name: 'Y' }])
  t.equal(many.statusCode, 201, 'array bodies as before')
  const nestedInArray = await post(a, [{ name: 'Z', films: [] }])
  t.match(json(nestedInArray), { statusCode: 400, errors: [{ index: 0, field: 'films', message: 'is not a writable column' }] }, 'nested rows only in an object body')
})

t.test('child failures named by path; a child giving the ForeignKey back refused; nothing written', async (t) => {
  const a = await app(t)
  const res = await post(a, { name: 'Ridley Scott', films: [{ name: 'Alien', year: 'old' }, { name: 'Prometheus', bogus: 1 }, { year: 2000 }] })
  t.strictSame(json(res), invalid([['films[0].year', 'must be integer or null'], ['films[1].bogus', 'is not a writable column'], ['films[2].name', 'is required']]))
  const fk = await post(a, { name: 'Ridley Scott', films: [{ name: 'Alien', director: 1 }] })
  t.strictSame(json(fk), invalid([['films[0].director', 'is set to the new director row; leave it out']]))
  const parent = await post(a, { name: 5, films: [{ name: 'x'.repeat(21) }, 'Alien'], award: {} })
  t.strictSame(json(parent), invalid([['name', 'must be string'], ['films[0].name', 'must NOT have more than 20 characters'], ['films[1]', 'must be object'], ['award', 'must be array']]))
  const converted = await post(a, { name: 'Ridley Scott', films: [{ name: 'Alien' }, { name: 'Heat', budget: 1.234 }] })
  t.strictSame(json(converted), invalid([['films[1].budget', 'must be a decimal with at most 4 digits before the point and 2 after it']]), 'value checks in code, named by path')
  const upsert = await a.inject({ method: 'POST', url: '/directors/?__on_conflict=name', payload: { name: 'Ridley Scott', films: [] } })
  t.strictSame(json(upsert), invalid([['films', 'cannot be written by an upsert (__on_conflict)']]))
  t.equal(await countOf(a, director), 0)
  t.equal(await countOf(a, film), 0)
})

t.test('a body that is neither an object nor an array: the 400 of a mount without nestedWrites, nothing written', async (t) => {
  const a = await app(t)
  for (const payload of ['null', '42', '"A"', 'true']) {
    const res = await a.inject({ method: 'POST', url: '/directors/', payload, headers: { 'content-type': 'application/json' } })
    t.strictSame([res.statusCode, json(res)], [400, invalid([['(body)', 'must be object']])], payload)
  }
  t.equal(await countOf(a, director), 0)
})

t.test('the 3rd child violating a constraint: the 422 naming it, no parent and no child written', async (t) => {
  const a = await app(t)
  await a.inject({ method: 'POST', url: '/directors/', payload: { name: 'Someone', films: [{ name: 'Taken' }] } })
  const res = await post(a, { name: 'Ridley Scott', films: [{ name: 'Alien' }, { name: 'Prometheus' }, { name: 'Taken' }, { name: 'Legend' }] })
  t.equal(res.statusCode, 422)
  t.strictSame(json(res), errorOf(422, 'TABLECRUD_ERR_DB_UNIQUE', 'Unprocessable Entity', 'duplicate key value violates unique constraint "film_name_key"', {
    details: { constraint: 'film_name_key', columns: ['name'], detail: 'Key (name)=(Taken) already exists.', path: 'films[2]' }
  }))
  t.strictSame((await rowsOf(a, director)).map((r) => r.name), ['Someone'], 'no parent')
  t.strictSame((await rowsOf(a, film)).map((r) => r.name), ['Taken'], 'no child')
  const parentTaken = await post(a, { name: 'Someone', films: [{ name: 'New' }] })
  t.match(json(parentTaken), { statusCode: 422, details: { constraint: 'director_name_key' } })
  t.notOk('path' in json(parentTaken).details, 'the parent\'s own error has no path')
  t.equal(await countOf(a, film), 1)
})

t.test('hooks and validators of the mount run for the row; the children are the child table\'s values', async (t) => {
  const seen: unknown[] = []
  const hooks: Hook[] = [{ hookType: 'preSave', callable: (row) => { seen.push(row); return { ...row, name: String(row.name).toUpperCase() } } }]
  const a = await app(t, { hooks })
  const res = await post(a, { name: 'scott', films: [{ name: 'Alien' }] })
  t.strictSame(json(res), { id: 1, name: 'SCOTT', films: [{ id: 1, name: 'Alien', year: null, budget: null, director: 1 }] })
  t.strictSame(seen, [{ name: 'scott' }], 'the hook gets the row without its children')
})

t.test('nestedWrites names reverse relations only: anything else refused at registration', async (t) => {
  for (const [names, message] of [
    [['nothing'], 'tableCrud: the option nestedWrites names "nothing", which is not a reverse relation of director (a ForeignKey of another table pointing at it): use films, award'],
    [['name'], 'tableCrud: the option nestedWrites names "name", which is not a reverse relation of director (a ForeignKey of another table pointing at it): use films, award'],
    ['films', 'tableCrud: the option nestedWrites must be an array of relation names']
  ] as const) {
    const a = Fastify()
    await a.register(fastifyPostgres, appPool(db, 1))
    a.register(tableCrud, { table: director, readOnly: false, nestedWrites: names as never })
    await t.rejects(async () => { await a.ready() }, { code: 'TABLECRUD_ERR_OPTIONS', message }, message)
    await a.close()
  }
  const filmApp = Fastify()
  await filmApp.register(fastifyPostgres, appPool(db, 1))
  filmApp.register(tableCrud, { table: film, readOnly: false, nestedWrites: ['director'] })
  await t.rejects(async () => { await filmApp.ready() }, { message: /names "director", which is not a reverse relation of film .*: use none, it has none/ }, 'a ForeignKey is a to-one relation')
  await filmApp.close()
})

t.test('insertNested: an error that is not the client\'s (a 503) is thrown as it came, from either attempt', async (t) => {
  const down = new Error('Connection terminated unexpectedly')
  const unique = Object.assign(new Error('duplicate key value violates unique constraint "film_name_key"'), { code: '23505', severity: 'ERROR' })
  const [n] = nestedRelations(director, ['films'], 10)
  // The parent's insert answers; then each child statement fails as `child` says, attempt after attempt.
  const fake = (...child: Error[]): CrudContext => ({
    table: director,
    options: { excludeSecrets: true },
    db: {
      transaction: async (work: (tx: unknown) => Promise<unknown>) => {
        let calls = 0
        return await work({ run: async () => { if (calls++ === 0) return { rows: [{ id: 1, name: 'A' }] }; throw child.shift() } })
      }
    }
  }) as unknown as CrudContext
  const rows = [new Map<TableColumn, unknown>([[film.columnMap.get('name')!, 'A']])]
  const unscopedContext = queryContext(film, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
  t.equal(await insertNested(fake(down), unscopedContext, new Map(), [{ n: n!, rows }], (row) => JSON.stringify(row)).catch((e: unknown) => e), down, 'the first attempt')
  t.equal(await insertNested(fake(unique, down), unscopedContext, new Map(), [{ n: n!, rows }], (row) => JSON.stringify(row)).catch((e: unknown) => e), down, 'one by one, after a refusal')
})
