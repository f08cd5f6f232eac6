import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { KindGuard, TypeGuard, type TObject } from '@sinclair/typebox'

/*
 * scripts/bundle.mjs, what `npm run build` links the package with: entry points keep their
 * paths and share one copy of each module, a dynamic import becomes a chunk, packages stay
 * imports but TypeBox, whose modules are linked in, and `--prune` removes the module files the
 * bundle replaced (test/package.test.ts checks the tarball this makes).
 */
const run = promisify(execFile)
const SCRIPT = fileURLToPath(new URL('../scripts/bundle.mjs', import.meta.url))
const TMP = mkdtempSync(join(tmpdir(), 'tablecrud-bundle-'))
t.teardown(() => { rmSync(TMP, { recursive: true, force: true }) })

/** A compiled tree as tsc writes one: two entries sharing a module, one lazy module, one package import. */
function tree (name: string): string {
  const dir = join(TMP, name)
  mkdirSync(join(dir, 'lib'), { recursive: true })
  mkdirSync(join(dir, 'bin'))
  writeFileSync(join(dir, 'lib', 'registry.js'), 'export const registry = new Set()\n')
  writeFileSync(join(dir, 'lib', 'lazy.js'), 'export const lazy = "loaded when asked"\n')
  writeFileSync(join(dir, 'lib', 'registry.d.ts'), 'export declare const registry: Set<unknown>\n')
  writeFileSync(join(dir, 'index.js'), [
    "import { registry } from './lib/registry.js'",
    "import { format } from 'node:util'",
    'export { registry, format }',
    "export const later = async () => (await import('./lib/lazy.js')).lazy",
    ''
  ].join('\n'))
  // A package: resolved from the folder at run time, so only its import is checked (the folder is not in a project).
  writeFileSync(join(dir, 'user.js'), "import tap from 'tap'\nexport const user = tap\n")
  writeFileSync(join(dir, 'bin', 'cli.js'), "#!/usr/bin/env node\nimport { registry } from '../lib/registry.js'\nexport { registry }\n")
  // TypeBox, found from the project though the folder is not in one.
  writeFileSync(join(dir, 'lib', 'schema.js'), "import { Type } from '@sinclair/typebox'\nexport const schema = Type.Object({ n: Type.Integer() })\n")
  return dir
}

t.test('the entries keep their paths, share one copy of a module, and load the lazy one as a chunk', async (t) => {
  const dir = tree('kept')
  await run(process.execPath, [SCRIPT, dir])
  const index = await import(pathToFileURL(join(dir, 'index.js')).href) as { registry: Set<unknown>, later: () => Promise<string>, format: unknown }
  const cli = await import(pathToFileURL(join(dir, 'bin', 'cli.js')).href) as { registry: Set<unknown> }
  t.equal(cli.registry, index.registry, 'one copy of the shared module')
  t.equal(await index.later(), 'loaded when asked')
  t.equal(index.format, (await import('node:util')).format, 'a built-in stays an import')
  t.match(readFileSync(join(dir, 'user.js'), 'utf8'), /^import tap from "tap";$/m, 'and so does a package: the application\'s copy')
  t.ok(readFileSync(join(dir, 'bin', 'cli.js'), 'utf8').startsWith('#!/usr/bin/env node\n'), 'the CLI keeps its shebang')
  t.notMatch(readFileSync(join(dir, 'index.js'), 'utf8'), /new Set\(\)/, 'the shared module is a chunk, not in the index')
  t.ok(existsSync(join(dir, 'lib', 'registry.js')), 'without --prune the module files stay')
})

t.test('TypeBox is linked in, and its schemas are the application\'s TypeBox\'s', async (t) => {
  const dir = tree('typebox')
  writeFileSync(join(dir, 'index.js'), "export { schema } from './lib/schema.js'\n")
  await run(process.execPath, [SCRIPT, dir, 'index.js'])
  // One entry: all of it in the entry's file.
  const linked = readFileSync(join(dir, 'index.js'), 'utf8')
  t.notMatch(linked, /from "@sinclair\/typebox"/, 'no import of the package is left')
  t.match(linked, /Symbol\.for\("TypeBox\.Kind"\)/, 'its modules are in the bundle')
  const { schema } = await import(pathToFileURL(join(dir, 'index.js')).href) as { schema: TObject }
  t.ok(KindGuard.IsObject(schema), 'the application\'s TypeBox knows the linked one\'s schema')
  t.ok(TypeGuard.IsInteger(schema.properties.n))
})

t.test('--prune removes the module files the bundle replaced, and keeps declarations', async (t) => {
  const dir = tree('pruned')
  await run(process.execPath, [SCRIPT, dir, '--prune'])
  t.notOk(existsSync(join(dir, 'lib', 'registry.js')))
  t.notOk(existsSync(join(dir, 'lib', 'lazy.js')))
  t.ok(existsSync(join(dir, 'lib', 'registry.d.ts')))
  const index = await import(pathToFileURL(join(dir, 'index.js')).href) as { later: () => Promise<string> }
  t.equal(await index.later(), 'loaded when asked')
})

t.test('given entries, only those are linked; no folder is a usage error', async (t) => {
  const dir = tree('one')
  await run(process.execPath, [SCRIPT, dir, 'user.js'])
  t.match(readFileSync(join(dir, 'index.js'), 'utf8'), /from '\.\/lib\/registry\.js'/, 'the index is left as tsc wrote it')
  // execFile's error holds the child's stderr in its message.
  await t.rejects(run(process.execPath, [SCRIPT]), { message: /usage: node scripts\/bundle\.mjs <dir>/ })
})
