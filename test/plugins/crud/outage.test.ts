import t, { type Test } from 'tap'
import net, { type AddressInfo } from 'node:net'
import pg from 'pg'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { createTables, dropTables } from '../../../lib/db/index.js'
import { HttpError } from '../../../lib/errors.js'
import { tableCrud, type TableCrudOptions } from '../../../plugins/crud/table-crud.js'
import { testDatabase, type TestDatabase } from '../../helpers/db.js'
import { usePooler } from '../../helpers/app.js'
import { ALL_TABLES, errorOf, json, movie, rowsOf } from './write-fixtures.js'

/**
 * The database going away (SPEC §1): 503 with Retry-After while it lasts, normal answers once
 * it is back, and the process never dies. The outage is a TCP proxy between the app and the
 * server being closed: the server itself serves other test files meanwhile.
 */

const db = await testDatabase(t)

const UNAVAILABLE = errorOf(503, 'TABLECRUD_ERR_DB_UNAVAILABLE', 'Service Unavailable', 'The database is unavailable; try again shortly.')
const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

/** A TCP proxy to the database: forwards, swallows what clients send (`stall`), or answers nothing (`blackhole`). */
class Proxy {
  mode: 'forward' | 'stall' | 'blackhole' = 'forward'
  /** Chunks a client sent while stalled: none of them reached the database. */
  swallowed = 0
  private server: net.Server | null = null
  private readonly sockets = new Set<net.Socket>()

  constructor (private readonly host: string, private readonly port: number) {}

  /** Listens on `port` (0: any free one) and resolves to the port. */
  async listen (port = 0): Promise<number> {
    const server = net.createServer((client) => { this.accept(client) })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => { server.off('error', reject); resolve() })
    })
    this.server = server
    return (server.address() as AddressInfo).port
  }

  private track (socket: net.Socket): void {
    this.sockets.add(socket)
    socket.on('close', () => this.sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }

  private accept (client: net.Socket): void {
    this.track(client)
    if (this.mode === 'blackhole') return
    const upstream = net.connect(this.port, this.host)
    this.track(upstream)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    client.on('data', (chunk) => {
      if (this.mode === 'stall') this.swallowed++
      else upstream.write(chunk)
    })
    upstream.on('data', (chunk) => client.write(chunk))
  }

  /** Cuts every open connection, idle or busy. */
  drop (): void {
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
  }

  /** The outage: no new connections, every open one cut. */
  async close (): Promise<void> {
    const server = this.server
    this.server = null
    if (server === null) return
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    this.drop()
    await closed
  }
}

/** The tables, created directly; then an app that reaches the database through a new proxy. */
async function proxiedApp (t: { teardown: (fn: () => unknown) => void }, database: TestDatabase, options: Partial<TableCrudOptions> = {}): Promise<{ app: FastifyInstance, proxy: Proxy, port: number }> {
  const ddl = new pg.Pool({ connectionString: database.connectionString, max: 1 })
  try {
    await dropTables(ddl, [...ALL_TABLES].reverse())
    await createTables(ddl, ALL_TABLES)
  } finally {
    await ddl.end()
  }
  const target = new URL(database.connectionString)
  const proxy = new Proxy(target.hostname, Number(target.port === '' ? 5432 : target.port))
  const port = await proxy.listen()
  const url = new URL(database.connectionString)
  url.hostname = '127.0.0.1'
  url.port = String(port)
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: url.toString(), max: database.max, connectionTimeoutMillis: 1000 })
  await usePooler(app, database)
  await app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false, ...options })
  await app.register(tableCrud, { table: movie, prefix: '/slow-movies', readOnly: false, queryTimeout: 300 })
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await proxy.close()
  })
  return { app, proxy, port }
}

/** Resolves once `check` holds, polling; fails the test after `ms`. */
async function until (t: { fail: (message: string) => void }, check: () => boolean, message: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) {
      t.fail(message)
      return
    }
    await sleep(10)
  }
}

async function expectUnavailable (t: Test, app: FastifyInstance, request: InjectOptions, name: string): Promise<void> {
  const res = await app.inject(request)
  t.equal(res.statusCode, 503, name)
  t.equal(res.headers['retry-after'], '5', `${name}: Retry-After`)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8', name)
  t.strictSame(json(res), UNAVAILABLE, name)
}

