import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { createToken, createUser } from '../../lib/auth/users.js'
import { createTables } from '../../lib/db/index.js'
import { column, defineTable } from '../../lib/table/index.js'
import { sessionTable, tokenTable, userTable } from '../../lib/table/auth-tables.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { changePassword } from '../../plugins/auth/change-password.js'
import { jwtAuth } from '../../plugins/auth/jwt-auth.js'
import { jwtLogin } from '../../plugins/auth/jwt-login.js'
import { register } from '../../plugins/auth/register.js'
import { sessionAuth } from '../../plugins/auth/session-auth.js'
import { sessionLogin } from '../../plugins/auth/session-login.js'
import { sessionLogout } from '../../plugins/auth/session-logout.js'
import { tokenAuth } from '../../plugins/auth/token-auth.js'
import { tokenLogin } from '../../plugins/auth/token-login.js'
import { tablecrudDatabase } from '../../plugins/tablecrud-database.js'
import { DATABASE_URL, testDatabase } from '../helpers/db.js'
import { pgbouncerConsole, pgbouncerMissing, startPgBouncer } from '../helpers/pgbouncer.js'
import { tokenOf } from './auth/session-app.js'

// SPEC §9.1: with preparedStatements 'unnamed' every route works through a real PgBouncer 1.18
// in transaction mode (test/plugins/pooler.test.ts shows the default, named, failing through
// it). Representative flows of the TableCRUD, auth, session and export suites run here, the
// app's four connections sharing PgBouncer's two server connections, so any state left on a
// server connection (a prepared statement, a SET, a cursor outside a transaction, a
// session-level lock) is met by another client.

process.env.TABLECRUD_BCRYPT_COST ??= '4'
const missing = pgbouncerMissing(DATABASE_URL)
const db = await testDatabase(t)
const JWT_SECRET = 'pooled-jwt-secret-0123456789-abcdef'
const film = defineTable('pooled_film', {
  name: column.varchar({ length: 40, required: true, unique: true }),
  rating: column.integer({ null: true })
})

async function pooledApp (t: Test, connectionString: string): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString, max: 4 })
  await app.register(tablecrudDatabase, { preparedStatements: 'unnamed' })
  await app.register(tableCrud, {
    table: film,
    prefix: '/films',
    readOnly: false,
    allowBulkDelete: true,
    // A hook makes a bulk delete a transaction of several statements (SPEC §2.7).
    hooks: [{ hookType: 'preDelete', callable: () => {} }]
  })
  await app.register(tokenLogin, { prefix: '/login/token' })
  await app.register(jwtLogin, { prefix: '/login/jwt', secret: JWT_SECRET })
  await app.register(sessionLogin, { prefix: '/login' })
  await app.register(sessionLogout, { prefix: '/logout' })
  await app.register(register, { prefix: '/register', userDefaults: { active: true } })
  await app.register(async (api) => { await api.register(tokenAuth); api.get('/me', async (request) => request.user?.username) }, { prefix: '/token' })
  await app.register(async (api) => { await api.register(jwtAuth, { secret: JWT_SECRET }); api.get('/me', async (request) => request.user?.username) }, { prefix: '/jwt' })
  await app.register(async (site) => {
    await site.register(sessionAuth)
    site.get('/me', async (request) => request.user?.username)
    await site.register(changePassword, { prefix: '/change-password' })
  }, { prefix: '/site' })
  t.teardown(async () => await app.close())
  return app
}

/** Runs `requests` all at once: the app's connections then interleave on PgBouncer's two. */
const together = async (requests: Array<() => Promise<LightMyRequestResponse>>): Promise<number[]> =>
  (await Promise.all(requests.map(async (request) => await request()))).map((answer) => answer.statusCode)

