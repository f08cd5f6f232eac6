import t from 'tap'
import { createTables } from '../../../lib/db/index.js'
import { userTable } from '../../../lib/table/auth-tables.js'
import { createUser, checkLogin } from '../../../lib/auth/users.js'
import { changeUserPassword, checkPasswordChange, checkRegistration, createRegisteredUser, type TransactionDb } from '../../../lib/auth/accounts.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { testDatabase } from '../../helpers/db.js'

process.env.TABLECRUD_BCRYPT_COST = '4'

const MISSING = { statusCode: 422, code: 'TABLECRUD_ERR_FORM_MISSING_FIELDS', message: 'Form is invalid. Missing one or more fields.' }
const invalid = (message: string): { statusCode: number, code: string, message: string } => ({ statusCode: 422, code: 'TABLECRUD_ERR_FORM_INVALID', message })
const form = (fields: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ username: 'ann', email: 'ann@example.com', password: 'secret-1', confirm_password: 'secret-1', ...fields })

t.test('checkRegistration: the SPEC §5.2 checks in order', async (t) => {
  t.same(checkRegistration(form({ extra: 'ignored' }), 6, 100), { username: 'ann', email: 'ann@example.com', password: 'secret-1' })
  for (const body of [undefined, null, 'x', [], {}, form({ username: '' }), form({ email: undefined }), form({ password: 123456 }),
    form({ confirm_password: null }), form({ username: ['ann'] }), form({ email: '', password: 'x' })]) {
    t.throws(() => checkRegistration(body, 6, 100), MISSING, JSON.stringify(body))
  }
  t.throws(() => checkRegistration(Object.create(form()), 6, 100), MISSING, 'inherited fields are not fields')
  t.throws(() => checkRegistration(form({ username: 'a'.repeat(101) }), 6, 100), invalid('Username must be at most 100 characters long.'))
  t.same(checkRegistration(form({ username: '😀'.repeat(100) }), 6, 100).username, '😀'.repeat(100), 'characters, not UTF-16 units')
  t.same(checkRegistration(form({ username: 'a'.repeat(500) }), 6, null).username.length, 500, 'no limit for a text column')
  t.throws(() => checkRegistration(form({ username: 'a\0b' }), 6, 100), invalid('Username must not contain control characters.'))
  t.throws(() => checkRegistration(form({ username: 'a\nb' }), 6, 100), invalid('Username must not contain control characters.'))
  for (const email of ['ann', 'ann@', '@example.com', 'ann@example', 'ann@@example.com', 'a nn@example.com', 'ann@exa mple.com',
    'ann@example.', 'ann@.com', 'ann\0@example.com', `${'a'.repeat(250)}@x.io`]) {
    t.throws(() => checkRegistration(form({ email, password: 'x' }), 6, 100), invalid('Invalid email address.'), email.slice(0, 20))
  }
  for (const email of ['a@b.co', 'ann.lee+tag@mail.example.org', 'ÄNN@bücher.de']) t.equal(checkRegistration(form({ email }), 6, 100).email, email)
  t.throws(() => checkRegistration(form({ password: 'abcde', confirm_password: 'x' }), 6, 100), invalid('Password must be at least 6 characters long.'))
  t.throws(() => checkRegistration(form({ password: 'abcdefghi', confirm_password: 'abcdefghi' }), 10, 100), invalid('Password must be at least 10 characters long.'))
  t.throws(() => checkRegistration(form({ password: 'x'.repeat(129), confirm_password: 'x' }), 6, 100), invalid('Password must be at most 128 characters long.'))
  t.throws(() => checkRegistration(form({ password: 'x'.repeat(200 * 1024), confirm_password: 'x'.repeat(200 * 1024) }), 6, 100), invalid('Password must be at most 128 characters long.'), '200 KB')
  const emoji = '😀'.repeat(128)
  t.equal(checkRegistration(form({ password: emoji, confirm_password: emoji }), 6, 100).password, emoji, '128 emoji are 128 characters')
  const nul = 'abc\0def'
  t.equal(checkRegistration(form({ password: nul, confirm_password: nul }), 6, 100).password, nul, 'a NUL in a password is a character like any other')
  t.throws(() => checkRegistration(form({ confirm_password: 'secret-2' }), 6, 100), invalid('Passwords do not match.'))
})

