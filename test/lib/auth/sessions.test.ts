import t from 'tap'
import { createTables, createTablesSql } from '../../../lib/db/index.js'
import { sessionTable, tokenTable, userTable } from '../../../lib/table/auth-tables.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { createUser } from '../../../lib/auth/users.js'
import {
  createSession, deleteExpiredSessions, deleteSession, deleteUserSessions, hashSessionToken, isSessionToken, sessionTableProblem, sessionUser
} from '../../../lib/auth/sessions.js'
import { testDatabase } from '../../helpers/db.js'

process.env.TABLECRUD_BCRYPT_COST = '4'

const db = await testDatabase(t)
await createTables(db.pool, [userTable, tokenTable, sessionTable])
const bob = await createUser(db.pool, { username: 'bob', password: 'bob-password' })

const count = async (): Promise<number> => (await db.pool.query('SELECT count(*)::int AS n FROM auth_session')).rows[0].n

t.test('the built-in session table', async (t) => {
  t.equal(createTablesSql([sessionTable]), [
    'CREATE TABLE IF NOT EXISTS "auth_session" (',
    '  "id" serial PRIMARY KEY,',
    '  "token_hash" varchar(64) NOT NULL DEFAULT \'\' UNIQUE,',
    '  "user" integer NOT NULL REFERENCES "auth_user" ("id") ON DELETE CASCADE,',
    '  "expiry_date" timestamp NOT NULL DEFAULT (now() AT TIME ZONE \'utc\'),',
    '  "max_expiry_date" timestamp NOT NULL DEFAULT (now() AT TIME ZONE \'utc\'),',
    '  "created_at" timestamp NOT NULL DEFAULT (now() AT TIME ZONE \'utc\')',
    ');',
    'DO $tablecrud$ BEGIN COMMENT ON TABLE "auth_session" IS \'Browser sessions of session login, each for one user\'; EXCEPTION WHEN insufficient_privilege THEN NULL; END $tablecrud$;'
  ].join('\n'))
  t.equal(sessionTable.columnMap.get('token_hash')!.secret, true)
  t.equal(sessionTableProblem(sessionTable), null)
  t.equal(sessionTableProblem(defineTable('half', { token_hash: column.text(), user: column.integer() })), 'the table half has no expiry_date, max_expiry_date columns')
  t.equal(sessionTableProblem(defineTable('nearly', { token_hash: column.text(), user: column.integer(), expiry_date: column.timestamp() })), 'the table nearly has no max_expiry_date column')
})

t.test('createSession: a 43-character base64url token, only its SHA-256 stored, UTC expiry dates', async (t) => {
  const before = Date.now()
  const session = await createSession(db.pool, bob.id)
  t.match(session.token, /^[A-Za-z0-9_-]{43}$/)
  t.equal(Buffer.from(session.token, 'base64url').length, 32)
  t.ok(session.expiryDate instanceof Date)
  t.ok(Math.abs(session.expiryDate.getTime() - before - 3600_000) < 5000, 'an hour by default')
  t.ok(Math.abs(session.maxExpiryDate.getTime() - before - 7 * 86400_000) < 5000, 'seven days at most by default')
  const { rows } = await db.pool.query('SELECT * FROM auth_session WHERE "user" = $1', [bob.id])
  t.equal(rows.length, 1)
  t.equal(rows[0].token_hash, hashSessionToken(session.token))
  t.equal(hashSessionToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  t.notOk(JSON.stringify(rows).includes(session.token), 'the raw token is stored nowhere')

  const short = await createSession(db.pool, bob.id, { expiry: '30m', maxExpiry: 600 })
  t.ok(Math.abs(short.expiryDate.getTime() - short.maxExpiryDate.getTime()) < 5, 'the expiry never passes the max')
  t.ok(Math.abs(short.maxExpiryDate.getTime() - before - 600_000) < 5000)
  t.not(short.token, session.token)
  await t.rejects(createSession(db.pool, bob.id, { expiry: 'soon' }), { message: 'createSession: expiry must be a positive number of seconds or a duration such as "1h", "7d"' })
  await t.rejects(createSession(db.pool, bob.id, { maxExpiry: 0 }), { message: 'createSession: maxExpiry must be a positive number of seconds or a duration such as "1h", "7d"' })
  await t.rejects(createSession(db.pool, 999999), { code: '23503' }, 'an unknown user is refused by the foreign key')
})

t.test('deleteSession ends one session; unknown and malformed tokens end nothing', async (t) => {
  const a = await createSession(db.pool, bob.id)
  const b = await createSession(db.pool, bob.id)
  const n = await count()
  await deleteSession(db.pool, a.token)
  t.equal(await count(), n - 1)
  await deleteSession(db.pool, a.token)
  await deleteSession(db.pool, 'garbage')
  await deleteSession(db.pool, 'A'.repeat(43))
  await deleteSession(db.pool, undefined as any)
  t.equal(await count(), n - 1)
  t.not(await sessionUser(db.pool, sessionTable, userTable, b.token, null), 'none')
  await deleteUserSessions(db.pool, sessionTable, bob.id)
  t.equal(await sessionUser(db.pool, sessionTable, userTable, b.token, null), 'none')
})

t.test('deleteExpiredSessions deletes those past either expiry and says how many', async (t) => {
  await db.pool.query('DELETE FROM auth_session')
  const live = await createSession(db.pool, bob.id)
  const a = await createSession(db.pool, bob.id)
  const b = await createSession(db.pool, bob.id)
  await db.pool.query("UPDATE auth_session SET expiry_date = (now() AT TIME ZONE 'utc') - interval '1 minute' WHERE token_hash = $1", [hashSessionToken(a.token)])
  await db.pool.query("UPDATE auth_session SET max_expiry_date = (now() AT TIME ZONE 'utc') - interval '1 minute' WHERE token_hash = $1", [hashSessionToken(b.token)])
  t.equal(await deleteExpiredSessions(db.pool), 2)
  t.equal(await deleteExpiredSessions(db.pool), 0)
  t.equal(await count(), 1)
  t.match(await sessionUser(db.pool, sessionTable, userTable, live.token, null), { username: 'bob' })
})

t.test('isSessionToken: only the shape tokens have', async (t) => {
  t.equal(isSessionToken('A'.repeat(43)), true)
  for (const value of ['', 'A'.repeat(42), 'A'.repeat(44), `${'A'.repeat(42)}=`, `${'A'.repeat(42)}+`, `${'A'.repeat(42)}\n`]) {
    t.equal(isSessionToken(value), false, JSON.stringify(value))
  }
})
