import t from 'tap'
import { createTables } from '../../lib/db/index.js'
import { sessionTable, userTable } from '../../lib/table/auth-tables.js'
import { createSession, hashSessionToken } from '../../lib/auth/sessions.js'
import { createUser } from '../../lib/auth/users.js'
import { cliHarness } from '../helpers/cli.js'
import { testDatabase } from '../helpers/db.js'

// `session clean` of the command line, in a file of its own so the CLI's other commands can grow beside it.

process.env.TABLECRUD_BCRYPT_COST = '4'
const db = await testDatabase(t)
const { sql, cli } = cliHarness(db.connectionString)

t.test('session clean deletes the expired sessions and says how many', async (t) => {
  const tokens = await sql(async (c) => {
    await createTables(c, [userTable, sessionTable])
    const bob = await createUser(c, { username: 'bob', password: 'bob-password' })
    const made = []
    for (let i = 0; i < 4; i++) made.push((await createSession(c, bob.id)).token)
    await c.query("UPDATE auth_session SET expiry_date = (now() AT TIME ZONE 'utc') - interval '1 second' WHERE token_hash = ANY($1)", [[hashSessionToken(made[0]!), hashSessionToken(made[1]!)]])
    await c.query("UPDATE auth_session SET max_expiry_date = (now() AT TIME ZONE 'utc') - interval '1 second' WHERE token_hash = $1", [hashSessionToken(made[2]!)])
    return made
  })
  t.same(await cli(['session', 'clean']), { code: 0, stdout: 'Deleted 3 expired sessions.\n', stderr: '' })
  t.same(await cli(['session', 'clean']), { code: 0, stdout: 'Deleted 0 expired sessions.\n', stderr: '' })
  await sql(async (c) => {
    await c.query("UPDATE auth_session SET expiry_date = (now() AT TIME ZONE 'utc') - interval '1 second'")
  })
  t.same(await cli(['session', 'clean']), { code: 0, stdout: 'Deleted 1 expired session.\n', stderr: '' })
  t.equal(tokens.length, 4)
  const wrong = await cli(['session', 'clean', 'now'])
  t.equal(wrong.code, 1)
  t.match(wrong.stderr, /^Error: session clean takes no arguments, not now\nUsage:/)
  t.match((await cli(['--help'])).stdout, '  fastify-tablecrud session clean\n')
})
