import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createToken, createUser } from '../../lib/auth/users.js'
import { buildDemo, DEMO_USER } from '../../examples/movies/app.js'
import { unmeasured } from '../helpers/child.js'
import { appPool, DATABASE_URL, testDatabase } from '../helpers/db.js'

/*
 * The shell lines of README.md and docs/{getting-started,media,table-crud,auth}.md, run as written (only
 * `localhost:3000` becomes the test server's address) so they cannot drift from the code:
 * README's against the demo `npm start` runs and against README's own example, and
 * getting-started's against its example. The examples are the documents' TypeScript blocks,
 * run in a child process with two mechanical changes (the package name becomes this
 * checkout's index.ts, and the server listens on an ephemeral port and says which).
 * curl runs with `fail-with-body`, so any answer of 400 or more fails the script.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const GETTING_STARTED = readFileSync(join(ROOT, 'docs/getting-started.md'), 'utf8')
const MEDIA = readFileSync(join(ROOT, 'docs/media.md'), 'utf8')
const TABLE_CRUD = readFileSync(join(ROOT, 'docs/table-crud.md'), 'utf8')
const AUTH = readFileSync(join(ROOT, 'docs/auth.md'), 'utf8')

const CURL_HOME = mkdtempSync(join(tmpdir(), 'tablecrud-curl-'))
writeFileSync(join(CURL_HOME, '.curlrc'), 'fail-with-body\nshow-error\n')
t.teardown(() => { rmSync(CURL_HOME, { recursive: true, force: true }) })

const blocks = (markdown: string, language: string): string[] =>
  [...markdown.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!)

/** The blocks a reader runs against a server: those that call it. */
const shellLines = (markdown: string): string =>
  blocks(markdown, 'sh').filter((block) => block.includes('localhost:3000')).join('\n')

interface Run { code: number | null, stdout: string, stderr: string }

/** Runs the lines in a folder of their own (`cwd`, default the curl folder): files they write stay out of the checkout. */
async function runShell (script: string, port: number, cwd = CURL_HOME): Promise<Run> {
  const child = spawn('bash', ['-c', 'set -euo pipefail\n' + script.replaceAll('localhost:3000', `127.0.0.1:${port}`)], {
    cwd, env: { ...process.env, CURL_HOME }
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, stdout, stderr }
}

/** Replaces `from` once: the document must still have that shape. */
function replaceOnce (t: Test, text: string, from: string, to: string): string {
  t.equal(text.split(from).length, 2, `the example has exactly one ${JSON.stringify(from)}`)
  return text.replace(from, to)
}

/** Runs a document's TypeScript example in a child process; resolves to its port. */
async function runExample (t: Test, source: string, env: Record<string, string | undefined>): Promise<number> {
  const dir = mkdtempSync(join(ROOT, '.docs-example-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  let code = replaceOnce(t, source, "from 'fastify-tablecrud'", "from '../index.js'")
  code = replaceOnce(t, code, 'await app.listen({ port: 3000 })',
    "await app.listen({ port: 0, host: '127.0.0.1' }); console.log('LISTENING ' + String((app.server.address() as { port: number }).port))")
  writeFileSync(join(dir, 'example.ts'), code)
  const child = spawn(process.execPath, ['--import', 'tsx', join(dir, 'example.ts')], { cwd: ROOT, env: unmeasured({ ...process.env, ...env }) })
  t.teardown(() => { child.kill() })
  let output = ''
  child.stderr.on('data', (chunk) => { output += chunk })
  return await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk
      const port = /LISTENING (\d+)/.exec(output)?.[1]
      if (port !== undefined) resolve(Number(port))
    })
    child.on('close', (status) => { reject(new Error(`the example exited (${String(status)}) before listening:\n${output}`)) })
  })
}

/** The demo of `npm start`, listening on a port of its own. */
async function demo (t: Test, options: Partial<Parameters<typeof buildDemo>[0]> = {}): Promise<{ app: Awaited<ReturnType<typeof buildDemo>>, port: number, db: Awaited<ReturnType<typeof testDatabase>> }> {
  const db = await testDatabase(t)
  const app = await buildDemo({ ...appPool(db), ...options })
  t.teardown(async () => await app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as { port: number }).port, db }
}

