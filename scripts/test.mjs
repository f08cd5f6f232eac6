/**
 * `npm test`: `tap build`, then the type-check and the lint side by side (each leaves a core
 * mostly idle: 14 and 16 s alone, about 20 s together on 2 cores), then tap, with the 100% coverage gate of .taprc
 * where the suite has a PostgreSQL server. On the embedded one (no DATABASE_URL) the few tests
 * that need a real server skip with their reason, and the lines only they reach would fail the
 * gate: there the run reports coverage without failing on it, and says so (docs/testing.md).
 */
import { spawn, spawnSync } from 'node:child_process'

const run = (command, args) => new Promise((resolve) => {
  spawn(command, args, { stdio: 'inherit' }).on('close', (code) => resolve(code === 0))
})
// `tap build` builds tap with .taprc's plugins. tap does it itself when they differ from the ones
// it was built with (after `npm install`), but only after it has chosen the test processes'
// arguments from the old build: the first run after an install loaded ts-node and tap's mock
// loader in every test process (472 s on the embedded server where the next run took 373).
// First, as the type-check and the lint read tap's types, which the build writes.
if (!await run('tap', ['build'])) process.exit(1)
const checked = await Promise.all([run('npm', ['run', '--silent', 'typecheck']), run('npm', ['run', '--silent', 'lint'])])
if (checked.includes(false)) process.exit(1)

const args = process.argv.slice(2)
if (process.env.DATABASE_URL === undefined) {
  console.log('DATABASE_URL is not set: the tests run on the embedded PostgreSQL, and coverage is reported, not gated.')
  args.push('--allow-incomplete-coverage')
}
const tap = spawnSync('tap', args, { stdio: 'inherit' })
process.exit(tap.status ?? 1)
