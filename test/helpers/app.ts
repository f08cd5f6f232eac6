import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import type { Table } from '../../lib/table/index.js'
import { createTables } from '../../lib/db/index.js'
import { appPool, type TestDatabase } from './db.js'
import { tablecrudDatabase } from '../../plugins/tablecrud-database.js'

interface Teardown { teardown: (fn: () => unknown) => void }

/**
 * What an app behind a transaction-mode pooler sets, in the pooled mode of the tests
 * (TEST_POOLER, helpers/db.ts): `tablecrudDatabase` with unnamed statements, on the
 * @fastify/postgres instance just registered on `db.connectionString`. Nothing otherwise.
 */
export async function usePooler (app: FastifyInstance, db: Pick<TestDatabase, 'pooled'>): Promise<void> {
  if (db.pooled) await app.register(tablecrudDatabase, { preparedStatements: 'unnamed' })
}

/**
 * Registers @fastify/postgres on the test database, `max` connections (appPool), and in the
 * pooled mode what an app behind the pooler sets (`usePooler`).
 */
export async function useDatabase (app: FastifyInstance, db: TestDatabase, max?: number): Promise<void> {
  await app.register(fastifyPostgres, appPool(db, max))
  await usePooler(app, db)
}

/**
 * A Fastify app on the test database with the tables created; `setup` registers what the test
 * needs. Closed at the end of the test.
 */
export async function buildApp (t: Teardown, db: TestDatabase, tables: readonly Table[], setup: (app: FastifyInstance) => void | Promise<void>): Promise<FastifyInstance> {
  await createTables(db.pool, tables)
  const app = Fastify()
  await useDatabase(app, db)
  await setup(app)
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}
