import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import {
  answeredByDatabase, causeOf, database, databaseHealth, DatabaseHealth, databaseHelper, OUTAGE_LOG_INTERVAL_MS, queryFresh,
  type Database, type DatabaseOptions
} from '../../plugins/database.js'
import { appPool, testDatabase } from '../helpers/db.js'
import { SchemaDriftError, schemaDriftHint } from '../../lib/db/check.js'
import { tablecrudDatabase } from '../../plugins/tablecrud-database.js'

const db = await testDatabase(t)
const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

t.test('the pool gets one error listener, however many plugins ask, and an idle connection lost is only logged', async (t) => {
  const app = Fastify()
  await app.register(fastifyPostgres, appPool(db))
  await app.ready()
  t.teardown(async () => await app.close())
  const before = app.pg.pool.listenerCount('error')
  t.equal(database(app, 'first'), app.pg)
  database(app, 'second')
  t.equal(app.pg.pool.listenerCount('error'), before + 1)
  t.doesNotThrow(() => app.pg.pool.emit('error', new Error('terminating connection due to administrator command')))
  t.equal((await app.pg.query('SELECT 1 AS one')).rows[0].one, 1, 'the pool still serves')
})

t.test('without @fastify/postgres the plugin is told what to register', async (t) => {
  const app = Fastify()
  t.throws(() => database(app, 'somePlugin'), { message: 'somePlugin: register @fastify/postgres before this plugin (it uses fastify.pg)' })
  await app.close()
})

