import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import pg, { type PoolClient } from 'pg'
import { databaseHelper, type Database } from '../../plugins/database.js'
import { REPLICA_CONNECTION_TIMEOUT_MS, tablecrudDatabase, type TablecrudDatabaseOptions } from '../../plugins/tablecrud-database.js'
import { appPool, testDatabase } from '../helpers/db.js'
import { createTables } from '../../lib/db/index.js'
import { column, defineTable } from '../../lib/table/index.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'

// SPEC §9: the options of tablecrudDatabase, and what 'unnamed' changes in the one helper
// through which the plugins query (statements without a name, export cursors in a
// transaction). Through a real PgBouncer: test/plugins/pooler-flows.test.ts.

const db = await testDatabase(t)
/** The embedded server is one session: it cannot terminate its own connection and serve on. */
const ONE_SESSION = db.embedded ? 'the embedded server is one session: it cannot terminate itself and serve on' : false
const thing = defineTable('replica_thing', { label: column.varchar({ length: 10 }) })

async function appWith (t: Test, options: TablecrudDatabaseOptions): Promise<{ app: FastifyInstance, helper: Database }> {
  const app = Fastify()
  await app.register(fastifyPostgres, appPool(db, 1))
  await app.register(tablecrudDatabase, options)
  await app.ready()
  t.teardown(async () => await app.close())
  return { app, helper: databaseHelper(app, 'somePlugin') }
}

t.test('invalid options are refused at registration, one message each', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ preparedStatements: 'none' }, "preparedStatements must be 'named' or 'unnamed'"],
    [{ replicas: [] }, 'replicas must be a non-empty array of connection strings or pg pool configs'],
    [{ replicas: 'postgres://replica' }, 'replicas must be a non-empty array of connection strings or pg pool configs'],
    [{ replicas: [null] }, 'replicas must be a non-empty array of connection strings or pg pool configs'],
    [{ replicas: [['postgres://replica']] }, 'replicas must be a non-empty array of connection strings or pg pool configs'],
    [{ replicas: ['postgres://replica'], maxReplicaLagMs: -1 }, 'maxReplicaLagMs must be an integer of milliseconds, 0 or more'],
    [{ replicas: ['postgres://replica'], maxReplicaLagMs: '5' }, 'maxReplicaLagMs must be an integer of milliseconds, 0 or more'],
    [{ maxReplicaLagMs: 100 }, 'maxReplicaLagMs needs replicas']
  ]
  for (const [options, message] of cases) {
    const app = Fastify()
    await app.register(fastifyPostgres, appPool(db, 1))
    await t.rejects(async () => { await app.register(tablecrudDatabase, options as TablecrudDatabaseOptions) }, { message: `tablecrudDatabase: the option ${message}` }, JSON.stringify(options))
    await app.close()
  }
})

t.test('registered after a plugin that queries the same database: refused, since it would be ignored', async (t) => {
  const app = Fastify()
  await app.register(fastifyPostgres, appPool(db, 1))
  t.teardown(async () => await app.close())
  await app.after()
  databaseHelper(app, 'tableCrud')
  await t.rejects(async () => { await app.register(tablecrudDatabase, { preparedStatements: 'unnamed' }) },
    { message: 'tablecrudDatabase: register it before the plugins that query this database (one already uses it)' })
})

const preparedCount = async (helper: Database): Promise<number> =>
  Number((await helper.run<{ n: string }>({ text: 'SELECT count(*) AS n FROM pg_prepared_statements', values: [] })).rows[0]!.n)

t.test("'named' (the default) prepares each statement on the connection; 'unnamed' prepares none", async (t) => {
  const named = await appWith(t, {})
  await named.helper.run({ text: 'SELECT $1::int AS n', values: [1] })
  t.ok(await preparedCount(named.helper) >= 2, 'named: this statement and the count itself')
  const unnamed = await appWith(t, { preparedStatements: 'unnamed' })
  await unnamed.helper.run({ text: 'SELECT $1::int AS n', values: [1] })
  await unnamed.helper.run({ text: 'SELECT $1::int AS n', values: [2] })
  t.equal(await preparedCount(unnamed.helper), 0, 'unnamed: nothing left on the connection')
})

/** A pool of one connection that records the transaction statements sent on it (BEGIN, COMMIT, ROLLBACK). */
function recordingPool (t: Test): { pool: pg.Pool, sent: string[] } {
  const pool = new pg.Pool(appPool(db, 1))
  t.teardown(async () => await pool.end())
  const sent: string[] = []
  const wrapped = new WeakSet<object>()
  pool.on('connect', (client) => {
    if (wrapped.has(client)) return
    wrapped.add(client)
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    Object.assign(client, {
      query: (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown }).text
        if (typeof text === 'string' && /^(BEGIN|COMMIT|ROLLBACK)$/.test(text)) sent.push(text)
        return query(...args)
      }
    })
  })
  return { pool, sent }
}

