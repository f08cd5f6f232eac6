import t from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import pg from 'pg'
import { column, defineTable } from '../../lib/table/index.js'
import { createTables } from '../../lib/db/index.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { DATABASE_URL, testDatabase } from '../helpers/db.js'
import { databaseEntry, pgbouncerConsole, pgbouncerMissing, startPgBouncer } from '../helpers/pgbouncer.js'
import { ask } from '../helpers/servers.js'

// SPEC §9.1: a real PgBouncer 1.18 in transaction mode in front of the test server. It keeps no
// prepared statements, so a named statement prepared by one client is on a server connection
// another client gets next.

const missing = pgbouncerMissing(DATABASE_URL)
const db = await testDatabase(t)
const item = defineTable('pooled_item', { label: column.varchar({ length: 20 }) })

t.test('the [databases] entry: testDatabase\'s search_path becomes a connect_query', async (t) => {
  t.equal(databaseEntry('postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3Dtest_1_ab'),
    "tc = host=127.0.0.1 port=5432 dbname=test connect_query='SET search_path TO test_1_ab'")
  t.equal(databaseEntry('postgres://u@db.example/app'), 'tc = host=db.example port=5432 dbname=app')
})

t.test('through PgBouncer in transaction mode', { skip: missing ?? false }, async (t) => {
  const bouncer = await startPgBouncer(t, { upstream: db.directConnectionString, poolSize: 1 })
  await createTables(db.pool, [item])
  await db.pool.query("INSERT INTO pooled_item (label) VALUES ('a'), ('b')")

  t.test('the pool is in transaction mode, on this file\'s schema', async (t) => {
    t.strictSame(await ask(bouncer.connectionString, 'SELECT label FROM pooled_item ORDER BY id'), [{ label: 'a' }, { label: 'b' }])
    const pools = await pgbouncerConsole(bouncer, 'SHOW POOLS')
    t.equal(pools.find((pool) => pool.database === 'tc')?.pool_mode, 'transaction')
  })

  t.test('negative control: a named statement prepared by one client is on the server connection the next one gets', async (t) => {
    const first = new pg.Client(bouncer.connectionString)
    const second = new pg.Client(bouncer.connectionString)
    await first.connect()
    await second.connect()
    t.teardown(async () => { await first.end(); await second.end() })
    await first.query({ name: 'q', text: 'SELECT 1' })
    await t.rejects(second.query({ name: 'q', text: 'SELECT 1' }), { code: '42P05', message: 'prepared statement "q" already exists' })
  })

  t.test('the pooled mode\'s check (TEST_POOLER): what a client leaves on a server connection is found, what a transaction keeps to itself is not', async (t) => {
    const checked = await startPgBouncer(t, { upstream: db.directConnectionString, poolSize: 1, checkSessionState: true })
    const client = new pg.Client(checked.connectionString)
    await client.connect()
    t.teardown(async () => await client.end())
    await client.query('BEGIN')
    await client.query("SELECT set_config('work_mem', '8MB', true), pg_advisory_xact_lock(5)")
    await client.query({ name: 'inside', text: 'SELECT 1' })
    await client.query('DEALLOCATE inside')
    await client.query('COMMIT')
    // PgBouncer checks a server connection after a transaction before it serves the next one:
    // with one server connection, a statement answered means the check before it is recorded.
    const checkedSoFar = async (): Promise<string[]> => {
      await client.query('SELECT 1')
      return await checked.sessionStateLeft()
    }
    t.strictSame(await checkedSoFar(), [], 'a transaction-scoped setting and lock, a statement deallocated, an unnamed one')
    await client.query({ name: 'left', text: 'SELECT 1' })
    await client.query("SELECT set_config('work_mem', '8MB', false), pg_advisory_lock(5)")
    t.strictSame(await checkedSoFar(), ['SET work_mem, advisory lock 5, prepared statement left', 'prepared statement left'],
      'a named statement, then a session setting and lock besides')
  })

  t.test('negative control: TableCRUD with named statements (the default) fails through it', async (t) => {
    const app = Fastify()
    await app.register(fastifyPostgres, { connectionString: bouncer.connectionString, max: 4 })
    await app.register(tableCrud, { table: item, prefix: '/items' })
    t.teardown(async () => await app.close())
    // Four app connections share PgBouncer's one server connection: the first to prepare the
    // list's statement leaves it there, and every other one's Parse of the same name fails.
    const answers = await Promise.all(Array.from({ length: 8 }, async () => await app.inject('/items/')))
    const statuses = answers.map((answer) => answer.statusCode)
    t.ok(statuses.includes(500), `some requests fail (${statuses.join(' ')})`)
  })
})
