import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { DATABASE_URL, testDatabase } from './helpers/db.js'

/*
 * The package as a consumer gets it: `npm pack`, then a new project in a temporary folder that
 * installs the tarball with a fastify 5 minor other than ours (the peers are its own copies),
 * registers @fastify/swagger directly (not its UI: the document is enough, and the UI is big), uses a named pool,
 * declares its own `FastifyJWT` user type, writes typed code (a typed hook) against the declarations and passes
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
import fastifyJwt from '@fastify/jwt'
import fastifyPostgres from '@fastify/postgres'
import fastifySwagger from '@fastify/swagger'
import { column, defineTable, tableCrud, tokenAuth, staticTokenProvider, type RowOf, type WriteRowOf } from 'fastify-tablecrud'

// The application's own user type: the library must not claim request.user.
interface Member { sub: string, role: 'reader' | 'editor' }
declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: Member
    user: Member
  }
}

const book = defineTable('book', {
  title: column.varchar({ length: 100, required: true }),
  pages: column.integer({ null: true })
})
type Book = RowOf<typeof book>
const sample: Book = { id: 1, title: 'Dune', pages: 412 }
// @ts-expect-error a hook's row has the table's columns only
export const typo = (row: WriteRowOf<typeof book>): unknown => row.titel

const app = Fastify()
// Nothing listens there: the document needs no database.
await app.register(fastifyPostgres, { name: 'library', connectionString: 'postgres://postgres@127.0.0.1:1/none' })
await app.register(fastifySwagger, { openapi: { info: { title: 'Consumer', version: '1.0.0' } } })
await app.register(fastifyJwt, { secret: 'the-application-secret' })
app.get('/whoami', { schema: { hide: true }, onRequest: async (request) => { await request.jwtVerify() } }, async (request) => ({ role: request.user.role }))
await app.register(async (api) => {
  await api.register(tokenAuth, { provider: staticTokenProvider(['t1']), pg: 'library' })
  await api.register(tableCrud, {
    table: book,
    prefix: '/books',
    readOnly: false,
    pg: 'library',
    // A typed hook: row is WriteRowOf<typeof book>, inferred from the table.
    hooks: [{ hookType: 'preSave', callable: (row) => ({ ...row, title: row.title.trim(), pages: row.pages ?? 0 }) }]
  })
}, { prefix: '/api' })
await app.ready()
const document = app.swagger() as { components: { securitySchemes: Record<string, unknown> }, paths: Record<string, unknown> }
const whoami = await app.inject({ url: '/whoami', headers: { authorization: 'Bearer ' + app.jwt.sign({ sub: 'ann', role: 'editor' }) } })
console.log(JSON.stringify({ schemes: Object.keys(document.components.securitySchemes), paths: Object.keys(document.paths).length, sample: sample.title, whoami: whoami.json() }))
await app.close()
`

const OPT_IN_APP = `
import Fastify from 'fastify'
import type {} from 'fastify-tablecrud/user'
import type { AuthUser } from 'fastify-tablecrud'

const app = Fastify()
app.get('/me', async (request) => {
  const user: AuthUser | null = request.user
  // @ts-expect-error null where allowUnauthenticated or an excluded path let the request through
  const name: string | null = request.user.username
  return { user, name, superuser: request.user?.superuser === true }
})
`

const skip = await registryReachable() ? false : 'the npm registry is unreachable: the consumer project cannot install'

// Slow by nature (a build, an install, a compile): the test alone took more than 300 s at load 20
// on 2 cores (seven test runs at once). The limit guards against a hang only.
t.setTimeout(900_000)

t.test('a consumer project installs the packed tarball, type-checks strictly and runs', { skip }, async (t) => {
  const { stdout: packed } = await run('npm', ['pack', '--pack-destination', TMP, '--json'], { cwd: ROOT, maxBuffer: 1 << 24 })
  const { filename, files } = (JSON.parse(packed) as Array<{ filename: string, files: Array<{ path: string }> }>)[0]!
  const shipped = files.map((f) => f.path)
  t.ok(shipped.includes('LICENSE'), 'the tarball ships the licence')
  t.ok(shipped.includes('docs/getting-started.md'), 'and docs/')
  t.ok(shipped.includes('dist/index.js') && shipped.includes('dist/index.d.ts') && shipped.includes('dist/bin/cli.js'))
  t.ok(shipped.includes('dist/user.js') && shipped.includes('dist/user.d.ts'), 'and the request.user opt-in')
  // The modules are linked into the entry points and their chunks (scripts/bundle.mjs); their declarations stay.
  t.ok(shipped.some((p) => p.startsWith('dist/chunks/')) && shipped.includes('dist/lib/table/table.d.ts'))
  t.same(shipped.filter((p) => /^dist\/(lib|plugins|schemas)\/.*\.js$/.test(p)), [], 'and no module file apart')
  t.notOk(shipped.some((p) => p.startsWith('test/') || p.startsWith('dist/test/')), 'and no tests')
  // A map would point at the .ts sources, which the tarball does not ship (tsconfig.build.json).
  t.same(shipped.filter((p) => p.endsWith('.map')), [], 'and no source maps')

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
      '@fastify/swagger': ours('@fastify/swagger'),
      '@fastify/jwt': ours('@fastify/jwt')
    },
    devDependencies: { '@types/pg': ours('@types/pg'), '@types/node': ours('@types/node'), tsx: ours('tsx') }
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
  t.strictSame(JSON.parse(stdout), { schemes: ['bearerAuth'], paths: 7, sample: 'Dune', whoami: { role: 'editor' } },
    'the document of plain @fastify/swagger builds, and the application\'s own JWT user is request.user')
  const required = await run(process.execPath, ['-e', "const m = require('fastify-tablecrud'); console.log(typeof m.tableCrud, typeof m.openApi, typeof require('fastify-tablecrud/user'))"], { cwd: project })
  t.equal(required.stdout, 'function function object\n', 'require() loads the package (Node >= 20.19, so any Node of engines), and its user entry')

  // The command line as installed: the compiled bin finds the package's version, and checks a
  // TypeScript module of tables through the project's tsx.
  const bin = join(project, 'node_modules/.bin/fastify-tablecrud')
  const shown = await run(bin, ['--version'], { cwd: project })
  t.equal(shown.stdout, `fastify-tablecrud ${(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version}\n`)
  if (DATABASE_URL !== null) {
    const db = await testDatabase(t)
    writeFileSync(join(project, 'tables.ts'), "import { column, defineTable } from 'fastify-tablecrud'\nexport const shelf = defineTable('pkg_shelf', { label: column.text() })\n")
    const checked: { code?: number, stdout: string, stderr: string } = await run(bin, ['check', 'tables.ts'], { cwd: project, env: { ...process.env, DATABASE_URL: db.connectionString } })
      .catch((error: { code: number, stdout: string, stderr: string }) => error)
    t.same([checked.code, checked.stdout, checked.stderr], [1, 'Table pkg_shelf is missing.\n', 'Error: 1 difference between the definitions and the database (pkg_shelf).\n'],
      'check imports a .ts module through tsx')
  }

  // An application that takes TableCRUD's user type instead of declaring its own.
  writeFileSync(join(project, 'opt-in.ts'), OPT_IN_APP)
  writeFileSync(join(project, 'tsconfig.opt-in.json'), JSON.stringify({
    compilerOptions: { module: 'NodeNext', target: 'ES2022', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] },
    include: ['opt-in.ts']
  }))
  const optIn = await run(process.execPath, [tsc, '-p', join(project, 'tsconfig.opt-in.json')], { cwd: project }).catch((error: { stdout: string }) => error)
  t.equal(optIn.stdout, '', "with 'fastify-tablecrud/user', request.user is AuthUser | null")
})
