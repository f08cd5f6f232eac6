import t from 'tap'
import { readFileSync } from 'node:fs'
import { verifyPassword } from '../../lib/auth/password.js'
import { cliHarness, type Run } from '../helpers/cli.js'
import { testDatabase } from '../helpers/db.js'

// Read by the password hashing of the process the command line runs in: this one.
process.env.TABLECRUD_BCRYPT_COST = '4'

const db = await testDatabase(t)
const { sql, cli } = cliHarness(db.connectionString)

async function runAll (runs: Array<[string[], string?]>): Promise<Run[]> {
  const out: Run[] = []
  for (const [args, input] of runs) out.push(await cli(args, input))
  return out
}

t.test('init creates the built-in tables in a fresh database, and says so; again, it has nothing to do', async (t) => {
  const before = await cli(['user', 'list'])
  t.same([before.code, before.stdout], [1, ''])
  t.match(before.stderr, /^Error: relation "auth_user" does not exist: run `fastify-tablecrud init` to create the built-in tables\.\n$/)
  t.same(await cli(['user', 'create'], 'alice\nalice-password\nalice-password\n'), {
    code: 1,
    stdout: '',
    stderr: 'Error: The table auth_user does not exist: run `fastify-tablecrud init` to create the built-in tables.\n'
  }, 'user create says so before it asks anything')
  t.same(await cli(['check']), {
    code: 1,
    stdout: '',
    stderr: 'Error: None of the built-in tables exists: run `fastify-tablecrud init`, or give check the module of your tables.\n'
  })
  t.same(await cli(['init']), { code: 0, stdout: 'Created the tables auth_user, auth_token, auth_session and auth_mfa_secret.\n', stderr: '' })
  t.same(await cli(['init']), { code: 0, stdout: 'The built-in tables auth_user, auth_token, auth_session and auth_mfa_secret already exist: nothing to do.\n', stderr: '' })
  await sql(async (c) => await c.query('DROP TABLE auth_token'))
  t.same(await cli(['init']), { code: 0, stdout: 'Created the table auth_token.\n', stderr: '' })
  t.same(await cli(['check']), { code: 0, stdout: 'The database matches the definitions of auth_user, auth_token, auth_session and auth_mfa_secret.\n', stderr: '' })
  await sql(async (c) => await c.query('DROP TABLE auth_mfa_secret, auth_session'))
  t.same(await cli(['check']), { code: 0, stdout: 'The database matches the definitions of auth_user and auth_token.\n', stderr: '' },
    'without a module, only the built-in tables the database has: an app without sessions or MFA has none of theirs')
  t.same(await cli(['init']), { code: 0, stdout: 'Created the tables auth_session and auth_mfa_secret.\n', stderr: '' })
  const extra = await cli(['init', 'now'])
  t.same([extra.code, extra.stdout], [1, ''])
  t.match(extra.stderr, /^Error: init takes no arguments, not now\nUsage: fastify-tablecrud init\n/)
})

const user = async (username: string): Promise<Record<string, any> | undefined> =>
  await sql(async (c) => (await c.query('SELECT * FROM auth_user WHERE username = $1', [username])).rows[0])

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
  const runs = await runAll(cases.map(([, args, input]) => [['user', 'create', ...args], input]))
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
  const runs = await runAll(cases.map(([args]) => [args]))
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
  for (const args of [['--help'], ['-h'], []]) {
    const help = await cli(args, '', { DATABASE_URL: undefined })
    t.same([help.code, help.stderr], [0, ''], args.join(' ') || 'a bare call')
    t.match(help.stdout, /^Usage:\n {2}fastify-tablecrud user create \[--superuser\] \[--admin\] \[--email <address>\]\n/)
    t.match(help.stdout, /\n {2}fastify-tablecrud generate \[--schema <name>\] \[--out <file>\]\n/)
    t.match(help.stdout, /\nReads DATABASE_URL\. `<command> --help` tells more of one command; --version tells the version\.\n$/)
  }
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  for (const flag of ['--version', '-v']) t.same(await cli([flag], '', { DATABASE_URL: undefined }), { code: 0, stdout: `fastify-tablecrud ${version}\n`, stderr: '' }, flag)
  const unknown = [['user'], ['user', 'remove'], ['tokens', 'create', 'alice']]
  for (const [i, run] of (await runAll(unknown.map((args) => [args]))).entries()) {
    t.equal(run.code, 1, unknown[i]!.join(' '))
    t.match(run.stderr, /^Error: Unknown command: .*\nUsage:\n/)
  }
  const noUrl = await cli(['token', 'create', 'alice'], '', { DATABASE_URL: undefined })
  t.same([noUrl.code, noUrl.stderr], [1, 'Error: DATABASE_URL is not set.\n'])
  const down = await cli(['token', 'create', 'alice'], '', { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
  t.equal(down.code, 1)
  t.match(down.stderr, /^Error: connect ECONNREFUSED 127\.0\.0\.1:1\n$/)
})