t.test('every flow through PgBouncer in transaction mode with unnamed statements', { skip: missing ?? false }, async (t) => {
  await createTables(db.pool, [userTable, tokenTable, sessionTable, film])
  const bouncer = await startPgBouncer(t, { upstream: db.directConnectionString, poolSize: 2 })
  const app = await pooledApp(t, bouncer.connectionString)
  const json = { 'content-type': 'application/json' }

  t.test('TableCRUD: writes, bulk insert, reads, keyset, counts, ETags, bulk delete in a transaction', async (t) => {
    const created = await together(Array.from({ length: 8 }, (_, i) => async () =>
      await app.inject({ method: 'POST', url: '/films/', headers: json, payload: { name: `film ${i}`, rating: i } })))
    t.strictSame(created, Array(8).fill(201))
    const bulk = await app.inject({ method: 'POST', url: '/films/', headers: json, payload: [{ name: 'bulk a' }, { name: 'bulk b' }] })
    t.equal(bulk.statusCode, 201)
    const reads = await together([
      async () => await app.inject('/films/?rating__operator=gte&rating=4'),
      async () => await app.inject('/films/count/'),
      async () => await app.inject('/films/ids/'),
      async () => await app.inject('/films/1/'),
      async () => await app.inject('/films/?__cursor=&__page_size=3&__order=id'),
      async () => await app.inject('/films/schema/')
    ])
    t.strictSame(reads, [200, 200, 200, 200, 200, 200])
    t.equal((await app.inject('/films/?rating__operator=gte&rating=4')).json().rows.length, 4)
    const first = (await app.inject('/films/?__cursor=&__page_size=3&__order=id')).json()
    const second = await app.inject(`/films/?__cursor=${encodeURIComponent(first.next_cursor as string)}&__page_size=3&__order=id`)
    t.strictSame(second.json().rows.map((row: { id: number }) => row.id), [4, 5, 6])
    const etag = (await app.inject('/films/1/')).headers.etag as string
    t.equal((await app.inject({ method: 'PATCH', url: '/films/1/', headers: { ...json, 'if-match': etag }, payload: { rating: 9 } })).statusCode, 200)
    t.equal((await app.inject({ method: 'PATCH', url: '/films/1/', headers: { ...json, 'if-match': etag }, payload: { rating: 8 } })).statusCode, 412)
    t.equal((await app.inject({ method: 'POST', url: '/films/', headers: json, payload: { name: 'film 1' } })).statusCode, 422, 'a constraint is a 422, and the connection stays usable')
    const deleted = await app.inject({ method: 'DELETE', url: '/films/?name__match=contains&name=bulk' })
    t.strictSame([deleted.statusCode, deleted.headers['x-deleted-count']], [204, '2'])
  })

  t.test('exports stream through the pooler, twice at once, and leave no transaction open', async (t) => {
    const exports = await Promise.all([1, 2].map(async () => await app.inject('/films/?__format=ndjson&__order=id&__visible_fields=id')))
    for (const answer of exports) {
      t.equal(answer.statusCode, 200)
      t.equal(answer.body.trim().split('\n').length, 8)
    }
    const csv = await app.inject({ url: '/films/?__visible_fields=name&__order=id', headers: { accept: 'text/csv' } })
    t.equal(csv.body.split('\r\n')[0], 'name')
    t.equal((await app.inject('/films/count/')).statusCode, 200, 'the next statement finds its server connection clean')
  })

  t.test('auth: token, JWT and session logins and their guards, sign-up, password change, logout', async (t) => {
    await createToken(db.pool, (await createUser(db.pool, { username: 'pooled', password: 'pooled-password' })).id)
    const credentials = { username: 'pooled', password: 'pooled-password' }
    const [token, jwt, session] = await Promise.all(['/login/token', '/login/jwt', '/login'].map(async (url) =>
      await app.inject({ method: 'POST', url, headers: json, payload: credentials })))
    t.strictSame([token!.statusCode, jwt!.statusCode, session!.statusCode], [200, 200, 200])
    const cookies = { id: tokenOf(session!.headers['set-cookie']) }
    const guarded = await Promise.all([
      app.inject({ url: '/token/me', headers: { authorization: `Bearer ${String(token!.json().token)}` } }),
      app.inject({ url: '/jwt/me', headers: { authorization: `Bearer ${String(jwt!.json().token)}` } }),
      app.inject({ url: '/site/me', cookies })
    ])
    t.strictSame(guarded.map((answer) => [answer.statusCode, answer.body]), [[200, 'pooled'], [200, 'pooled'], [200, 'pooled']])
    // Sign-ups take a transaction-scoped advisory lock: two at once, one name, one wins.
    const signUps = await together([1, 2].map(() => async () => await app.inject({
      method: 'POST', url: '/register/', headers: json, payload: { username: 'newbie', email: 'newbie@example.com', password: 'secret-12', confirm_password: 'secret-12' }
    })))
    t.strictSame(signUps.sort(), [201, 422])
    const changed = await app.inject({
      method: 'POST',
      url: '/site/change-password/',
      headers: json,
      cookies,
      payload: { current_password: 'pooled-password', new_password: 'pooled-password-2', confirm_new_password: 'pooled-password-2' }
    })
    t.equal(changed.statusCode, 200)
    const again = await app.inject({ method: 'POST', url: '/login', headers: json, payload: { username: 'pooled', password: 'pooled-password-2' } })
    t.equal(again.statusCode, 200)
    const later = { id: tokenOf(again.headers['set-cookie']) }
    t.equal((await app.inject({ method: 'POST', url: '/logout', cookies: later })).statusCode, 200)
    t.equal((await app.inject({ url: '/site/me', cookies: later })).statusCode, 401)
  })

  t.test('the app\'s connections shared PgBouncer\'s two server connections', async (t) => {
    const pools = await pgbouncerConsole(bouncer, 'SHOW POOLS')
    const pool = pools.find((row) => row.database === 'tc')!
    t.equal(pool.pool_mode, 'transaction')
    t.ok(Number(pool.sv_idle) + Number(pool.sv_used) + Number(pool.sv_active) <= 2, 'never more than two server connections')
    t.equal(Number(pool.cl_active) > 0, true, 'the app holds client connections')
  })
})
