import t from 'tap'
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { unmeasured } from '../helpers/child.js'
import { testDatabase } from '../helpers/db.js'

/*
 * `npm start` as a new user meets it: on a port that is taken it says so in one line and what
 * to do, not a stack trace; two demos do not share one media folder.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const db = await testDatabase(t)

interface Started { code: number | null, stdout: string, stderr: string }

/** Runs the demo until it prints its banner (then stops it) or exits. */
async function start (env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/movies/server.ts'], {
    cwd: ROOT,
    env: unmeasured({ ...process.env, DATABASE_URL: db.connectionString, HOST: '127.0.0.1', ...env })
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => {
    stdout += chunk
    if (stdout.includes('Ctrl-C stops.')) child.kill('SIGINT')
  })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, stdout, stderr }
}

t.test('a busy port is one line that says what to do', async (t) => {
  const busy = createServer()
  await new Promise<void>((resolve) => busy.listen(15460, '127.0.0.1', resolve))
  t.teardown(() => { busy.close() })
  const run = await start({ PORT: '15460' })
  t.same(run, { code: 1, stdout: '', stderr: 'Port 15460 on 127.0.0.1 is in use (another `npm start`?): stop that one, or run PORT=15461 npm start.\n' })
})

t.test('each demo has a media folder of its own', async (t) => {
  const folders: string[] = []
  for (const port of ['15461', '15462']) {
    const run = await start({ PORT: port })
    t.equal(run.code, 0, run.stderr)
    folders.push(/files in (\S+), served at \/media\//.exec(run.stdout)?.[1] ?? '')
  }
  t.match(folders[0], /fastify-tablecrud-demo-media-\w{6}$/)
  t.not(folders[0], folders[1])
})

t.test('PREPARED_STATEMENTS: unnamed starts the demo (behind a transaction-mode pooler); anything else but named is one line', async (t) => {
  const unnamed = await start({ PORT: '15463', PREPARED_STATEMENTS: 'unnamed' })
  t.equal(unnamed.code, 0, unnamed.stderr)
  t.match(unnamed.stdout, /Ctrl-C stops\./)
  const wrong = await start({ PORT: '15464', PREPARED_STATEMENTS: 'yes' })
  t.same(wrong, { code: 1, stdout: '', stderr: 'PREPARED_STATEMENTS=yes: it is named (the default) or unnamed (behind a transaction-mode pooler).\n' })
})
