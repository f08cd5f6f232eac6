import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createTables } from '../../../lib/db/index.js'
import { createUser } from '../../../lib/auth/users.js'
import { authenticatorProvider } from '../../../lib/auth/mfa.js'
import { mfaSecretTable, userTable } from '../../../lib/table/auth-tables.js'
import { decryptSecret, parseKeys } from '../../../lib/auth/mfa-crypto.js'
import { stepAt, totpCode } from '../../../lib/auth/totp.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { lockRemaining } from '../../../lib/sql/mfa.js'
import { testDatabase } from '../../helpers/db.js'
import { freshCode } from '../../helpers/totp.js'

process.env.TABLECRUD_BCRYPT_COST = '4'

const db = await testDatabase(t)
await createTables(db.pool, [userTable, mfaSecretTable])
const key = randomBytes(32)
const provider = authenticatorProvider({ encryptionKey: key })
const ctx = { db: db.pool }
let users = 0
const newUser = async (): Promise<{ id: number, username: string }> =>
  await createUser(db.pool, { username: `user${++users}`, password: 'password-1' })
const row = async (userId: number): Promise<Record<string, any>> =>
  (await db.pool.query('SELECT * FROM auth_mfa_secret WHERE "user" = $1', [userId])).rows[0]

t.test('the table is as SPEC §5.4 says', async (t) => {
  t.same(mfaSecretTable.columns.map((c) => c.name), ['id', 'user', 'secret', 'recovery_codes', 'created_at', 'confirmed_at', 'revoked_at', 'last_used_at', 'last_used_step', 'failed_count', 'failed_since'])
  t.same(mfaSecretTable.columns.filter((c) => c.secret).map((c) => c.name), ['secret', 'recovery_codes'])
  t.same(mfaSecretTable.columns.filter((c) => c.nullable).map((c) => c.name), ['confirmed_at', 'revoked_at', 'last_used_at', 'last_used_step', 'failed_since'])
  t.equal(mfaSecretTable.columnMap.get('user')!.onDelete, 'cascade')
  t.equal(provider.name, 'authenticator')
  t.equal(provider.secretTable, mfaSecretTable)
})