t.test('checkPasswordChange: missing fields, length, confirmation', async (t) => {
  const change = (fields: Record<string, unknown> = {}): Record<string, unknown> =>
    ({ current_password: 'old-secret', new_password: 'new-secret', confirm_new_password: 'new-secret', ...fields })
  t.same(checkPasswordChange(change(), 6), { current: 'old-secret', next: 'new-secret' })
  for (const body of [null, {}, change({ current_password: '' }), change({ new_password: 5 }), change({ confirm_new_password: undefined })]) {
    t.throws(() => checkPasswordChange(body, 6), MISSING)
  }
  t.throws(() => checkPasswordChange(change({ new_password: 'short', confirm_new_password: 'short' }), 8), invalid('Password must be at least 8 characters long.'))
  t.throws(() => checkPasswordChange(change({ new_password: 'y'.repeat(129) }), 6), invalid('Password must be at most 128 characters long.'))
  t.throws(() => checkPasswordChange(change({ confirm_new_password: 'other-secret' }), 6), invalid('Passwords do not match.'))
})

const db = await testDatabase(t)
const sessions = defineTable('accounts_test_session', {
  token_hash: column.varchar({ length: 64, unique: true }),
  user: column.foreignKey(userTable, { null: false, onDelete: 'cascade' })
})
await createTables(db.pool, [userTable, sessions])
/** BEGIN ... COMMIT on one connection of the test pool: what the plugins' database helper gives `register`. */
const txDb: TransactionDb = {
  async transaction (work) {
    const client = await db.pool.connect()
    try {
      await client.query('BEGIN')
      const result = await work({ run: async (statement) => await client.query(statement.text, statement.values as unknown[]) })
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK')
      throw error
    } finally {
      client.release()
    }
  }
}
const count = async (where = 'true', values: unknown[] = []): Promise<number> =>
  (await db.pool.query(`SELECT count(*)::int AS n FROM auth_user WHERE ${where}`, values)).rows[0].n

t.test('createRegisteredUser creates the user with the defaults, hashed', async (t) => {
  const created = await createRegisteredUser(txDb, userTable, { username: 'reg1', email: 'reg1@example.com', password: 'secret-1' }, new Map<string, unknown>([['active', true], ['first_name', 'Reg']]), 4)
  t.match(created, { id: Number, username: 'reg1' })
  const { rows } = await db.pool.query('SELECT * FROM auth_user WHERE id = $1', [created.id])
  t.match(rows[0], { username: 'reg1', email: 'reg1@example.com', active: true, first_name: 'Reg', admin: false })
  t.match(rows[0].password, /^\$2b\$04\$/)
  t.ok(await checkLogin(db.pool, userTable, 'reg1', 'secret-1', 4))
  const inactive = await createRegisteredUser(txDb, userTable, { username: 'reg2', email: 'reg2@example.com', password: 'secret-1' }, new Map(), 4)
  t.equal((await db.pool.query('SELECT active FROM auth_user WHERE id = $1', [inactive.id])).rows[0].active, false, 'inactive without userDefaults')
})

t.test('a taken username or email (any case) is the 422, nothing written', async (t) => {
  await createUser(db.pool, { username: 'dup', password: 'secret-1', email: 'Dup@Example.com' })
  const before = await count()
  const DUPLICATE = invalid('User with email or username already exists.')
  const register = async (username: string, email: string): Promise<unknown> =>
    await createRegisteredUser(txDb, userTable, { username, email, password: 'secret-1' }, new Map(), 4)
  await t.rejects(register('dup', 'other@example.com'), DUPLICATE)
  await t.rejects(register('other', 'Dup@Example.com'), DUPLICATE)
  await t.rejects(register('other', 'dup@example.COM'), DUPLICATE)
  t.equal(await count(), before)
})

