/**
 * The hand-written server TableCRUD is compared with: the same statements through
 * `fastify.pg`, as a developer would write them for one table (DESIGN §4). It imports nothing
 * of TableCRUD, so its start-up and memory are those of a plain Fastify + pg application.
 */
import type { FastifyInstance } from 'fastify'
import type {} from '@fastify/postgres'
import { types } from 'pg'

/**
 * A timestamp as SPEC §2.2 writes it, from PostgreSQL's text, as a developer would turn it: the
 * space a `T`, a fraction to six digits (PostgreSQL drops its trailing zeros), never a JS Date
 * (which drops microseconds and applies the server's zone). Set once for the process: this
 * server is the hand-written application's, nothing else runs in it. Formatting in SQL instead
 * (`to_char`) is evaluated for every row an OFFSET skips too, which made the baseline slow on
 * deep pages.
 */
const timestamp = (text: string): string => {
  const t = text.replace(' ', 'T')
  // 'infinity' and a whole second pass as they are.
  return t.length <= 19 ? t : t.padEnd(26, '0')
}
types.setTypeParser(types.builtins.TIMESTAMP, timestamp)

// The timestamp as SPEC §2.2 writes it, inside the embed's JSON (which no type parser reads).
const releasedOf = (alias: string): string => `CASE WHEN date_trunc('second', ${alias}.released) = ${alias}.released THEN to_char(${alias}.released, 'YYYY-MM-DD"T"HH24:MI:SS') ELSE to_char(${alias}.released, 'YYYY-MM-DD"T"HH24:MI:SS.US') END`
const columns = 't0.id, t0.name, t0.rating, t0.box_office, t0.released, t0.director, t0.tags'
/** Directors with their latest movies, in one statement: a correlated json_agg over an ordered, limited select. */
const embedded = `SELECT t0.id, t0.name, (SELECT coalesce(json_agg(json_build_object('id', m.id, 'name', m.name, 'rating', m.rating, 'released', m.released) ORDER BY m.id DESC), '[]')
  FROM (SELECT m.id, m.name, m.rating, ${releasedOf('m')} AS released FROM bench_movie AS m WHERE m.director = t0.id ORDER BY m.id DESC LIMIT $2) AS m) AS movies
  FROM bench_director AS t0 ORDER BY t0.id DESC LIMIT $1`
