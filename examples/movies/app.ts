import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import {
  createTables, createToken, createUser, jwtAuth, jwtLogin, tableCrud, tokenAuth, tokenLogin, tokenTable, userTable,
  HttpError, type Validator
} from '../../index.js'
import { openApi } from '../../plugins/openapi.js'
import { director, movie, role, studio, tables } from './tables.js'
import { seed } from './seed.js'

export interface DemoOptions {
  connectionString: string
  /** Pool size: 1 on the embedded server. */
  max: number
  /** Signs the demo's JWTs; a fixed development secret by default. */
  secret?: string
  logger?: boolean
}

export const DEMO_USER = Object.freeze({ username: 'demo', password: 'demo-password' })

const mounts = [['movies', movie], ['directors', director], ['studios', studio], ['roles', role]] as const

/** Only superusers may delete: `request.user` comes from the auth plugins. */
const superusersOnly: Validator = (_crud, request) => {
  if (request.user?.superuser !== true) throw new HttpError(403, 'Only superusers may delete rows.')
}

/**
 * The movies demo: public read-only tables under `/api`, the same tables writable under
 * `/api/admin` (JWT) and `/api/token` (token auth), both logins, and the docs at `/docs`.
 */
export async function buildDemo (options: DemoOptions): Promise<FastifyInstance> {
  const secret = options.secret ?? 'demo-secret-change-me-in-production-0123456789'
  const app = Fastify({ logger: options.logger ?? false })
  await app.register(fastifyPostgres, {
    connectionString: options.connectionString,
    max: options.max,
    connectionTimeoutMillis: 5000
  })
  await app.register(openApi, {
    routePrefix: '/docs',
    info: { title: 'fastify-tablecrud movies demo', version: '1.0.0', description: 'Directors, studios, movies and roles.' }
  })
  await app.after()
  await createTables(app.pg, [...tables, userTable, tokenTable])
  await seed(app.pg)
  const users = await app.pg.query('SELECT 1 FROM auth_user WHERE username = $1', [DEMO_USER.username])
  if (users.rowCount === 0) {
    const user = await createUser(app.pg, { ...DEMO_USER, superuser: true, admin: true })
    await createToken(app.pg, user.id)
  }

  await app.register(jwtLogin, { prefix: '/login/jwt', secret, expiry: '1h' })
  await app.register(tokenLogin, { prefix: '/login/token' })
  await app.register(async (api) => {
    for (const [name, table] of mounts) {
      await api.register(tableCrud, { table, prefix: `/${name}`, maxJoins: 2 })
    }
  }, { prefix: '/api' })
  await app.register(async (admin) => {
    await admin.register(jwtAuth, { secret })
    for (const [name, table] of mounts) {
      await admin.register(tableCrud, { table, prefix: `/${name}`, readOnly: false, allowBulkDelete: true, maxJoins: 2, validators: { deleteSingle: [superusersOnly], deleteAll: [superusersOnly] } })
    }
  }, { prefix: '/api/admin' })
  await app.register(async (tokenApi) => {
    await tokenApi.register(tokenAuth, {})
    for (const [name, table] of mounts) {
      await tokenApi.register(tableCrud, { table, prefix: `/${name}`, readOnly: false, maxJoins: 2 })
    }
  }, { prefix: '/api/token' })
  return app
}
