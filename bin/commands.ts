/**
 * The commands of the command line, one entry each in COMMANDS: what it takes, one line of
 * summary, and `run`, which resolves to the line that says what it did (stdout) or throws one
 * that says why not. Adding a command is adding an entry.
 */
import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import type pg from 'pg'
import { deleteUser, listTokens, listUsers, revokeTokens } from '../lib/auth/admin.js'
import { mfaSecretTable, sessionTable, tokenTable, userTable } from '../lib/table/auth-tables.js'
import { deleteExpiredSessions, isSessionToken } from '../lib/auth/sessions.js'
import { createToken, createUser, setPassword, userIdOf } from '../lib/auth/users.js'
import { checkTables, createTables } from '../lib/db/index.js'
import { errorCode } from '../lib/errors.js'
import { readSchema } from '../lib/db/introspect.js'
import { generateTables } from '../lib/generate/index.js'
import { isTable, type Table } from '../lib/table/index.js'
import { targetOf } from '../lib/table/table.js'
import { quoteIdent } from '../lib/sql/identifier.js'

/** A mistake in the command line itself: the usage follows the error. */
export class UsageError extends Error {}

export interface Prompter {
  ask: (question: string) => Promise<string>
  askHidden: (question: string) => Promise<string>
  close: () => void
}

export interface CommandContext {
  db: pg.Client
  prompt: Prompter
  cwd: string
  /** Writes one line of a listing to stdout, before the closing line `run` resolves to. */
  out: (line: string) => void
  /** Writes one line that is not the command's output to stderr: what `generate` leaves out. */
  note: (line: string) => void
}

export interface Command {
  /** What follows the command's name in the usage: `<username>`, `[--admin]`. */
  arguments: string
  summary: string
  /** More lines for `<command> --help`. */
  help?: string
  run: (ctx: CommandContext, args: string[]) => Promise<string>
}

/** The tables `init` creates and `check` checks when given no module. */
export const BUILT_IN_TABLES: readonly Table[] = [userTable, tokenTable, sessionTable, mfaSecretTable]

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`

const list = (names: readonly string[]): string =>
  names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`

/** Aligned columns, the header first. */
function columns (header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  return [header, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd())
}

async function newPassword (prompt: Prompter): Promise<string> {
  const password = await prompt.askHidden('Password: ')
  const again = await prompt.askHidden('Password (again): ')
  if (password !== again) throw new Error('The passwords do not match.')
  return password
}

function noArguments (command: string, args: readonly string[]): void {
  if (args.length > 0) throw new UsageError(`${command} takes no arguments, not ${args.join(' ')}`)
}

function oneUsername (command: string, args: readonly string[]): string {
  if (args.length !== 1 || args[0]!.startsWith('-')) throw new UsageError(`${command} takes one argument: the username`)
  return args[0]!
}

async function existingUserId (db: pg.Client, username: string): Promise<number> {
  const id = await userIdOf(db, username)
  if (id === null) throw new Error(`There is no user named ${username}.`)
  return id
}

/** Refuses before the first question when the built-in user table is missing: the answers would be for nothing. */
async function needUserTable (db: pg.Client): Promise<void> {
  const { rows } = await db.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [quoteIdent(userTable.name)])
  if (!rows[0]!.found) throw new Error(`The table ${userTable.name} does not exist: run \`fastify-tablecrud init\` to create the built-in tables.`)
}

const userCreate: Command = {
  arguments: '[--superuser] [--admin] [--email <address>]',
  summary: 'Creates a user of the built-in table; asks the username and the password (twice).',
  async run ({ db, prompt }, args) {
    const { values, positionals } = parseArgs({
      args,
      options: { superuser: { type: 'boolean' }, admin: { type: 'boolean' }, email: { type: 'string' } },
      allowPositionals: true
    })
    noArguments('user create', positionals)
    await needUserTable(db)
    const username = (await prompt.ask('Username: ')).trim()
    if (username === '') throw new Error('The username cannot be empty.')
    const password = await newPassword(prompt)
    try {
      const user = await createUser(db, {
        username, password, email: values.email ?? null, admin: values.admin ?? false, superuser: values.superuser ?? false
      })
      return `Created user ${user.username} (id ${user.id}).`
    } catch (error) {
      if (errorCode(error) === '23505') throw new Error(`A user named ${username} (or with that email) already exists.`)
      throw error
    }
  }
}

