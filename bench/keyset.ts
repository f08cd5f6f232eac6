/**
 * SPEC §7.1, §7.2, §7.5 at scale, opt-in (heavy: a million rows):
 *
 *   npm run bench -- keyset              # DATABASE_URL, or the embedded server
 *
 * Same-run timings of page 1 and page 10,000 by OFFSET and by cursor, `/count/` exact
 * against estimated, and an export of every row as NDJSON and CSV (rows per second, and the
 * growth of this process's peak RSS, server and client being one process here).
 */
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import http from 'node:http'
import pg from 'pg'
import { injectMedian } from './inject.js'
import { column, createTables, defineTable, dropTables, startEmbeddedPostgres, tableCrud } from '../index.js'
import { cursorKey, sealCursor } from '../lib/query/cursor.js'

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const PAGE_SIZE = 50
const DEEP = 10_000
const SECRET = 'bench keyset secret value'

const item = defineTable('bench_keyset', {
  name: column.varchar({ length: 50 }),
  score: column.integer(),
  seen: column.timestamp()
})

const embedded = process.env.DATABASE_URL === undefined ? await startEmbeddedPostgres() : null
const connectionString = process.env.DATABASE_URL ?? embedded!.connectionString
const admin = new pg.Pool({ connectionString, max: 1 })
await dropTables(admin, [item])
await createTables(admin, [item])
let started = performance.now()
await admin.query(`INSERT INTO bench_keyset (name, score, seen)
  SELECT 'Item ' || i || ', "quoted"', i % 1000, timestamp '2000-01-01' + i * interval '1 second' FROM generate_series(1, ${ROWS}) i`)
await admin.query('ANALYZE bench_keyset')
console.log(`${ROWS} rows generated in ${((performance.now() - started) / 1000).toFixed(1)} s`)
const deepId = (await admin.query(`SELECT id FROM bench_keyset ORDER BY id DESC OFFSET ${(DEEP - 1) * PAGE_SIZE - 1} LIMIT 1`)).rows[0].id as number
await admin.end()

const app = Fastify()
await app.register(fastifyPostgres, { connectionString, max: embedded === null ? 4 : 1 })
await app.register(tableCrud, { table: item, prefix: '/exact', maxPageSize: 100, cursorSecret: SECRET })
await app.register(tableCrud, { table: item, prefix: '/estimated', countMode: 'estimated', cursorSecret: SECRET })
const address = await app.listen({ port: 0, host: '127.0.0.1' })

const median = async (url: string, runs = 15): Promise<number> => await injectMedian(app, url, runs)

// The cursor of page DEEP: sealed as the plugin seals it (order -id, no filter).
const deepCursor = sealCursor(cursorKey(SECRET), 'bench_keyset\0-id\0[]', [String(deepId)])
const check = JSON.parse((await app.inject(`/exact/?__page_size=${PAGE_SIZE}&__cursor=${deepCursor}`)).body)
const offsetRows = JSON.parse((await app.inject(`/exact/?__page_size=${PAGE_SIZE}&__page=${DEEP}`)).body)
if (JSON.stringify(check.rows) !== JSON.stringify(offsetRows.rows)) console.log('WARNING: the deep cursor page differs from the OFFSET page')

const f = (ms: number): string => `${ms.toFixed(2)} ms`
const offset1 = await median(`/exact/?__page_size=${PAGE_SIZE}`)
const offsetDeep = await median(`/exact/?__page_size=${PAGE_SIZE}&__page=${DEEP}`)
const cursor1 = await median(`/exact/?__page_size=${PAGE_SIZE}&__cursor=`)
const cursorDeep = await median(`/exact/?__page_size=${PAGE_SIZE}&__cursor=${deepCursor}`)
console.log(`page 1 / page ${DEEP} (${PAGE_SIZE} rows), median of 15:`)
console.log(`  OFFSET  ${f(offset1)} / ${f(offsetDeep)} (x${(offsetDeep / offset1).toFixed(1)})`)
console.log(`  cursor  ${f(cursor1)} / ${f(cursorDeep)} (x${(cursorDeep / cursor1).toFixed(2)}; goal under x1.5)`)
console.log(`/count/: exact ${f(await median('/exact/count/', 5))}, estimated ${f(await median('/estimated/count/', 5))}; filtered (score < 500): exact ${f(await median('/exact/count/?score__operator=lt&score=500', 5))}, estimated ${f(await median('/estimated/count/?score__operator=lt&score=500', 5))}`)

async function exportRun (format: 'ndjson' | 'csv'): Promise<void> {
  global.gc?.()
  const base = process.memoryUsage().rss
  let peak = base
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 5)
  started = performance.now()
  let lines = 0
  await new Promise<void>((resolve, reject) => {
    http.get(`${address}/exact/?__format=${format}`, (response) => {
      response.on('data', (chunk: Buffer) => { for (const b of chunk) if (b === 10) lines++ })
      response.on('end', resolve)
      response.on('error', reject)
    }).on('error', reject)
  })
  clearInterval(timer)
  const seconds = (performance.now() - started) / 1000
  const rows = format === 'csv' ? lines - 1 : lines
  console.log(`export ${format}: ${rows} rows in ${seconds.toFixed(1)} s, ${Math.round(rows / seconds)} rows/s, peak RSS growth ${((peak - base) / 1048576).toFixed(1)} MB (goal under 50)`)
}
await exportRun('ndjson')
await exportRun('csv')

await app.close()
const cleanup = new pg.Pool({ connectionString, max: 1 })
await dropTables(cleanup, [item])
await cleanup.end()
await embedded?.stop()