t.test('register, confirm, log in, replay, recovery codes, revoke', async (t) => {
  const user = await newUser()
  t.equal(await provider.status(user.id, ctx), 'none')
  t.equal(await provider.confirm(user.id, '123456', ctx), 'none', 'nothing to confirm')
  t.equal(await provider.revoke(user.id, ctx), false, 'nothing to revoke')
  const enrollment = (await provider.register(user, ctx))!
  t.match(enrollment.secret, /^[A-Z2-7]{32}$/)
  t.match(enrollment.qrcode_image, /^data:image\/png;base64,/)
  t.equal(enrollment.otpauth_url, `otpauth://totp/fastify-tablecrud:${user.username}?issuer=fastify-tablecrud&secret=${enrollment.secret}&algorithm=SHA1&digits=6&period=30`)
  t.equal(enrollment.recovery_codes.length, 8)
  for (const c of enrollment.recovery_codes) t.match(c, /^[a-z0-9]{6}-[a-z0-9]{6}$/)

  const stored = await row(user.id)
  t.notMatch(stored.secret, enrollment.secret, 'no base32 secret in clear')
  t.notMatch(stored.secret, /[A-Z2-7]{32}/)
  t.equal(decryptSecret(parseKeys(key)!, stored.secret, String(user.id)), enrollment.secret)
  t.equal(stored.recovery_codes.length, 8)
  t.notMatch(stored.recovery_codes.join(), enrollment.recovery_codes[0]!.split('-')[0]!, 'no recovery code in clear')
  t.equal(stored.confirmed_at, null)

  t.equal(await provider.status(user.id, ctx), 'pending')
  t.equal(await provider.isEnrolled(user.id, ctx), false, 'a pending enrollment is not asked for at login')
  t.equal(await provider.verifyCode(user.id, await freshCode(enrollment.secret), ctx), false, 'nor accepted')
  t.equal(await provider.codeUsed(user.id, totpCode(enrollment.secret), ctx), false, 'nor spent')

  const second = (await provider.register(user, ctx))!
  t.not(second.secret, enrollment.secret, 'a new register replaces the pending secret')
  t.equal(await provider.confirm(user.id, totpCode(enrollment.secret), ctx), 'invalid', "the replaced secret's code")
  t.equal(await provider.confirm(user.id, '000000x', ctx), 'invalid')
  const confirmCode = await freshCode(second.secret)
  t.equal(await provider.confirm(user.id, confirmCode, ctx), 'enabled')
  t.equal(await provider.status(user.id, ctx), 'enrolled')
  t.equal(await provider.isEnrolled(user.id, ctx), true)
  t.equal(await provider.confirm(user.id, confirmCode, ctx), 'enrolled')
  t.equal(await provider.register(user, ctx), null, 'no register over a confirmed enrollment')
  t.equal((await row(user.id)).last_used_step, stepAt(Date.now()), 'the confirming step is spent')
  t.equal(await provider.verifyCode(user.id, confirmCode, ctx), false, 'the confirming code does not log in')
  t.equal(await provider.codeUsed(user.id, confirmCode, ctx), true, 'it is the right code, spent')

  // As if the confirmation were a step ago, rather than wait 30 s for the next code.
  await db.pool.query('UPDATE auth_mfa_secret SET last_used_step = last_used_step - 1 WHERE "user" = $1', [user.id])
  const code = await freshCode(second.secret)
  t.equal(await provider.verifyCode(user.id, code, ctx), true, 'the current code works')
  t.equal(await provider.verifyCode(user.id, code, ctx), false, 'once')
  t.equal(await provider.codeUsed(user.id, code, ctx), true, 'spent')
  t.equal(await provider.codeUsed(user.id, totpCode(second.secret, Date.now() - 60_000), ctx), false, 'a code of two windows ago is not a spent one')
  t.equal(await provider.codeUsed(user.id, '000000x', ctx), false, 'a wrong code is not')
  t.equal(await provider.verifyCode(user.id, totpCode(second.secret, Date.now() - 60_000), ctx), false, 'a code of two windows ago')
  t.equal(await provider.verifyCode(user.id, '1'.repeat(10000), ctx), false, '10,000 digits')
  t.equal(await provider.verifyCode(user.id, '', ctx), false)

  const [recovery] = second.recovery_codes
  t.equal(await provider.verifyCode(user.id, recovery!.toUpperCase(), ctx), true, 'a recovery code works')
  t.equal(await provider.verifyCode(user.id, recovery!, ctx), false, 'once')
  t.equal(await provider.codeUsed(user.id, recovery!, ctx), false, 'a used recovery code is gone, not "just used"')
  await db.pool.query('UPDATE auth_mfa_secret SET last_used_step = NULL WHERE "user" = $1', [user.id])
  t.equal(await provider.codeUsed(user.id, totpCode(second.secret), ctx), false, 'no step spent yet')
  t.equal((await row(user.id)).recovery_codes.length, 7)
  t.equal(await provider.verifyCode(user.id, enrollment.recovery_codes[0]!, ctx), false, "a replaced enrollment's code")

  t.equal(await provider.revoke(user.id, ctx), true)
  t.not((await row(user.id)).revoked_at, null)
  t.equal(await provider.status(user.id, ctx), 'none')
  t.equal(await provider.isEnrolled(user.id, ctx), false)
  t.equal(await provider.verifyCode(user.id, second.recovery_codes[1]!, ctx), false, 'a revoked enrollment takes no code')
  t.equal(await provider.revoke(user.id, ctx), false)
  const again = await provider.register(user, ctx)
  t.ok(again, 'register after revoke')
  t.equal((await row(user.id)).revoked_at, null)
  t.equal((await db.pool.query('SELECT count(*)::int AS n FROM auth_mfa_secret WHERE "user" = $1', [user.id])).rows[0].n, 1)
})

t.test('two logins racing with one code: exactly one passes', async (t) => {
  const user = await newUser()
  const { secret, recovery_codes: codes } = (await provider.register(user, ctx))!
  const first = await freshCode(secret)
  t.equal(await provider.confirm(user.id, first, ctx), 'enabled')
  await db.pool.query('UPDATE auth_mfa_secret SET last_used_step = last_used_step - 5 WHERE "user" = $1', [user.id])
  const results = await Promise.all(Array.from({ length: 4 }, async () => await provider.verifyCode(user.id, first, ctx)))
  t.equal(results.filter(Boolean).length, 1)
  const recovered = await Promise.all(Array.from({ length: 4 }, async () => await provider.verifyCode(user.id, codes[0]!, ctx)))
  t.equal(recovered.filter(Boolean).length, 1)
})