const userPassword: Command = {
  arguments: '<username>',
  summary: 'Sets a new password; asks it twice.',
  async run ({ db, prompt }, args) {
    const username = oneUsername('user password', args)
    await existingUserId(db, username)
    await setPassword(db, username, await newPassword(prompt))
    return `Changed the password of ${username}.`
  }
}

const userList: Command = {
  arguments: '',
  summary: 'Lists the users, oldest first.',
  async run ({ db, out }, args) {
    noArguments('user list', args)
    const users = await listUsers(db)
    const flag = (on: boolean): string => on ? 'yes' : 'no'
    if (users.length > 0) {
      columns(['id', 'username', 'email', 'active', 'admin', 'superuser', 'last_login'], users.map((u) => [
        String(u.id), u.username, u.email ?? '-', flag(u.active), flag(u.admin), flag(u.superuser), u.last_login ?? '-'
      ])).forEach(out)
    }
    return `${plural(users.length, 'user')}.`
  }
}

const userDelete: Command = {
  arguments: '<username>',
  summary: 'Deletes a user, and its tokens with it.',
  async run ({ db }, args) {
    const username = oneUsername('user delete', args)
    const gone = await deleteUser(db, username)
    if (gone === null) throw new Error(`There is no user named ${username}.`)
    return `Deleted user ${username} (id ${gone.id}) and ${plural(gone.tokens, 'token')}.`
  }
}

const tokenCreate: Command = {
  arguments: '<username>',
  summary: 'Creates an API token for a user and prints it (the token only, for scripts).',
  async run ({ db }, args) {
    return await createToken(db, await existingUserId(db, oneUsername('token create', args)))
  }
}

/** Enough of a token to tell it apart, not enough to use it. */
const TOKEN_SHOWN = 8

const tokenList: Command = {
  arguments: '[<username>]',
  summary: 'Lists the tokens (of one user), oldest first, each shortened.',
  help: `Shows the first ${TOKEN_SHOWN} characters of each token: revoke one by its id.`,
  async run ({ db, out }, args) {
    if (args.length > 1 || args.some((a) => a.startsWith('-'))) throw new UsageError('token list takes at most one argument: a username')
    const username = args[0] ?? null
    if (username !== null) await existingUserId(db, username)
    const tokens = await listTokens(db, username)
    if (tokens.length > 0) {
      columns(['id', 'user', 'token'], tokens.map((t) => [String(t.id), t.username, `${t.token.slice(0, TOKEN_SHOWN)}…`])).forEach(out)
    }
    return `${plural(tokens.length, 'token')}${username === null ? '' : ` of ${username}`}.`
  }
}

