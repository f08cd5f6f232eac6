import t from 'tap'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { randomBytes } from 'node:crypto'
import { HttpError } from '../../../lib/errors.js'
import { createTables } from '../../../lib/db/ddl.js'
import type { Database } from '../../../lib/db/port.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { claimsDatabase } from '../../../plugins/crud/claims.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { openApi } from '../../../plugins/openapi.js'
import { appPool, DATABASE_URL, testDatabase } from '../../helpers/db.js'
import { useDatabase } from '../../helpers/app.js'
import { pgbouncerMissing, startPgBouncer } from '../../helpers/pgbouncer.js'
import { tablecrudDatabase } from '../../../plugins/tablecrud-database.js'

// SPEC §8.6 (issue 27 point 2): `claims` and `role`, with real CREATE POLICY rules and a role
// that does not own the table, so PostgreSQL's row-level security decides every statement.
const db = await testDatabase(t)
const note = defineTable('rls_note', { owner: column.integer(), text: column.varchar({ length: 100 }) })
const role = `sec27_rls_${process.pid}_${randomBytes(3).toString('hex')}`
await createTables(db.pool, [note])
const setUp = await db.pool.query(`CREATE ROLE ${role} NOLOGIN`).then(() => null, (error: Error) => error.message)
if (setUp !== null) {
  t.test('row-level security through claims', { skip: `this server cannot make a role (${setUp}): PGlite is one user` }, () => {})
} else {
  t.teardown(async () => {
    await db.pool.query(`DROP OWNED BY ${role}`)
    await db.pool.query(`DROP ROLE ${role}`)
  })
  const mine = "(owner = (current_setting('request.claims', true)::json->>'sub')::integer)"
  for (const statement of [
    `GRANT USAGE ON SCHEMA ${String((await db.pool.query('SELECT current_schema() AS s')).rows[0].s)} TO ${role}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON rls_note TO ${role}`,
    `GRANT USAGE ON SEQUENCE rls_note_id_seq TO ${role}`,
    'ALTER TABLE rls_note ENABLE ROW LEVEL SECURITY',
    `CREATE POLICY own_rows ON rls_note USING ${mine} WITH CHECK ${mine}`
  ]) await db.pool.query(statement)

  const app = Fastify()
  await useDatabase(app, db)
  await app.register(openApi, { info: { title: 'claims', version: '1.0.0' } })
  const claims = (request: { headers: Record<string, unknown> }): Record<string, unknown> => {
    if (request.headers['x-user'] === undefined) throw new HttpError(401, 'Who are you?')
    return { sub: Number(request.headers['x-user']) }
  }
  await app.register(tableCrud, { table: note, prefix: '/notes', readOnly: false, allowBulkDelete: true, claims, role })
  // The same mount without its role: the connection's own user owns the table, and owners pass RLS.
  await app.register(tableCrud, { table: note, prefix: '/owner', readOnly: false, claims: async () => ({ sub: 1 }) })
  t.teardown(async () => await app.close())

  const reset = async (): Promise<void> => {
    await db.pool.query('DELETE FROM rls_note')
    await db.pool.query("INSERT INTO rls_note (owner, text) VALUES (1, 'mine'), (2, 'theirs'), (1, 'mine too')")
  }
  const as = (user: number, options: InjectOptions): InjectOptions => ({ ...options, headers: { ...options.headers, 'x-user': String(user) } })
  const idOf = async (text: string): Promise<number> => (await db.pool.query('SELECT id FROM rls_note WHERE text = $1', [text])).rows[0].id
  const texts = async (): Promise<string[]> => (await db.pool.query('SELECT text FROM rls_note ORDER BY text')).rows.map((r: { text: string }) => r.text)

  t.test('reads: the policies decide lists, counts, ids, exports and /:id/ (another\'s row is a 404)', async (t) => {
    await reset()
    t.same((await app.inject(as(1, { url: '/notes/?__order=id' }))).json().rows.map((r: { text: string }) => r.text), ['mine', 'mine too'])
    t.same((await app.inject(as(2, { url: '/notes/' }))).json().rows.map((r: { text: string }) => r.text), ['theirs'])
    t.equal((await app.inject(as(1, { url: '/notes/count/' }))).json().count, 2)
    t.same(Object.keys((await app.inject(as(2, { url: '/notes/ids/' }))).json()), [String(await idOf('theirs'))])
    const csv = await app.inject(as(1, { url: '/notes/?__format=csv' }))
    t.equal(csv.statusCode, 200)
    t.match(csv.body, 'mine too')
    t.notMatch(csv.body, 'theirs', 'the export\'s cursor runs under the claims too')
    t.equal((await app.inject(as(1, { url: `/notes/${await idOf('theirs')}/` }))).statusCode, 404)
    t.equal((await app.inject(as(2, { url: `/notes/${await idOf('theirs')}/` }))).statusCode, 200)
    const keyset = await app.inject(as(1, { url: '/notes/?__order=id&__page_size=1&__cursor=' }))
    t.same(keyset.json().rows.map((r: { text: string }) => r.text), ['mine'])
  })

  t.test('writes: a row outside the policy is a 403 (TABLECRUD_ERR_DB_ROW_POLICY) or a 404, and nothing is written', async (t) => {
    await reset()
    const created = await app.inject(as(1, { method: 'POST', url: '/notes/', payload: { owner: 1, text: 'new' } }))
    t.equal(created.statusCode, 201)
    const planted = await app.inject(as(1, { method: 'POST', url: '/notes/', payload: { owner: 2, text: 'planted' } }))
    t.same(planted.json(), { statusCode: 403, code: 'TABLECRUD_ERR_DB_ROW_POLICY', error: 'Forbidden', message: 'The row is outside what a row-level security policy lets you write.' })
    const given = await app.inject(as(1, { method: 'PATCH', url: `/notes/${await idOf('mine')}/`, payload: { owner: 2 } }))
    t.equal(given.statusCode, 403, 'giving one\'s row away')
    t.equal((await app.inject(as(1, { method: 'PATCH', url: `/notes/${await idOf('theirs')}/`, payload: { text: 'mine now' } }))).statusCode, 404)
    t.equal((await app.inject(as(1, { method: 'DELETE', url: `/notes/${await idOf('theirs')}/` }))).statusCode, 404)
    const bulk = await app.inject(as(1, { method: 'DELETE', url: '/notes/?id__operator=not_null' }))
    t.equal(bulk.headers['x-deleted-count'], '3', 'the bulk delete takes the user\'s three rows')
    t.same(await texts(), ['theirs'], 'and leaves the other\'s')
  })

  t.test('through PgBouncer in transaction mode: concurrent users on shared server connections, nothing left on them', { skip: pgbouncerMissing(DATABASE_URL) ?? false }, async (t) => {
    await reset()
    const bouncer = await startPgBouncer(t, { upstream: db.directConnectionString, poolSize: 2 })
    const pooled = Fastify()
    await pooled.register(fastifyPostgres, { connectionString: bouncer.connectionString, max: 4 })
    await pooled.register(tablecrudDatabase, { preparedStatements: 'unnamed' })
    await pooled.register(tableCrud, { table: note, prefix: '/notes', readOnly: false, claims, role })
    t.teardown(async () => await pooled.close())
    const lists = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
      const user = 1 + (i % 2)
      const res = await pooled.inject(as(user, { url: '/notes/?__format=ndjson' }))
      return { user, texts: res.body.trim().split('\n').map((line) => JSON.parse(line).text as string).sort() }
    }))
    for (const { user, texts } of lists) t.same(texts, user === 1 ? ['mine', 'mine too'] : ['theirs'])
    const left = await pooled.pg.query("SELECT current_user AS who, coalesce(current_setting('request.claims', true), '') AS claims")
    t.same(left.rows, [{ who: new URL(DATABASE_URL!).username || 'postgres', claims: '' }], 'the server connection is as it was')
  })

  t.test('the OpenAPI document gives the writes of a claims mount their 403', async (t) => {
    const doc = app.swagger() as any
    for (const [path, method] of [['/notes/', 'post'], ['/notes/{id}/', 'put'], ['/notes/{id}/', 'patch']] as const) t.ok(doc.paths[path][method].responses['403'], `${method} ${path}`)
    t.notOk(doc.paths['/notes/'].get.responses['403'], 'a read is not refused: the policies hide rows')
  })

  t.test('the claims: a request they refuse gets their status; without a role the owner passes the policies', async (t) => {
    await reset()
    const anonymous = await app.inject({ url: '/notes/' })
    t.same([anonymous.statusCode, anonymous.json().message], [401, 'Who are you?'])
    t.equal((await app.inject({ url: '/owner/count/' })).json().count, 3, 'the table\'s owner is not subject to its policies: give a role')
  })
}

t.test('a statement outside a request of the mount throws rather than run without claims', async (t) => {
  const ran: string[] = []
  const fake = { transaction: async () => { ran.push('transaction') }, cursor: async () => { ran.push('cursor') }, query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Database
  const wrapped = claimsDatabase(Fastify(), fake, () => ({}), null)
  await t.rejects(wrapped.run({ text: 'SELECT 1', values: [] }), { message: 'tableCrud claims: a statement outside a request of its mount' })
  await t.rejects(wrapped.cursor({ text: 'SELECT 1', values: [] }), { message: /outside a request/ })
  t.same(ran, [])
})

t.test('claims and role options are checked at registration', async (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ claims: 'sub' }, /^tableCrud: the option claims must be a function/],
    [{ claims: () => ({}), role: '' }, /^tableCrud: the option role must be the name of a database role/],
    [{ role: 'reader' }, /^tableCrud: the option role takes effect with claims only/]
  ]
  for (const [options, message] of cases) {
    const app: FastifyInstance = Fastify()
    await app.register(fastifyPostgres, appPool(db, 1))
    await t.rejects(async () => { await app.register(tableCrud, { table: note, ...options } as never).ready() }, { message })
    await app.close()
  }
})
