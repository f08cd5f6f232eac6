import t from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { buildApp } from '../../helpers/app.js'
import { testDatabase } from '../../helpers/db.js'
import { closeIdleConnections, json } from '../../fixtures/movies.js'

/*
 * Counts that scale (SPEC §7.2): with countMode 'estimated', a total the planner puts above
 * exactCountLimit is its estimate; below it, an exact count. Exact mode keeps its body.
 */

const reading = defineTable('reading', {
  sensor: column.integer(),
  value: column.real()
})

const db = await testDatabase(t)
if (db.embedded) closeIdleConnections(db.pool)
const app = await buildApp(t, db, [reading], async (app) => {
  await app.register(tableCrud, { table: reading, prefix: '/exact' })
  await app.register(tableCrud, { table: reading, prefix: '/estimated', countMode: 'estimated', exactCountLimit: 1000 })
  await app.register(tableCrud, { table: reading, prefix: '/high', countMode: 'estimated' })
})
if (db.embedded) closeIdleConnections(app.pg.pool)

const ROWS = 50000

t.test('before ANALYZE the table has no statistics: counted exactly', async (t) => {
  await db.pool.query('INSERT INTO reading (sensor, value) VALUES (1, 1), (2, 2)')
  t.strictSame(json(await app.inject('/estimated/count/')), { count: 2, page_size: 15, estimated: false })
})

t.test('estimated above the limit, exact below it', async (t) => {
  await db.pool.query(`INSERT INTO reading (sensor, value) SELECT i % 100, i FROM generate_series(1, ${ROWS - 2}) AS i`)
  await db.pool.query('ANALYZE reading')
  const all = json(await app.inject('/estimated/count/'))
  t.equal(all.estimated, true)
  t.equal(all.page_size, 15)
  t.ok(Math.abs(all.count - ROWS) < ROWS * 0.05, `unfiltered estimate ${all.count} from the statistics`)
  const filtered = json(await app.inject('/estimated/count/?sensor__operator=lt&sensor=50'))
  t.equal(filtered.estimated, true)
  t.ok(Math.abs(filtered.count - ROWS / 2) < ROWS * 0.1, `filtered estimate ${filtered.count} from EXPLAIN`)
  // One sensor: about 500 rows, under the limit, so counted.
  t.strictSame(json(await app.inject('/estimated/count/?sensor=7')), { count: 500, page_size: 15, estimated: false })
  t.strictSame(json(await app.inject('/high/count/')), { count: ROWS, page_size: 15, estimated: false }, 'under the default limit')
  t.strictSame(json(await app.inject('/exact/count/?sensor=7')), { count: 500, page_size: 15 }, 'exact mode: the body as before')
})

t.test('Content-Range totals follow the count mode', async (t) => {
  const estimated = await app.inject('/estimated/?__range_header=true&__page_size=10&sensor__operator=lt&sensor=50')
  const [, total] = /^reading 0-9\/(\d+)$/.exec(estimated.headers['content-range'] as string)!
  t.ok(Math.abs(Number(total) - ROWS / 2) < ROWS * 0.1, `estimated total ${total}`)
  const counted = await app.inject('/estimated/?__range_header=true&__page_size=10&sensor=7')
  t.equal(counted.headers['content-range'], 'reading 0-9/500')
  const empty = await app.inject('/estimated/?__range_header=true&sensor=1000')
  t.equal(empty.headers['content-range'], 'reading 0-0/0')
  const exact = await app.inject('/exact/?__range_header=true&__page_size=10&sensor=7')
  t.equal(exact.headers['content-range'], 'reading 0-9/500')
})

t.test('bad options', async (t) => {
  const { default: Fastify } = await import('fastify')
  for (const [options, message] of [
    [{ countMode: 'fast' }, "tableCrud: the option countMode must be 'exact' or 'estimated'"],
    [{ exactCountLimit: -1 }, 'tableCrud: the option exactCountLimit must be an integer of 0 or more'],
    [{ maxExportRows: 0 }, 'tableCrud: the option maxExportRows must be an integer of 1 or more'],
    [{ cursorSecret: 'short' }, 'tableCrud: the option cursorSecret must be a string of 16 characters or more']
  ] as const) {
    const bad = Fastify()
    bad.decorate('pg', app.pg)
    await t.rejects(async () => { await bad.register(tableCrud, { table: reading, ...options } as never).ready() }, { message }, message)
    await bad.close()
  }
})
