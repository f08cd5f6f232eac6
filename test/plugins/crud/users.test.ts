import t from 'tap'
import { authApp, createAuthTables } from '../auth/auth-app.js'
import { testDatabase } from '../../helpers/db.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { jwtAuth } from '../../../plugins/auth/jwt-auth.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { userTable } from '../../../lib/table/auth-tables.js'
import { createUser } from '../../../lib/auth/users.js'
import { verifyPassword } from '../../../lib/auth/password.js'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { HttpError } from '../../../lib/errors.js'
import type { Validator } from '../../../plugins/crud/table-crud.js'

const db = await testDatabase(t)
await createAuthTables(db)
const secret = 'a-test-secret-that-is-long-enough-0123456789'

const superusersOnly: Validator = (_crud, request) => {
  if (request.user?.superuser !== true) throw new HttpError(403, 'Superusers only')
}

const app = await authApp(t, db, async (app) => {
  await app.register(jwtLogin, { prefix: '/login', secret })
  await app.register(async (api) => {
    await api.register(jwtAuth, { secret })
    await api.register(tableCrud, { table: userTable, prefix: '/users', readOnly: false, validators: { deleteSingle: [superusersOnly] } })
  })
})
await createUser(app.pg, { username: 'root', password: 'root-password', superuser: true })
await createUser(app.pg, { username: 'plain', password: 'plain-password' })

async function login (username: string, password: string): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/login', payload: { username, password } })
  return response.json().token
}
const rootToken = await login('root', 'root-password')
const plainToken = await login('plain', 'plain-password')
const as = (token: string) => ({ authorization: `Bearer ${token}` })

async function storedHash (username: string): Promise<string> {
  return (await app.pg.query('SELECT password FROM auth_user WHERE username = $1', [username])).rows[0].password
}

t.test('a user written through TableCRUD has its password hashed and never returned', async (t) => {
  const created = await app.inject({ method: 'POST', url: '/users/', headers: as(rootToken), payload: { username: 'ann', password: 'ann-password', active: true } })
  t.equal(created.statusCode, 201)
  t.notOk('password' in created.json(), 'the hash is not in the response')
  const hash = await storedHash('ann')
  t.match(hash, /^\$2[aby]\$\d\d\$/, 'stored as a bcrypt hash')
  t.ok(await verifyPassword('ann-password', hash))
  t.equal(await login('ann', 'ann-password') !== undefined, true, 'the new user can log in')

  const id = created.json().id
  const patched = await app.inject({ method: 'PATCH', url: `/users/${id}/`, headers: as(rootToken), payload: { password: 'new-password' } })
  t.equal(patched.statusCode, 200)
  t.notOk('password' in patched.json())
  t.ok(await verifyPassword('new-password', await storedHash('ann')), 'a PATCH hashes too')

  const listed = await app.inject({ url: '/users/?__visible_fields=username', headers: as(rootToken) })
  t.same(listed.json().rows.map((r: { username: string }) => r.username).sort(), ['ann', 'plain', 'root'])
  const filtered = await app.inject({ url: '/users/?password=x', headers: as(rootToken) })
  t.equal(filtered.statusCode, 400, 'the secret password cannot be filtered on')
})

t.test('a password out of bounds is a 400 and nothing is written', async (t) => {
  const before = (await app.pg.query('SELECT count(*)::int AS n FROM auth_user')).rows[0].n
  const short = await app.inject({ method: 'POST', url: '/users/', headers: as(rootToken), payload: { username: 'bob', password: '12345' } })
  t.equal(short.statusCode, 400)
  t.equal(short.json().code, 'TABLECRUD_ERR_AUTH_PASSWORD_TOO_SHORT')
  const missing = await app.inject({ method: 'POST', url: '/users/', headers: as(rootToken), payload: { username: 'bob' } })
  t.equal(missing.statusCode, 400, 'no password is an empty one: too short')
  t.equal((await app.pg.query('SELECT count(*)::int AS n FROM auth_user')).rows[0].n, before)
})

t.test('a validator that lets only superusers delete sees request.user from jwtAuth', async (t) => {
  const victim = await createUser(app.pg, { username: 'victim', password: 'victim-password' })
  const refused = await app.inject({ method: 'DELETE', url: `/users/${victim.id}/`, headers: as(plainToken) })
  t.equal(refused.statusCode, 403)
  t.same(refused.json(), { statusCode: 403, code: 'TABLECRUD_ERR_REFUSED', error: 'Forbidden', message: 'Superusers only' })
  t.equal((await app.pg.query('SELECT count(*)::int AS n FROM auth_user WHERE id = $1', [victim.id])).rows[0].n, 1, 'still there')
  const allowed = await app.inject({ method: 'DELETE', url: `/users/${victim.id}/`, headers: as(rootToken) })
  t.equal(allowed.statusCode, 204)
  const anonymous = await app.inject({ method: 'DELETE', url: `/users/${victim.id}/` })
  t.equal(anonymous.statusCode, 401, 'auth runs before anything else')
})

t.test('/references/ passes over a table whose ForeignKey thunk is broken', async (t) => {
  defineTable('broken_reference', { owner: column.foreignKey((): Table => ({}) as Table) })
  const response = await app.inject({ url: '/users/references/', headers: as(rootToken) })
  t.equal(response.statusCode, 200)
  // Every built-in table that points at users (SPEC §6.16): the token table, since SPEC §5.1 the session table, since §5.4 the MFA table.
  t.same(response.json(), { references: [{ tableName: 'auth_token', columnName: 'user' }, { tableName: 'auth_session', columnName: 'user' }, { tableName: 'auth_mfa_secret', columnName: 'user' }] })
})