t.test("README's curl lines run as written against the demo of `npm start`", async (t) => {
  const { app, db } = await demo(t)
  const script = shellLines(README)
  t.match(script, /curl 'localhost:3000\/api\/movies\/\?/, 'a list')
  t.match(script, /curl -X POST localhost:3000\/api\/token\/movies\//, 'a write')
  t.match(script, new RegExp(`"username": "${DEMO_USER.username}", "password": "${DEMO_USER.password}"`), "the demo's user")
  const run = await runShell(script, (app.server.address() as { port: number }).port)
  t.equal(run.code, 0, run.stderr)
  t.match(run.stdout, /^\{"rows":\[\{"name":"[^"]+","director":\{"name":"[^"]+"\},"director_readable":"[^"]+"\}/, 'the list answers rows')
  t.match(run.stdout, /\{"id":\d+,"name":"Alien","year":1979,.*"director":1,/, 'the POST answers the new row')
  const rows = await db.pool.query("SELECT year, tags FROM movie WHERE name = 'Alien'")
  t.same(rows.rows, [{ year: 1979, tags: ['sci-fi'] }])
})

t.test("README's curl lines run against README's own example", { skip: DATABASE_URL === null ? 'the example runs in its own process and needs DATABASE_URL (the embedded server takes one connection, this one)' : false }, async (t) => {
  const db = await testDatabase(t)
  const port = await runExample(t, blocks(README, 'ts')[0]!, { DATABASE_URL: db.connectionString })
  // What the README says must exist: the user and a token (director 1 the example makes itself).
  const user = await createUser(db.pool, DEMO_USER)
  await createToken(db.pool, user.id)
  const run = await runShell(shellLines(README), port)
  t.equal(run.code, 0, run.stderr)
  t.match(run.stdout, /^\{"rows":\[\]\}\{"id":1,"name":"Alien","year":1979,"release_date":null,"rating":null,"box_office":null,"director":1,"tags":\["sci-fi"\]\}$/)
})

t.test("getting-started's curl lines run as written against its example", async (t) => {
  const env: Record<string, string | undefined> = { DATABASE_URL: undefined }
  if (DATABASE_URL !== null) env.DATABASE_URL = (await testDatabase(t)).connectionString
  const port = await runExample(t, blocks(GETTING_STARTED, 'ts')[0]!, env)
  const run = await runShell(shellLines(GETTING_STARTED), port)
  t.equal(run.code, 0, run.stderr)
  t.match(run.stdout, /^\{"id":1,"name":"Ursula K\. Le Guin","born":null\}/)
  t.match(run.stdout, /\{"id":1,"title":"The Dispossessed","author":1,"price":"12\.50","tags":\["sf"\]\}/)
  t.match(run.stdout, /content-range: book 0-0\/1/i)
  t.match(run.stdout, /\{"rows":\[\{"title":"The Dispossessed","author":\{"name":"Ursula K\. Le Guin"\},"author_readable":"Ursula K\. Le Guin"\}\]\}$/)
})

t.test("media.md's curl lines run as written against the demo: upload, set, URL", async (t) => {
  const mediaPath = mkdtempSync(join(tmpdir(), 'tablecrud-docs-media-'))
  t.teardown(() => { rmSync(mediaPath, { recursive: true, force: true }) })
  const { port, db } = await demo(t, { mediaPath })
  const cwd = mkdtempSync(join(tmpdir(), 'tablecrud-docs-run-'))
  t.teardown(() => { rmSync(cwd, { recursive: true, force: true }) })
  // The reader's PNG: the eight bytes of the PNG signature are all the upload looks at.
  writeFileSync(join(cwd, 'alien.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  const run = await runShell(shellLines(MEDIA), port, cwd)
  t.equal(run.code, 0, run.stderr)
  const key = run.stdout.split('\n')[0]!
  t.match(key, /^alien-[0-9a-f-]{36}\.png$/, 'the upload answers its key')
  t.same(readdirSync(mediaPath), [key], 'the file is in the demo\'s media folder')
  t.same((await db.pool.query('SELECT poster FROM movie WHERE id = 1')).rows, [{ poster: key }], 'the PATCH set it on movie 1')
  t.match(run.stdout, `{"file_url":"/media/${key}"}`, 'and its URL')
})

t.test("table-crud.md's export lines run as written against the demo: a CSV file, NDJSON rows", async (t) => {
  const { port, db } = await demo(t)
  const cwd = mkdtempSync(join(tmpdir(), 'tablecrud-docs-run-'))
  t.teardown(() => { rmSync(cwd, { recursive: true, force: true }) })
  const run = await runShell(shellLines(TABLE_CRUD), port, cwd)
  t.equal(run.code, 0, run.stderr)
  const csv = readFileSync(join(cwd, 'movies.csv'), 'utf8').trim().split('\r\n')
  t.equal(csv[0], 'name,director.name', 'the CSV file has its header')
  const { rows: [{ n }] } = await db.pool.query('SELECT count(*)::int AS n FROM movie WHERE year >= 2000')
  t.equal(csv.length - 1, n, 'and a line per movie of 2000 or later')
  const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: number, name: string })
  t.equal(lines.length, (await db.pool.query('SELECT 1 FROM movie')).rowCount, 'NDJSON: a line per movie')
  t.strictSame(Object.keys(lines[0]!), ['id', 'name'])
})

t.test("auth.md's session lines run as written against its sessions example: log in, then /me/ with the cookie", { skip: DATABASE_URL === null ? 'the example runs in its own process and needs DATABASE_URL (the embedded server takes one connection, this one)' : false }, async (t) => {
  const db = await testDatabase(t)
  const example = blocks(AUTH, 'ts').find((block) => block.startsWith('// sessions-demo.ts'))!
  const port = await runExample(t, example, { DATABASE_URL: db.connectionString })
  const cwd = mkdtempSync(join(tmpdir(), 'tablecrud-docs-run-'))
  t.teardown(() => { rmSync(cwd, { recursive: true, force: true }) })
  const run = await runShell(shellLines(AUTH), port, cwd)
  t.equal(run.code, 0, run.stderr)
  t.match(run.stdout, /^HTTP\/1\.1 200 OK/, 'logged in')
  t.match(run.stdout, /\{"username":"ann"\}$/, '/me/ answers the user of the cookie')
})
