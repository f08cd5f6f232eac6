import pg from 'pg'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { dropTables } from '../../../lib/db/index.js'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { tableCrud, type TableCrudOptions } from '../../../plugins/crud/table-crud.js'
import { buildApp } from '../../helpers/app.js'
import type { TestDatabase } from '../../helpers/db.js'

/** Tables and helpers shared by the write-side tests of TableCRUD (table-crud-*.test.ts). */

export const person = defineTable('person', {
  name: column.varchar({ length: 50, required: true })
}, { readable: 'name' })

/** A varchar primary key. */
export const studio = defineTable('studio', {
  code: column.varchar({ length: 10, primaryKey: true }),
  name: column.varchar({ length: 100, required: true })
}, { readable: 'name' })

/** Every column type. */
export const movie = defineTable('movie', {
  name: column.varchar({ length: 20, required: true, unique: true }),
  genre: column.varchar({ length: 10, choices: { action: 'action', drama: { value: 'drama', displayName: 'Serious drama' } }, default: 'drama' }),
  synopsis: column.text(),
  duration: column.integer(),
  rating: column.real({ null: true }),
  box_office: column.numeric({ digits: [8, 2] }),
  oscar: column.boolean(),
  released: column.timestamp(),
  director: column.foreignKey(person, { onDelete: 'restrict' }),
  studio: column.foreignKey(studio, { onDelete: 'restrict' }),
  tags: column.array(column.varchar({ length: 5 })),
  grid: column.array(column.array(column.integer())),
  contact: column.email({ null: true }),
  password: column.varchar({ length: 20, secret: true, default: 'hidden' })
}, { readable: 'name' })

/** NOT NULL ForeignKey and Email columns, which have no type default. */
export const review = defineTable('review', {
  movie: column.foreignKey(movie, { null: false, onDelete: 'restrict' }),
  reviewer: column.email(),
  score: column.integer({ default: 3 })
})

export const ALL_TABLES: readonly Table[] = [person, studio, movie, review]

/**
 * A fresh set of tables and a TableCRUD app on them. The tables are dropped and created anew
 * through a pool of its own, ended before the app connects: the embedded server is one
 * session, and an idle connection would hold the app's first query back.
 */
export async function freshApp (
  t: { teardown: (fn: () => unknown) => void },
  db: TestDatabase,
  setup: (app: FastifyInstance) => void | Promise<void>,
  tables: readonly Table[] = ALL_TABLES
): Promise<FastifyInstance> {
  const ddl = new pg.Pool({ connectionString: db.connectionString, max: 1 })
  try {
    await dropTables(ddl, [...tables].reverse())
    return await buildApp(t, { ...db, pool: ddl }, tables, setup)
  } finally {
    await ddl.end()
  }
}

/** Every table writable under its own prefix (`/persons`, `/studios`, `/movies`, `/reviews`), with `movie` options on top. */
export async function moviesApp (
  t: { teardown: (fn: () => unknown) => void },
  db: TestDatabase,
  movieOptions: Partial<TableCrudOptions> = {}
): Promise<FastifyInstance> {
  return await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: person, prefix: '/persons', readOnly: false })
    await app.register(tableCrud, { table: studio, prefix: '/studios', readOnly: false })
    await app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false, ...movieOptions })
    await app.register(tableCrud, { table: review, prefix: '/reviews', readOnly: false })
  })
}

/** The response body as JSON. */
export const json = (res: LightMyRequestResponse): any => JSON.parse(res.body)

/** Rows of a table, by direct SQL through the app's pool, in primary key order. */
export async function rowsOf (app: FastifyInstance, table: Table): Promise<Array<Record<string, unknown>>> {
  const result = await app.pg.query(`SELECT * FROM "${table.name}" ORDER BY "${table.primaryKey.name}"`)
  return result.rows
}

export async function countOf (app: FastifyInstance, table: Table): Promise<number> {
  const result = await app.pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table.name}"`)
  return result.rows[0]!.n
}

/** POSTs a body and returns the created row (asserting nothing: callers check what they need). */
export async function create (app: FastifyInstance, prefix: string, body: Record<string, unknown>): Promise<any> {
  const res = await app.inject({ method: 'POST', url: `${prefix}/`, payload: body })
  if (res.statusCode !== 201) throw new Error(`POST ${prefix}/ answered ${res.statusCode}: ${res.body}`)
  return json(res)
}

/** The SPEC §1 error body: status, code, the reason phrase and the message. */
export function errorOf (statusCode: number, code: string, error: string, message: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { statusCode, code, error, message, ...extra }
}