t.test('two confirmations racing with one code: one enables, the other finds nothing pending', async (t) => {
  const user = await newUser()
  const { secret } = (await provider.register(user, ctx))!
  const code = await freshCode(secret)
  const results = await Promise.all([provider.confirm(user.id, code, ctx), provider.confirm(user.id, code, ctx)])
  t.equal(results.filter((r) => r === 'enabled').length, 1)
  t.ok(results.every((r) => r === 'enabled' || r === 'none' || r === 'enrolled'), results.join())
})

t.test('the race lost for certain: another confirmation lands between the read and the write, so none', async (t) => {
  const user = await newUser()
  const { secret } = (await provider.register(user, ctx))!
  const code = await freshCode(secret)
  let raced = 0
  const racing = {
    query: async (text: string, values?: unknown[]) => {
      if (text.startsWith('UPDATE') && text.includes('"confirmed_at" IS NULL')) {
        raced++
        await db.pool.query('UPDATE auth_mfa_secret SET confirmed_at = now() WHERE "user" = $1', [user.id])
      }
      return await db.pool.query(text, values)
    }
  }
  t.equal(await provider.confirm(user.id, code, { db: racing }), 'none', 'nothing pending was left to confirm')
  t.equal(raced, 1, 'the confirming write ran once, after the other confirmation')
  t.equal(await provider.status(user.id, ctx), 'enrolled', "the other confirmation's enrollment stands")
})

t.test('a window of 1 takes the previous step, but never one at or before the last used', async (t) => {
  const lenient = authenticatorProvider({ encryptionKey: key, validWindow: 1 })
  const user = await newUser()
  const { secret } = (await lenient.register(user, ctx))!
  t.equal(await lenient.confirm(user.id, await freshCode(secret), ctx), 'enabled')
  await db.pool.query('UPDATE auth_mfa_secret SET last_used_step = NULL WHERE "user" = $1', [user.id])
  const step = stepAt(Date.now())
  t.equal(await lenient.verifyCode(user.id, totpCode(secret, step * 30_000), ctx), true)
  t.equal(await lenient.verifyCode(user.id, totpCode(secret, (step - 1) * 30_000), ctx), false, 'an earlier step after a later one')
  t.equal(await lenient.verifyCode(user.id, totpCode(secret, (step + 1) * 30_000), ctx), true, 'a later step')
})

t.test('key rotation: a row of the old key decrypts with the second key of the array', async (t) => {
  const oldKey = randomBytes(32)
  const before = authenticatorProvider({ encryptionKey: oldKey.toString('hex') })
  const user = await newUser()
  const { secret } = (await before.register(user, ctx))!
  const after = authenticatorProvider({ encryptionKey: [randomBytes(32).toString('base64'), oldKey] })
  t.equal(await after.confirm(user.id, await freshCode(secret), ctx), 'enabled')
  const other = await newUser()
  const { secret: otherSecret } = (await after.register(other, ctx))!
  t.equal(await before.confirm(other.id, await freshCode(otherSecret), ctx), 'invalid', 'the old key alone cannot read the new rows')
  const lost = authenticatorProvider({ encryptionKey: randomBytes(32) })
  await db.pool.query('UPDATE auth_mfa_secret SET last_used_step = NULL WHERE "user" = $1', [user.id])
  t.equal(await lost.verifyCode(user.id, totpCode(secret), ctx), false, 'a key that opens nothing refuses')
})

t.test('a ciphertext copied to another user does not decrypt there', async (t) => {
  const ann = await newUser()
  const bob = await newUser()
  const { secret } = (await provider.register(ann, ctx))!
  await provider.register(bob, ctx)
  await db.pool.query('UPDATE auth_mfa_secret SET secret = (SELECT secret FROM auth_mfa_secret WHERE "user" = $1) WHERE "user" = $2', [ann.id, bob.id])
  t.equal(await provider.confirm(bob.id, await freshCode(secret), ctx), 'invalid')
})

