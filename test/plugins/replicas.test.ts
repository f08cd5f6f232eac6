import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import pg from 'pg'
import { column, defineTable } from '../../lib/table/index.js'
import { createTables } from '../../lib/db/index.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { health } from '../../plugins/health.js'
import { LAG_SQL } from '../../plugins/replicas.js'
import { tablecrudDatabase, type TablecrudDatabaseOptions } from '../../plugins/tablecrud-database.js'
import { caughtUp, recoveryConflictsSeen, replicaMissing, startPrimary, startReplica, statementsSeen, type Cluster } from '../helpers/replica.js'
import { ask, waitFor } from '../helpers/servers.js'

// SPEC §9.2 against a real streaming replica: a primary of our own (initdb) and a replica made
// from it with pg_basebackup -R, both on loopback ports, started and stopped here. A read is
// seen to come from the replica when the replica's replay is paused: a row written since is
// missing from it.

const missing = replicaMissing()
const item = defineTable('replicated_item', { label: column.varchar({ length: 40 }) })

async function appOn (t: Test, primary: Cluster, replica: Cluster, options: Omit<TablecrudDatabaseOptions, 'replicas'> = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: primary.url('test'), max: 4, connectionTimeoutMillis: 5000 })
  await app.register(tablecrudDatabase, { replicas: [replica.url('test')], ...options })
  await app.register(health)
  await app.register(tableCrud, { table: item, prefix: '/items', readOnly: false })
  t.teardown(async () => await app.close())
  return app
}

const pause = async (replica: Cluster): Promise<void> => { await ask(replica.url(), 'SELECT pg_wal_replay_pause()') }
const resume = async (replica: Cluster): Promise<void> => { await ask(replica.url(), 'SELECT pg_wal_replay_resume()') }
const labels = async (app: FastifyInstance): Promise<string[]> =>
  (await app.inject('/items/?__order=id&__page_size=100')).json().rows.map((row: { label: string }) => row.label)