// Beside the key it reads, where TableCRUD puts it, so both answers are the same bytes.
const withReadable = "t0.id, t0.name, t0.rating, t0.box_office, t0.released, t0.director, CASE WHEN t1.id IS NULL THEN NULL ELSE format('%s', t1.name) END AS director_readable, t0.tags"

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
      const { rows } = await pg.query(`SELECT ${withReadable} FROM bench_movie AS t0 LEFT JOIN bench_director AS t1 ON t1.id = t0.director ORDER BY t0.id DESC LIMIT $1 OFFSET $2`, [size, offset])
      return { rows }
    }
    const { rows } = await pg.query(`SELECT ${columns} FROM bench_movie AS t0 ORDER BY t0.id DESC LIMIT $1 OFFSET $2`, [size, offset])
    return { rows }
  })
  app.get('/directors/', async (request) => {
    const q = request.query as Record<string, string | undefined>
    const { rows } = await pg.query(embedded, [Math.min(Number(q.__page_size ?? 15), 1000), Math.min(Number(q['movies.__page_size'] ?? 100), 100)])
    return { rows }
  })
  app.get('/movies/count/', async () => {
    const { rows } = await pg.query('SELECT count(*) AS count FROM bench_movie AS t0')
    return { count: Number(rows[0].count), page_size: 15 }
  })
  // GET /aggregate/ (SPEC §8.3) as a developer writes one grouping by hand: the counts as
  // integers, the average a float, the Numeric sum exact text, groups in key order.
  app.get('/movies/aggregate/', async (request) => {
    const q = request.query as Record<string, string | undefined>
    const size = Math.min(Number(q.__page_size ?? 15), 1000)
    const offset = (Number(q.__page ?? 1) - 1) * size
    const { rows } = await pg.query(`SELECT t0.director, count(*)::int AS count, avg(t0.rating)::float8 AS avg_rating, sum(t0.box_office) AS sum_box_office
      FROM bench_movie AS t0 GROUP BY t0.director ORDER BY t0.director LIMIT $1 OFFSET $2`, [size, offset])
    return { rows }
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
  await featureRoutes(app)
}

/** `%` and `_` of a user's text taken literally in ILIKE, as TableCRUD's match filters take them (SPEC §2.3). */
const literal = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`)
/** The search expression of bench_doc, written as TableCRUD's search index is made, so the same GIN index serves it. */
const searched = "to_tsvector('english', coalesce(t0.title, '') || ' ' || coalesce(t0.body, ''))"

/**
 * The SPEC §8/§9 cases as a developer writes each for its one need (bench/cases.ts says which
 * request each answers): a route of its own where TableCRUD reads a query language on `/movies/`.
 */
async function featureRoutes (app: FastifyInstance): Promise<void> {
  const pg = app.pg
  // §8.2, a filter across the ForeignKey: movies whose director's name contains the text.
  app.get('/movies/by-director/', async (request) => {
    const q = request.query as Record<string, string>
    const { rows } = await pg.query(`SELECT ${columns} FROM bench_movie AS t0 JOIN bench_director AS d ON d.id = t0.director
      WHERE d.name ILIKE $1 ORDER BY t0.id DESC LIMIT 15`, [`%${literal(q.name!)}%`])
    return { rows }
  })
  // §8.2, an OR across the table and the relation: rated at least r, or directed by d.
  app.get('/movies/rated-or-directed/', async (request) => {
    const q = request.query as Record<string, string>
    const { rows } = await pg.query(`SELECT ${columns} FROM bench_movie AS t0 JOIN bench_director AS d ON d.id = t0.director
      WHERE t0.rating >= $1 OR d.name = $2 ORDER BY t0.id DESC LIMIT 15`, [Number(q.rating), q.director])
    return { rows }
  })
  // §8.4: ranked by relevance, then the key.
  app.get('/docs/', async (request) => {
    const q = request.query as Record<string, string>
    const { rows } = await pg.query(`SELECT t0.id, t0.title, t0.body FROM bench_doc AS t0 WHERE ${searched} @@ websearch_to_tsquery('english', $1)
      ORDER BY ts_rank(${searched}, websearch_to_tsquery('english', $1)) DESC, t0.id LIMIT 15`, [q.__search])
    return { rows }
  })
  // §8.5 upsert of one row (201 and Location when inserted, 200 when updated) or of an array (200, the rows in order).
  app.post('/codes/', async (request, reply) => {
    const upsert = 'ON CONFLICT (code) DO UPDATE SET name = excluded.name, rating = excluded.rating RETURNING code, name, rating'
    if (Array.isArray(request.body)) {
      const { rows } = await pg.query(`INSERT INTO bench_code AS t0 (code, name, rating) SELECT code, name, rating FROM jsonb_populate_recordset(NULL::bench_code, $1) ${upsert}`, [JSON.stringify(request.body)])
      return { rows }
    }
    const b = request.body as Record<string, unknown>
    const { rows: [row] } = await pg.query(`INSERT INTO bench_code AS t0 (code, name, rating) VALUES ($1, $2, $3) ${upsert}, (xmax = 0) AS inserted`, [b.code, b.name, b.rating])
    const { inserted, ...written } = row as Record<string, unknown>
    return inserted === true ? await reply.code(201).header('location', `/codes/${String(written.code)}/`).send(written) : written
  })
  // §8.5 bulk update of the rows whose code starts with the text, refused over 1,000 rows (maxAffected) with nothing changed.
  app.patch('/codes/', async (request, reply) => {
    const q = request.query as Record<string, string>
    const client = await pg.connect()
    try {
      await client.query('BEGIN')
      const { rowCount } = await client.query('UPDATE bench_code AS t0 SET rating = $1 WHERE t0.code ILIKE $2 RETURNING t0.code', [(request.body as { rating: number }).rating, `${literal(q.code!)}%`])
      if (rowCount! > 1000) {
        await client.query('ROLLBACK')
        return await reply.code(400).send({ message: 'Too many rows would change.' })
      }
      await client.query('COMMIT')
      return { count: rowCount }
    } finally {
      client.release()
    }
  })
}
