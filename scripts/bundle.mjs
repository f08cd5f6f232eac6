/**
 * The package's JavaScript as an application loads it: tsc's output (one file per module, in
 * `<dir>`) linked by esbuild into its entry points, which keep their paths, and the chunks
 * they share (`<dir>/chunks/`; a plugin index.ts loads when registered is a chunk of its own).
 * tsc writes every line of it; esbuild only puts modules together. Importing the package went
 * from some 140 to 96 ms, with 0.7 MB less heap: Node resolves, reads and links each module
 * file apart, and the index reached about 80 of them (docs/performance.md, twelfth pass).
 *
 * Packages stay imports of the application's node_modules, but one: TypeBox's runtime is
 * linked in. Its index is some 200 modules, which Node took 80-130 ms and 1.3 MB of heap to
 * load, more than Fastify; linked, 4-8 ms and 0.3 MB (docs/performance.md, eighteenth pass).
 * Schemas stay interchangeable with the application's own TypeBox: its kinds are
 * `Symbol.for` keys, and TableCRUD uses none of its registries.
 *
 *   node scripts/bundle.mjs <dir> [--prune] [entry ...]
 *
 * Entries default to the package's (index.js, user.js, bin/cli.js), bundled in one build so
 * they share one copy of each module (the CLI recognises the tables an application's module
 * defined with the index). `--prune` removes the module files the bundle replaced, keeping the
 * declarations (`npm run build`; the bench links its own build and leaves it as it is).
 */
import { build } from 'esbuild'
import { readdirSync, rmSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const args = process.argv.slice(2)
const prune = args.includes('--prune')
const [dir, ...given] = args.filter((arg) => arg !== '--prune')
if (dir === undefined) throw new Error('usage: node scripts/bundle.mjs <dir> [--prune] [entry ...]')
const entries = given.length > 0 ? given : ['index.js', 'user.js', 'bin/cli.js']

/** The package's own TypeBox, found from this project whatever folder is linked. */
const project = fileURLToPath(new URL('..', import.meta.url))
const LINKING = Symbol('linking')
/**
 * The dependencies stay the application's own copies (peers) and its node_modules' (the rest),
 * but TypeBox, whose modules are linked in (see above).
 * @type {import('esbuild').Plugin}
 */
const linkTypeBox = {
  name: 'packages external but TypeBox',
  setup (build) {
    build.onResolve({ filter: /^[^./]/ }, async ({ path, kind, pluginData }) => {
      if (!/^@sinclair\/typebox(\/|$)/.test(path)) return { path, external: true }
      // esbuild's own resolution, from this project (resolve runs this callback again: `linking` ends it there).
      return pluginData === LINKING ? undefined : await build.resolve(path, { kind, resolveDir: project, pluginData: LINKING })
    })
  }
}

const { metafile } = await build({
  entryPoints: entries.map((entry) => join(dir, entry)),
  outdir: dir,
  outbase: dir,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  plugins: [linkTypeBox],
  chunkNames: 'chunks/[name]-[hash]',
  metafile: true,
  logLevel: 'warning'
})

if (prune) {
  const written = new Set(Object.keys(metafile.outputs).map((file) => relative(dir, file)))
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (file.endsWith('.js') && !written.has(file)) rmSync(join(dir, file))
  }
}