const tokenRevoke: Command = {
  arguments: '<token> | --id <id> | --user <username>',
  summary: 'Revokes (deletes) one token, by its value or its id, or every token of a user.',
  async run ({ db }, args) {
    // A token is base64url, so one in 64 begins with '-': one of the generated shape is never an
    // option. Given after `--` already (as parseArgs' own error advises), it is left there.
    const parsed = args.includes('--') ? args : [...args.filter((a) => !isSessionToken(a)), '--', ...args.filter(isSessionToken)]
    const { values, positionals } = parseArgs({ args: parsed, options: { id: { type: 'string' }, user: { type: 'string' } }, allowPositionals: true })
    const given = [positionals.length > 0, values.id !== undefined, values.user !== undefined].filter(Boolean).length
    if (given !== 1 || positionals.length > 1) throw new UsageError('token revoke takes one of: a token, --id <id>, --user <username>')
    if (values.user !== undefined) {
      await existingUserId(db, values.user)
      const count = await revokeTokens(db, { username: values.user })
      return count === 0 ? `${values.user} had no token: nothing revoked.` : `Revoked ${plural(count, 'token')} of ${values.user}.`
    }
    if (values.id !== undefined) {
      const id = Number(values.id)
      if (!/^[1-9]\d{0,9}$/.test(values.id) || id > 2 ** 31 - 1) throw new UsageError(`--id takes a token id (a positive integer), not ${values.id}`)
      if (await revokeTokens(db, { id }) === 0) throw new Error(`There is no token with id ${id}.`)
      return `Revoked token ${id}.`
    }
    if (await revokeTokens(db, { token: positionals[0]! }) === 0) throw new Error('No token matches the one given.')
    return 'Revoked 1 token.'
  }
}

const sessionClean: Command = {
  arguments: '',
  summary: 'Deletes the expired sessions (run it from cron: expired sessions are refused anyway, this keeps the table small).',
  async run ({ db }, args) {
    noArguments('session clean', args)
    const deleted = await deleteExpiredSessions(db)
    return `Deleted ${plural(deleted, 'expired session')}.`
  }
}

/**
 * Imports a module of tables. A `.ts` one needs a TypeScript loader: when the process has none
 * (`npx fastify-tablecrud` runs the compiled JavaScript), tsx's is registered, if the project
 * has tsx.
 */
async function importModule (path: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path).href
  try {
    return await import(url) as Record<string, unknown>
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error
  }
  /* c8 ignore start: the tests run under a TypeScript loader already; test/package.test.ts runs this from the packed package */
  let tsx: { register: () => unknown }
  try {
    tsx = await import('tsx/esm/api') as typeof tsx
  } catch {
    throw new Error(`${path} is TypeScript: install tsx (npm install --save-dev tsx) to check it as it is, or give check the compiled .js.`)
  }
  tsx.register()
  // Another URL: the module loader keeps the failed load of the first.
  return await import(`${url}?typescript`) as Record<string, unknown>
}
/* c8 ignore stop */

/** The tables an export holds: a table, or an array holding tables. */
const tablesIn = (value: unknown): Table[] => (Array.isArray(value) ? value : [value]).filter((item): item is Table => isTable(item))

/**
 * The tables of what `check` was given: every export that is a table or an array holding tables,
 * and the tables their ForeignKeys point at (the app uses those too: the built-in user table of a
 * `user` column); no other, so a built-in table the app does not mount is not reported missing.
 */
async function tablesOf (cwd: string, modules: readonly string[]): Promise<Table[]> {
  const found = new Set<Table>()
  for (const path of modules) {
    const exports = await importModule(resolve(cwd, path))
    const tables = Object.values(exports).flatMap(tablesIn)
    if (tables.length === 0) throw new Error(`${path} exports no table (defineTable's result, or an array of them).`)
    tables.forEach((table) => found.add(table))
  }
  for (const table of found) {
    for (const column of table.columns) if (column.type === 'foreignKey') found.add(targetOf(table, column))
  }
  return [...found]
}

/** The built-in tables the database has: `check` without a module checks those, not the ones the app never created. */
async function existingBuiltIns (db: pg.Client): Promise<Table[]> {
  const { rows } = await db.query<{ name: string }>(
    'SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(quote_ident(name)) IS NOT NULL', [BUILT_IN_TABLES.map((t) => t.name)])
  const present = new Set(rows.map((r) => r.name))
  const tables = BUILT_IN_TABLES.filter((t) => present.has(t.name))
  if (tables.length === 0) throw new Error('None of the built-in tables exists: run `fastify-tablecrud init`, or give check the module of your tables.')
  return tables
}

