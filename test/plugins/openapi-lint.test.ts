import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { buildDemo } from '../../examples/movies/app.js'
import { appPool, testDatabase } from '../helpers/db.js'

/*
 * The demo's OpenAPI document (every TableCRUD route, the logins, the session routes behind
 * CSRF), linted by two linters nobody here wrote, each with its default rule set and only the
 * exceptions written, with their reasons, in the repository's redocly.yaml and .spectral.yaml:
 * Redocly's `recommended` and Spectral's `spectral:oas`. No error allowed; the warnings left
 * are the ones docs/openapi.md lists and justifies, and a new kind fails here.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const run = promisify(execFile)
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }

interface Problem { rule: string, error: boolean, at: string, message: string }

async function redocly (file: string): Promise<Problem[]> {
  const cli = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js')
  const result = await run(process.execPath, [cli, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json', '--max-problems=1000'], { cwd: ROOT, env, maxBuffer: 1 << 26 })
    .catch((error: { stdout: string }) => error)
  const { problems } = JSON.parse(result.stdout) as { problems: Array<{ ruleId: string, severity: string, message: string, location: Array<{ pointer: string }> }> }
  return problems.map((p) => ({ rule: p.ruleId, error: p.severity === 'error', at: p.location[0]?.pointer ?? '', message: p.message }))
}

async function spectral (file: string): Promise<Problem[]> {
  const cli = join(ROOT, 'node_modules/@stoplight/spectral-cli/dist/index.js')
  // Spectral exits 1 when it finds anything, warnings included: its JSON is read either way.
  const result = await run(process.execPath, [cli, 'lint', file, '--ruleset', join(ROOT, '.spectral.yaml'), '--format=json', '--quiet'], { cwd: ROOT, env, maxBuffer: 1 << 26 })
    .catch((error: { stdout: string }) => error)
  // Severity 0 is an error, 1 a warning (Spectral's DiagnosticSeverity).
  const problems = JSON.parse(result.stdout) as Array<{ code: string, severity: number, message: string, path: string[] }>
  return problems.map((p) => ({ rule: p.code, error: p.severity === 0, at: p.path.join('/'), message: p.message }))
}

t.test('the demo document lints with 0 errors under Redocly recommended and Spectral spectral:oas', async (t) => {
  const db = await testDatabase(t)
  const app = await buildDemo(appPool(db))
  t.teardown(async () => await app.close())
  await app.ready()
  const dir = mkdtempSync(join(tmpdir(), 'tablecrud-lint-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(app.swagger()))
  const [byRedocly, bySpectral] = await Promise.all([redocly(file), spectral(file)])
  for (const [linter, problems, allowed] of [
    ['redocly', byRedocly, []],
    // Summaries say what each operation does; descriptions are given where there is more to say (docs/openapi.md).
    ['spectral', bySpectral, ['operation-description']]
  ] as const) {
    t.strictSame(problems.filter((p) => p.error).map((p) => `${p.rule} ${p.at}: ${p.message}`), [], `${linter}: no error`)
    const warnings = [...new Set(problems.filter((p) => !p.error).map((p) => p.rule))]
    t.strictSame(warnings, allowed, `${linter}: only the warnings docs/openapi.md justifies`)
  }
  t.ok(bySpectral.some((p) => p.rule === 'operation-description'), 'Spectral ran its rules')
})
