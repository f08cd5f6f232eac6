import t from 'tap'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { createTables } from '../../lib/db/index.js'
import { tokenTable, userTable } from '../../lib/auth/tables.js'
import { verifyPassword } from '../../lib/auth/password.js'
import { testDatabase } from '../helpers/db.js'

const db = await testDatabase(t)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * Runs one short-lived connection: the embedded server serves one connection at a time, and
 * the command line needs its own while no other is open.
 */
async function sql<T> (fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.connectionString })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

interface Run { code: number | null, stdout: string, stderr: string }

/** Runs the command line as a user would, answering its questions through stdin. */
async function cli (args: string[], input = '', env: Record<string, string | undefined> = {}): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: db.connectionString, TABLECRUD_BCRYPT_COST: '4', ...env }
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  child.stdin.end(input)
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, stdout, stderr }
}

const user = async (username: string): Promise<Record<string, any> | undefined> =>
  await sql(async (c) => (await c.query('SELECT * FROM auth_user WHERE username = $1', [username])).rows[0])

await sql(async (c) => await createTables(c, [userTable, tokenTable]))

t.test('user create asks the username and the password twice', async (t) => {
  const run = await cli(['user', 'create', '--superuser', '--admin', '--email', 'alice@example.com'], 'alice\nalice-password\nalice-password\n')
  t.same([run.code, run.stderr], [0, 'Username: \nPassword: \nPassword (again): \n'])
  t.match(run.stdout, /^Created user alice \(id \d+\)\.\n$/)
  const row = await user('alice')
  t.match(row, { username: 'alice', email: 'alice@example.com', active: true, admin: true, superuser: true, last_login: null })
  t.equal(await verifyPassword('alice-password', row!.password), true)

  const plain = await cli(['user', 'create'], 'bob\nbob-password\nbob-password\n')
  t.equal(plain.code, 0)
  t.match(await user('bob'), { email: null, admin: false, superuser: false, active: true })
  t.equal((await cli(['user', 'create', '--email=carol@example.com'], ' carol \ncarol-password\ncarol-password\n')).code, 0)
  t.match(await user('carol'), { email: 'carol@example.com' }, 'the username is trimmed')
})

t.test('user create refuses what it cannot do, with exit code 1 and a message', async (t) => {
  const cases: Array<[string, string[], string, RegExp]> = [
    ['passwords differ', [], 'dave\ndave-password\ndave-passwort\n', /Error: The passwords do not match\.\n$/],
    ['too short', [], 'dave\nabc\nabc\n', /Error: The password must have at least 6 characters\.\n$/],
    ['taken', [], 'alice\nalice-password\nalice-password\n', /Error: A user named alice \(or with that email\) already exists\.\n$/],
    ['no username', [], '\n', /Error: The username cannot be empty\.\n$/],
    ['stdin ends', [], 'dave\ndave-password\n', /Error: stdin ended before every question was answered\n$/],
    ['an argument', ['dave'], '', /^Error: user create takes no arguments, not dave\nUsage:/],
    ['an unknown flag', ['--root'], '', /^Error: Unknown option '--root'.*\nUsage:/s],
    ['a flag without its value', ['--email'], '', /^Error: Option '--email <value>' argument missing\nUsage:/]
  ]
  // Independent runs, started together: each start of node and tsx takes a while.
  const runs = await Promise.all(cases.map(async ([, args, input]) => await cli(['user', 'create', ...args], input)))
  for (const [i, [what, , , stderr]] of cases.entries()) {
    const run = runs[i]!
    t.equal(run.code, 1, what)
    t.match(run.stderr, stderr, what)
    t.equal(run.stdout, '', what)
  }
  t.equal(await user('dave'), undefined)
})

t.test('token create prints only the token', async (t) => {
  const run = await cli(['token', 'create', 'alice'])
  t.equal(run.code, 0)
  t.match(run.stdout, /^[A-Za-z0-9_-]{43}\n$/)
  t.equal(run.stderr, '')
  const rows = await sql(async (c) => (await c.query('SELECT u.username FROM auth_token t JOIN auth_user u ON u.id = t."user" WHERE t.token = $1', [run.stdout.trim()])).rows)
  t.same(rows, [{ username: 'alice' }])
  t.not((await cli(['token', 'create', 'alice'])).stdout, run.stdout, 'a new token each time')
})

t.test('token create and user password need one existing username', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['token', 'create', 'nobody'], /^Error: There is no user named nobody\.\n$/],
    [['token', 'create'], /^Error: token create takes one argument: the username\nUsage:/],
    [['token', 'create', 'a', 'b'], /^Error: token create takes one argument/],
    [['token', 'create', '--admin'], /^Error: token create takes one argument/],
    [['user', 'password', 'nobody'], /^Error: There is no user named nobody\.\n$/],
    [['user', 'password'], /^Error: user password takes one argument: the username\nUsage:/]
  ]
  const runs = await Promise.all(cases.map(async ([args]) => await cli(args)))
  for (const [i, [args, stderr]] of cases.entries()) {
    const run = runs[i]!
    t.same([run.code, run.stdout], [1, ''], args.join(' '))
    t.match(run.stderr, stderr, args.join(' '))
  }
})

t.test('user password sets a new password', async (t) => {
  const run = await cli(['user', 'password', 'bob'], 'bob-new-password\nbob-new-password\n')
  t.same([run.code, run.stdout, run.stderr], [0, 'Changed the password of bob.\n', 'Password: \nPassword (again): \n'])
  const { password } = (await user('bob'))!
  t.equal(await verifyPassword('bob-new-password', password), true)
  t.equal(await verifyPassword('bob-password', password), false)
  const mismatch = await cli(['user', 'password', 'bob'], 'one-password\nother-password\n')
  t.same([mismatch.code, mismatch.stderr.endsWith('Error: The passwords do not match.\n')], [1, true])
  t.equal(await verifyPassword('bob-new-password', (await user('bob'))!.password), true, 'unchanged')
})

t.test('usage, help and the environment', async (t) => {
  for (const flag of ['--help', '-h']) {
    const help = await cli([flag])
    t.same([help.code, help.stderr], [0, ''], flag)
    t.match(help.stdout, /^Usage:\n {2}fastify-tablecrud user create \[--superuser\] \[--admin\] \[--email <address>\]\n/)
  }
  const unknown = [[], ['user'], ['user', 'delete'], ['tokens', 'create', 'alice']]
  for (const [i, run] of (await Promise.all(unknown.map(async (args) => await cli(args)))).entries()) {
    t.equal(run.code, 1, unknown[i]!.join(' '))
    t.match(run.stderr, /^Error: Unknown command: .*\nUsage:\n/)
  }
  const noUrl = await cli(['token', 'create', 'alice'], '', { DATABASE_URL: undefined })
  t.same([noUrl.code, noUrl.stderr], [1, 'Error: DATABASE_URL is not set.\n'])
  const down = await cli(['token', 'create', 'alice'], '', { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
  t.equal(down.code, 1)
  t.match(down.stderr, /^Error: connect ECONNREFUSED 127\.0\.0\.1:1\n$/)
})
