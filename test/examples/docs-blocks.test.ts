import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

/*
 * Every fenced block of README.md and docs/*.md is exercised, or this test fails, so a block
 * cannot be added without being run or type-checked:
 * - ts and js blocks are type-checked together by tsc --strict, as modules, the package name
 *   being this checkout's index.ts. A fragment (no import of its own) finds the names the pages
 *   share (`app`, `movie`, ...) declared in PRELUDE; an object member (`genre: column...`) is
 *   checked inside an object. What a block cannot be checked for is in NOT_CHECKED, with why.
 *   The library's own sources are in the program with user.ts, which they need, so a block that
 *   reads request.user without importing 'fastify-tablecrud/user' is not caught here.
 * - sh blocks that call the demo (localhost:3000) are run by docs-shell.test.ts; every other
 *   sh block is in SHELL with why it is not run here (an install, a command for the reader's
 *   own database), and the CLI lines it holds are tested by test/bin/.
 * - json, text, html and bare blocks are samples of wire output, not code.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

interface Block { page: string, line: number, language: string, code: string }

/** The fenced blocks of a page, with the line each starts on. */
function blocksOf (page: string, markdown: string): Block[] {
  const out: Block[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!)
    if (open === null) continue
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'))
    out.push({ page, line: i + 1, language: open[1]!, code: lines.slice(i + 1, end).join('\n') })
    i = end
  }
  return out
}

const BLOCKS = PAGES.flatMap((page) => blocksOf(page, readFileSync(join(ROOT, page), 'utf8')))

/** The tables the pages' fragments name: the README's, and two more. */
const TABLES = `
import { column, defineTable } from 'fastify-tablecrud'
export const director = defineTable('director', { name: column.varchar({ length: 100, required: true, unique: true }) }, { readable: 'name' })
export const movie = defineTable('movie', {
  name: column.varchar({ length: 200, required: true }),
  rating: column.real({ null: true }),
  director: column.foreignKey(director, { null: false, onDelete: 'restrict' }),
  poster: column.varchar({ length: 255, null: true })
}, { readable: 'name' })
export const country = defineTable('country', { code: column.varchar({ length: 2, primaryKey: true }) })
export const sale = defineTable('sale', { total: column.numeric({ digits: [12, 2] }) })
`

/** Names a fragment uses without defining them: what the page's text around it defines. */
const PRELUDE = `
import type { FastifyInstance } from 'fastify'
import type * as tables from './tables.js'
declare global {
  const app: FastifyInstance
  const api: FastifyInstance
  const director: typeof tables.director
  const movie: typeof tables.movie
  const country: typeof tables.country
  const sale: typeof tables.sale
  const connectionString: string
  const secret: string
  const posters: import('fastify-tablecrud').LocalMediaStorage
  var formEtag: string | null
}
export {}
`

/** Blocks type-checking cannot judge, by the start of their first line, and why. */
const NOT_CHECKED: ReadonlyArray<[string, string]> = [
  ["import type { paths } from './movies-api.js'", 'imports the file the command above it generates from a running server'],
  ["import createClient from 'openapi-fetch'", 'imports the types generated from a running server: test/plugins/openapi-clients.test.ts makes such calls with a generated client'],
  // Checked against this checkout's sources, the library itself would be compiled with the application's user type.
  ["declare module '@fastify/jwt'", 'an application\'s own request.user: test/package.test.ts compiles the same declaration against the packed package']
]

/** The sh blocks not run against the demo, by the start of their first line, and why. */
const SHELL: ReadonlyArray<[string, string]> = [
  ['npm install && npm start', 'the checkout\'s own install, start and tests: what every test run does'],
  ['npm install git+https://', 'installing: test/package.test.ts installs the packed tarball'],
  ['npm install fastify-tablecrud', 'installing from the registry, once published'],
  ['npm install @aws-sdk/client-s3', 'installing the optional S3 peers (test/lib/media/s3.test.ts uses them)'],
  ['export DATABASE_URL=', 'the command line on the reader\'s database: test/bin/main.test.ts runs each command'],
  ['DATABASE_URL=postgres://... npx fastify-tablecrud check', 'check on the reader\'s database: test/bin/main.test.ts'],
  ['DATABASE_URL=postgres://... npx fastify-tablecrud generate', 'generate on the reader\'s database: test/bin/generate.test.ts'],
  ['npx openapi-typescript', 'a tool of the reader\'s, on a running server: test/plugins/openapi tests the document'],
]

