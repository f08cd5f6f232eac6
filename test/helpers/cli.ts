import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { main } from '../../bin/main.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface Run { code: number | null, stdout: string, stderr: string }

export interface CliHarness {
  /**
   * Runs one short-lived connection: the embedded server serves one connection at a time, and
   * the command line needs its own while no other is open.
   */
  sql: <T>(fn: (client: pg.Client) => Promise<T>) => Promise<T>
  /**
   * Runs the command line in this process (bin/main.ts, so that its coverage is measured), as a
   * user would, answering its questions through stdin; one at a time (the embedded server takes
   * one connection). `env` is laid over `DATABASE_URL`.
   */
  cli: (args: string[], input?: string, env?: Record<string, string | undefined>) => Promise<Run>
}

/** The command line and a database connection, both on `connectionString`. */
export function cliHarness (connectionString: string): CliHarness {
  return {
    async sql (fn) {
      const client = new pg.Client({ connectionString })
      await client.connect()
      try {
        return await fn(client)
      } finally {
        await client.end()
      }
    },
    async cli (args, input = '', env = {}) {
      let stdout = ''
      let stderr = ''
      const code = await main(args, {
        env: { DATABASE_URL: connectionString, ...env },
        cwd: ROOT,
        stdin: Readable.from([input]),
        stdout: { write: (text: string) => { stdout += text } },
        stderr: { write: (text: string) => { stderr += text } }
      })
      return { code, stdout, stderr }
    }
  }
}
