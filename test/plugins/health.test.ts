import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import http from 'node:http'
import net from 'node:net'
import { column, defineTable } from '../../lib/table/index.js'
import { createTables } from '../../lib/db/index.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { health, HEALTH_CLOSE_TIMEOUT_MS, HEALTH_TIMEOUT_MS, probeReplicas, type HealthOptions } from '../../plugins/health.js'
import { appPool, testDatabase } from '../helpers/db.js'
import { freePort, waitFor } from '../helpers/servers.js'

// SPEC §9.3: /health/live, /health/ready, and app.close() that drains within a bound.

const db = await testDatabase(t)
/** The embedded server is one session: a request held in flight there holds up every other one. */
const ONE_SESSION = db.embedded ? 'the embedded server serves one session: a request held in flight blocks the load this test puts beside it' : false
const item = defineTable('health_item', { label: column.varchar({ length: 40 }) })
await createTables(db.pool, [item])
// An export of ~20 MB: more than the loopback socket buffers of both ends hold, so a client that
// stops reading leaves the server's cursor open (the test of close cutting it needs that).
await db.pool.query("INSERT INTO health_item (label) SELECT rpad('row ' || n, 40, '.') FROM generate_series(1, 300000) AS n")

async function appOn (t: Test, connectionString: string, options: HealthOptions = {}, return503OnClosing = true): Promise<FastifyInstance> {
  const app = Fastify({ return503OnClosing })
  // A connection timeout, as docs/deployment.md asks: without one, a connection attempt to a
  // server that never answers would also hold up the pool's end() at close.
  await app.register(fastifyPostgres, { connectionString, max: db.max, connectionTimeoutMillis: 2000 })
  await app.register(health, options)
  await app.register(tableCrud, { table: item, prefix: '/items' })
  t.teardown(async () => await app.close())
  return app
}

t.test('invalid options are refused at registration, one message each', async (t) => {
  for (const [option, value] of [['timeout', 0], ['timeout', 1.5], ['closeTimeout', '10'], ['closeTimeout', -1]] as const) {
    const app = Fastify()
    await app.register(fastifyPostgres, appPool(db, 1))
    await t.rejects(async () => { await app.register(health, { [option]: value }) }, { message: `health: the option ${option} must be a positive integer (milliseconds)` }, `${option}: ${String(value)}`)
    await app.close()
  }
  t.equal(HEALTH_TIMEOUT_MS, 2000)
  t.equal(HEALTH_CLOSE_TIMEOUT_MS, 10_000)
})

t.test('live and ready while the primary answers', async (t) => {
  const app = await appOn(t, db.connectionString)
  const live = await app.inject('/health/live')
  t.equal(live.statusCode, 200)
  t.strictSame(live.json(), { status: 'live' })
  const ready = await app.inject('/health/ready')
  t.equal(ready.statusCode, 200)
  t.strictSame(Object.keys(ready.json()), ['status', 'primary', 'replicas'])
  t.strictSame(ready.json().replicas, [], 'no replicas configured')
  t.equal(ready.json().status, 'ready')
  t.equal(ready.json().primary.ok, true)
  t.type(ready.json().primary.ms, 'number')
})

t.test('ready is a 503 with Retry-After when the primary refuses connections; live stays 200', async (t) => {
  const app = await appOn(t, `postgres://postgres@127.0.0.1:${await freePort()}/test`)
  const ready = await app.inject('/health/ready')
  t.equal(ready.statusCode, 503)
  t.equal(ready.headers['retry-after'], '5')
  t.strictSame(ready.json(), {
    statusCode: 503,
    code: 'TABLECRUD_ERR_DB_UNAVAILABLE',
    error: 'Service Unavailable',
    message: 'The database is unavailable; try again shortly.',
    primary: { ok: false, ms: ready.json().primary.ms },
    replicas: []
  })
  t.notMatch(ready.body, /ECONNREFUSED|127\.0\.0\.1/, 'the cause stays in the log')
  t.equal((await app.inject('/health/live')).statusCode, 200)
})

t.test('ready is a 503 after its timeout when the primary accepts and never answers', async (t) => {
  const silent = net.createServer(() => {})
  const sockets = new Set<net.Socket>()
  silent.on('connection', (socket) => { sockets.add(socket) })
  const port = await freePort()
  await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => silent.close(resolve))
  })
  const app = await appOn(t, `postgres://postgres@127.0.0.1:${port}/test`, { timeout: 300 })
  const started = Date.now()
  const ready = await app.inject('/health/ready')
  t.equal(ready.statusCode, 503)
  t.ok(ready.json().primary.ms >= 290, `waited its timeout (${String(ready.json().primary.ms)} ms)`)
  t.ok(Date.now() - started < 5000, 'and not much longer')
})

/** Unhandled errors seen while `work` runs (the process would die of them in production). */
async function unhandledDuring (work: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = []
  const record = (error: unknown): void => { seen.push(error) }
  process.on('unhandledRejection', record)
  process.on('uncaughtException', record)
  try {
    await work()
  } finally {
    process.off('unhandledRejection', record)
    process.off('uncaughtException', record)
  }
  return seen
}