/** The problems `check` found, one per line, then the line that fails the command. */
async function reportProblems (ctx: CommandContext, tables: readonly Table[]): Promise<string> {
  const problems = await checkTables(ctx.db, tables)
  problems.forEach((p) => { ctx.out(p.message) })
  const names = list(tables.map((t) => t.name))
  if (problems.length > 0) throw new Error(`${plural(problems.length, 'difference')} between the definitions and the database (${names}).`)
  return `The database matches the definitions of ${names}.`
}

const init: Command = {
  arguments: '',
  summary: `Creates the built-in tables (${list(BUILT_IN_TABLES.map((t) => t.name))}) that do not exist yet, then checks them.`,
  async run (ctx, args) {
    noArguments('init', args)
    const { rows } = await ctx.db.query<{ name: string }>(
      'SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(quote_ident(name)) IS NULL', [BUILT_IN_TABLES.map((t) => t.name)])
    const missing = rows.map((r) => r.name)
    await createTables(ctx.db, BUILT_IN_TABLES)
    await reportProblems(ctx, BUILT_IN_TABLES)
    return missing.length === 0
      ? `The built-in tables ${list(BUILT_IN_TABLES.map((t) => t.name))} already exist: nothing to do.`
      : `Created the table${missing.length === 1 ? '' : 's'} ${list(missing)}.`
  }
}

const check: Command = {
  arguments: '[<module>...]',
  summary: 'Compares table definitions with the database: missing tables and columns, types, nullability, defaults.',
  help: 'Checks every table a module exports (alone or in an array) and the tables their foreign keys point at. The\n' +
    'module is .js, or .ts (through tsx, which the project needs then); it must define and export tables without\n' +
    'starting a server (see docs/tables.md, "Schema drift"). Without a module, checks the built-in tables the\n' +
    'database has. Exits with 1 when something differs.',
  async run (ctx, args) {
    if (args.some((a) => a.startsWith('-'))) throw new UsageError(`check takes module paths, not ${args.find((a) => a.startsWith('-'))!}`)
    return await reportProblems(ctx, args.length === 0 ? await existingBuiltIns(ctx.db) : await tablesOf(ctx.cwd, args))
  }
}

const generate: Command = {
  arguments: '[--schema <name>] [--out <file>]',
  summary: 'Writes TypeScript table definitions of the tables a database already has, and says what it leaves out, and why.',
  help: 'Reads one schema (the connection\'s current one without --schema): columns, types, nullability, defaults, keys,\n' +
    'unique columns, foreign keys, enums and CHECK lists as choices, comments as help texts. The module goes to stdout\n' +
    '(or --out, which must not exist yet), one note per thing left out to stderr. See docs/tables.md, "An existing database".',
  async run (ctx, args) {
    const { values, positionals } = parseArgs({ args, options: { schema: { type: 'string' }, out: { type: 'string' } }, allowPositionals: true })
    noArguments('generate', positionals)
    const generated = generateTables(await readSchema(ctx.db, values.schema))
    generated.notes.forEach(ctx.note)
    if (values.out === undefined) return generated.source.trimEnd()
    try {
      await writeFile(resolve(ctx.cwd, values.out), generated.source, { flag: 'wx' })
    } catch (error) {
      if ((error as { code?: string }).code === 'EEXIST') throw new Error(`${values.out} exists already: remove it, or give another --out.`)
      throw error
    }
    const notes = generated.notes.length === 0 ? '' : `; ${plural(generated.notes.length, 'note')} above`
    return `Wrote ${plural(generated.tables.length, 'table')} to ${values.out}${notes}.`
  }
}

/** In the order of the usage. */
export const COMMANDS = new Map<string, Command>([
  ['user create', userCreate],
  ['user password', userPassword],
  ['user list', userList],
  ['user delete', userDelete],
  ['token create', tokenCreate],
  ['token list', tokenList],
  ['token revoke', tokenRevoke],
  ['session clean', sessionClean],
  ['init', init],
  ['check', check],
  ['generate', generate]
])
