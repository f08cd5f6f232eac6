import t from 'tap'
import { column, defineTable } from '../../../lib/table/index.js'
import { createTables } from '../../../lib/db/index.js'
import { hashPassword } from '../../../lib/auth/password.js'
import { jwtAuth } from '../../../plugins/auth/jwt-auth.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, craftJwt, readJwt } from './auth-app.js'

/**
 * JWT login and auth with every key type a user table may have: the `user_id` jwtLogin signs is
 * the key as pg reads it (a number for the 32- and 16-bit integers, a string for the others), and
 * jwtAuth accepts exactly that, as the key type's descriptor says.
 */

const db = await testDatabase(t)
const SECRET = 'the-jwt-secret-of-the-key-test'
const HS256 = { alg: 'HS256', typ: 'JWT' }
const now = (): number => Math.floor(Date.now() / 1000)
const INVALID = { statusCode: 401, code: 'TABLECRUD_ERR_AUTH_TOKEN_INVALID', error: 'Unauthorized', message: 'Token is invalid' }

const userColumns = {
  username: column.varchar({ length: 50, required: true, unique: true }),
  password: column.varchar({ length: 255, secret: true }),
  active: column.boolean({ default: true }),
  admin: column.boolean(),
  superuser: column.boolean(),
  last_login: column.timestamp({ null: true })
}

/** Each key type: its table, the key value inserted (null: the database assigns it), the value a token carries, and one of the wrong JSON type. */
const cases = [
  { name: 'serial', table: defineTable('keys_serial', userColumns), id: null, signed: 1, wrong: '1' },
  { name: 'integer', table: defineTable('keys_integer', { id: column.integer({ primaryKey: true }), ...userColumns }), id: 2000000000, signed: 2000000000, wrong: '2000000000' },
  { name: 'smallInt', table: defineTable('keys_smallint', { id: column.smallInt({ primaryKey: true }), ...userColumns }), id: 7, signed: 7, wrong: '7' },
  { name: 'bigInt', table: defineTable('keys_bigint', { id: column.bigInt({ primaryKey: true }), ...userColumns }), id: '9007199254740993', signed: '9007199254740993', wrong: 9007199254740992 },
  { name: 'uuid', table: defineTable('keys_uuid', { id: column.uuid({ primaryKey: true }), ...userColumns }), id: '0b0e7a5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b', signed: '0b0e7a5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b', wrong: 1 },
  { name: 'varchar', table: defineTable('keys_varchar', { id: column.varchar({ length: 20, primaryKey: true }), ...userColumns }), id: 'ann-key', signed: 'ann-key', wrong: 1 },
  { name: 'text', table: defineTable('keys_text', { id: column.text({ primaryKey: true }), ...userColumns }), id: 'ann-text-key', signed: 'ann-text-key', wrong: 1 }
] as const

const app = await authApp(t, db, (app) => {
  for (const { name, table } of cases) {
    app.register(jwtLogin, { prefix: `/${name}/login`, secret: SECRET, authTable: table })
    app.register(async (api) => {
      await api.register(jwtAuth, { secret: SECRET, authTable: table })
      api.get('/me', async (request) => request.user)
    }, { prefix: `/${name}` })
  }
})
await createTables(app.pg, cases.map((c) => c.table))
const hash = await hashPassword('ann-password')
for (const { table, id } of cases) {
  if (id === null) await app.pg.query(`INSERT INTO ${table.name} (username, password) VALUES ('ann', $1)`, [hash])
  else await app.pg.query(`INSERT INTO ${table.name} (id, username, password) VALUES ($1, 'ann', $2)`, [id, hash])
}

for (const { name, signed, wrong } of cases) {
  t.test(`a ${name} key: login signs it as pg reads it, and auth takes it back`, async (t) => {
    const login = await app.inject({ method: 'POST', url: `/${name}/login`, payload: { username: 'ann', password: 'ann-password' } })
    t.equal(login.statusCode, 200, login.body)
    const { token } = login.json()
    t.same(readJwt(token).payload.user_id, signed, 'user_id has the JSON type of the key')
    const me = await app.inject({ url: `/${name}/me`, headers: { authorization: `Bearer ${token}` } })
    t.equal(me.statusCode, 200, me.body)
    t.same(me.json(), { id: signed, username: 'ann', active: true, admin: false, superuser: false })

    const other = craftJwt(HS256, { user_id: wrong, iat: now(), exp: now() + 60 }, SECRET)
    const refused = await app.inject({ url: `/${name}/me`, headers: { authorization: `Bearer ${other}` } })
    t.equal(refused.statusCode, 401)
    t.same(refused.json(), INVALID, 'a user_id of the other JSON type is not a key')
  })
}

t.test('a value of the right JSON type that the key type refuses is invalid, not a database error', async (t) => {
  for (const [name, id] of [['smallInt', 40000], ['integer', 2 ** 31], ['bigInt', '1e3'], ['uuid', 'not-a-uuid'], ['text', 'a\u0000b']] as const) {
    const token = craftJwt(HS256, { user_id: id, iat: now(), exp: now() + 60 }, SECRET)
    const res = await app.inject({ url: `/${name}/me`, headers: { authorization: `Bearer ${token}` } })
    t.same([res.statusCode, res.json()], [401, INVALID], name)
  }
})
