import t from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { Writable } from 'node:stream'
import { createTables } from '../../lib/db/ddl.js'
import { column, defineTable } from '../../lib/table/index.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { appPool, testDatabase } from '../helpers/db.js'

const db = await testDatabase(t)

const film = defineTable('drift_film', {
  name: column.varchar({ length: 100 }),
  rating: column.real({ null: true })
})

t.test('a missing column or table: a generic 500 for the client, one log line naming them and check', async (t) => {
  await createTables(db.pool, [film])
  await db.pool.query('ALTER TABLE drift_film DROP COLUMN rating')
  const lines: Array<Record<string, any>> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = Fastify({ logger: { level: 'error', stream } })
  await app.register(fastifyPostgres, appPool(db, 1))
  await app.register(tableCrud, { table: film, prefix: '/films', readOnly: false })
  t.teardown(async () => await app.close())

  const list = await app.inject('/films/')
  t.equal(list.statusCode, 500)
  t.equal(list.json().code, 'TABLECRUD_ERR_INTERNAL')
  t.notOk(list.body.includes('rating'), 'nothing of the database in the body')
  t.equal(lines.length, 1)
  t.match(lines[0]!.msg, /^The column rating of the table drift_film is missing in the database \(column t0\.rating does not exist\): .*`npx fastify-tablecrud check <module>`/)

  await db.pool.query('DROP TABLE drift_film')
  t.equal((await app.inject({ method: 'POST', url: '/films/', payload: { name: 'x' } })).statusCode, 500)
  t.match(lines[1]!.msg, /^The table drift_film is missing in the database \(relation "drift_film" does not exist\)/)
})