t.test('DatabaseHealth: the first failure, a count per interval, quiet when nothing fails, the return once', async (t) => {
  const lines: Array<[Record<string, any>, string]> = []
  let clock = 1_000_000
  const health = new DatabaseHealth({ warn: (object, message) => { lines.push([object, message]) } }, 40, () => clock)
  t.teardown(() => health.stop())
  health.answered()
  t.equal(lines.length, 0, 'up: a success says nothing')
  t.equal(health.down, false)
  health.failed(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))
  health.failed(new Error('later'))
  health.failed(new Error('later'))
  t.equal(health.down, true)
  t.strictSame(lines, [[{ cause: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' } }, 'database unavailable: answering 503 until it is back']])
  await sleep(60)
  t.strictSame(lines[1], [{ failed: 2, intervalMs: 40 }, 'database still unavailable: 2 requests answered 503 in the last 0.04 s'])
  await sleep(100)
  t.equal(lines.length, 2, 'an interval without failures: no line, and the timer stops')
  health.failed('a string')
  clock += 12_400
  health.answered()
  t.strictSame(lines[2], [
    { cause: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' }, failed: 4, downMs: 12_400 },
    'database available again after 12 s; 4 requests answered 503'
  ])
  health.answered()
  await sleep(60)
  t.equal(lines.length, 3, 'announced once; no more counts')
  t.equal(health.down, false)
  t.strictSame(causeOf('a string'), { code: null, message: 'a string' })
  t.strictSame(causeOf(null), { code: null, message: 'null' })
  t.strictSame(causeOf({ code: 5, message: 'odd' }), { code: null, message: 'odd' })
})

t.test('a new connection of the pool ends an outage; the default interval', async (t) => {
  const app = Fastify()
  await app.register(fastifyPostgres, appPool(db))
  await app.ready()
  t.teardown(async () => await app.close())
  database(app, 'plugin')
  const health = databaseHealth(app)
  t.equal(databaseHealth(app), health, 'one per application')
  health.failed(new Error('down'))
  t.equal(health.down, true)
  await app.pg.query('SELECT 1')
  t.equal(health.down, false, 'a connection opened')
  t.equal(OUTAGE_LOG_INTERVAL_MS, 10_000)
})

t.test('queryFresh: a named statement made stale by a migration runs again unnamed, once; other errors pass', async (t) => {
  const client = await db.pool.connect()
  await client.query('CREATE TABLE fresh_film (id serial PRIMARY KEY, name varchar(5))')
  await client.query("INSERT INTO fresh_film (name) VALUES ('Alien')")
  t.teardown(() => client.release(true))
  const select = { name: 'fresh_select', text: 'SELECT id, name FROM fresh_film ORDER BY id' }
  const update = { name: 'fresh_update', text: 'UPDATE fresh_film SET name = $1 WHERE id = 1 RETURNING name', values: ['Heat'] }
  const first = await queryFresh(client, select)
  t.equal(first.stale, false)
  t.strictSame(first.result.rows, [{ id: 1, name: 'Alien' }])
  await queryFresh(client, update)
  // On the same connection: the embedded server has only one, and a plan is stale on every connection alike.
  await client.query('ALTER TABLE fresh_film ALTER COLUMN name TYPE varchar(200)')
  const read = await queryFresh(client, select)
  t.equal(read.stale, true, 'stale: the caller discards the connection')
  t.strictSame(read.result.rows, [{ id: 1, name: 'Heat' }])
  const write = await queryFresh(client, { ...update, values: ['Ran'] })
  t.equal(write.stale, true)
  t.strictSame(write.result.rows, [{ name: 'Ran' }])
  t.strictSame((await client.query('SELECT name FROM fresh_film')).rows, [{ name: 'Ran' }], 'the write ran once')
  await t.rejects(queryFresh(client, { name: 'fresh_bad', text: 'SELECT 1/0' }), { code: '22012' }, 'another error is thrown')
  await t.rejects(queryFresh(client, { text: 'SELECT nope FROM fresh_film' }), { code: '42703' }, 'an unnamed statement is not retried')
})

/** An app on the test database with the helper over its pool, closed at the end. */
async function helperApp (t: Test, options: DatabaseOptions = {}): Promise<{ app: FastifyInstance, helper: Database }> {
  const app = Fastify()
  await app.register(fastifyPostgres, appPool(db, 1))
  await app.ready()
  t.teardown(async () => await app.close())
  return { app, helper: databaseHelper(app, 'somePlugin', options) }
}

t.test('run: a named prepared statement, wire type parsers, and the connection kept after an error the database answered', async (t) => {
  const { app, helper } = await helperApp(t)
  const statement = { text: "SELECT $1::int AS n, timestamp '2020-01-02 03:04:05.123456' AS at", values: [7] }
  const { rows } = await helper.run(statement)
  t.strictSame(rows, [{ n: 7, at: '2020-01-02T03:04:05.123456' }], 'timestamps keep their text')
  const pid = (await helper.run<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid', values: [] })).rows[0]!.pid
  const prepared = await helper.run<{ name: string }>({ text: 'SELECT name FROM pg_prepared_statements WHERE statement = $1', values: [statement.text] })
  t.equal(prepared.rows.length, 1, 'prepared on the connection')
  t.match(prepared.rows[0]!.name, /^tablecrud_\d+$/)
  const custom = { text: 'SELECT $1::int AS custom_plan', values: [8], plan: 'custom' as const }
  t.strictSame((await helper.run(custom)).rows, [{ custom_plan: 8 }])
  const unnamed = await helper.run<{ name: string }>({ text: 'SELECT name FROM pg_prepared_statements WHERE statement = $1', values: [custom.text] })
  t.strictSame(unnamed.rows, [], "plan 'custom': sent unnamed, planned for its values each time")
  await t.rejects(helper.run({ text: 'SELECT 1 / $1::int AS x', values: [0] }), { code: '22012' })
  t.equal((await helper.run<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid', values: [] })).rows[0]!.pid, pid, 'the same connection serves on')
  t.equal(app.pg.pool.totalCount, 1)
})

t.test("run: plan 'custom' texts past the cap of kept configs still run, unnamed", async (t) => {
  const { helper } = await helperApp(t)
  // The helper keeps the configs of a thousand custom-planned texts; the ones after are built each time.
  for (let i = 0; i <= 1000; i++) {
    const { rows } = await helper.run<{ n: number }>({ text: `SELECT $1::int + ${i} AS n`, values: [1], plan: 'custom' })
    if (rows[0]!.n !== i + 1) t.fail(`text ${i} answered ${rows[0]!.n}`)
  }
  const last = { text: 'SELECT $1::int AS past_the_cap', values: [9], plan: 'custom' as const }
  t.strictSame((await helper.run(last)).rows, [{ past_the_cap: 9 }])
  t.strictSame((await helper.run(last)).rows, [{ past_the_cap: 9 }], 'and again')
  const prepared = await helper.run<{ n: string }>({ text: 'SELECT count(*) AS n FROM pg_prepared_statements', values: [] })
  t.equal(prepared.rows[0]!.n, '1', 'none of them prepared: only the count itself is')
})

t.test('run: a connection that fails is dropped, and its error does not crash the process', { skip: db.embedded ? 'the embedded server is one session: it cannot terminate itself and serve on' : false }, async (t) => {
  const { app, helper } = await helperApp(t)
  const pid = (await helper.run<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid', values: [] })).rows[0]!.pid
  await t.rejects(helper.run({ text: 'SELECT pg_terminate_backend(pg_backend_pid())', values: [] }))
  t.not((await helper.run<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid', values: [] })).rows[0]!.pid, pid, 'a new connection')
  t.equal(app.pg.pool.totalCount, 1)
})

t.test('query: pg\'s query(text, values), unnamed, with pg\'s type parsers and the pool\'s timeout', async (t) => {
  const { helper } = await helperApp(t)
  const { rows } = await helper.query("SELECT $1::text AS s, timestamp '2020-01-02 03:04:05' AS at", ['x'])
  t.equal(rows[0].s, 'x')
  t.ok(rows[0].at instanceof Date, 'pg\'s own parser, as fastify.pg.query gives')
  const pid = (await helper.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
  await t.rejects(helper.query('SELECT 1 / $1::int AS x', [0]), { code: '22012' })
  t.equal((await helper.query('SELECT pg_backend_pid() AS pid')).rows[0].pid, pid, 'an error the database answered keeps the connection')
})

t.test('query timeout: a statement past it rejects and the connection is dropped', { skip: db.embedded ? 'the embedded server cannot be interrupted while it sleeps' : false }, async (t) => {
  const { helper } = await helperApp(t, { queryTimeout: 50 })
  await t.rejects(helper.run({ text: 'SELECT pg_sleep(1)', values: [] }), { message: 'Query read timeout' })
  t.equal((await helper.run<{ one: number }>({ text: 'SELECT 1 AS one', values: [] })).rows[0]!.one, 1)
})

t.test('transaction: commits what the work did, rolls back on any error', async (t) => {
  const { helper } = await helperApp(t)
  await helper.run({ text: 'CREATE TABLE tx_probe (n int)', values: [] })
  const n = await helper.transaction(async (tx) => {
    await tx.run({ text: 'INSERT INTO tx_probe VALUES ($1)', values: [1] })
    return (await tx.run<{ count: string }>({ text: 'SELECT count(*) AS count FROM tx_probe', values: [] })).rows[0]!.count
  })
  t.equal(n, '1')
  await t.rejects(helper.transaction(async (tx) => {
    await tx.run({ text: 'INSERT INTO tx_probe VALUES ($1)', values: [2] })
    throw new Error('changed my mind')
  }), { message: 'changed my mind' })
  const { rows } = await helper.run<{ n: number }>({ text: 'SELECT n FROM tx_probe ORDER BY n', values: [] })
  t.strictSame(rows, [{ n: 1 }], 'the second insert rolled back')
  await helper.run({ text: 'DROP TABLE tx_probe', values: [] })
})

t.test('transaction: a connection whose ROLLBACK fails is dropped', { skip: db.embedded ? 'the embedded server is one session: it cannot terminate itself and serve on' : false }, async (t) => {
  const { app, helper } = await helperApp(t)
  await t.rejects(helper.transaction(async (tx) => {
    await tx.run({ text: 'SELECT pg_terminate_backend(pg_backend_pid())', values: [] })
  }))
  t.equal((await helper.run<{ one: number }>({ text: 'SELECT 1 AS one', values: [] })).rows[0]!.one, 1, 'a fresh connection serves')
  t.equal(app.pg.pool.totalCount, 1)
})

t.test('transaction: a statement past the timeout drops its connection without a ROLLBACK queued behind it', { skip: db.embedded ? 'the embedded server cannot be interrupted while it sleeps' : false }, async (t) => {
  const { app, helper } = await helperApp(t, { queryTimeout: 300 })
  const { sent } = recordTransactions(app, () => true)
  await t.rejects(helper.transaction(async (tx) => { await tx.run({ text: 'SELECT pg_sleep(1)', values: [] }) }), { message: 'Query read timeout' })
  t.strictSame(sent, ['BEGIN', 'SELECT pg_sleep(1)'], 'no ROLLBACK')
  t.equal(app.pg.pool.totalCount, 0, 'dropped')
  t.equal((await helper.run<{ one: number }>({ text: 'SELECT 1 AS one', values: [] })).rows[0]!.one, 1, 'a fresh connection serves')
})

/** The BEGINs and COMMITs (or the texts `record` picks) each new connection of the app's pool is sent, and how many connections it opened. */
function recordTransactions (app: FastifyInstance, record: (text: string) => boolean = (text) => text === 'BEGIN' || text === 'COMMIT'): { sent: string[], connections: () => number } {
  const sent: string[] = []
  let connections = 0
  app.pg.pool.on('connect', (client) => {
    connections++
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    Object.assign(client, {
      query: (...args: unknown[]) => {
        const text = (args[0] as { text: string }).text
        if (record(text)) sent.push(text)
        return query(...args)
      }
    })
  })
  return { sent, connections: () => connections }
}

const INT4 = 23
const INT8 = 20

t.test('single: in a transaction until the connection has shown the result types asked for, then the statement alone', async (t) => {
  const { app, helper } = await helperApp(t)
  const { sent, connections } = recordTransactions(app)
  await helper.run({ text: 'CREATE TABLE single_probe (id serial PRIMARY KEY, n int UNIQUE)', values: [] })
  const types = [INT4, INT4]
  const insert = (n: number): { text: string, values: number[] } => ({ text: 'INSERT INTO single_probe (n) VALUES ($1) RETURNING id, n', values: [n] })
  const answer = (result: { rows: Array<Record<string, unknown>> }): unknown => result.rows[0]!.n
  t.equal(await helper.single(insert(1), types, answer), 1)
  t.strictSame(sent, ['BEGIN', 'COMMIT'], 'the first run teaches the connection')
  t.equal(await helper.single(insert(2), types, answer), 2)
  t.strictSame(sent, ['BEGIN', 'COMMIT'], 'then alone')
  await t.rejects(helper.single(insert(2), types, answer), { code: '23505' }, 'a refusal of the statement alone is the write\'s')
  t.equal(connections(), 1, 'and keeps its connection')
  t.strictSame(sent, ['BEGIN', 'COMMIT'])
  const copy = [...types]
  t.equal(await helper.single(insert(3), copy, answer), 3)
  t.strictSame(sent, ['BEGIN', 'COMMIT', 'BEGIN', 'COMMIT'], 'other types asked for: a transaction again')
  t.equal(await helper.single(insert(4), null, answer), 4)
  t.equal(sent.length, 6, 'no types: a transaction')
  const other = (n: number): { text: string, values: number[] } => ({ text: 'INSERT INTO single_probe (n) VALUES ($1) RETURNING n', values: [n] })
  const two = [INT4, INT4]
  const int8 = [INT8]
  for (const [n, wrong] of [[5, two], [6, int8], [7, int8]] as const) t.equal(await helper.single(other(n), wrong, answer), n)
  t.equal(sent.length, 12, 'types the result does not have (fewer columns, another type): a transaction each time')
  // With the types trusted, only a value of those types can fail an answer (a NaN a trigger
  // writes in a real column): the statement alone has committed it (docs/performance.md).
  await t.rejects(helper.single(insert(8), copy, () => { throw new Error('cannot answer') }), { message: 'cannot answer' })
  // ...and the log line says so, not that it was rolled back.
  const drift = await helper.single(insert(9), copy, () => { throw new SchemaDriftError('single_probe', 'n', 'integer', new Error('NaN')) }).catch((error: unknown) => error)
  t.match(schemaDriftHint(drift), /^The column n of the table single_probe holds a value its definition \(integer\) cannot answer \(NaN\): the write was committed \(it ran alone, outside a transaction\); /)
  const { rows } = await helper.run<{ n: number }>({ text: 'SELECT n FROM single_probe ORDER BY n', values: [] })
  t.strictSame(rows.map((r) => r.n), [1, 2, 3, 4, 5, 6, 7, 8, 9], 'each written once')
})

t.test('single: a statement the result types of which a migration changed goes back to a transaction, on a fresh connection', async (t) => {
  const { app, helper } = await helperApp(t)
  const { sent, connections } = recordTransactions(app)
  await helper.run({ text: 'CREATE TABLE single_stale (id serial PRIMARY KEY, n int)', values: [] })
  const insert = (n: number): { text: string, values: number[] } => ({ text: 'INSERT INTO single_stale (n) VALUES ($1) RETURNING id, n', values: [n] })
  const answer = (result: { rows: Array<Record<string, unknown>> }): unknown => result.rows[0]!.n
  const types = [INT4, INT4]
  await helper.single(insert(1), types, answer)
  await helper.single(insert(2), types, answer)
  t.strictSame(sent, ['BEGIN', 'COMMIT'])
  await helper.run({ text: 'ALTER TABLE single_stale ALTER COLUMN n TYPE bigint', values: [] })
  t.equal(await helper.single(insert(3), types, answer), '3', 'answered from the new type, in a transaction')
  t.strictSame(sent, ['BEGIN', 'COMMIT', 'BEGIN', 'COMMIT'])
  t.equal(connections(), 2, 'the stale connection was dropped')
  const { rows } = await helper.run<{ n: string }>({ text: 'SELECT n FROM single_stale ORDER BY n', values: [] })
  t.strictSame(rows.map((r) => r.n), ['1', '2', '3'])
})

t.test('single: a statement alone that fails with its connection drops it', { skip: db.embedded ? 'the embedded server cannot be interrupted while it sleeps' : false }, async (t) => {
  const { app, helper } = await helperApp(t, { queryTimeout: 50 })
  const sleep = (seconds: number): { text: string, values: number[] } => ({ text: 'SELECT pg_sleep($1::float8) AS slept', values: [seconds] })
  // The same array both times: single trusts a connection for the very types it was shown.
  const types = [2278] // void
  const { sent } = recordTransactions(app)
  await helper.single(sleep(0), types, () => null)
  await t.rejects(helper.single(sleep(1), types, () => null), { message: 'Query read timeout' })
  t.strictSame(sent, ['BEGIN', 'COMMIT'], 'the first in a transaction, the second alone')
  t.equal(app.pg.pool.totalCount, 0, 'dropped')
})

t.test('single: with unnamed statements (a transaction-mode pooler), always a transaction', async (t) => {
  const app = Fastify()
  await app.register(fastifyPostgres, appPool(db, 1))
  await app.register(tablecrudDatabase, { preparedStatements: 'unnamed' })
  await app.ready()
  t.teardown(async () => await app.close())
  const helper = databaseHelper(app, 'somePlugin')
  const { sent } = recordTransactions(app)
  const types = [INT4]
  for (const n of [1, 2]) t.equal(await helper.single({ text: 'SELECT $1::int AS n', values: [n] }, types, (result) => result.rows[0]!.n), n)
  t.strictSame(sent, ['BEGIN', 'COMMIT', 'BEGIN', 'COMMIT'])
})

t.test('answeredByDatabase: only errors the server answered without ending the session', async (t) => {
  const cases: Array<[string, unknown, boolean]> = [
    ['a constraint', { severity: 'ERROR', code: '23505' }, true],
    ['bad data', { severity: 'ERROR', code: '22P02' }, true],
    ['a shutdown', { severity: 'FATAL', code: '57P01' }, false],
    ['a panic', { severity: 'PANIC', code: 'XX000' }, false],
    ['a connection exception', { severity: 'ERROR', code: '08006' }, false],
    ['an operator intervention', { severity: 'ERROR', code: '57P02' }, false],
    ['a socket error', { code: 'ECONNRESET' }, false],
    ['a timeout', new Error('Query read timeout'), false],
    ['no code', { severity: 'ERROR' }, false]
  ]
  for (const [what, error, expected] of cases) t.equal(answeredByDatabase(error), expected, what)
})

t.test('cursor: batches on a connection of its own, released once however often it is closed', async (t) => {
  const { app, helper } = await helperApp(t)
  const cursor = await helper.cursor<{ n: number }>({ text: 'SELECT n FROM generate_series(1, 5) AS n', values: [] })
  t.equal(app.pg.pool.idleCount, 0, 'the connection is held')
  t.strictSame(await cursor.read(3), [{ n: 1 }, { n: 2 }, { n: 3 }])
  t.strictSame(await cursor.read(3), [{ n: 4 }, { n: 5 }])
  t.strictSame(await cursor.read(3), [])
  await cursor.close()
  // pg-pool throws on a second release of one client.
  await cursor.close()
  t.equal(app.pg.pool.idleCount, 1, 'released')
  t.equal(app.pg.pool.totalCount, 1, 'and kept')
})

t.test('cursor: a connection that fails under it is dropped on close', { skip: db.embedded ? 'the embedded server is one session: it cannot terminate itself and serve on' : false }, async (t) => {
  const { app, helper } = await helperApp(t)
  const cursor = await helper.cursor({ text: 'SELECT pg_terminate_backend(pg_backend_pid()) FROM generate_series(1, 2)', values: [] })
  await t.rejects(cursor.read(1), { code: '57P01' })
  await cursor.close()
  t.equal(app.pg.pool.totalCount, 0, 'the pool dropped it')
  t.equal((await helper.run<{ one: number }>({ text: 'SELECT 1 AS one', values: [] })).rows[0]!.one, 1, 'a fresh connection serves')
})