t.test('user list shows every user; user delete removes one with its tokens', async (t) => {
  const list = await cli(['user', 'list'])
  t.equal(list.code, 0)
  t.equal(list.stderr, '')
  const lines = list.stdout.split('\n')
  t.match(lines[0], /^id {2}username {2}email {14}active {2}admin {2}superuser {2}last_login$/)
  t.match(lines[1], /^\d+ +alice +alice@example\.com +yes +yes +yes +-$/)
  t.match(lines[2], /^\d+ +bob +- +yes +no +no +-$/)
  t.match(lines[3], /^\d+ +carol +carol@example\.com +yes +no +no +-$/)
  t.equal(lines[4], '3 users.')
  await sql(async (c) => await c.query("UPDATE auth_user SET last_login = '2026-01-02 03:04:05.123456' WHERE username = 'bob'"))
  t.match((await cli(['user', 'list'])).stdout, /bob +- +yes +no +no +2026-01-02T03:04:05\.123456Z?\n/, 'a last login as the wire writes it')

  await cli(['token', 'create', 'carol'])
  await cli(['token', 'create', 'carol'])
  const carolId = (await user('carol'))!.id
  const gone = await cli(['user', 'delete', 'carol'])
  t.same(gone, { code: 0, stdout: `Deleted user carol (id ${carolId}) and 2 tokens.\n`, stderr: '' })
  t.equal(await user('carol'), undefined)
  t.same(await sql(async (c) => (await c.query('SELECT 1 FROM auth_token WHERE "user" = $1', [carolId])).rows), [])
  t.same((await cli(['user', 'create', '--email', 'dora@example.com'], 'dora\ndora-password\ndora-password\n')).code, 0)
  t.match((await cli(['user', 'delete', 'dora'])).stdout, /^Deleted user dora \(id \d+\) and 0 tokens\.\n$/)

  const cases: Array<[string[], RegExp]> = [
    [['user', 'delete', 'carol'], /^Error: There is no user named carol\.\n$/],
    [['user', 'delete'], /^Error: user delete takes one argument: the username\nUsage: fastify-tablecrud user delete <username>\n/],
    [['user', 'list', 'x'], /^Error: user list takes no arguments, not x\nUsage: fastify-tablecrud user list\n/]
  ]
  for (const [i, run] of (await runAll(cases.map(([args]) => [args]))).entries()) {
    t.same([run.code, run.stdout], [1, ''], cases[i]![0].join(' '))
    t.match(run.stderr, cases[i]![1], cases[i]![0].join(' '))
  }
  await sql(async (c) => await c.query('DELETE FROM auth_token'))
})

