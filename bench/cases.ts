/**
 * What the bench measures: the tables, the data, the cases and TableCRUD's routes. The
 * hand-written routes it is compared with are in hand.ts.
 */
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import type { Request } from 'autocannon'
import { column, createTables, defineTable, dropTables, tableCrud, type Table } from '../index.js'

/** Rows in the movie table: deep pages and unindexed filters scan a table this size. */
export const MOVIES = Number(process.env.BENCH_ROWS ?? 100_000)
/** Tables mounted by the TableCRUD server started with `BENCH_TABLES=20`, to measure start-up with many (issue 17's 20). */
export const TABLES = 20

export const director = defineTable('bench_director', { name: column.varchar({ length: 100 }) }, { readable: 'name' })
export const movie = defineTable('bench_movie', {
  name: column.varchar({ length: 100 }),
  rating: column.real({ null: true }),
  box_office: column.numeric({ digits: [12, 2], null: true }),
  released: column.timestamp(),
  // Indexed, as docs/table-crud.md asks of a ForeignKey that embeds follow (SPEC §8.1).
  director: column.foreignKey(director, { related: 'movies', index: true }),
  tags: column.array(column.varchar({ length: 20 }))
})

/** Rows keyed by a client-given code: what the upsert and bulk PATCH cases write (and bench/upsert.ts). */
export const code = defineTable('bench_code', {
  code: column.varchar({ length: 20, primaryKey: true }),
  name: column.varchar({ length: 100 }),
  rating: column.real({ null: true })
})
/** Rows of the code table: the upsert and bulk PATCH cases update them, never insert. */
export const CODES = 1000

/** Text searched by the full-text case (SPEC §8.4): `BENCH_ROWS` rows, 'zephyr' in one of a thousand. */
export const doc = defineTable('bench_doc', {
  title: column.varchar({ length: 80 }),
  body: column.text()
}, { search: { columns: ['title', 'body'], config: 'english' } })

/** Tables that only make start-up (and idle memory) pay for routes being mounted. */
export const extras: Table[] = Array.from({ length: TABLES - 4 }, (_, i) => defineTable(`bench_extra_${i + 1}`, {
  name: column.varchar({ length: 100 }),
  amount: column.numeric({ digits: [12, 2], null: true }),
  at: column.timestamptz({ null: true }),
  done: column.boolean({ default: false }),
  director: column.foreignKey(director)
}))

export async function seed (admin: pg.Pool): Promise<void> {
  await drop(admin)
  await createTables(admin, [director, movie, code, ...extras])
  await admin.query("INSERT INTO bench_director (name) SELECT 'Director ' || i FROM generate_series(1, 50) i")
  await admin.query(`INSERT INTO bench_movie (name, rating, box_office, released, director, tags)
    SELECT 'Movie ' || i, (i % 100) / 10.0, i * 1000.25, timestamp '2000-01-01' + i * interval '1 hour', 1 + i % 50, ARRAY['tag' || (i % 7), 'x']
    FROM generate_series(1, ${MOVIES}) i`)
  await admin.query('VACUUM ANALYZE bench_movie')
  await admin.query(`INSERT INTO bench_code (code, name, rating) SELECT 'c' || i, 'Row ' || i, 5 FROM generate_series(0, ${CODES - 1}) i`)
  // The rows first, then createTables adds the search index over them: faster than filling an indexed table.
  await admin.query('CREATE TABLE bench_doc (id serial PRIMARY KEY, title varchar(80) NOT NULL, body text NOT NULL)')
  await admin.query(`INSERT INTO bench_doc (title, body)
    SELECT 'Item ' || i || ' ' || (ARRAY['river', 'mountain', 'city', 'forest', 'desert'])[1 + i % 5],
      (ARRAY['the', 'a', 'quiet', 'loud', 'old', 'new'])[1 + i % 6] || ' ' || (ARRAY['ship', 'train', 'road', 'bridge', 'tower', 'garden', 'market'])[1 + i % 7]
      || ' crossing the ' || (ARRAY['valley', 'plain', 'sea', 'lake'])[1 + i % 4] || CASE WHEN i % 1000 = 7 THEN ' under a zephyr' ELSE '' END
    FROM generate_series(1, ${MOVIES}) i`)
  await createTables(admin, [doc])
  await admin.query('VACUUM ANALYZE bench_doc')
  await admin.query('VACUUM ANALYZE bench_code')
}

export async function drop (admin: pg.Pool): Promise<void> {
  await dropTables(admin, [movie, ...extras, director, code, doc])
}

/** The embed case (SPEC §8.1): each of the 50 directors with their 20 latest movies, in one statement. */
export const EMBED_QUERY = '__page_size=50&__visible_fields=id,name,movies.id,movies.name,movies.rating,movies.released&movies.__page_size=20'

/** TableCRUD's req/s at least `rps` times the hand-written server's, its CPU per request at most `cpu` times. */
export interface Goal { readonly rps: number, readonly cpu: number }

/** Issue 31: at par (≥ 0.95× req/s) at ≤ 1.15× CPU per request; the list, by id and the join ≤ 1.10×. */
export const GOAL: Goal = { rps: 0.95, cpu: 1.15 }