/** The documents whose curl lines docs-shell.test.ts runs against the demo or their own example. */
const RUN_BY_DOCS_SHELL = new Set(['README.md', 'docs/getting-started.md', 'docs/media.md', 'docs/table-crud.md', 'docs/auth.md'])

const CODE = new Set(['ts', 'js'])
const SAMPLES = new Set(['json', 'text', 'html', ''])

t.test('every block is a sample, type-checked, or run (or says why not)', async (t) => {
  const unknown = BLOCKS.filter((b) => !CODE.has(b.language) && !SAMPLES.has(b.language) && b.language !== 'sh')
  t.same(unknown.map((b) => `${b.page}:${b.line} ${b.language}`), [], 'no language this test does not know')
  const unrun = BLOCKS.filter((b) => b.language === 'sh' && !SHELL.some(([start]) => b.code.startsWith(start)) &&
    !(RUN_BY_DOCS_SHELL.has(b.page) && b.code.includes('localhost:3000')))
  t.same(unrun.map((b) => `${b.page}:${b.line}`), [], 'every sh block is run, or listed in SHELL with why not')
  for (const [start] of [...SHELL, ...NOT_CHECKED]) t.ok(BLOCKS.some((b) => b.code.startsWith(start)), `still in the docs: ${start}`)
})

t.test('the ts and js blocks pass tsc --strict (js blocks, browser code, are parsed)', async (t) => {
  const dir = mkdtempSync(join(ROOT, '.docs-example-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const checked = BLOCKS.filter((b) => CODE.has(b.language) && !NOT_CHECKED.some(([start]) => b.code.startsWith(start)))
  const files = checked.map((b) => {
    const name = `${b.page.replace(/\W/g, '_')}_${b.line}.${b.language}`
    // An object member (`genre: column.varchar(...)`) is checked inside an object.
    const member = /^\w+: /.test(b.code)
    const module = /^(import|export) /m.test(b.code) ? b.code : `${b.code}\nexport {}`
    writeFileSync(join(dir, name), member ? `import { column } from 'fastify-tablecrud'\nexport const fragment = {\n${b.code}\n}\n` : module + '\n')
    return name
  })
  writeFileSync(join(dir, 'prelude.ts'), PRELUDE)
  writeFileSync(join(dir, 'tables.ts'), TABLES)
  // The library's sources are compiled with it, and they read request.user as user.ts declares it.
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    extends: '../tsconfig.json',
    compilerOptions: {
      noEmit: true,
      allowJs: true,
      checkJs: false,
      lib: ['ES2023', 'DOM'],
      paths: { 'fastify-tablecrud': ['../index.ts'], 'fastify-tablecrud/user': ['../user.ts'] }
    },
    files: ['../user.ts', 'prelude.ts', 'tables.ts', ...files],
    include: []
  }))
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
  const run = await promisify(execFile)(process.execPath, [tsc, '-p', dir], { cwd: ROOT, maxBuffer: 1 << 24 })
    .catch((error: { stdout: string }) => error)
  // Errors name the block's page and line: docs_auth_md_268.ts(3,1) is docs/auth.md, the block at line 268.
  t.equal(run.stdout, '', `tsc --strict passes on ${files.length} blocks`)
  t.ok(checked.length >= 30, `${checked.length} blocks checked`)
})

t.test('every ioredis client a block makes has an error listener (issue 27): without one, an outage prints a stack trace per retry', async (t) => {
  const clients = PAGES.flatMap((page) => blocksOf(page, readFileSync(join(ROOT, page), 'utf8'))).filter((b) => /new Redis\(/.test(b.code))
  t.ok(clients.length >= 2, 'the pages make clients')
  for (const block of clients) t.match(block.code, /\.on\('error', /, `${block.page}:${block.line}`)
})
