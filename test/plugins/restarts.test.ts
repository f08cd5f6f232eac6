import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { column, defineTable } from '../../lib/table/index.js'
import { createTables } from '../../lib/db/index.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { tablecrudDatabase } from '../../plugins/tablecrud-database.js'
import { DATABASE_URL, testDatabase } from '../helpers/db.js'
import { pgbouncerMissing, startPgBouncer } from '../helpers/pgbouncer.js'
import { replicaMissing, startPrimary } from '../helpers/replica.js'
import { ask, waitFor } from '../helpers/servers.js'

// SPEC §9, issue 23's failure figures: the primary restarted, and PgBouncer restarted, each
// under a load of writes and reads. While the database is away requests are 503 (never a 500,
// never a crash); once it is back they succeed again; and every write answered 201 is there.

const item = defineTable('restart_item', { label: column.varchar({ length: 40 }) })

interface Load {
  statuses: Map<number, number>
  /** Labels of the rows whose POST was answered 201. */
  acknowledged: string[]
  /** Requests that got no HTTP answer at all (none expected: inject has no socket to lose). */
  failures: string[]
  stop: () => Promise<void>
}

/** Four clients, each a loop of POST then GET of the list, until stopped. */
function load (app: FastifyInstance, tag: string): Load {
  const statuses = new Map<number, number>()
  const acknowledged: string[] = []
  const failures: string[] = []
  const state = { running: true }
  let n = 0
  const count = (status: number): void => { statuses.set(status, (statuses.get(status) ?? 0) + 1) }
  const client = async (): Promise<void> => {
    while (state.running) {
      const label = `${tag} ${n++}`
      try {
        const created = await app.inject({ method: 'POST', url: '/items/', payload: { label } })
        count(created.statusCode)
        if (created.statusCode === 201) acknowledged.push(label)
        count((await app.inject('/items/?__page_size=5')).statusCode)
      } catch (error) {
        failures.push(String(error))
      }
    }
  }
  const clients = Array.from({ length: 4 }, client)
  return { statuses, acknowledged, failures, stop: async () => { state.running = false; await Promise.all(clients) } }
}

const answered = (load: Load, status: number): number => load.statuses.get(status) ?? 0

/** Runs the load across `outage` (which takes the database away and brings it back) and checks what the clients saw. */
async function across (t: Test, app: FastifyInstance, labelsIn: () => Promise<string[]>, outage: (load: Load) => Promise<void>): Promise<void> {
  const running = load(app, t.name.slice(0, 20))
  await waitFor('writes to be acknowledged', async () => answered(running, 201) > 20)
  await outage(running)
  const before = answered(running, 201)
  await waitFor('writes to be acknowledged again', async () => answered(running, 201) > before + 20)
  await running.stop()
  const figures = JSON.stringify(Object.fromEntries([...running.statuses].sort()))
  t.comment(`statuses across the restart: ${figures}`)
  t.strictSame([...running.statuses.keys()].filter((status) => ![200, 201, 503].includes(status)), [], `only 200, 201 and 503 (${figures})`)
  t.ok(answered(running, 503) > 0, 'the outage was seen: some requests were 503')
  t.strictSame(running.failures, [], 'every request had an answer')
  const stored = new Set(await labelsIn())
  const lost = running.acknowledged.filter((label) => !stored.has(label))
  t.strictSame(lost, [], `no acknowledged write lost (${running.acknowledged.length} acknowledged)`)
}

t.test('the primary restarted under load', { skip: replicaMissing() ?? false }, async (t) => {
  const primary = await startPrimary(t)
  await createTables({ query: async (text: string) => ({ rows: await ask(primary.url('test'), text) }) }, [item])
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: primary.url('test'), max: 4, connectionTimeoutMillis: 2000 })
  await app.register(tableCrud, { table: item, prefix: '/items', readOnly: false })
  t.teardown(async () => await app.close())
  await across(t, app, async () => (await ask<{ label: string }>(primary.url('test'), 'SELECT label FROM restart_item')).map((row) => row.label), async (running) => {
    await primary.stop('fast')
    const before = answered(running, 503)
    await waitFor('requests to be refused while the primary is down', async () => answered(running, 503) > before + 4)
    await primary.start()
  })
})

t.test('PgBouncer restarted under load', { skip: pgbouncerMissing(DATABASE_URL) ?? false }, async (t) => {
  const db = await testDatabase(t)
  await createTables(db.pool, [item])
  const bouncer = await startPgBouncer(t, { upstream: db.directConnectionString })
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: bouncer.connectionString, max: 4, connectionTimeoutMillis: 2000 })
  await app.register(tablecrudDatabase, { preparedStatements: 'unnamed' })
  await app.register(tableCrud, { table: item, prefix: '/items', readOnly: false })
  t.teardown(async () => await app.close())
  await across(t, app, async () => (await db.pool.query<{ label: string }>('SELECT label FROM restart_item')).rows.map((row) => row.label), async (running) => {
    await bouncer.stop()
    const before = answered(running, 503)
    await waitFor('requests to be refused while PgBouncer is down', async () => answered(running, 503) > before + 4)
    await bouncer.start()
  })
})
