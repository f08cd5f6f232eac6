import t from 'tap'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { unmeasured } from '../helpers/child.js'
import { testDatabase } from '../helpers/db.js'

/*
 * The command line as a user starts it: a process, its exit code, its streams. Everything else
 * is tested in-process (main.test.ts), where coverage is measured.
 */
const db = await testDatabase(t)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

async function cli (args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args], {
    cwd: ROOT,
    env: unmeasured({ ...process.env, DATABASE_URL: db.connectionString, ...env })
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  child.stdin.end()
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, stdout, stderr }
}

t.test('a process: init on a fresh database, its exit code and streams; a failure is one line without a stack', async (t) => {
  t.same(await cli(['init']), { code: 0, stdout: 'Created the tables auth_user, auth_token, auth_session and auth_mfa_secret.\n', stderr: '' })
  t.same(await cli(['user', 'list'], { DATABASE_URL: '' }), { code: 1, stdout: '', stderr: 'Error: DATABASE_URL is not set.\n' })
})
