import t from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/*
 * package.json's `engines` is true of what it installs: every Node version it admits is one
 * every production dependency admits too (the lockfile records each one's `engines`). semver is
 * fastify's own dependency, so it is there wherever the tests run.
 */

const { subset } = createRequire(import.meta.url)('semver') as { subset: (range: string, of: string) => boolean }
const read = (file: string): any => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'))

t.test('every production dependency runs on every Node version package.json admits', async (t) => {
  const ours: string = read('package.json').engines.node
  const lock = read('package-lock.json') as { packages: Record<string, { dev?: boolean, engines?: { node?: string } }> }
  const production = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && entry.dev !== true)
  t.ok(production.length > 50, 'the production tree is read from the lockfile')
  const narrower = production.flatMap(([path, entry]) => {
    const range = entry.engines?.node
    return typeof range === 'string' && !subset(ours, range) ? [`${path.replace(/^.*node_modules\//, '')} needs Node ${range}`] : []
  })
  t.strictSame(narrower, [], `engines.node ${ours}`)
})