t.test('a streaming replica of our own primary', { skip: missing ?? false }, async (t) => {
  const primary = await startPrimary(t)
  const replica = await startReplica(t, primary)
  await ask(primary.url('test'), 'SELECT 1')
  const pool = { query: async (text: string) => ({ rows: await ask(primary.url('test'), text) }) }
  await createTables(pool, [item])
  await ask(primary.url('test'), "INSERT INTO replicated_item (label) VALUES ('first')")
  await caughtUp(primary, replica)

  t.test('the harness: the replica replays the primary\'s writes and refuses its own', async (t) => {
    t.strictSame(await ask(replica.url('test'), 'SELECT label, pg_is_in_recovery() AS standby FROM replicated_item'), [{ label: 'first', standby: true }])
    await t.rejects(ask(replica.url('test'), "INSERT INTO replicated_item (label) VALUES ('no')"), { code: '25006' })
  })

  t.test('reads come from the replica, writes and the reads of writes from the primary', async (t) => {
    const app = await appOn(t, primary, replica)
    await pause(replica)
    t.teardown(async () => await resume(replica))
    const created = await app.inject({ method: 'POST', url: '/items/', payload: { label: 'second' } })
    t.equal(created.statusCode, 201, 'written on the primary (the replica refuses writes)')
    t.equal(created.json().label, 'second')
    const seen = await statementsSeen(replica, 'replicated_item')
    t.strictSame(await labels(app), ['first'], 'the list is the paused replica\'s')
    t.ok(await statementsSeen(replica, 'replicated_item') > seen, 'and its log shows it')
    t.equal((await app.inject('/items/count/')).json().count, 1, 'so is the count')
    t.equal((await app.inject(`/items/${String(created.json().id)}/`)).statusCode, 404, 'and /:id/')
    const patched = await app.inject({ method: 'PATCH', url: `/items/${String(created.json().id)}/`, payload: { label: 'second, edited' } })
    t.equal(patched.statusCode, 200, 'a write route reads its row on the primary')
    await resume(replica)
    await caughtUp(primary, replica)
    t.strictSame(await labels(app), ['first', 'second, edited'], 'replayed, the replica serves the new rows')
    const ready = await app.inject('/health/ready')
    t.strictSame([ready.statusCode, ready.json().replicas], [200, [{ ok: true, lagMs: 0 }]], 'health reports the replica')
  })

  t.test('replay paused past maxReplicaLagMs: reads go to the primary, and back once it catches up', async (t) => {
    const app = await appOn(t, primary, replica, { maxReplicaLagMs: 500 })
    await pause(replica)
    t.teardown(async () => await resume(replica))
    t.equal((await app.inject({ method: 'POST', url: '/items/', payload: { label: 'third' } })).statusCode, 201)
    await waitFor('the replica to lag past 500 ms', async () => ((await ask<{ lag_ms: number | null }>(replica.url(), LAG_SQL))[0]!.lag_ms ?? Infinity) > 500)
    await waitFor('reads to move to the primary', async () => (await labels(app)).includes('third'), 10_000)
    t.ok((await labels(app)).includes('third'), 'the row written since the pause is read: the primary serves')
    await resume(replica)
    await caughtUp(primary, replica)
    // Caught up, it lags no more: its log shows the reads again (a paused replica cannot show
    // it, as the lag it measures after any write is the time since the last one it replayed).
    const before = await statementsSeen(replica, 'replicated_item')
    await waitFor('reads to come back to the replica', async () => {
      await labels(app)
      return await statementsSeen(replica, 'replicated_item') > before
    }, 10_000)
    t.pass('back on the replica')
  })

  t.test('a recovery conflict (40001) on the replica: that read is served by the primary, 200', async (t) => {
    // A replica of its own that cancels a query in conflict with replay at once (the default
    // delays replay up to 30 s first), and logs each error's SQLSTATE.
    const strict = await startReplica(t, primary, { settings: ['max_standby_streaming_delay=0', 'log_error_verbosity=verbose'] })
    // The app reads `gated_item`, a view whose rows say which server served them, through a
    // gate: an advisory lock the test holds on the replica makes the app's read wait there, in
    // flight, holding its lock on replicated_item, for as long as the test needs.
    const gate = 2323
    await ask(primary.url('test'), `CREATE FUNCTION conflict_gate () RETURNS boolean LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(${gate}); RETURN true; END $$`)
    await ask(primary.url('test'), `CREATE VIEW gated_item AS SELECT id, label,
      CASE WHEN pg_is_in_recovery() THEN 'replica' ELSE 'primary' END AS served_by FROM replicated_item WHERE conflict_gate()`)
    t.teardown(async () => { await ask(primary.url('test'), 'DROP VIEW gated_item; DROP FUNCTION conflict_gate ()') })
    await caughtUp(primary, strict)
    const gated = defineTable('gated_item', { label: column.varchar({ length: 40 }), served_by: column.text() })
    const app = Fastify()
    await app.register(fastifyPostgres, { connectionString: primary.url('test'), max: 4, connectionTimeoutMillis: 5000 })
    await app.register(tablecrudDatabase, { replicas: [strict.url('test')] })
    await app.register(tableCrud, { table: gated, prefix: '/gated' })
    t.teardown(async () => await app.close())
    const servedBy = (body: { rows: Array<{ served_by: string }> }): string[] => [...new Set(body.rows.map((row) => row.served_by))]
    const expected = (await ask<{ label: string }>(primary.url('test'), 'SELECT label FROM replicated_item ORDER BY id')).map((row) => row.label)

    const open = await app.inject('/gated/?__order=id')
    t.strictSame([open.statusCode, servedBy(open.json())], [200, ['replica']], 'with the gate open the replica serves the list')

    const holder = new pg.Client(strict.url('test'))
    await holder.connect()
    t.teardown(async () => await holder.end())
    await holder.query('SELECT pg_advisory_lock($1)', [gate])
    const before = await recoveryConflictsSeen(strict, 'FROM "gated_item"')
    const answer = app.inject('/gated/?__order=id')
    await waitFor('the app\'s read to wait at the gate on the replica', async () => (await ask(strict.url('test'),
      "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%gated_item%'")).length > 0)
    // Replaying this lock conflicts with the read's lock on the table: the replica cancels the read.
    await ask(primary.url('test'), 'BEGIN; LOCK TABLE replicated_item IN ACCESS EXCLUSIVE MODE; COMMIT')
    await waitFor('the replica to cancel the app\'s read with 40001', async () => await recoveryConflictsSeen(strict, 'FROM "gated_item"') > before)
    await holder.query('SELECT pg_advisory_unlock($1)', [gate])
    const served = await answer
    t.equal(served.statusCode, 200, 'the request is answered')
    t.strictSame(served.json().rows.map((row: { label: string, served_by: string }) => [row.label, row.served_by]),
      expected.map((label) => [label, 'primary']), 'every row of it by the primary')
    const after = await app.inject('/gated/?__order=id')
    t.strictSame([after.statusCode, servedBy(after.json())], [200, ['replica']], 'the replica stays in rotation: the next read is its')
  })

  t.test('the replica stopped under load: no 5xx, no acknowledged write lost', async (t) => {
    const app = await appOn(t, primary, replica, { maxReplicaLagMs: 5000 })
    const statuses = new Map<number, number>()
    const acknowledged: number[] = []
    const load = { running: true, sinceStop: 0, stopped: false }
    const count = (status: number): void => {
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      if (load.stopped) load.sinceStop++
    }
    const reader = async (): Promise<void> => {
      while (load.running) {
        for (const url of ['/items/?__page_size=5', '/items/count/', '/items/ids/', '/items/1/']) count((await app.inject(url)).statusCode)
      }
    }
    const writer = async (): Promise<void> => {
      for (let n = 0; load.running; n++) {
        const created = await app.inject({ method: 'POST', url: '/items/', payload: { label: `load ${n}` } })
        count(created.statusCode)
        if (created.statusCode === 201) acknowledged.push(created.json().id as number)
      }
    }
    const seen = await statementsSeen(replica, 'replicated_item')
    const clients = [reader(), reader(), writer()]
    await waitFor('the load to run', async () => (statuses.get(200) ?? 0) > 50)
    t.ok(await statementsSeen(replica, 'replicated_item') > seen, 'the replica served reads before it stopped')
    await replica.stop('immediate')
    load.stopped = true
    await waitFor('200 requests after the stop', async () => load.sinceStop > 200, 60_000)
    load.running = false
    await Promise.all(clients)
    const total = [...statuses.values()].reduce((a, b) => a + b, 0)
    t.strictSame([...statuses.keys()].filter((status) => status >= 500), [], `no 5xx in ${total} requests (${JSON.stringify([...statuses])})`)
    const stored = await ask<{ id: number }>(primary.url('test'), 'SELECT id FROM replicated_item WHERE id = ANY($1)', [acknowledged])
    t.equal(stored.length, acknowledged.length, `every acknowledged write is on the primary (${acknowledged.length})`)
    const ready = await app.inject('/health/ready')
    t.strictSame([ready.statusCode, ready.json().replicas], [200, [{ ok: false, lagMs: null }]], 'ready: the replica is reported, not required')
    t.comment(`replica stopped under load: ${total} requests, ${JSON.stringify(Object.fromEntries(statuses))}, ${acknowledged.length} writes acknowledged, 0 lost`)
  })
})