t.test('a deleted user takes the enrollment along', async (t) => {
  const user = await newUser()
  await provider.register(user, ctx)
  await db.pool.query('DELETE FROM auth_user WHERE id = $1', [user.id])
  t.equal(await row(user.id), undefined)
})

t.test('options are checked when the provider is made', async (t) => {
  const problem = (option: string): { code: string, message: RegExp } => ({ code: 'TABLECRUD_ERR_OPTIONS', message: new RegExp(`^authenticatorProvider: the option ${option} `) })
  t.throws(() => authenticatorProvider(undefined as never), problem('encryptionKey'))
  t.throws(() => authenticatorProvider({} as never), problem('encryptionKey'))
  t.throws(() => authenticatorProvider({ encryptionKey: randomBytes(16) }), problem('encryptionKey'))
  t.throws(() => authenticatorProvider({ encryptionKey: 'a'.repeat(63) }), problem('encryptionKey'))
  t.throws(() => authenticatorProvider({ encryptionKey: [] }), problem('encryptionKey'))
  t.throws(() => authenticatorProvider({ encryptionKey: key, issuer: '' }), problem('issuer'))
  t.throws(() => authenticatorProvider({ encryptionKey: key, issuer: 'a:b' }), problem('issuer'))
  t.throws(() => authenticatorProvider({ encryptionKey: key, issuer: 5 as never }), problem('issuer'))
  t.throws(() => authenticatorProvider({ encryptionKey: key, recoveryCodeCount: -1 }), problem('recoveryCodeCount'))
  t.throws(() => authenticatorProvider({ encryptionKey: key, recoveryCodeCount: 1.5 }), problem('recoveryCodeCount'))
  t.throws(() => authenticatorProvider({ encryptionKey: key, recoveryCodeCount: 101 }), problem('recoveryCodeCount'))
  t.throws(() => authenticatorProvider({ encryptionKey: key, validWindow: -1 }), problem('validWindow'))
  t.throws(() => authenticatorProvider({ encryptionKey: key, validWindow: 11 }), problem('validWindow'))
  t.throws(() => authenticatorProvider({ encryptionKey: key, secretTable: {} as never }), problem('secretTable'))
  for (const name of ['', 'a b', 'x'.repeat(65), 5 as never]) t.throws(() => authenticatorProvider({ encryptionKey: key, name }), problem('name'))
  t.equal(authenticatorProvider({ encryptionKey: key, name: 'backup-app' }).name, 'backup-app', 'the name option (SPEC §5.4)')
  for (const maxFailures of [0, 1.5, 1001, '5' as never]) t.throws(() => authenticatorProvider({ encryptionKey: key, maxFailures }), problem('maxFailures'))
  for (const failureWindow of [0, '15 minutes', '2d', 86401]) t.throws(() => authenticatorProvider({ encryptionKey: key, failureWindow }), problem('failureWindow'))
  const partial = defineTable('mfa_partial', { user: column.foreignKey(userTable, { unique: true }), secret: column.text() })
  t.throws(() => authenticatorProvider({ encryptionKey: key, secretTable: partial }), { message: /has no recovery_codes, created_at, confirmed_at, revoked_at, last_used_at, last_used_step, failed_count, failed_since column/ })
  const { columns } = mfaSecretTable
  const shape = Object.fromEntries(columns.filter((c) => !c.primaryKey).map((c) => [c.name, c]))
  const notUnique = defineTable('mfa_not_unique', { ...shape, user: column.foreignKey(userTable, { null: false }) })
  t.throws(() => authenticatorProvider({ encryptionKey: key, secretTable: notUnique }), { message: /must have a unique user column/ })
  const mine = defineTable('my_mfa', { ...shape })
  const custom = authenticatorProvider({ encryptionKey: key, secretTable: mine, issuer: 'Acme', recoveryCodeCount: 0 })
  await createTables(db.pool, [mine])
  const user = await newUser()
  const enrollment = (await custom.register(user, ctx))!
  t.same(enrollment.recovery_codes, [])
  t.match(enrollment.otpauth_url, /^otpauth:\/\/totp\/Acme:user\d+\?issuer=Acme&/)
  t.equal((await db.pool.query('SELECT count(*)::int AS n FROM my_mfa')).rows[0].n, 1)
})