t.test('the database unreachable: 503 with Retry-After, no crash over idle connections, 201s once it is back', async (t) => {
  const { app, proxy, port } = await proxiedApp(t, db, {
    validators: { every: [(_crud, request) => { if (request.headers['x-refuse'] !== undefined) throw new HttpError(403, 'Refused') }] }
  })
  const first = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Alien' } })
  t.equal(first.statusCode, 201)
  t.equal(first.headers.location, '/movies/1/')
  t.ok(app.pg.pool.idleCount >= 1, 'an idle connection is open')

  await proxy.close()
  await until(t, () => app.pg.pool.totalCount === 0, 'the pool lets go of the dropped idle connections')

  await expectUnavailable(t, app, { method: 'POST', url: '/movies/', payload: { name: 'Heat' } }, 'POST')
  await expectUnavailable(t, app, { method: 'PUT', url: '/movies/1/', payload: { name: 'Aliens' } }, 'PUT')
  await expectUnavailable(t, app, { method: 'PATCH', url: '/movies/1/', payload: { rating: 1 } }, 'PATCH')
  await expectUnavailable(t, app, { method: 'DELETE', url: '/movies/1/' }, 'DELETE')
  await expectUnavailable(t, app, { method: 'GET', url: '/movies/1/' }, 'GET')
  await expectUnavailable(t, app, { method: 'POST', url: '/movies/', payload: { name: 'Heat' } }, 'POST again')

  const refused = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Heat' }, headers: { 'x-refuse': '1' } })
  t.equal(refused.statusCode, 403, 'validators run before any query: no 503 for a refused request')
  const invalid = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 5 } })
  t.equal(invalid.statusCode, 400, 'nor for a body that fails validation')
  const newRow = await app.inject({ method: 'GET', url: '/movies/new/' })
  t.equal(newRow.statusCode, 200, '/new/ needs no database')

  t.equal(await proxy.listen(port), port, 'the database is back, on the same address')
  const back = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Ikiru' } })
  t.equal(back.statusCode, 201)
  t.equal(back.headers.location, `/movies/${json(back).id}/`)
  t.match(json(back), { name: 'Ikiru' })
  const again = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Ran' } })
  t.equal(again.statusCode, 201)
  t.strictSame((await rowsOf(app, movie)).map((r) => r.name), ['Alien', 'Ikiru', 'Ran'], 'nothing from the outage was written, nothing lost')
})

t.test('a server that accepts connections and never answers: 503 after the connection timeout', async (t) => {
  const { app, proxy } = await proxiedApp(t, db)
  proxy.mode = 'blackhole'
  const started = Date.now()
  await expectUnavailable(t, app, { method: 'POST', url: '/movies/', payload: { name: 'Alien' } }, 'POST')
  const elapsed = Date.now() - started
  t.ok(elapsed >= 900 && elapsed < 10_000, `bounded by connectionTimeoutMillis: ${elapsed} ms`)
  proxy.drop()
  proxy.mode = 'forward'
  const res = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Alien' } })
  t.equal(res.statusCode, 201)
  t.strictSame((await rowsOf(app, movie)).map((r) => r.name), ['Alien'])
})

t.test('a connection dropped mid-request, and a statement past queryTimeout: 503, nothing written, then 201s', async (t) => {
  const { app, proxy } = await proxiedApp(t, db)
  t.equal((await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Alien' } })).statusCode, 201)

  proxy.mode = 'stall'
  const pending = app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Heat' } })
  await until(t, () => proxy.swallowed > 0, 'the INSERT is on its way')
  proxy.drop()
  proxy.mode = 'forward'
  const dropped = await pending
  t.equal(dropped.statusCode, 503, 'a busy connection cut')
  t.equal(dropped.headers['retry-after'], '5')
  t.strictSame(json(dropped), UNAVAILABLE)
  t.equal((await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Ikiru' } })).statusCode, 201)

  proxy.mode = 'stall'
  const started = Date.now()
  await expectUnavailable(t, app, { method: 'PATCH', url: '/slow-movies/1/', payload: { rating: 2 } }, 'PATCH past queryTimeout')
  t.ok(Date.now() - started < 10_000, 'bounded by queryTimeout')
  proxy.mode = 'forward'
  const patched = await app.inject({ method: 'PATCH', url: '/slow-movies/1/', payload: { rating: 3 } })
  t.equal(patched.statusCode, 200)
  t.match(json(patched), { id: 1, name: 'Alien', rating: 3 })
  t.strictSame((await rowsOf(app, movie)).map((r) => [r.name, r.rating]), [['Alien', 3], ['Ikiru', null]])
})
