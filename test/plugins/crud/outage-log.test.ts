import t from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { column, defineTable } from '../../../lib/table/index.js'
import { createTables } from '../../../lib/db/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { usePooler } from '../../helpers/app.js'
import { TcpProxy, through } from '../../helpers/proxy.js'

/**
 * Issue 18, point 6: an outage is a few log lines, not a stack trace per 503. The database is
 * cut for 5 s behind a TCP proxy while requests keep coming; every line the app logs at warn
 * or above is counted.
 */

const db = await testDatabase(t)
const gauge = defineTable('outage_gauge', { name: column.varchar({ length: 20 }) })
await createTables(db.pool, [gauge])
await db.pool.query("INSERT INTO outage_gauge (name) VALUES ('a')")

const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

t.test('a 5 s outage under load: one warning, one recovery, no error and no stack', async (t) => {
  const target = new URL(db.connectionString)
  const proxy = new TcpProxy(target.hostname, Number(target.port === '' ? 5432 : target.port))
  const port = await proxy.listen()
  const lines: Array<Record<string, any>> = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  await app.register(fastifyPostgres, { connectionString: through(db.connectionString, port), max: db.max, connectionTimeoutMillis: 1000 })
  await usePooler(app, db)
  await app.register(tableCrud, { table: gauge, prefix: '/gauges' })
  await app.ready()
  t.teardown(async () => { await app.close(); await proxy.close() })

  t.equal((await app.inject('/gauges/')).statusCode, 200, 'up')
  proxy.cut()
  const statuses = new Map<number, number>()
  const end = Date.now() + 5000
  // Two clients in a loop, each request answered as soon as the connection is refused.
  await Promise.all([0, 1].map(async () => {
    while (Date.now() < end) {
      const { statusCode } = await app.inject('/gauges/')
      statusCodes(statusCode)
    }
  }))
  function statusCodes (status: number): void { statuses.set(status, (statuses.get(status) ?? 0) + 1) }
  const unavailable = statuses.get(503) ?? 0
  t.strictSame([...statuses.keys()], [503], 'every request of the outage is a 503')
  t.ok(unavailable > 50, `${unavailable} requests answered 503 in 5 s`)

  proxy.restore()
  let back = 0
  while (back !== 200) {
    back = (await app.inject('/gauges/')).statusCode
    if (back !== 200) { statusCodes(back); await sleep(20) }
  }
  const after = await Promise.all(Array.from({ length: 20 }, async () => (await app.inject('/gauges/')).statusCode))
  t.strictSame(new Set(after), new Set([200]), 'back: 200s')

  const failed = statuses.get(503)!
  t.equal(lines.filter((l) => l.level >= 50).length, 0, 'no line at error level')
  t.equal(lines.filter((l) => l.err !== undefined || /\n\s+at /.test(JSON.stringify(l))).length, 0, 'no stack trace')
  const idleLost = lines.filter((l) => l.msg === 'idle PostgreSQL connection lost')
  t.ok(idleLost.length <= db.max, `at most one line per pooled connection cut while idle (${idleLost.length})`)
  const outage = lines.filter((l) => l.msg !== 'idle PostgreSQL connection lost')
  t.equal(outage.length, 2, `two lines for ${failed} 503s: ${JSON.stringify(outage.map((l) => l.msg))}`)
  // The first 503 is the refused connection, or the pooled one cut under a request.
  t.match(outage[0], { level: 40, msg: 'database unavailable: answering 503 until it is back', cause: { message: /ECONNREFUSED|Connection terminated/ } })
  t.match(outage[1], { level: 40, msg: new RegExp(`^database available again after \\d+ s; ${failed} requests answered 503$`), failed, cause: outage[0]!.cause })
  t.ok(outage[1]!.downMs >= 4500, `the outage's length: ${outage[1]!.downMs} ms`)
  t.equal(lines.length, idleLost.length + 2, 'the return is announced once')
})
