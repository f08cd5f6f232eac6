import t from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import pg from 'pg'
import { createTables } from '../../lib/db/ddl.js'
import { column, defineTable } from '../../lib/table/index.js'
import { tokenTable, userTable } from '../../lib/table/auth-tables.js'
import { createToken, createUser } from '../../lib/auth/users.js'
import { database } from '../../plugins/database.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { tokenAuth } from '../../plugins/auth/token-auth.js'
import { tokenLogin } from '../../plugins/auth/token-login.js'
import { jwtLogin } from '../../plugins/auth/jwt-login.js'
import { jwtAuth } from '../../plugins/auth/jwt-auth.js'
import { staticTokenProvider } from '../../lib/auth/providers.js'
import { appPool, testDatabase } from '../helpers/db.js'

process.env.TABLECRUD_BCRYPT_COST = '4'
const db = await testDatabase(t)
const note = defineTable('named_note', { body: column.text() })
await createTables(db.pool, [note, userTable, tokenTable])
const user = await createUser(db.pool, { username: 'nina', password: 'nina-password' })
const token = await createToken(db.pool, user.id)
const SECRET = 'named-pool-secret-0123456789'

t.test('a named @fastify/postgres instance (pg) or any pool (pool), for every plugin that queries', async (t) => {
  const own = new pg.Pool({ connectionString: db.connectionString, max: 1 })
  t.teardown(async () => await own.end())
  const app = Fastify()
  await app.register(fastifyPostgres, { ...appPool(db, 1), name: 'main' })
  await app.register(tokenLogin, { prefix: '/login/token', pg: 'main' })
  await app.register(jwtLogin, { prefix: '/login/jwt', secret: SECRET, pool: own })
  await app.register(async (api) => {
    await api.register(tokenAuth, { pg: 'main' })
    await api.register(tableCrud, { table: note, prefix: '/notes', readOnly: false, pg: 'main' })
  }, { prefix: '/token' })
  await app.register(async (api) => {
    await api.register(jwtAuth, { secret: SECRET, pool: own })
    await api.register(tableCrud, { table: note, prefix: '/notes', pool: own })
  }, { prefix: '/jwt' })
  await app.ready()
  t.teardown(async () => await app.close())

  const login = await app.inject({ method: 'POST', url: '/login/token', payload: { username: 'nina', password: 'nina-password' } })
  t.same([login.statusCode, login.json()], [200, { token }])
  const created = await app.inject({ method: 'POST', url: '/token/notes/', headers: { authorization: `Bearer ${token}` }, payload: { body: 'hello' } })
  t.equal(created.statusCode, 201)
  const jwt = (await app.inject({ method: 'POST', url: '/login/jwt', payload: { username: 'nina', password: 'nina-password' } })).json().token
  const list = await app.inject({ url: '/jwt/notes/', headers: { authorization: `Bearer ${String(jwt)}` } })
  t.same([list.statusCode, list.json().rows.map((r: { body: string }) => r.body)], [200, ['hello']])
  t.equal(own.listenerCount('error'), 1, 'the given pool is guarded, once')
  t.equal(app.pg.main!.pool.listenerCount('error'), 1, 'and the named one')
})

t.test('a wrong choice of database is an option error at registration', async (t) => {
  const app = Fastify()
  await app.register(fastifyPostgres, { ...appPool(db, 1), name: 'main' })
  await app.register(fastifyPostgres, { ...appPool(db, 1), name: 'replica' })
  await app.after()
  t.teardown(async () => await app.close())
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{}, /^tableCrud: the option pg must name the database: @fastify\/postgres is registered only with names \(main, replica\)$/],
    [{ pg: 'other' }, /^tableCrud: the option pg must name an @fastify\/postgres instance registered with that name \("other" is not one\)$/],
    [{ pg: 'query' }, /\("query" is not one\)/],
    [{ pg: 1 }, /the option pg must name an @fastify\/postgres instance/],
    [{ pool: {} }, /^tableCrud: the option pool must be a pg pool: an object with connect\(\)$/],
    [{ pool: null }, /the option pool must be a pg pool/],
    [{ pool: app.pg.main, pg: 'main' }, /^tableCrud: the option pool cannot be given with pg: one names the database to use$/]
  ]
  for (const [options, message] of cases) {
    t.throws(() => database(app, 'tableCrud', options as never), { code: 'TABLECRUD_ERR_OPTIONS', message }, JSON.stringify(options))
  }
  t.equal(database(app, 'tableCrud', { pool: app.pg.main as never }), app.pg.main, 'an @fastify/postgres instance as the pool: its pool is guarded')
  t.equal(app.pg.main!.pool.listenerCount('error'), 1)
  const child = Fastify()
  await t.rejects(async () => {
    await child.register(tableCrud, { table: note, prefix: '/x', pg: 'main' })
    await child.ready()
  }, { message: 'tableCrud: register @fastify/postgres before this plugin (it uses fastify.pg)' })
})

t.test('an auth plugin that does not query needs no database, unless one is named', async (t) => {
  const app = Fastify()
  await app.register(tokenAuth, { provider: staticTokenProvider(['t1']) })
  await app.ready()
  await app.close()
  const named = Fastify()
  await t.rejects(async () => {
    await named.register(tokenAuth, { provider: staticTokenProvider(['t1']), pg: 'main' })
    await named.ready()
  }, { message: /^tokenAuth: register @fastify\/postgres/ })
})
