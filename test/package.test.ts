import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

/*
 * The package as a consumer gets it: `npm pack`, then a new project in a temporary folder that
 * installs the tarball with a fastify 5 minor other than ours (the peers are its own copies),
 * registers @fastify/swagger directly (not its UI: the document is enough, and the UI is big), writes typed code against the declarations and passes
 * `tsc --strict`, then runs: the document builds, and a CommonJS `require()` loads the package.
 * The install needs the npm registry (the cache makes it quick); without it the test skips.
 */
const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../', import.meta.url))
const TMP = mkdtempSync(join(tmpdir(), 'tablecrud-consumer-'))
t.teardown(() => { rmSync(TMP, { recursive: true, force: true }) })

const ours = (name: string): string => (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
const OUR_FASTIFY = ours('fastify')
/** Another minor of fastify 5 than the one this repository develops with. */
const OTHER_FASTIFY = OUR_FASTIFY.startsWith('5.11.') ? '~5.12.0' : '~5.11.0'

async function registryReachable (): Promise<boolean> {
  try {
    await run('npm', ['view', 'fastify@' + OTHER_FASTIFY, 'version', '--prefer-online'], { timeout: 15_000 })
    return true
  } catch {
    return false
  }
}

const CONSUMER_APP = `
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import fastifySwagger from '@fastify/swagger'
import { column, defineTable, tableCrud, tokenAuth, staticTokenProvider, type RowOf } from 'fastify-tablecrud'

const book = defineTable('book', {
  title: column.varchar({ length: 100, required: true }),
  pages: column.integer({ null: true })
})
type Book = RowOf<typeof book>
const sample: Book = { id: 1, title: 'Dune', pages: 412 }

const app = Fastify()
// Nothing listens there: the document needs no database.
await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none' })
await app.register(fastifySwagger, { openapi: { info: { title: 'Consumer', version: '1.0.0' } } })
await app.register(async (api) => {
  await api.register(tokenAuth, { provider: staticTokenProvider(['t1']) })
  await api.register(tableCrud, { table: book, prefix: '/books', readOnly: false })
}, { prefix: '/api' })
await app.ready()
const document = app.swagger() as { components: { securitySchemes: Record<string, unknown> }, paths: Record<string, unknown> }
console.log(JSON.stringify({ schemes: Object.keys(document.components.securitySchemes), paths: Object.keys(document.paths).length, sample: sample.title }))
await app.close()
`

const skip = await registryReachable() ? false : 'the npm registry is unreachable: the consumer project cannot install'

// Slow by nature (a build, an install, a compile): several times the usual under a loaded machine.
t.setTimeout(300_000)

t.test('a consumer project installs the packed tarball, type-checks strictly and runs', { skip }, async (t) => {
  const { stdout: packed } = await run('npm', ['pack', '--pack-destination', TMP, '--json'], { cwd: ROOT, maxBuffer: 1 << 24 })
  const { filename, files } = (JSON.parse(packed) as Array<{ filename: string, files: Array<{ path: string }> }>)[0]!
  const shipped = files.map((f) => f.path)
  t.ok(shipped.includes('LICENSE'), 'the tarball ships the licence')
  t.ok(shipped.includes('docs/getting-started.md'), 'and docs/')
  t.ok(shipped.includes('dist/index.js') && shipped.includes('dist/index.d.ts') && shipped.includes('dist/bin/cli.js'))
  t.notOk(shipped.some((p) => p.startsWith('test/') || p.startsWith('dist/test/')), 'and no tests')

  const project = join(TMP, 'consumer')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({
    name: 'consumer',
    private: true,
    type: 'module',
    dependencies: {
      'fastify-tablecrud': `file:../${filename}`,
      fastify: OTHER_FASTIFY,
      '@fastify/postgres': ours('@fastify/postgres'),
      pg: ours('pg'),
      '@fastify/swagger': ours('@fastify/swagger')
    },
    devDependencies: { '@types/pg': ours('@types/pg'), '@types/node': ours('@types/node') }
  }, null, 2))
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { module: 'NodeNext', target: 'ES2022', strict: true, skipLibCheck: false, outDir: 'dist', types: ['node'] },
    include: ['app.ts']
  }))
  writeFileSync(join(project, 'app.ts'), CONSUMER_APP)
  await run('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, timeout: 120_000, maxBuffer: 1 << 24 })

  const installed = (name: string): string => (JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
  t.not(installed('fastify').split('.')[1], OUR_FASTIFY.split('.')[1], `another fastify minor: ${installed('fastify')}`)
  const nested = ['fastify', '@fastify/postgres', 'pg'].filter((name) => {
    try {
      readFileSync(join(project, 'node_modules/fastify-tablecrud/node_modules', name, 'package.json'))
      return true
    } catch {
      return false
    }
  })
  t.strictSame(nested, [], 'the peers are not installed twice')

  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
  const compiled = await run(process.execPath, [tsc, '-p', project], { cwd: project }).catch((error: { stdout: string }) => error)
  t.equal(compiled.stdout, '', 'tsc --strict passes')
  const { stdout } = await run(process.execPath, [join(project, 'dist/app.js')], { cwd: project })
  // Each of the 7 TableCRUD paths once: the aliases without the slash are hidden (docs/openapi.md).
  t.strictSame(JSON.parse(stdout), { schemes: ['bearerAuth'], paths: 7, sample: 'Dune' }, 'the document of plain @fastify/swagger builds')
  const required = await run(process.execPath, ['-e', "const m = require('fastify-tablecrud'); console.log(typeof m.tableCrud, typeof m.openApi)"], { cwd: project })
  t.equal(required.stdout, 'function function\n', 'require() loads the package (Node >= 20.19)')
})
