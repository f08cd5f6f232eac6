import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { createUser } from '../../lib/auth/users.js'
import { createTables } from '../../lib/db/index.js'
import { column, defineTable } from '../../lib/table/index.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { jwtAuth } from '../../plugins/auth/jwt-auth.js'
import { jwtLogin } from '../../plugins/auth/jwt-login.js'
import { sessionAuth } from '../../plugins/auth/session-auth.js'
import { sessionLogin } from '../../plugins/auth/session-login.js'
import { sessionLogout } from '../../plugins/auth/session-logout.js'
import { rateLimit } from '../../plugins/web/rate-limit.js'
import { appPool, testDatabase } from '../helpers/db.js'
import { createSessionTables, tokenOf } from './auth/session-app.js'

// DESIGN §5: the application keeps no state, so two instances on one database and one Redis
// (each with its own pool and Redis client, as two processes behind a load balancer would have)
// honour each other's sessions, JWTs, rate-limit counts, ETags and keyset cursors. Both run in
// this process, so what differs between processes is given explicitly: the JWT secret and the
// cursor secret are configuration, the same on every instance, and an instance configured with
// another cursor secret is the negative control.

process.env.TABLECRUD_BCRYPT_COST ??= '4'
const db = await testDatabase(t)
await createSessionTables(db)
const note = defineTable('instance_note', { body: column.varchar({ length: 40 }) })
await createTables(db.pool, [note])
await db.pool.query("INSERT INTO instance_note (body) SELECT 'note ' || n FROM generate_series(1, 5) AS n")
await createUser(db.pool, { username: 'bob', password: 'bob-password' })

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const PREFIX = `tc-prod-instances-${randomBytes(4).toString('hex')}-`
const JWT_SECRET = 'a-secret-every-instance-shares-0123456789'
const CURSOR_SECRET = 'cursors-every-instance-opens'

t.teardown(async () => {
  const redis = new Redis(REDIS_URL)
  const keys = await redis.keys(`${PREFIX}*`)
  if (keys.length > 0) await redis.del(...keys)
  redis.disconnect()
})

async function instance (t: Test, cursorSecret = CURSOR_SECRET): Promise<FastifyInstance> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  redis.on('error', () => {})
  const app = Fastify()
  // The embedded server is one session: its pools hand idle connections back at once.
  await app.register(fastifyPostgres, appPool(db))
  await app.register(sessionLogin, { prefix: '/login' })
  await app.register(sessionLogout, { prefix: '/logout' })
  await app.register(jwtLogin, { prefix: '/login/jwt', secret: JWT_SECRET })
  await app.register(async (site) => {
    await site.register(sessionAuth)
    site.get('/me', async (request) => ({ username: request.user?.username }))
  }, { prefix: '/site' })
  await app.register(async (api) => {
    await api.register(jwtAuth, { secret: JWT_SECRET })
    api.get('/me', async (request) => ({ username: request.user?.username }))
  }, { prefix: '/api' })
  await app.register(async (limited) => {
    await limited.register(rateLimit, { max: 3, redis, nameSpace: PREFIX })
    limited.get('/', async () => ({ ok: true }))
  }, { prefix: '/limited' })
  await app.register(tableCrud, { table: note, prefix: '/notes', readOnly: false, cursorSecret })
  t.teardown(async () => { await app.close(); redis.disconnect() })
  return app
}

const a = await instance(t)
const b = await instance(t)
const statusOf = (answer: LightMyRequestResponse): number => answer.statusCode

t.test('a session made on one instance is honoured by the other, and a logout on either ends it', async (t) => {
  const login = await a.inject({ method: 'POST', url: '/login', payload: { username: 'bob', password: 'bob-password' } })
  t.equal(login.statusCode, 200)
  const cookies = { id: tokenOf(login.headers['set-cookie']) }
  const me = await b.inject({ url: '/site/me', cookies })
  t.strictSame([me.statusCode, me.json()], [200, { username: 'bob' }])
  t.equal(statusOf(await b.inject({ method: 'POST', url: '/logout', cookies })), 200)
  t.equal(statusOf(await a.inject({ url: '/site/me', cookies })), 401, 'logged out on the other')
})

t.test('a JWT from one instance is honoured by the other (the same secret)', async (t) => {
  const login = await a.inject({ method: 'POST', url: '/login/jwt', payload: { username: 'bob', password: 'bob-password' } })
  const me = await b.inject({ url: '/api/me', headers: { authorization: `Bearer ${String(login.json().token)}` } })
  t.strictSame([me.statusCode, me.json()], [200, { username: 'bob' }])
})

t.test('the rate limit counts requests on both instances (one Redis)', async (t) => {
  const statuses = [statusOf(await a.inject('/limited/')), statusOf(await b.inject('/limited/')), statusOf(await a.inject('/limited/')), statusOf(await b.inject('/limited/'))]
  t.strictSame(statuses, [200, 200, 200, 429], 'the fourth, on either instance, is over a limit of three')
})

t.test('an ETag from one instance is current on the other, and a stale one is refused there', async (t) => {
  const read = await a.inject('/notes/1/')
  const etag = read.headers.etag as string
  t.equal(statusOf(await b.inject({ url: '/notes/1/', headers: { 'if-none-match': etag } })), 304)
  const patched = await b.inject({ method: 'PATCH', url: '/notes/1/', headers: { 'if-match': etag }, payload: { body: 'edited on b' } })
  t.equal(patched.statusCode, 200)
  const stale = await a.inject({ method: 'PATCH', url: '/notes/1/', headers: { 'if-match': etag }, payload: { body: 'edited on a' } })
  t.equal(stale.statusCode, 412, 'the lost update is refused on the other instance')
  t.equal(statusOf(await a.inject({ method: 'PATCH', url: '/notes/1/', headers: { 'if-match': patched.headers.etag as string }, payload: { body: 'edited on a' } })), 200)
})

t.test('a keyset cursor from one instance pages on the other; one with another cursor secret refuses it', async (t) => {
  const first = await a.inject('/notes/?__cursor=&__page_size=2&__order=id&__visible_fields=id')
  t.strictSame(first.json().rows, [{ id: 1 }, { id: 2 }])
  const cursor = encodeURIComponent(first.json().next_cursor as string)
  const second = await b.inject(`/notes/?__cursor=${cursor}&__page_size=2&__order=id&__visible_fields=id`)
  t.strictSame([second.statusCode, second.json().rows], [200, [{ id: 3 }, { id: 4 }]])
  const other = await instance(t, 'another-secret-for-cursors')
  const refused = await other.inject(`/notes/?__cursor=${cursor}&__page_size=2&__order=id&__visible_fields=id`)
  t.strictSame([refused.statusCode, refused.json().code], [400, 'TABLECRUD_ERR_QS_INVALID_CURSOR'])
})
