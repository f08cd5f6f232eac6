/**
 * What the bench measures: the tables, the data, the hand-written routes TableCRUD is compared
 * with, and the cases. The hand-written server runs the same SQL as TableCRUD through
 * `fastify.pg`, as a developer would write it for one table (DESIGN §4).
 */
import type { FastifyInstance } from 'fastify'
import type {} from '@fastify/postgres'
import type pg from 'pg'
import type { Request } from 'autocannon'
import { column, createTables, defineTable, dropTables, tableCrud, type Table } from '../index.js'

/** Rows in the movie table: deep pages and unindexed filters scan a table this size. */
export const MOVIES = Number(process.env.BENCH_ROWS ?? 100_000)
/** Tables mounted by the TableCRUD server, to measure start-up with many (the issue's 20). */
export const TABLES = 20

export const director = defineTable('bench_director', { name: column.varchar({ length: 100 }) }, { readable: 'name' })
export const movie = defineTable('bench_movie', {
  name: column.varchar({ length: 100 }),
  rating: column.real({ null: true }),
  box_office: column.numeric({ digits: [12, 2], null: true }),
  released: column.timestamp(),
  director: column.foreignKey(director),
  tags: column.array(column.varchar({ length: 20 }))
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

export interface Case {
  readonly label: string
  readonly path: string
  /** Reads are held to ≥ 0.90× req/s and ≤ 1.15× CPU; writes to ≥ 0.85× and ≤ 1.25×. */
  readonly kind: 'read' | 'write'
  readonly method?: 'POST' | 'PATCH'
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
  await app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false })
  await app.register(tableCrud, { table: director, prefix: '/directors' })
  for (const table of extras) await app.register(tableCrud, { table, prefix: `/${table.name}` })
}

// The timestamp as SPEC §2.2 writes it; pg would make a Date of it, in the server's zone.
const released = 'CASE WHEN date_trunc(\'second\', t0.released) = t0.released THEN to_char(t0.released, \'YYYY-MM-DD"T"HH24:MI:SS\') ELSE to_char(t0.released, \'YYYY-MM-DD"T"HH24:MI:SS.US\') END AS released'
const columns = `t0.id, t0.name, t0.rating, t0.box_office, ${released}, t0.director, t0.tags`
const readable = "CASE WHEN t1.id IS NULL THEN NULL ELSE format('%s', t1.name) END AS director_readable"

/** The hand-written server: the same statements, JSON.stringify, no validation beyond numbers. */
export async function handRoutes (app: FastifyInstance): Promise<void> {
  const pg = app.pg
  app.get('/movies/', async (request) => {
    const q = request.query as Record<string, string | undefined>
    const size = Math.min(Number(q.__page_size ?? 15), 1000)
    const offset = (Number(q.__page ?? 1) - 1) * size
    if (q.name !== undefined) {
      const pattern = `%${q.name.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
      const { rows } = await pg.query(`SELECT ${columns} FROM bench_movie AS t0 WHERE t0.name ILIKE $1 ORDER BY t0.id DESC LIMIT $2 OFFSET $3`, [pattern, size, offset])
      return { rows }
    }
    if (q.__readable === 'true') {
      const { rows } = await pg.query(`SELECT ${columns}, ${readable} FROM bench_movie AS t0 LEFT JOIN bench_director AS t1 ON t1.id = t0.director ORDER BY t0.id DESC LIMIT $1 OFFSET $2`, [size, offset])
      return { rows }
    }
    const { rows } = await pg.query(`SELECT ${columns} FROM bench_movie AS t0 ORDER BY t0.id DESC LIMIT $1 OFFSET $2`, [size, offset])
    return { rows }
  })
  app.get('/movies/count/', async () => {
    const { rows } = await pg.query('SELECT count(*) AS count FROM bench_movie AS t0')
    return { count: Number(rows[0].count), page_size: 15 }
  })
  app.get('/movies/:id/', async (request, reply) => {
    const { rows } = await pg.query(`SELECT ${columns} FROM bench_movie AS t0 WHERE t0.id = $1`, [Number((request.params as { id: string }).id)])
    return rows.length === 0 ? await reply.code(404).send({ message: 'not found' }) : rows[0]
  })
  app.post('/movies/', async (request, reply) => {
    const b = request.body as Record<string, unknown>
    const { rows } = await pg.query(`INSERT INTO bench_movie AS t0 (name, rating, box_office, released, director, tags) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${columns}`,
      [b.name, b.rating, b.box_office, b.released, b.director, b.tags])
    return await reply.code(201).header('location', `/movies/${String(rows[0].id)}/`).send(rows[0])
  })
}
