import { createHmac } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { createTables } from '../../../lib/db/index.js'
import { tokenTable, userTable } from '../../../lib/table/auth-tables.js'
import { appPool, type TestDatabase } from '../../helpers/db.js'
import { useDatabase } from '../../helpers/app.js'

// Tests hash at bcrypt's lowest cost; the default of 12 would take a quarter second a hash.
process.env.TABLECRUD_BCRYPT_COST ??= '4'

interface Teardown { teardown: (fn: () => unknown) => void }

/**
 * A Fastify app on the test database, closed at the end of the test. Every query of a test goes
 * through `app.pg`: the embedded server serves one connection at a time, so a second pool
 * would wait for the first one's idle connection to time out.
 */
export async function authApp (t: Teardown, db: TestDatabase, setup: (app: FastifyInstance) => void | Promise<void>): Promise<FastifyInstance> {
  const app = Fastify()
  await useDatabase(app, db)
  await setup(app)
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

/** Creates the built-in user and token tables once, through a short-lived app. */
export async function createAuthTables (db: TestDatabase): Promise<void> {
  const app = Fastify()
  await app.register(fastifyPostgres, appPool(db, 1))
  await app.ready()
  await createTables(app.pg, [userTable, tokenTable])
  await app.close()
}

/** An app whose database cannot be reached, to see 503s. */
export async function unreachableApp (t: Teardown, setup: (app: FastifyInstance) => void | Promise<void>): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 2000 })
  await setup(app)
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

/** base64url of a JSON value, or of a string as it is. */
export const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

/** A JWT made by hand: any header and payload, signed with HMAC (SHA-256 unless told). */
export function craftJwt (header: unknown, payload: unknown, secret: string, hash = 'sha256'): string {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${createHmac(hash, secret).update(input).digest('base64url')}`
}

/** The header and payload of a JWT. */
export function readJwt (token: string): { header: any, payload: any } {
  const [header, payload] = token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()))
  return { header, payload }
}