// Fastify's default answers a request on a kept-alive connection during the close with its own
// 503; `return503OnClosing: false` (docs/deployment.md) serves it, with `Connection: close`.
for (const return503OnClosing of [true, false]) {
  const others = return503OnClosing ? 'the rest get 503 or no connection' : 'the rest are served or get no connection'
  t.test(`close under load, return503OnClosing ${String(return503OnClosing)}: in-flight requests finish, ${others}, the pool ends, nothing unhandled`, { skip: ONE_SESSION }, async (t) => {
    const app = await appOn(t, db.connectionString, { closeTimeout: 5000 }, return503OnClosing)
    app.get('/slow', async () => (await app.pg.query('SELECT pg_sleep(0.5), 1 AS done')).rows[0].done)
    const port = await freePort()
    await app.listen({ port, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${port}`
    const statuses = new Map<number, number>()
    const failures: string[] = []
    const load = { running: true }
    const client = async (): Promise<void> => {
      while (load.running) {
        try {
          const answer = await fetch(`${base}/items/?__page_size=5`)
          await answer.arrayBuffer()
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
        } catch (error) {
          // Once the server stops listening a new connection is refused, or one reused is closed.
          failures.push(String((error as Error & { cause?: { code?: string } }).cause?.code))
        }
      }
    }
    const seen = await unhandledDuring(async () => {
      const clients = Array.from({ length: 4 }, client)
      await waitFor('the load to run', async () => (statuses.get(200) ?? 0) > 20)
      const slow = fetch(`${base}/slow`).then(async (answer) => ({ status: answer.status, body: await answer.text() }))
      await waitFor('the slow request to be in flight', async () =>
        (await db.pool.query("SELECT 1 FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(0.5)%' AND state = 'active'")).rowCount === 1)
      const closing = Date.now()
      await app.close()
      const closedIn = Date.now() - closing
      load.running = false
      await Promise.all(clients)
      t.strictSame(await slow, { status: 200, body: '1' }, 'the request in flight finished')
      t.ok(closedIn < 5000, `closed in ${closedIn} ms, before the close timeout`)
    })
    t.strictSame(seen, [], 'no unhandled error')
    const allowed = return503OnClosing ? [200, 503] : [200]
    t.strictSame([...statuses.keys()].filter((status) => !allowed.includes(status)), [], `only ${allowed.join(' and ')} (${JSON.stringify([...statuses])})`)
    t.strictSame([...new Set(failures)].filter((code) => code !== 'ECONNREFUSED' && code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET'), [], 'only refused or closed connections after the close')
    t.equal(app.pg.pool.totalCount, 0, 'the pool ended')
    t.equal(app.pg.pool.ending, true)
  })
}

t.test('close cuts an export still streaming at the close timeout: its cursor closes and the pool ends', { skip: ONE_SESSION }, async (t) => {
  const app = await appOn(t, db.connectionString, { closeTimeout: 400 })
  const port = await freePort()
  await app.listen({ port, host: '127.0.0.1' })
  let received = 0
  const response = await new Promise<http.IncomingMessage>((resolve) => http.get(`http://127.0.0.1:${port}/items/?__format=ndjson`, resolve))
  const ended = new Promise<boolean>((resolve) => {
    response.on('end', () => resolve(true))
    response.on('error', () => resolve(false))
    response.on('aborted', () => resolve(false))
  })
  // The client reads one chunk and stops reading: the server holds one batch and waits.
  await new Promise<void>((resolve) => response.once('data', (chunk: Buffer) => { received += chunk.length; response.pause(); resolve() }))
  t.equal(response.statusCode, 200)
  const pool = app.pg.pool
  t.ok(pool.totalCount - pool.idleCount >= 1, 'the export still holds its cursor\'s connection when the close begins')
  const seen = await unhandledDuring(async () => {
    const closing = Date.now()
    await app.close()
    const closedIn = Date.now() - closing
    t.ok(closedIn >= 390 && closedIn < 5000, `closed after the close timeout (${closedIn} ms)`)
  })
  response.resume()
  t.equal(await ended, false, `the export was cut (${received} bytes read of several MB)`)
  t.strictSame(seen, [], 'no unhandled error')
  t.equal(app.pg.pool.totalCount, 0, 'the cursor\'s connection was released and the pool ended')
})

t.test('replicas that do not answer within the timeout are reported as such', async (t) => {
  const hanging = { size: 2, read: async () => { throw new Error('not used') }, lags: async () => await new Promise<never>(() => {}) }
  t.strictSame(await probeReplicas(hanging, 50), [{ ok: false, lagMs: null }, { ok: false, lagMs: null }])
  t.strictSame(await probeReplicas({ ...hanging, lags: async () => [3, null] }, 50), [{ ok: true, lagMs: 3 }, { ok: false, lagMs: null }])
  t.strictSame(await probeReplicas(null, 50), [])
})