export interface Case {
  readonly label: string
  readonly path: string
  /** The hand-written server's route for the same work, where it is not `path` (bench/hand.ts). */
  readonly handPath?: string
  readonly kind: 'read' | 'write'
  readonly method?: 'POST' | 'PATCH' | 'PUT'
  readonly body?: string
  /** Rewrites each request before it is sent (autocannon's `setupRequest`): another path, body or headers. */
  readonly setupRequest?: (request: Request) => Request
  /**
   * PostgreSQL sets the pace (a scan): CPU per request is measured at a fixed offered rate, the
   * same for every server, so it is each request's work and not the per-second overheads of a
   * process divided by the few requests a saturated database lets through.
   */
  readonly dbBound?: boolean
  readonly goal?: Goal
  /** Statements run after each run of the case, so the next run finds the tables as this one did. */
  readonly after?: readonly string[]
}

const json = { 'content-type': 'application/json' }
/** Each request of the case gets the next of `n` variants (a path or a body), so concurrent writes do not queue on one row's lock. */
function rotating (n: number, variant: (i: number) => { path?: string, body?: string }): (request: Request) => Request {
  let next = 0
  return (request) => ({ ...request, ...variant(next++ % n), headers: { ...request.headers, ...json } })
}
const codeRow = (i: number): { code: string, name: string, rating: number } => ({ code: `c${i}`, name: `Row ${i}`, rating: 7.5 })
/** Upserts of CODES rows in chunks of this many. */
const CHUNK = 100

/** The cases, in the order a round runs them: the writes last, so every read sees the same tables. */
export const cases: readonly Case[] = [
  { label: 'list, page 50 of 15 rows', path: '/movies/?__page=50', kind: 'read', goal: { rps: 0.95, cpu: 1.10 } },
  { label: 'list + __readable join', path: '/movies/?__page=50&__readable=true', kind: 'read', goal: { rps: 0.95, cpu: 1.10 } },
  { label: 'filtered, no index', path: '/movies/?name=Movie%209999', kind: 'read', dbBound: true },
  { label: 'by id', path: '/movies/1234/', kind: 'read', goal: { rps: 0.95, cpu: 1.10 } },
  { label: 'count', path: '/movies/count/', kind: 'read', dbBound: true },
  { label: 'grouped aggregate', path: '/movies/aggregate/?__group_by=director&__aggregate=count,avg(rating),sum(box_office)&__page_size=50', kind: 'read', dbBound: true },
  // 1,000 rows aggregated to JSON in PostgreSQL: the hand-written server is busy a fifth of a core at most.
  { label: '50 directors, 20 movies embedded each', path: `/directors/?${EMBED_QUERY}`, kind: 'read', dbBound: true },
  { label: 'filter across the ForeignKey', path: '/movies/?director.name=Director%207', handPath: '/movies/by-director/?name=Director%207', kind: 'read' },
  { label: '__or tree, one branch across the ForeignKey', path: '/movies/?__or=(rating.gte.9.9,director.name.exact.Director%207)', handPath: '/movies/rated-or-directed/?rating=9.9&director=Director%207', kind: 'read' },
  { label: 'full-text search, ranked', path: '/docs/?__search=zephyr', kind: 'read' },
  {
    label: 'POST one row',
    path: '/movies/',
    kind: 'write',
    method: 'POST',
    body: JSON.stringify({ name: 'New movie', rating: 7.5, box_office: '1234.50', released: '2024-05-01T20:30:00', director: 3, tags: ['new', 'x'] }),
    goal: { rps: 0.95, cpu: 1.15 },
    // The rows inserted go, and VACUUM cuts the table back to its size before the run.
    after: [`DELETE FROM bench_movie WHERE id > ${MOVIES}`, 'VACUUM bench_movie']
  },
  {
    label: 'upsert one row (it exists: updated)',
    path: '/codes/?__on_conflict=code',
    kind: 'write',
    method: 'POST',
    setupRequest: rotating(CODES, (i) => ({ body: JSON.stringify(codeRow(i)) })),
    after: ['VACUUM bench_code']
  },
  {
    label: `upsert of ${CHUNK} rows in one request`,
    path: '/codes/?__on_conflict=code',
    kind: 'write',
    method: 'POST',
    setupRequest: rotating(CODES / CHUNK, (k) => ({ body: JSON.stringify(Array.from({ length: CHUNK }, (_, i) => codeRow(k * CHUNK + i))) })),
    after: ['VACUUM bench_code']
  },
  {
    label: 'bulk PATCH of 11 rows',
    path: '/codes/?code__match=starts&code=c10',
    kind: 'write',
    method: 'PATCH',
    // c10, c100 to c109: 11 rows; the next request c11, and so on to c99.
    setupRequest: rotating(90, (i) => ({ path: `/codes/?code__match=starts&code=c${10 + i}`, body: '{"rating":6.5}' })),
    after: ['VACUUM bench_code']
  }
]

/**
 * TableCRUD: the tables the hand-written server serves, so idle and peak memory compare with
 * the same tables (issue 31); with `BENCH_TABLES=20`, 16 more beside them, for start-up with
 * 20 tables (issue 17).
 */
export async function crudRoutes (app: FastifyInstance): Promise<void> {
  await app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false, aggregates: true, maxJoins: 1 })
  await app.register(tableCrud, { table: director, prefix: '/directors', maxJoins: 1 })
  await app.register(tableCrud, { table: code, prefix: '/codes', readOnly: false, allowBulkUpdate: true })
  await app.register(tableCrud, { table: doc, prefix: '/docs' })
  if (process.env.BENCH_TABLES === String(TABLES)) for (const table of extras) await app.register(tableCrud, { table, prefix: `/${table.name}` })
}
