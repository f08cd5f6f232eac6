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
/** Tables mounted by the TableCRUD server, to measure start-up with many (the 20). */
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

/** Rows keyed by a client-given code: what bench/upsert.ts upserts and PUTs (mounted with BENCH_UPSERT=1 only). */
export const code = defineTable('bench_code', {
  code: column.varchar({ length: 20, primaryKey: true }),
  name: column.varchar({ length: 100 }),
  rating: column.real({ null: true })
})

/** Tables that only make start-up (and idle memory) pay for routes being mounted. */
export const extras: Table[] = Array.from({ length: TABLES - 2 }, (_, i) => defineTable(`bench_extra_${i + 1}`, {
  name: column.varchar({ length: 100 }),
  amount: column.numeric({ digits: [12, 2], null: true }),
  at: column.timestamptz({ null: true }),
  done: column.boolean({ default: false }),
  director: column.foreignKey(director)
}))

export async function seed (admin: pg.Pool): Promise<void> {
  await dropTables(admin, [movie, ...extras, director])
  await createTables(admin, [director, movie, ...extras])
  await admin.query("INSERT INTO bench_director (name) SELECT 'Director ' || i FROM generate_series(1, 50) i")
  await admin.query(`INSERT INTO bench_movie (name, rating, box_office, released, director, tags)
    SELECT 'Movie ' || i, (i % 100) / 10.0, i * 1000.25, timestamp '2000-01-01' + i * interval '1 hour', 1 + i % 50, ARRAY['tag' || (i % 7), 'x']
    FROM generate_series(1, ${MOVIES}) i`)
  await admin.query('VACUUM ANALYZE bench_movie')
}

export async function drop (admin: pg.Pool): Promise<void> {
  await dropTables(admin, [movie, ...extras, director])
}

/** The embed case (SPEC §8.1): each of the 50 directors with their 20 latest movies, in one statement. */
export const EMBED_QUERY = '__page_size=50&__visible_fields=id,name,movies.id,movies.name,movies.rating,movies.released&movies.__page_size=20'

export interface Case {
  readonly label: string
  readonly path: string
  /** Reads are held to ≥ 0.90× req/s and ≤ 1.15× CPU; writes to ≥ 0.85× and ≤ 1.25×. */
  readonly kind: 'read' | 'write'
  readonly method?: 'POST' | 'PATCH' | 'PUT'
  readonly body?: string
  /** Rewrites each request before it is sent (autocannon's `setupRequest`): another path, body or headers. */
  readonly setupRequest?: (request: Request) => Request
}

/** Writes run last, so every read sees the same table. */
export const cases: readonly Case[] = [
  { label: 'list, page 50 of 15 rows', path: '/movies/?__page=50', kind: 'read' },
  { label: 'list + __readable join', path: '/movies/?__page=50&__readable=true', kind: 'read' },
  { label: 'filtered, no index', path: '/movies/?name=Movie%209999', kind: 'read' },
  { label: 'by id', path: '/movies/1234/', kind: 'read' },
  { label: 'count', path: '/movies/count/', kind: 'read' },
  { label: 'grouped aggregate', path: '/movies/aggregate/?__group_by=director&__aggregate=count,avg(rating),sum(box_office)&__page_size=50', kind: 'read' },
  { label: '50 directors, 20 movies embedded each', path: `/directors/?${EMBED_QUERY}`, kind: 'read' },
  {
    label: 'POST one row',
    path: '/movies/',
    kind: 'write',
    method: 'POST',
    body: JSON.stringify({ name: 'New movie', rating: 7.5, box_office: '1234.50', released: '2024-05-01T20:30:00', director: 3, tags: ['new', 'x'] })
  }
]

/** TableCRUD: the movie table, and the other tables mounted beside it. */
export async function crudRoutes (app: FastifyInstance): Promise<void> {
  await app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false, aggregates: true })
  await app.register(tableCrud, { table: director, prefix: '/directors', maxJoins: 1 })
  for (const table of extras) await app.register(tableCrud, { table, prefix: `/${table.name}` })
  // Not in the main run: start-up is measured with its 20 tables.
  if (process.env.BENCH_UPSERT === '1') await app.register(tableCrud, { table: code, prefix: '/codes', readOnly: false })
}
