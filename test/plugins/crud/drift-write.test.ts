import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { Writable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import { SchemaDriftError, schemaDriftHint } from '../../../lib/db/check.js'
import { createTables } from '../../../lib/db/ddl.js'
import type { Database, Runner } from '../../../lib/db/port.js'
import { beforeCommit, rowAnswer } from '../../../plugins/crud/before-commit.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { useDatabase } from '../../helpers/app.js'

// Issue 27 point 6: a write whose returned row cannot be answered (the column's type was changed
// by hand) must not commit; the answer is the §1 shape, and the log names the column and `check`.
const db = await testDatabase(t)

const film = defineTable('drift_write_film', {
  name: column.varchar({ length: 100 }),
  rating: column.real({ null: true })
})
const code = defineTable('drift_write_code', {
  code: column.varchar({ length: 10, primaryKey: true }),
  name: column.varchar({ length: 100 }),
  rating: column.real({ null: true })
})

async function app (t: Test): Promise<{ app: ReturnType<typeof Fastify>, lines: Array<Record<string, any>> }> {
  const lines: Array<Record<string, any>> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const server = Fastify({ logger: { level: 'error', stream } })
  await useDatabase(server, db)
  await server.register(tableCrud, { table: film, prefix: '/films', readOnly: false })
  await server.register(tableCrud, { table: code, prefix: '/codes', readOnly: false })
  t.teardown(async () => await server.close())
  return { app: server, lines }
}

const count = async (): Promise<number> => Number((await db.pool.query('SELECT count(*) AS n FROM drift_write_film')).rows[0].n)

t.before(async () => {
  await createTables(db.pool, [film, code])
  await db.pool.query("INSERT INTO drift_write_film (name, rating) VALUES ('kept', 1)")
  await db.pool.query("INSERT INTO drift_write_code (code, name, rating) VALUES ('k', 'kept', 1)")
  // '5' is a valid interval (5 seconds): the write succeeds, its row cannot be answered as a number.
  for (const name of ['drift_write_film', 'drift_write_code']) await db.pool.query(`ALTER TABLE ${name} ALTER COLUMN rating TYPE interval USING NULL`)
})

const expectDrift = (t: Test, response: { statusCode: number, json: () => any, headers: Record<string, unknown> }, lines: Array<Record<string, any>>, table = 'drift_write_film'): void => {
  t.equal(response.statusCode, 500)
  t.same(response.json(), { statusCode: 500, code: 'TABLECRUD_ERR_INTERNAL', error: 'Internal Server Error', message: 'Internal Server Error' })
  t.match(response.headers['content-type'], /^application\/json/)
  t.equal(lines.length, 1)
  t.match(lines[0]!.msg, new RegExp(`^The column rating of the table ${table} holds`))
  t.match(lines[0]!.msg, /holds a value its definition \(real\) cannot answer .*: the write was rolled back; the table definitions and the database differ; run `npx fastify-tablecrud check <module>`/)
}

t.test('POST of one row: an error in the §1 shape, nothing committed', async (t) => {
  const { app: server, lines } = await app(t)
  const before = await count()
  const response = await server.inject({ method: 'POST', url: '/films/', payload: { name: 'new', rating: 5 } })
  expectDrift(t, response, lines)
  t.equal(await count(), before, 'no row committed')
  // A row the drift does not touch (a null rating) is still written and answered.
  const fine = await server.inject({ method: 'POST', url: '/films/', payload: { name: 'null rating', rating: null } })
  t.equal(fine.statusCode, 201)
  t.same(fine.json(), { id: fine.json().id, name: 'null rating', rating: null })
  t.equal(await count(), before + 1)
})

t.test('POST of an array: none committed', async (t) => {
  const { app: server, lines } = await app(t)
  const before = await count()
  const response = await server.inject({ method: 'POST', url: '/films/', payload: [{ name: 'a', rating: null }, { name: 'b', rating: 5 }] })
  expectDrift(t, response, lines)
  t.equal(await count(), before, 'no row committed')
})

t.test('upsert (__on_conflict) of one row and of an array: nothing committed, inserted or updated', async (t) => {
  const { app: server, lines } = await app(t)
  const codes = async (): Promise<unknown[]> => (await db.pool.query('SELECT code, name FROM drift_write_code ORDER BY code')).rows
  const before = await codes()
  const one = await server.inject({ method: 'POST', url: '/codes/?__on_conflict=code', payload: { code: 'k', name: 'changed', rating: 5 } })
  expectDrift(t, one, lines, 'drift_write_code')
  lines.length = 0
  const many = await server.inject({ method: 'POST', url: '/codes/?__on_conflict=code', payload: [{ code: 'k', name: 'changed', rating: null }, { code: 'n', name: 'new', rating: 5 }] })
  expectDrift(t, many, lines, 'drift_write_code')
  t.strictSame(await codes(), before, 'the existing row unchanged, none inserted')
})

t.test('POST of an array whose rows differ in columns (one by one in a transaction): none committed', async (t) => {
  const { app: server, lines } = await app(t)
  const before = await count()
  const response = await server.inject({ method: 'POST', url: '/films/', payload: [{ name: 'a' }, { name: 'b', rating: 5 }] })
  expectDrift(t, response, lines)
  t.equal(await count(), before, 'no row committed')
})

for (const method of ['PUT', 'PATCH'] as const) {
  for (const ifMatch of [false, true]) {
    t.test(`${method}${ifMatch ? ' with If-Match' : ''}: the row is unchanged`, async (t) => {
      const { app: server, lines } = await app(t)
      const { rows: [kept] } = await db.pool.query("SELECT id, name FROM drift_write_film WHERE name = 'kept'")
      const response = await server.inject({
        method,
        url: `/films/${String(kept.id)}/`,
        headers: ifMatch ? { 'if-match': '*' } : {},
        payload: { name: 'changed', rating: 5 }
      })
      expectDrift(t, response, lines)
      const { rows: [after] } = await db.pool.query('SELECT name, rating FROM drift_write_film WHERE id = $1', [kept.id])
      t.same(after, { name: 'kept', rating: null }, 'nothing written')
    })
  }
}

t.test('rowAnswer: a row no one column is to blame for (a required member missing) names none', async (t) => {
  const schema = Type.Object({ id: Type.Integer(), name: Type.String() })
  const error = await Promise.resolve().then(() => rowAnswer(film, schema)({ id: 1 })).catch((e: unknown) => e)
  t.type(error, SchemaDriftError)
  t.match(schemaDriftHint(error), /^A row of the table drift_write_film holds a value its definition \(the row schema\) cannot answer \(.*name.*\): the write was rolled back/)
  t.match(schemaDriftHint(new SchemaDriftError('x', 'y', 'integer', 'not an Error')), /^The column y of the table x holds a value its definition \(integer\) cannot answer \(not an Error\)/)
})

t.test('beforeCommit: a stale statement is tried again on another connection, a bounded number of times; other errors at once', async (t) => {
  const stale = Object.assign(new Error('cached plan must not change result type'), { code: '0A000' })
  const failing = (failures: number, error: Error): { db: Database, tries: () => number } => {
    let tries = 0
    const db = {
      transaction: async (work: (tx: Runner) => Promise<unknown>) => {
        if (++tries <= failures) throw error
        return await work({ run: async () => ({ rows: [], rowCount: 0 }) })
      }
    } as unknown as Database
    return { db, tries: () => tries }
  }
  const twice = failing(2, stale)
  t.equal(await beforeCommit(twice.db, async () => 'done'), 'done')
  t.equal(twice.tries(), 3)
  const always = failing(Infinity, stale)
  t.equal(await beforeCommit(always.db, async () => 'done').catch((e: unknown) => e), stale)
  t.equal(always.tries(), 20)
  const other = failing(1, new Error('down'))
  t.match(await beforeCommit(other.db, async () => 'done').catch((e: unknown) => e), { message: 'down' })
  t.equal(other.tries(), 1)
})
