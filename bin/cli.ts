#!/usr/bin/env node
/**
 * The fastify-tablecrud command line: users and tokens of the built-in tables, in the database
 * named by DATABASE_URL.
 *
 *   fastify-tablecrud user create [--superuser] [--admin] [--email <address>]
 *   fastify-tablecrud user password <username>
 *   fastify-tablecrud token create <username>
 *
 * Answers are read from the terminal (passwords without echo), or one per line from stdin
 * when it is not a terminal, so scripts and tests can drive it.
 */
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { createToken, createUser, setPassword, userIdOf } from '../lib/auth/users.js'

const USAGE = `Usage:
  fastify-tablecrud user create [--superuser] [--admin] [--email <address>]
  fastify-tablecrud user password <username>
  fastify-tablecrud token create <username>
Reads DATABASE_URL; prompts for the username and password.`

class UsageError extends Error {}

interface Prompter {
  ask: (question: string) => Promise<string>
  askHidden: (question: string) => Promise<string>
  close: () => void
}

/** Answers one per line from a pipe or file; a missing line is an error, not an empty answer. */
function linePrompter (): Prompter {
  const rl = createInterface({ input: process.stdin })
  const lines = rl[Symbol.asyncIterator]()
  const ask = async (question: string): Promise<string> => {
    process.stderr.write(question)
    const next = await lines.next()
    process.stderr.write('\n')
    if (next.done === true) throw new Error('stdin ended before every question was answered')
    return next.value
  }
  return { ask, askHidden: ask, close: () => { rl.close() } }
}

/* c8 ignore start: needs a terminal; the tests drive stdin through a pipe */
function terminalPrompter (): Prompter {
  const stdin = process.stdin
  const ask = async (question: string): Promise<string> => {
    const rl = createInterface({ input: stdin, output: process.stderr })
    return await new Promise((resolve) => rl.question(question, (answer) => { rl.close(); resolve(answer) }))
  }
  const askHidden = async (question: string): Promise<string> => {
    process.stderr.write(question)
    stdin.setRawMode(true)
    stdin.resume()
    stdin.setEncoding('utf8')
    return await new Promise((resolve, reject) => {
      let answer = ''
      const finish = (): void => {
        stdin.off('data', onData)
        stdin.setRawMode(false)
        stdin.pause()
        process.stderr.write('\n')
      }
      const onData = (chunk: string): void => {
        for (const ch of chunk) {
          if (ch === '\r' || ch === '\n') { finish(); resolve(answer); return }
          if (ch === '\u0003' || ch === '\u0004') { finish(); reject(new Error('cancelled')); return }
          if (ch === '\u007f' || ch === '\b') answer = [...answer].slice(0, -1).join('')
          else answer += ch
        }
      }
      stdin.on('data', onData)
    })
  }
  return { ask, askHidden, close: () => { stdin.pause() } }
}
/* c8 ignore stop */

async function newPassword (prompt: Prompter): Promise<string> {
  const password = await prompt.askHidden('Password: ')
  const again = await prompt.askHidden('Password (again): ')
  if (password !== again) throw new Error('The passwords do not match.')
  return password
}

type Db = pg.Client

async function userCreate (db: Db, prompt: Prompter, args: string[]): Promise<string> {
  const { values, positionals } = parseArgs({
    args,
    options: { superuser: { type: 'boolean' }, admin: { type: 'boolean' }, email: { type: 'string' } },
    allowPositionals: true
  })
  if (positionals.length > 0) throw new UsageError(`user create takes no arguments, not ${positionals.join(' ')}`)
  const username = (await prompt.ask('Username: ')).trim()
  if (username === '') throw new Error('The username cannot be empty.')
  const password = await newPassword(prompt)
  try {
    const user = await createUser(db, {
      username, password, email: values.email ?? null, admin: values.admin ?? false, superuser: values.superuser ?? false
    })
    return `Created user ${user.username} (id ${user.id}).`
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new Error(`A user named ${username} (or with that email) already exists.`)
    throw error
  }
}

function oneUsername (command: string, args: string[]): string {
  if (args.length !== 1 || args[0]!.startsWith('-')) throw new UsageError(`${command} takes one argument: the username`)
  return args[0]!
}

async function userPassword (db: Db, prompt: Prompter, args: string[]): Promise<string> {
  const username = oneUsername('user password', args)
  if (await userIdOf(db, username) === null) throw new Error(`There is no user named ${username}.`)
  await setPassword(db, username, await newPassword(prompt))
  return `Changed the password of ${username}.`
}

async function tokenCreate (db: Db, _prompt: Prompter, args: string[]): Promise<string> {
  const username = oneUsername('token create', args)
  const id = await userIdOf(db, username)
  if (id === null) throw new Error(`There is no user named ${username}.`)
  return await createToken(db, id)
}

const COMMANDS = new Map([
  ['user create', userCreate],
  ['user password', userPassword],
  ['token create', tokenCreate]
])

/** Runs one command line; resolves to the exit code. */
async function main (argv: string[]): Promise<number> {
  const [noun = '', verb = '', ...rest] = argv
  if (noun === '--help' || noun === '-h') {
    process.stdout.write(USAGE + '\n')
    return 0
  }
  const command = COMMANDS.get(`${noun} ${verb}`)
  const url = process.env.DATABASE_URL
  let db: Db | undefined
  /* c8 ignore next: the terminal branch needs a terminal */
  const prompt = process.stdin.isTTY ? terminalPrompter() : linePrompter()
  try {
    if (command === undefined) throw new UsageError(`Unknown command: ${argv.join(' ') || '(none)'}`)
    if (url === undefined || url === '') throw new Error('DATABASE_URL is not set.')
    db = new pg.Client({ connectionString: url })
    await db.connect()
    process.stdout.write(await command(db, prompt, rest) + '\n')
    return 0
  } catch (error) {
    process.stderr.write(`Error: ${(error as Error).message}\n`)
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true) process.stderr.write(USAGE + '\n')
    return 1
  } finally {
    prompt.close()
    await db?.end()
  }
}

process.exitCode = await main(process.argv.slice(2))