t.test('racing registrations: one wins, the others get the 422, never a 500', async (t) => {
  const DUPLICATE = invalid('User with email or username already exists.')
  const race = async (entries: Array<[string, string]>): Promise<PromiseSettledResult<unknown>[]> =>
    await Promise.allSettled(entries.map(async ([username, email]) =>
      await createRegisteredUser(txDb, userTable, { username, email, password: 'secret-1' }, new Map(), 4)))
  const sameName = await race([['racer', 'r1@example.com'], ['racer', 'r2@example.com'], ['racer', 'r3@example.com'], ['racer', 'r4@example.com']])
  t.equal(sameName.filter((r) => r.status === 'fulfilled').length, 1)
  for (const r of sameName.filter((r) => r.status === 'rejected')) t.match((r as PromiseRejectedResult).reason, DUPLICATE)
  const sameEmail = await race([['e1', 'Race@example.com'], ['e2', 'race@example.com'], ['e3', 'RACE@EXAMPLE.COM'], ['e4', 'race@Example.com']])
  t.equal(sameEmail.filter((r) => r.status === 'fulfilled').length, 1, 'case-insensitive, racing')
  for (const r of sameEmail.filter((r) => r.status === 'rejected')) t.match((r as PromiseRejectedResult).reason, DUPLICATE)
  t.equal(await count('lower(email) = $1', ['race@example.com']), 1)
})

t.test('a database error rolls back and is mapped; a unique violation the check missed is the 422', async (t) => {
  await t.rejects(createRegisteredUser(txDb, userTable, { username: 'typed', email: 'typed@example.com', password: 'secret-1' }, new Map([['active', 'maybe']]), 4),
    { statusCode: 400, code: 'TABLECRUD_ERR_DB_DATA' })
  t.equal(await count('username = $1', ['typed']), 0)
  const failing = (error: Error): TransactionDb => ({ transaction: async () => { throw error } })
  await t.rejects(createRegisteredUser(failing(new Error('connection lost')), userTable, { username: 'x', email: 'x@example.com', password: 'secret-1' }, new Map(), 4),
    { message: 'connection lost' }, 'an error that is not the database answering passes through')
  await t.rejects(createRegisteredUser(failing(Object.assign(new Error('duplicate key'), { code: '23505' })), userTable, { username: 'x', email: 'x@example.com', password: 'secret-1' }, new Map(), 4),
    invalid('User with email or username already exists.'))
})

t.test('changeUserPassword checks the current password, replaces the hash and ends every session', async (t) => {
  const user = await createUser(db.pool, { username: 'changer', password: 'old-secret' })
  const other = await createUser(db.pool, { username: 'bystander', password: 'old-secret' })
  for (const [i, id] of [user.id, user.id, other.id].entries()) await db.pool.query('INSERT INTO accounts_test_session (token_hash, "user") VALUES ($1, $2)', [`h${i}`, id])
  await t.rejects(changeUserPassword(db.pool, userTable, sessions, user.id, { current: 'wrong-secret', next: 'new-secret' }, 4), invalid('Incorrect password.'))
  await t.rejects(changeUserPassword(db.pool, userTable, sessions, 999999, { current: 'old-secret', next: 'new-secret' }, 4), invalid('Incorrect password.'), 'a user gone meanwhile')
  t.equal((await db.pool.query('SELECT count(*)::int AS n FROM accounts_test_session')).rows[0].n, 3, 'nothing ended on a refusal')
  await changeUserPassword(db.pool, userTable, sessions, user.id, { current: 'old-secret', next: 'new-secret' }, 4)
  t.equal(await checkLogin(db.pool, userTable, 'changer', 'old-secret', 4), null)
  t.ok(await checkLogin(db.pool, userTable, 'changer', 'new-secret', 4))
  t.same((await db.pool.query('SELECT "user" FROM accounts_test_session')).rows, [{ user: other.id }], "every session of the user ended, no one else's")
})
