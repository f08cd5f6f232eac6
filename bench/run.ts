/**
 * Requests per second of TableCRUD against a hand-written Fastify + pg handler that runs the
 * same SQL on the same data, in one run: the ratio is the figure that matters (DESIGN §4).
 *
 *   npm run bench                       # on DATABASE_URL, or the embedded server
 *   BENCH_SECONDS=10 npm run bench
 *
 * Each scenario runs four times, ABBA, and reports the means.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import autocannon from 'autocannon'
import pg from 'pg'
import { column, createTables, defineTable, dropTables, startEmbeddedPostgres, tableCrud } from '../index.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10)

const director = defineTable('bench_director', { name: column.varchar({ length: 100 }) }, { readable: 'name' })
const movie = defineTable('bench_movie', {
  name: column.varchar({ length: 100 }),
  rating: column.real({ null: true }),
  box_office: column.numeric({ digits: [12, 2], null: true }),
  released: column.timestamp(),
  director: column.foreignKey(director),
  tags: column.array(column.varchar({ length: 20 }))
})

const embedded = process.env.DATABASE_URL === undefined ? await startEmbeddedPostgres() : null
const connectionString = process.env.DATABASE_URL ?? embedded!.connectionString
const max = embedded === null ? connections : 1

const admin = new pg.Pool({ connectionString, max: 1 })
await dropTables(admin, [movie, director])
await createTables(admin, [director, movie])
await admin.query("INSERT INTO bench_director (name) SELECT 'Director ' || i FROM generate_series(1, 50) i")
await admin.query(`INSERT INTO bench_movie (name, rating, box_office, released, director, tags)
  SELECT 'Movie ' || i, (i % 100) / 10.0, i * 1000.25, timestamp '2000-01-01' + i * interval '1 day', 1 + i % 50, ARRAY['tag' || (i % 7), 'x']
  FROM generate_series(1, 2000) i`)
await admin.query('ANALYZE bench_movie')

async function server (setup: (app: FastifyInstance) => void | Promise<void>): Promise<{ app: FastifyInstance, url: string }> {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString, max })
  await setup(app)
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, url }
}

const columns = 'id, name, rating, box_office, to_char(released, \'YYYY-MM-DD"T"HH24:MI:SS\') AS released, director, tags'

/** The baseline: what a developer would write by hand for the same three routes. */
const baseline = await server((app) => {
  app.get('/movies/', async (request) => {
    const q = request.query as Record<string, string>
    const size = Math.min(Number(q.__page_size ?? 15), 1000)
    const offset = (Number(q.__page ?? 1) - 1) * size
    if (q.name !== undefined) {
      const { rows } = await app.pg.query(`SELECT ${columns} FROM bench_movie WHERE name ILIKE $1 ORDER BY id DESC LIMIT $2 OFFSET $3`, [`%${q.name}%`, size, offset])
      return { rows }
    }
    const { rows } = await app.pg.query(`SELECT ${columns} FROM bench_movie ORDER BY id DESC LIMIT $1 OFFSET $2`, [size, offset])
    return { rows }
  })
  app.get('/movies/:id/', async (request, reply) => {
    const { rows } = await app.pg.query(`SELECT ${columns} FROM bench_movie WHERE id = $1`, [Number((request.params as { id: string }).id)])
    return rows.length === 0 ? reply.code(404).send({ message: 'not found' }) : rows[0]
  })
})

const crud = await server(async (app) => {
  await app.register(tableCrud, { table: movie, prefix: '/movies' })
})

const scenarios = [
  ['list, first page of 15', '/movies/'],
  ['list, 100 rows', '/movies/?__page_size=100'],
  ['filter name contains', '/movies/?name=Movie%2019'],
  ['get by id', '/movies/1234/']
] as const

async function measure (base: string, path: string): Promise<number> {
  const result = await autocannon({ url: base + path, connections, duration: seconds })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${base + path}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return result.requests.average
}

console.log(`${seconds}s per run, ${connections} connections, ${embedded === null ? 'PostgreSQL at DATABASE_URL' : 'embedded PGlite (one connection)'}`)
console.log('| scenario | baseline req/s | tablecrud req/s | ratio |')
console.log('|---|---:|---:|---:|')
for (const [label, path] of scenarios) {
  // Baseline, TableCRUD, TableCRUD, baseline: drift over the run (caches warming, other load)
  // falls on both sides alike.
  const a1 = await measure(baseline.url, path)
  const b1 = await measure(crud.url, path)
  const b2 = await measure(crud.url, path)
  const a2 = await measure(baseline.url, path)
  const a = (a1 + a2) / 2
  const b = (b1 + b2) / 2
  console.log(`| ${label} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(2)} |`)
}

await baseline.app.close()
await crud.app.close()
await dropTables(admin, [movie, director])
await admin.end()
await embedded?.stop()