t.test('an export\'s cursor: alone with named statements, in BEGIN ... COMMIT with unnamed ones', async (t) => {
  for (const [preparedStatements, expected] of [['named', []], ['unnamed', ['BEGIN', 'COMMIT']]] as const) {
    const { pool, sent } = recordingPool(t)
    const app = Fastify()
    t.teardown(async () => await app.close())
    await app.register(tablecrudDatabase, { pool, preparedStatements })
    const helper = databaseHelper(app, 'somePlugin', { pool })
    const cursor = await helper.cursor({ text: 'SELECT n FROM generate_series(1, 3) AS n', values: [] })
    t.strictSame(await cursor.read(2), [{ n: 1 }, { n: 2 }])
    t.strictSame(await cursor.read(2), [{ n: 3 }])
    await cursor.close()
    t.strictSame(sent, expected, preparedStatements)
  }
})

t.test("'unnamed': a cursor that fails is rolled back and its connection kept; one whose connection fails is dropped", { skip: ONE_SESSION }, async (t) => {
  const { app, helper } = await appWith(t, { preparedStatements: 'unnamed' })
  const failing = await helper.cursor({ text: 'SELECT 1 / (n - 2) AS x FROM generate_series(1, 3) AS n', values: [] })
  await t.rejects(failing.read(5), { code: '22012' })
  await failing.close()
  t.equal(app.pg.pool.totalCount, 1, 'kept')
  t.equal((await helper.run<{ one: number }>({ text: 'SELECT 1 AS one', values: [] })).rows[0]!.one, 1, 'and usable: the failed transaction was rolled back')

  const cut = await helper.cursor({ text: 'SELECT pg_terminate_backend(pg_backend_pid()) FROM generate_series(1, 2)', values: [] })
  await t.rejects(cut.read(1), { code: '57P01' })
  await cut.close()
  t.equal(app.pg.pool.totalCount, 0, 'dropped, without a COMMIT sent to a dead connection')

  const done = await helper.cursor({ text: 'SELECT n /* marker-cut */ FROM generate_series(1, 1) AS n', values: [] })
  t.strictSame(await done.read(5), [{ n: 1 }])
  await db.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%marker-cut%' AND pid <> pg_backend_pid()")
  await done.close()
  t.equal(app.pg.pool.totalCount, 0, 'a COMMIT that fails drops the connection')
})

t.test("'unnamed': a BEGIN that fails releases the connection with its error", { skip: ONE_SESSION }, async (t) => {
  const released: unknown[] = []
  const client = {
    on: () => client,
    off: () => client,
    release: (error?: unknown) => { released.push(error) },
    query: (_config: unknown, _values: unknown, callback: (error: Error) => void) => { callback(new Error('the connection is gone')) }
  } as unknown as PoolClient
  const pool = { connect: async () => client }
  const app = Fastify()
  t.teardown(async () => await app.close())
  await app.register(tablecrudDatabase, { pool, preparedStatements: 'unnamed' })
  await app.ready()
  const helper = databaseHelper(app, 'somePlugin', { pool })
  await t.rejects(helper.cursor({ text: 'SELECT 1', values: [] }), { message: 'the connection is gone' })
  t.strictSame(released.map(String), ['Error: the connection is gone'])
})

t.test('a replica that answers an error (here: a server without the table) leaves the read, list or export, to the primary', async (t) => {
  const empty = `${new URL(db.connectionString).searchParams.get('options')!.split('=')[1]!}_empty`
  await db.pool.query(`CREATE SCHEMA ${empty}`)
  t.teardown(async () => { await db.pool.query(`DROP SCHEMA ${empty} CASCADE`) })
  const url = new URL(db.connectionString)
  url.searchParams.set('options', `-c search_path=${empty}`)
  await createTables(db.pool, [thing])
  await db.pool.query("INSERT INTO replica_thing (label) VALUES ('a'), ('b')")
  for (const replica of [url.toString(), db.connectionString]) {
    const app = Fastify()
    await app.register(fastifyPostgres, appPool(db, 2))
    // The replica's pool lets its idle connection go as the app's does (the embedded server serves one at a time).
    await app.register(tablecrudDatabase, { replicas: [{ ...appPool(db), connectionString: replica }] })
    await app.register(tableCrud, { table: thing, prefix: '/things' })
    t.teardown(async () => await app.close())
    const list = await app.inject('/things/?__order=id')
    t.strictSame([list.statusCode, list.json().rows.map((row: { label: string }) => row.label)], [200, ['a', 'b']])
    const exported = await app.inject('/things/?__format=ndjson&__order=id&__visible_fields=label')
    t.strictSame([exported.statusCode, exported.body], [200, '{"label":"a"}\n{"label":"b"}\n'])
  }
})

t.test('replicas: pools of their own with a connection timeout, ended with the app', async (t) => {
  const { app } = await appWith(t, { replicas: [db.connectionString, { connectionString: db.connectionString, max: 1 }], maxReplicaLagMs: 1000 })
  t.equal(REPLICA_CONNECTION_TIMEOUT_MS, 2000)
  await app.close()
  const unchecked = await appWith(t, { replicas: [db.connectionString] })
  await unchecked.app.close()
  t.pass('closed with its replica pools')
})