t.test('guessing (issue 27): after maxFailures codes without a good one, every code is a 429 until the window ends; recovery codes still pass', async (t) => {
  const locking = authenticatorProvider({ encryptionKey: key, maxFailures: 3, failureWindow: '1m' })
  // A second instance of the application: its own provider object, the same database.
  const elsewhere = authenticatorProvider({ encryptionKey: key, maxFailures: 3, failureWindow: 60 })
  const user = await newUser()
  const { secret, recovery_codes: codes } = (await locking.register(user, ctx))!
  t.equal(await locking.confirm(user.id, await freshCode(secret), ctx), 'enabled')
  const allowReuse = async (): Promise<void> => { await db.pool.query('UPDATE auth_mfa_secret SET last_used_step = last_used_step - 5 WHERE "user" = $1', [user.id]) }
  const locked = async (provider: typeof locking, code: string): Promise<any> => await provider.verifyCode(user.id, code, ctx).then(() => null, (e: unknown) => e)

  t.equal(await locking.verifyCode(user.id, '000000', ctx), false)
  t.equal(await elsewhere.verifyCode(user.id, '000001', ctx), false, 'counted in the database, whichever instance')
  t.equal(await locking.verifyCode(user.id, '000002', ctx), false)
  t.match(await row(user.id), { failed_count: 3 }, 'three attempts counted')
  await allowReuse()
  const error = await locked(elsewhere, await freshCode(secret))
  t.match(error, { statusCode: 429, code: 'TABLECRUD_ERR_MFA_LOCKED' }, 'the fourth code is refused, even the right one')
  t.ok(error.retryAfter >= 1 && error.retryAfter <= 60, `Retry-After within the window (${String(error.retryAfter)})`)
  t.equal(error.message, `Too many wrong MFA codes: try again in ${String(error.retryAfter)} seconds, or use a recovery code.`)
  t.equal((await row(user.id)).failed_count, 3, 'a refused attempt does not extend the lock')

  t.equal(await locking.verifyCode(user.id, codes[0]!, ctx), true, 'a recovery code passes the lock')
  t.match(await row(user.id), { failed_count: 0, failed_since: null }, 'and starts the count again')
  await allowReuse()
  t.equal(await locking.verifyCode(user.id, await freshCode(secret), ctx), true, 'so the authenticator code passes again')

  for (const wrong of ['111111', '222222', '333333']) t.equal(await locking.verifyCode(user.id, wrong, ctx), false)
  t.match(await locked(locking, '444444'), { code: 'TABLECRUD_ERR_MFA_LOCKED' })
  await db.pool.query("UPDATE auth_mfa_secret SET failed_since = failed_since - interval '61 seconds' WHERE \"user\" = $1", [user.id])
  await allowReuse()
  t.equal(await locking.verifyCode(user.id, '555555', ctx), false, 'the window has passed: codes are checked again')
  t.equal((await row(user.id)).failed_count, 1, 'a new window counts from one')
  await allowReuse()
  t.equal(await locking.verifyCode(user.id, await freshCode(secret), ctx), true, 'and a good code passes')
})

t.test('a burst of concurrent guesses gets exactly maxFailures checked', async (t) => {
  const locking = authenticatorProvider({ encryptionKey: key, maxFailures: 3 })
  const user = await newUser()
  const { secret } = (await locking.register(user, ctx))!
  t.equal(await locking.confirm(user.id, await freshCode(secret), ctx), 'enabled')
  const results = await Promise.all(Array.from({ length: 10 }, async (_, i) =>
    await locking.verifyCode(user.id, String(100000 + i), ctx).then((ok) => ok ? 'passed' : 'failed', (e: { code: string }) => e.code)))
  t.same(results.filter((r) => r === 'failed').length, 3)
  t.same(results.filter((r) => r === 'TABLECRUD_ERR_MFA_LOCKED').length, 7)
})

t.test('lockRemaining: the whole window when the row is gone', async (t) => {
  const { rows } = await db.pool.query(lockRemaining(mfaSecretTable, -1, 900).text, [...lockRemaining(mfaSecretTable, -1, 900).values])
  t.same(rows, [{ seconds: 900 }])
})
