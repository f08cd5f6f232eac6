import t from 'tap'
import Fastify from 'fastify'
import { randomBytes } from 'node:crypto'
import { authenticatorProvider } from '../../../lib/auth/mfa.js'
import { createUser } from '../../../lib/auth/users.js'
import { createTables } from '../../../lib/db/index.js'
import { mfaSecretTable, userTable } from '../../../lib/table/auth-tables.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { sessionLogin } from '../../../plugins/auth/session-login.js'
import { testDatabase } from '../../helpers/db.js'
import { freshCode } from '../../helpers/totp.js'
import { authApp } from './auth-app.js'
import { createSessionTables } from './session-app.js'

// SPEC §5.4 (issue 27 point 8): authenticatorProvider's `name`, so one login can offer two.
const db = await testDatabase(t)
await createSessionTables(db)
const { columns } = mfaSecretTable
const backupTable = defineTable('auth_mfa_backup', Object.fromEntries(columns.filter((c) => !c.primaryKey).map((c) => [c.name, c.name === 'user' ? column.foreignKey(userTable, { null: false, onDelete: 'cascade', unique: true }) : c])))
const phone = authenticatorProvider({ encryptionKey: randomBytes(32) })
const backup = authenticatorProvider({ encryptionKey: randomBytes(32), name: 'backup', secretTable: backupTable })

t.test('two authenticator providers of one name fail at registration, in either login plugin', async (t) => {
  const twin = authenticatorProvider({ encryptionKey: randomBytes(32) })
  await t.rejects(async () => { await Fastify().register(sessionLogin, { mfaProviders: [phone, twin] }).ready() }, { message: 'sessionLogin: the option mfaProviders has two providers named authenticator' })
  await t.rejects(async () => { await Fastify().register(jwtLogin, { secret: 'a-secret-long-enough-for-the-check-0123456789', mfaProviders: [phone, twin] }).ready() }, { message: 'jwtLogin: the option mfaProviders has two providers named authenticator' })
})

t.test('two names: mfa_provider picks the one the code is for', async (t) => {
  const app = await authApp(t, db, async (app) => {
    await createTables(app.pg, [mfaSecretTable, backupTable])
    app.register(sessionLogin, { prefix: '/login', mfaProviders: [phone, backup] })
  })
  const user = await createUser(app.pg, { username: 'two-apps', password: 'two-apps-password' })
  const { secret } = (await backup.register(user, { db: app.pg }))!
  t.equal(await backup.confirm(user.id, await freshCode(secret), { db: app.pg }), 'enabled')
  await app.pg.query('UPDATE auth_mfa_backup SET last_used_step = last_used_step - 5')
  const login = async (provider: string): Promise<{ statusCode: number, code?: string }> => {
    const res = await app.inject({ method: 'POST', url: '/login/', payload: { username: 'two-apps', password: 'two-apps-password', mfa_code: await freshCode(secret), mfa_provider: provider } })
    return { statusCode: res.statusCode, code: res.json().code }
  }
  t.same(await login('authenticator'), { statusCode: 401, code: 'TABLECRUD_ERR_MFA_FAILED' }, 'not enrolled with that one')
  t.same(await login('backup'), { statusCode: 200, code: undefined })
})

t.test('a provider that fails otherwise than by its lockout fails the login as before (a 500, no detail)', async (t) => {
  const broken = { name: 'broken', isEnrolled: async () => true, verifyCode: async (): Promise<boolean> => { throw new Error('provider down: secret detail') } }
  const app = await authApp(t, db, (app) => { app.register(sessionLogin, { prefix: '/login', mfaProviders: [broken] }) })
  await createUser(app.pg, { username: 'broken-mfa', password: 'broken-password' })
  const res = await app.inject({ method: 'POST', url: '/login/', payload: { username: 'broken-mfa', password: 'broken-password', mfa_code: '123456' } })
  t.equal(res.statusCode, 500)
  t.notMatch(res.body, 'secret detail')
})
