import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import * as index from '../index.js'
import { importsOf, ROOT } from './helpers/imports.js'

/**
 * The package's index exports the plugins beside TableCRUD as shells that import their code
 * when registered (plugins/lazy.ts). A shell must be, to Fastify, the plugin it loads: the
 * same scope rule, the same name for other plugins' `dependencies`.
 */

const INDEX = readFileSync(join(ROOT, 'index.ts'), 'utf8')
const SHELL = /export const (\w+) = lazyPlugin\(async \(\) => \(await import\('([^']+)'\)\)\.(\w+), '[^']+'(, true)?\)/g
const shells = [...INDEX.matchAll(SHELL)].map(([, name, module, loaded, shared]) => ({ name: name!, module: module!, loaded: loaded!, shared: shared !== undefined }))
const exported = index as unknown as Record<string, Record<symbol, unknown> & { name: string }>

t.test('each shell is, to Fastify, the plugin it loads', async (t) => {
  t.equal(shells.length, 16, 'the sixteen plugins besides TableCRUD and errorShape')
  for (const shell of shells) {
    t.equal(shell.loaded, shell.name, `${shell.name} loads the plugin of its own name`)
    const plugin = (await import(`.${shell.module}`) as Record<string, Record<symbol, unknown> & { name: string }>)[shell.loaded]!
    const ours = exported[shell.name]!
    t.not(ours, plugin, `${shell.name} is a shell`)
    for (const key of ['skip-override', 'fastify.display-name', 'plugin-meta']) {
      t.same(ours[Symbol.for(key)], plugin[Symbol.for(key)], `${shell.name}: ${key}`)
    }
    if (!shell.shared) t.equal(ours.name, plugin.name, `${shell.name}: its function's name`)
  }
})

t.test('a registered shell does what its plugin does', async (t) => {
  const app = Fastify()
  t.teardown(async () => await app.close())
  // Shared: the header on the application's own routes, the name for dependencies.
  await app.register(index.csp)
  // Scoped: its routes under the prefix it is given (the pool is never asked).
  await app.register(fastifyPostgres, { connectionString: 'postgres://127.0.0.1:1/never' })
  await app.register(index.health, { prefix: '/ops' })
  app.get('/', async () => 'page')
  await app.ready()
  t.equal((await app.inject('/')).headers['content-security-policy'], "default-src 'self'")
  t.ok(app.hasPlugin('fastify-tablecrud/csp'))
  t.same((await app.inject('/ops/health/live')).json(), { status: 'live' })
})

t.test('importing the package loads none of them', async (t) => {
  const loaded = new Set<string>()
  const pending = ['index.ts']
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (loaded.has(file)) continue
    loaded.add(file)
    pending.push(...importsOf(file, readFileSync(join(ROOT, file), 'utf8'), true))
  }
  for (const shell of shells) t.notOk(loaded.has(shell.module.replace(/^\.\//, '').replace(/\.js$/, '.ts')), `${shell.module} is not imported with the package`)
  t.ok(loaded.has('plugins/crud/table-crud.ts'), 'TableCRUD is')
})