t.test('token list shows tokens shortened; token revoke takes a token, an id or a user', async (t) => {
  const empty = await cli(['token', 'list'])
  t.same(empty, { code: 0, stdout: '0 tokens.\n', stderr: '' })
  const [a1, a2, b1] = [(await cli(['token', 'create', 'alice'])).stdout.trim(), (await cli(['token', 'create', 'alice'])).stdout.trim(), (await cli(['token', 'create', 'bob'])).stdout.trim()]
  const ids = await sql(async (c) => (await c.query('SELECT id FROM auth_token ORDER BY id')).rows.map((r) => r.id as number))
  const all = await cli(['token', 'list'])
  t.equal(all.code, 0)
  const lines = all.stdout.split('\n')
  t.match(lines[0], /^id +user +token$/)
  t.match(lines[1], new RegExp(`^${ids[0]} +alice  ${a1!.slice(0, 8)}…$`))
  t.match(lines[2], new RegExp(`^${ids[1]} +alice  ${a2!.slice(0, 8)}…$`))
  t.match(lines[3], new RegExp(`^${ids[2]} +bob {4}${b1!.slice(0, 8)}…$`))
  t.same(lines.slice(4), ['3 tokens.', ''])
  t.notOk(all.stdout.includes(a1!), 'never a whole token')
  t.match((await cli(['token', 'list', 'bob'])).stdout, /^id +user +token\n\d+ +bob +\S{8}…\n1 token of bob\.\n$/)

  t.same(await cli(['token', 'revoke', a1!]), { code: 0, stdout: 'Revoked 1 token.\n', stderr: '' })
  t.same(await cli(['token', 'revoke', '--id', String(ids[1])]), { code: 0, stdout: `Revoked token ${ids[1]}.\n`, stderr: '' })
  t.same(await cli(['token', 'revoke', '--user', 'alice']), { code: 0, stdout: 'alice had no token: nothing revoked.\n', stderr: '' })
  await cli(['token', 'create', 'bob'])
  t.same(await cli(['token', 'revoke', '--user=bob']), { code: 0, stdout: 'Revoked 2 tokens of bob.\n', stderr: '' })
  t.same(await sql(async (c) => (await c.query('SELECT count(*)::int AS n FROM auth_token')).rows[0].n), 0)

  // base64url: one token in 64 begins with '-', which is a token to revoke, not an option.
  const dashed = `-${(await cli(['token', 'create', 'bob'])).stdout.trim().slice(1)}`
  await sql(async (c) => await c.query('UPDATE auth_token SET token = $1', [dashed]))
  t.same(await cli(['token', 'revoke', dashed]), { code: 0, stdout: 'Revoked 1 token.\n', stderr: '' }, 'a token that begins with -')
  await cli(['token', 'create', 'bob'])
  await sql(async (c) => await c.query('UPDATE auth_token SET token = $1', [dashed]))
  t.same(await cli(['token', 'revoke', '--', dashed]), { code: 0, stdout: 'Revoked 1 token.\n', stderr: '' }, 'and after --')

  const cases: Array<[string[], RegExp]> = [
    [['token', 'revoke', a1!], /^Error: No token matches the one given\.\n$/],
    [['token', 'revoke', '--id', String(ids[0])], new RegExp(`^Error: There is no token with id ${ids[0]}\\.\\n$`)],
    [['token', 'revoke', '--id', '0'], /^Error: --id takes a token id \(a positive integer\), not 0\nUsage: fastify-tablecrud token revoke/],
    [['token', 'revoke', '--id', '2147483648'], /^Error: --id takes a token id/],
    [['token', 'revoke', '--id', 'x1'], /^Error: --id takes a token id/],
    [['token', 'revoke', '--user', 'nobody'], /^Error: There is no user named nobody\.\n$/],
    [['token', 'revoke'], /^Error: token revoke takes one of: a token, --id <id>, --user <username>\n/],
    [['token', 'revoke', 'a', 'b'], /^Error: token revoke takes one of/],
    [['token', 'revoke', 'a', '--user', 'bob'], /^Error: token revoke takes one of/],
    [['token', 'revoke', '--all'], /^Error: Unknown option '--all'/],
    [['token', 'list', 'nobody'], /^Error: There is no user named nobody\.\n$/],
    [['token', 'list', 'a', 'b'], /^Error: token list takes at most one argument: a username\n/],
    [['token', 'list', '--all'], /^Error: token list takes at most one argument/]
  ]
  for (const [i, run] of (await runAll(cases.map(([args]) => [args]))).entries()) {
    t.same([run.code, run.stdout], [1, ''], cases[i]![0].join(' '))
    t.match(run.stderr, cases[i]![1], cases[i]![0].join(' '))
  }
})

