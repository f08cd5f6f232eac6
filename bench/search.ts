/**
 * SPEC §8.4 at scale, opt-in (heavy: a million rows and their GIN index), not in the tests:
 *
 *   BENCH_SEARCH=1 npm run bench         # or: npm run bench -- search; DATABASE_URL, or the embedded server
 *
 * Generates the rows, lets `createTables` make the search index, prints `EXPLAIN ANALYZE` of
 * the statement TableCRUD sends for `__search` (no planner setting changed: the index must win
 * on its own), and the median latency of GET `/?__search=<word>`, ranked and in key order,
 * against the same word as a contains filter (`ILIKE '%word%'`, key order), in one run.
 */
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import pg from 'pg'
import { injectMedian } from './inject.js'
import { column, createTables, defineTable, dropTables, startEmbeddedPostgres, tableCrud } from '../index.js'
import { parseListQuery, queryContext } from '../lib/query/parse.js'
import { compileList } from '../lib/sql/select.js'

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)

const item = defineTable('bench_search', {
  title: column.varchar({ length: 80 }),
  body: column.text()
}, { search: { columns: ['title', 'body'], config: 'english' } })

const embedded = process.env.DATABASE_URL === undefined ? await startEmbeddedPostgres() : null
const connectionString = process.env.DATABASE_URL ?? embedded!.connectionString
const admin = new pg.Pool({ connectionString, max: 1 })
await dropTables(admin, [item])
let started = performance.now()
// Common words everywhere; 'zephyr' in one row of a thousand, 'harbour' in one of fifty.
await admin.query('CREATE TABLE bench_search (id serial PRIMARY KEY, title varchar(80) NOT NULL, body text NOT NULL)')
await admin.query(`INSERT INTO bench_search (title, body)
  SELECT 'Item ' || i || ' ' || (ARRAY['river', 'mountain', 'city', 'forest', 'desert'])[1 + i % 5],
    (ARRAY['the', 'a', 'quiet', 'loud', 'old', 'new'])[1 + i % 6] || ' ' || (ARRAY['ship', 'train', 'road', 'bridge', 'tower', 'garden', 'market'])[1 + i % 7]
    || ' crossing the ' || (ARRAY['valley', 'plain', 'sea', 'lake'])[1 + i % 4]
    || CASE WHEN i % 1000 = 7 THEN ' under a zephyr' ELSE '' END || CASE WHEN i % 50 = 3 THEN ' near the harbour' ELSE '' END
  FROM generate_series(1, ${ROWS}) i`)
console.log(`${ROWS.toLocaleString('en')} rows generated in ${((performance.now() - started) / 1000).toFixed(1)} s`)
started = performance.now()
// createTables finds the table there and adds what is missing: the search index.
await createTables(admin, [item])
await admin.query('ANALYZE bench_search')
console.log(`GIN index created by createTables in ${((performance.now() - started) / 1000).toFixed(1)} s`)

const ctx = queryContext(item, { pageSize: 15, maxPageSize: 1000, maxJoins: 0, excludeSecrets: true })
for (const word of ['zephyr', 'harbour']) {
  const statement = compileList(ctx, parseListQuery(ctx, { __search: word }), false)
  const plan = await admin.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${statement.text}`, [...statement.values])
  console.log(`\nEXPLAIN ANALYZE of GET /?__search=${word}:\n${plan.rows.map((r: Record<string, string>) => `  ${r['QUERY PLAN']}`).join('\n')}`)
}
await admin.end()

const app = Fastify()
await app.register(fastifyPostgres, { connectionString, max: embedded === null ? 4 : 1 })
await app.register(tableCrud, { table: item, prefix: '/items' })

const median = async (url: string, runs = 11): Promise<number> => await injectMedian(app, url, runs)

console.log('\nmedian of 11, first page of 15 rows (and the count of matches):')
for (const word of ['zephyr', 'harbour']) {
  const search = await median(`/items/?__search=${word}`)
  const unranked = await median(`/items/?__search=${word}&__order=-id`)
  const ilike = await median(`/items/?body=${word}`)
  const searchCount = await median(`/items/count/?__search=${word}`)
  const ilikeCount = await median(`/items/count/?body=${word}`)
  console.log(`  ${word}: __search ${search.toFixed(1)} ms ranked, ${unranked.toFixed(1)} ms with __order=-id; ILIKE '%${word}%' ${ilike.toFixed(1)} ms (x${(ilike / unranked).toFixed(1)} against the same order); /count/ ${searchCount.toFixed(1)} ms against ${ilikeCount.toFixed(1)} ms (x${(ilikeCount / searchCount).toFixed(1)})`)
}
await app.close()
const cleanup = new pg.Pool({ connectionString, max: 1 })
await dropTables(cleanup, [item])
await cleanup.end()
await embedded?.stop()
