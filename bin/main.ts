/**
 * The command line, as a function: `main(argv, io)` runs one command and resolves to its exit
 * code, so tests run it in-process (and measure it) with their own stdin, stdout, stderr and
 * environment; bin/cli.ts gives it the process's. The commands are in ./commands.ts.
 */
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import pg from 'pg'
import { wireTypes } from '../lib/db/types.js'
import { errorCode, errorFacts } from '../lib/errors.js'
import { COMMANDS, UsageError, type Command, type Prompter } from './commands.js'

export interface CliIo {
  /** DATABASE_URL is read here. */
  env: Record<string, string | undefined>
  /** Where `check` resolves module paths from. */
  cwd: string
  /** Answers, read from the terminal (passwords without echo) or one per line otherwise. */
  stdin: Readable & { isTTY?: boolean, setRawMode?: (raw: boolean) => unknown }
  stdout: { write: (text: string) => unknown }
  stderr: { write: (text: string) => unknown }
}

export const processIo = (): CliIo => ({ env: process.env, cwd: process.cwd(), stdin: process.stdin, stdout: process.stdout, stderr: process.stderr })

const PROGRAM = 'fastify-tablecrud'

function usage (commands: ReadonlyArray<[string, Command]> = [...COMMANDS]): string {
  return 'Usage:\n' + commands.map(([name, c]) => `  ${PROGRAM} ${`${name} ${c.arguments}`.trim()}\n      ${c.summary}`).join('\n') +
    '\nReads DATABASE_URL. `<command> --help` tells more of one command.'
}

function commandHelp (name: string, command: Command): string {
  return `Usage: ${PROGRAM} ${`${name} ${command.arguments}`.trim()}\n${command.summary}${command.help === undefined ? '' : '\n' + command.help}`
}

/** Answers one per line from a pipe or file; a missing line is an error, not an empty answer. */
function linePrompter (io: CliIo): Prompter {
  const rl = createInterface({ input: io.stdin })
  const lines = rl[Symbol.asyncIterator]()
  const ask = async (question: string): Promise<string> => {
    io.stderr.write(question)
    const next = await lines.next()
    io.stderr.write('\n')
    if (next.done === true) throw new Error('stdin ended before every question was answered')
    return next.value
  }
  return { ask, askHidden: ask, close: () => { rl.close() } }
}

/* c8 ignore start: needs a terminal; the tests drive stdin through a stream */
function terminalPrompter (io: CliIo): Prompter {
  const stdin = io.stdin
  const ask = async (question: string): Promise<string> => {
    const rl = createInterface({ input: stdin, output: process.stderr })
    return await new Promise((resolve) => rl.question(question, (answer) => { rl.close(); resolve(answer) }))
  }
  const askHidden = async (question: string): Promise<string> => {
    io.stderr.write(question)
    stdin.setRawMode!(true)
    stdin.resume()
    stdin.setEncoding('utf8')
    return await new Promise((resolve, reject) => {
      let answer = ''
      const finish = (): void => {
        stdin.off('data', onData)
        stdin.setRawMode!(false)
        stdin.pause()
        io.stderr.write('\n')
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

/** One line for any failure: the first line of its message, with what to do for the usual ones. */
function failureLine (error: unknown): string {
  const { message, code } = errorFacts(error)
  const first = message.split('\n')[0]
  if (code === '42P01') return `${first}: run \`${PROGRAM} init\` to create the built-in tables.`
  return first!
}

const wantsHelp = (args: readonly string[]): boolean => args.includes('--help') || args.includes('-h')

/**
 * Runs one command line and resolves to the exit code: 0 done, 1 failed (with one line
 * `Error: <what>` on stderr, and the usage after it when the command line itself was wrong).
 * @example process.exitCode = await main(process.argv.slice(2))
 */
export async function main (argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [noun = '', verb = '', ...rest] = argv
  if (noun === '' || noun === '--help' || noun === '-h') {
    if (noun === '') {
      io.stderr.write(`Error: Unknown command: (none)\n${usage()}\n`)
      return 1
    }
    io.stdout.write(usage() + '\n')
    return 0
  }
  // `init` and `check` are one word; the others a noun and a verb.
  const single = COMMANDS.get(noun)
  const name = single === undefined ? `${noun} ${verb}` : noun
  const args = single === undefined ? rest : [verb, ...rest].filter((a, i) => i > 0 || a !== '')
  const command = single ?? COMMANDS.get(name)
  if (wantsHelp(argv)) {
    const group = [...COMMANDS].filter(([n]) => n.split(' ')[0] === noun)
    if (command === undefined && group.length === 0) {
      io.stderr.write(`Error: Unknown command: ${argv.join(' ')}\n${usage()}\n`)
      return 1
    }
    io.stdout.write((command === undefined ? usage(group) : commandHelp(name, command)) + '\n')
    return 0
  }
  const url = io.env.DATABASE_URL
  let db: pg.Client | undefined
  /* c8 ignore next: the terminal branch needs a terminal */
  const prompt = io.stdin.isTTY === true ? terminalPrompter(io) : linePrompter(io)
  let code = 0
  try {
    if (command === undefined) throw new UsageError(`Unknown command: ${argv.join(' ')}`)
    if (url === undefined || url === '') throw new Error('DATABASE_URL is not set.')
    // Timestamps as the wire writes them (`user list`), not JS Dates.
    db = new pg.Client({ connectionString: url, types: wireTypes })
    await db.connect()
    const said = await command.run({ db, prompt, cwd: io.cwd, out: (line) => { io.stdout.write(line + '\n') } }, args)
    io.stdout.write(said + '\n')
  } catch (error) {
    code = 1
    io.stderr.write(`Error: ${failureLine(error)}\n`)
    if (error instanceof UsageError || errorCode(error)?.startsWith('ERR_PARSE_ARGS') === true) {
      io.stderr.write((command === undefined ? usage() : commandHelp(name, command)) + '\n')
    }
  }
  prompt.close()
  await db?.end()
  return code
}