t.test('check compares the tables a module exports with the database', async (t) => {
  const { book, shelf } = await import('../fixtures/cli-tables.js')
  const missing = await cli(['check', 'test/fixtures/cli-tables.ts'])
  t.same(missing, {
    code: 1,
    stdout: 'Table cli_book is missing.\nTable cli_shelf is missing.\n',
    stderr: 'Error: 2 differences between the definitions and the database (cli_book and cli_shelf).\n'
  })
  await sql(async (c) => {
    const { createTables } = await import('../../lib/db/ddl.js')
    await createTables(c, [shelf, book])
  })
  t.same(await cli(['check', 'test/fixtures/cli-tables.ts']), { code: 0, stdout: 'The database matches the definitions of cli_book and cli_shelf.\n', stderr: '' })
  t.same(await cli(['check', 'test/fixtures/cli-book.ts']), { code: 0, stdout: 'The database matches the definitions of cli_book and cli_shelf.\n', stderr: '' },
    'the table a foreign key points at is checked too')
  await sql(async (c) => await c.query('ALTER TABLE cli_book DROP COLUMN title'))
  t.same(await cli(['check', './test/fixtures/cli-tables.ts', 'lib/table/auth-tables.ts']), {
    code: 1,
    stdout: 'Column cli_book.title is missing (character varying(100)).\n',
    stderr: 'Error: 1 difference between the definitions and the database (cli_book, cli_shelf, auth_mfa_secret, auth_session, auth_token and auth_user).\n'
  })
  const cases: Array<[string[], RegExp]> = [
    [['check', 'lib/errors.ts'], /^Error: lib\/errors\.ts exports no table \(defineTable's result, or an array of them\)\.\n$/],
    [['check', 'no/such/module.js'], /^Error: Cannot find module '.*no\/such\/module\.js'/],
    [['check', '--all'], /^Error: check takes module paths, not --all\nUsage: fastify-tablecrud check \[<module>\.\.\.\]\n/]
  ]
  for (const [i, run] of (await runAll(cases.map(([args]) => [args]))).entries()) {
    t.same([run.code, run.stdout], [1, ''], cases[i]![0].join(' '))
    t.match(run.stderr, cases[i]![1], cases[i]![0].join(' '))
    t.equal(run.stderr.split('\n').filter((line) => line.startsWith('Error')).length, 1, 'one line of error')
  }
})

t.test('--help: the whole usage, one group, one command', async (t) => {
  const whole = await cli(['--help'])
  for (const name of ['user create', 'user password', 'user list', 'user delete', 'token create', 'token list', 'token revoke', 'session clean', 'init', 'check']) {
    t.match(whole.stdout, new RegExp(`\\n  fastify-tablecrud ${name}( |\\n)`), name)
  }
  const group = await cli(['token', '--help'])
  t.same([group.code, group.stderr], [0, ''])
  t.match(group.stdout, /^Usage:\n {2}fastify-tablecrud token create <username>\n {6}Creates an API token/)
  t.notOk(group.stdout.includes('user create'))
  const one = await cli(['token', 'list', '-h'])
  t.same(one, { code: 0, stdout: 'Usage: fastify-tablecrud token list [<username>]\nLists the tokens (of one user), oldest first, each shortened.\nShows the first 8 characters of each token: revoke one by its id.\n', stderr: '' })
  t.same(await cli(['init', '--help']), { code: 0, stdout: 'Usage: fastify-tablecrud init\nCreates the built-in tables (auth_user, auth_token, auth_session and auth_mfa_secret) that do not exist yet, then checks them.\n', stderr: '' })
  t.match((await cli(['check', '--help'], '', { DATABASE_URL: undefined })).stdout, /^Usage: fastify-tablecrud check \[<module>\.\.\.\]\n/, 'help needs no database')
  const unknown = await cli(['nothing', '--help'])
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /^Error: Unknown command: nothing --help\nUsage:\n/)
})

t.test('a failure is one line, whatever the error', async (t) => {
  await sql(async (c) => await c.query('ALTER TABLE auth_user RENAME COLUMN email TO mail'))
  t.teardown(async () => await sql(async (c) => await c.query('ALTER TABLE auth_user RENAME COLUMN mail TO email')))
  const run = await cli(['user', 'list'])
  t.same(run, { code: 1, stdout: '', stderr: 'Error: column "email" does not exist\n' })
  const drift = await cli(['init'])
  t.equal(drift.code, 1)
  t.equal(drift.stdout, 'Column auth_user.email is missing (text).\n')
  t.equal(drift.stderr, 'Error: 1 difference between the definitions and the database (auth_user, auth_token, auth_session and auth_mfa_secret).\n')
})

t.test('bin/cli.ts gives main the process', async (t) => {
  const { processIo } = await import('../../bin/main.js')
  const io = processIo()
  t.same([io.env, io.cwd, io.stdin, io.stdout, io.stderr], [process.env, process.cwd(), process.stdin, process.stdout, process.stderr])
})
