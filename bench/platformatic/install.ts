/**
 * Platformatic DB is installed by the bench on first use, from this folder's package.json and
 * lock, into bench/platformatic/node_modules: it brings some 500 packages, which the main
 * `npm ci` should not carry for every developer and CI run.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const folder = fileURLToPath(new URL('.', import.meta.url))
const pinned = (JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> }).dependencies['@platformatic/db']!

/** The contender's label: the pinned release, major and minor. */
export const PLATFORMATIC_LABEL = `Platformatic DB ${pinned.split('.').slice(0, 2).join('.')}`

function installed (): string | null {
  const file = new URL('node_modules/@platformatic/db/package.json', import.meta.url)
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : null
}

/**
 * Why Platformatic DB cannot run, or null once it is installed at the pinned version: it is
 * installed (`npm ci`) when missing or at another version (the pin moved). `BENCH_PLATFORMATIC=0`
 * skips it, e.g. on a machine without the registry.
 */
export function platformaticMissing (): string | null {
  if (process.env.BENCH_PLATFORMATIC === '0') return 'BENCH_PLATFORMATIC=0'
  if (installed() === pinned) return null
  console.error(`bench: installing ${PLATFORMATIC_LABEL} into ${folder}node_modules (npm ci, once)`)
  try {
    // npm's errors to stderr, even under `npm run -s` (whose silence its children inherit): stdout carries the bench's tables.
    execFileSync('npm', ['ci', '--prefix', folder, '--no-audit', '--no-fund', '--loglevel', 'error'], { stdio: ['ignore', 2, 2], timeout: 10 * 60_000 })
  } catch (error) {
    const { status, signal } = error as { status: number | null, signal: string | null }
    return `its install (npm ci --prefix ${folder}) failed, ${status === null ? `ended by ${signal ?? 'a signal'}` : `exit status ${status}`} (npm's errors on stderr)`
  }
  return installed() === pinned ? null : `npm ci did not install @platformatic/db ${pinned}`
}
