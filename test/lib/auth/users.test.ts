import t from 'tap'
import { createTables, createTablesSql } from '../../../lib/db/index.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { tokenTable, userTable } from '../../../lib/table/auth-tables.js'
import { verifyPassword } from '../../../lib/auth/password.js'
import {
  activeUserById, authTableProblem, checkLogin, createToken, createUser, recordLogin, setPassword, tokenOf, userByToken, userIdOf
} from '../../../lib/auth/users.js'
import { staticTokenProvider, tableTokenProvider } from '../../../lib/auth/providers.js'
import { testDatabase } from '../../helpers/db.js'

process.env.TABLECRUD_BCRYPT_COST = '4'

const db = await testDatabase(t)
await createTables(db.pool, [userTable, tokenTable])

t.test('the built-in tables', async (t) => {
  t.equal(createTablesSql([userTable, tokenTable]), [
    'CREATE TABLE IF NOT EXISTS "auth_user" (',
    '  "id" serial PRIMARY KEY,',
    '  "username" varchar(100) NOT NULL DEFAULT \'\' UNIQUE,',
    '  "password" varchar(255) NOT NULL DEFAULT \'\',',
    '  "email" text UNIQUE,',
    '  "first_name" varchar(255),',
    '  "last_name" varchar(255),',
    '  "active" boolean NOT NULL DEFAULT false,',
    '  "admin" boolean NOT NULL DEFAULT false,',
    '  "superuser" boolean NOT NULL DEFAULT false,',
    '  "last_login" timestamp',
    ');',
    'DO $tablecrud$ BEGIN COMMENT ON TABLE "auth_user" IS \'The users who can log in\'; EXCEPTION WHEN insufficient_privilege THEN NULL; END $tablecrud$;',
    'CREATE TABLE IF NOT EXISTS "auth_token" (',
    '  "id" serial PRIMARY KEY,',
    '  "token" varchar(100) NOT NULL DEFAULT \'\' UNIQUE,',
    '  "user" integer NOT NULL REFERENCES "auth_user" ("id") ON DELETE CASCADE',
    ');',
    'DO $tablecrud$ BEGIN COMMENT ON TABLE "auth_token" IS \'API tokens, each for one user\'; EXCEPTION WHEN insufficient_privilege THEN NULL; END $tablecrud$;'
  ].join('\n'))
  t.equal(userTable.columnMap.get('password')!.secret, true)
  t.same(userTable.readable, { template: '%s', columns: ['username'] })
})

t.test('createUser resolves to the row without its password, active unless told', async (t) => {
  const bob = await createUser(db.pool, { username: 'bob', password: 'bob-password', email: 'bob@example.com', first_name: 'Bob', admin: true })
  t.same(bob, {
    id: bob.id, username: 'bob', email: 'bob@example.com', first_name: 'Bob', last_name: null, active: true, admin: true, superuser: false, last_login: null
  })
  const { rows } = await db.pool.query('SELECT password FROM auth_user WHERE id = $1', [bob.id])
  t.match(rows[0].password, /^\$2b\$04\$/)
  t.equal(await verifyPassword('bob-password', rows[0].password), true)
  const idle = await createUser(db.pool, { username: 'idle', password: 'idle-password', active: false, superuser: true }, { bcryptCost: 5 })
  t.match(idle, { active: false, admin: false, superuser: true, email: null })
  await t.rejects(createUser(db.pool, { username: 'bob', password: 'another-password' }), { code: '23505' }, 'usernames are unique')
  await t.rejects(createUser(db.pool, { username: 'short', password: 'abc' }), { statusCode: 400, code: 'TABLECRUD_ERR_AUTH_PASSWORD_TOO_SHORT' })
  await t.rejects(createUser(db.pool, { username: '', password: 'long-enough' }), { message: 'createUser: username must be a non-empty string' })
  await t.rejects(createUser(db.pool, { password: 'long-enough' } as any), { message: 'createUser: username must be a non-empty string' })
})

t.test('tokens: created per user, the newest handed out, gone with the user', async (t) => {
  const ann = await createUser(db.pool, { username: 'ann', password: 'ann-password' })
  t.equal(await tokenOf(db.pool, ann.id), null)
  const first = await createToken(db.pool, ann.id)
  const second = await createToken(db.pool, ann.id)
  t.match(first, /^[A-Za-z0-9_-]{43}$/)
  t.not(first, second)
  t.equal(await tokenOf(db.pool, ann.id), second)
  t.same(await userByToken(db.pool, first), { user: { id: ann.id, username: 'ann', active: true, admin: false, superuser: false }, token: first })
  t.equal(await userByToken(db.pool, 'nope'), null)
  await t.rejects(createToken(db.pool, 999999), { code: '23503' }, 'for an existing user only')
  await db.pool.query('DELETE FROM auth_user WHERE id = $1', [ann.id])
  t.equal(await userByToken(db.pool, first), null)
  const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM auth_token WHERE token = ANY($1)', [[first, second]])
  t.equal(rows[0].n, 0)
})

