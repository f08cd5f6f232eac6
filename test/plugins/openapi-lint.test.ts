import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { buildDemo } from '../../examples/movies/app.js'
import { testDatabase } from '../helpers/db.js'

/*
 * The demo's OpenAPI document (every TableCRUD route, both logins, both auth plugins), linted
 * by @redocly/cli with the repository's redocly.yaml: no error allowed.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const run = promisify(execFile)

interface Problem { ruleId: string, severity: 'error' | 'warn', message: string, location: Array<{ pointer: string }> }

t.test('the demo document lints with 0 errors', async (t) => {
  const db = await testDatabase(t)
  const app = await buildDemo({ connectionString: db.connectionString, max: db.max })
  t.teardown(async () => await app.close())
  await app.ready()
  const dir = mkdtempSync(join(tmpdir(), 'tablecrud-lint-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(app.swagger()))
  const cli = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js')
  const result = await run(process.execPath, [cli, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json', '--max-problems=1000'], {
    cwd: ROOT,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    maxBuffer: 1 << 26
  }).catch((error: { stdout: string }) => error)
  const { problems } = JSON.parse(result.stdout) as { problems: Problem[] }
  const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`)
  t.strictSame(errors, [], 'no error')
  const warnings = new Set(problems.filter((p) => p.severity === 'warn').map((p) => p.ruleId))
  t.comment(`warnings: ${[...warnings].join(', ') || 'none'}`)
})