t.test('userIdOf and setPassword', async (t) => {
  const id = await userIdOf(db.pool, 'bob')
  t.type(id, 'number')
  t.equal(await userIdOf(db.pool, 'nobody'), null)
  t.equal(await setPassword(db.pool, 'bob', 'new-bob-password'), true)
  t.same(await checkLogin(db.pool, userTable, 'bob', 'new-bob-password'), { id, username: 'bob', active: true, admin: true, superuser: false })
  t.equal(await checkLogin(db.pool, userTable, 'bob', 'bob-password'), null)
  t.equal(await setPassword(db.pool, 'nobody', 'whatever-1'), false)
  await t.rejects(setPassword(db.pool, 'bob', 'short'), { code: 'TABLECRUD_ERR_AUTH_PASSWORD_TOO_SHORT' })
  await setPassword(db.pool, 'bob', 'bob-password')
})

t.test('checkLogin: right password and active, else null', async (t) => {
  t.match(await checkLogin(db.pool, userTable, 'bob', 'bob-password'), { username: 'bob' })
  t.equal(await checkLogin(db.pool, userTable, 'bob', 'wrong-password'), null)
  t.equal(await checkLogin(db.pool, userTable, 'idle', 'idle-password'), null, 'inactive')
  t.equal(await checkLogin(db.pool, userTable, 'nobody', 'bob-password'), null, 'unknown')
  t.equal(await checkLogin(db.pool, userTable, 'bob\u0000', 'bob-password'), null, 'NUL')
  t.equal(await checkLogin(db.pool, userTable, 'bob', 'x'.repeat(129)), null, 'too long')
})

t.test('recordLogin and activeUserById', async (t) => {
  const id = (await userIdOf(db.pool, 'bob'))!
  await recordLogin(db.pool, userTable, id)
  const { rows } = await db.pool.query("SELECT now() AT TIME ZONE 'utc' - last_login < interval '1 minute' AS recent FROM auth_user WHERE id = $1", [id])
  t.equal(rows[0].recent, true)
  t.match(await activeUserById(db.pool, userTable, id), { id, username: 'bob' })
  t.equal(await activeUserById(db.pool, userTable, (await userIdOf(db.pool, 'idle'))!), null)
  t.equal(await activeUserById(db.pool, userTable, 999999), null)
})

t.test('authTableProblem names the missing columns', async (t) => {
  t.equal(authTableProblem(userTable), null)
  t.equal(authTableProblem(tokenTable), 'the table auth_token has no username, password, active, admin, superuser, last_login columns')
  const almost = defineTable('almost_users', {
    username: column.text(), password: column.text(), active: column.boolean(), admin: column.boolean(), superuser: column.boolean()
  })
  t.equal(authTableProblem(almost), 'the table almost_users has no last_login column')
})

t.test('tableTokenProvider and staticTokenProvider', async (t) => {
  const provider = tableTokenProvider()
  t.equal(provider.usesDatabase, true)
  const id = (await userIdOf(db.pool, 'bob'))!
  const token = await createToken(db.pool, id)
  t.equal(await provider.login('bob', 'bob-password', { db: db.pool }), token)
  t.equal(await provider.login('bob', 'wrong-password', { db: db.pool }), null)
  t.match(await provider.authenticate(token, { db: db.pool }), { id, username: 'bob' })
  t.equal(await provider.authenticate('nope', { db: db.pool }), null)
  await t.rejects(provider.authenticate(token, { db: null }), { message: 'tableTokenProvider needs the database: register @fastify/postgres' })
  await t.rejects(provider.login('bob', 'bob-password', { db: null }), { message: 'tableTokenProvider needs the database: register @fastify/postgres' })

  const fixed = staticTokenProvider(['one', 'two'])
  t.equal(fixed.usesDatabase, false)
  t.same(await fixed.authenticate('two', { db: null }), { id: null, username: null, active: true, admin: false, superuser: false })
  t.equal(await fixed.authenticate('three', { db: null }), null)
  t.equal(await fixed.authenticate('on', { db: null }), null)
  const list = ['mutable']
  const copy = staticTokenProvider(list)
  list[0] = 'changed'
  t.ok(await copy.authenticate('mutable', { db: null }), 'the list is copied')
})
