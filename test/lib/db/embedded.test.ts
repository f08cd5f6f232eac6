import t from 'tap'
import pg from 'pg'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defaultCacheDir, startEmbeddedPostgres, startupSettings } from '../../../lib/db/embedded.js'

/*
 * Four embedded servers start here, each seconds of WebAssembly start-up on an idle machine;
 * at load 20 on 2 cores (seven test runs at once) the file took 170 s, near tap's default 180 s.
 * The limit guards against a hang only.
 */
t.setTimeout(600_000)

/** One server for the tests below (each start costs seconds), which each leave it as they found it; started by initdb, without the cache. */
const shared = startEmbeddedPostgres({ cacheDir: false })
t.teardown(async () => { await (await shared).stop() })

t.test('answers, and survives a failed query', async (t) => {
  const server = await shared
  t.match(server.connectionString, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\?sslmode=disable$/)
  const pool = new pg.Pool({ connectionString: server.connectionString, max: 1 })
  t.teardown(() => pool.end())
  const one = await pool.query('SELECT 1 AS n, version() AS version')
  t.equal(one.rows[0].n, 1)
  t.match(one.rows[0].version, /^PostgreSQL \d+/)
  await t.rejects(pool.query('SELECT * FROM no_such_table'), { code: '42P01', message: 'relation "no_such_table" does not exist' })
  t.strictSame((await pool.query('SELECT 2 AS n')).rows, [{ n: 2 }], 'the next query on the same pool works')
  await t.rejects(pool.query('SELECT $1::integer AS n', ['x']), { code: '22P02' })
  t.strictSame((await pool.query('SELECT $1::integer AS n', [3])).rows, [{ n: 3 }], 'and after a failed bind')

  const client = await pool.connect()
  await client.query('BEGIN')
  await t.rejects(client.query('SELECT 1 / 0'), { code: '22012' })
  await t.rejects(client.query('SELECT 1'), { code: '25P02' }, 'the transaction is aborted')
  await client.query('ROLLBACK')
  client.release()
  t.strictSame((await pool.query('SELECT 4 AS n')).rows, [{ n: 4 }], 'a rolled-back transaction leaves the session usable')
})

t.test('a connection starts without what the previous one left', async (t) => {
  const server = await shared
  const pool = new pg.Pool({ connectionString: server.connectionString, max: 1 })
  t.teardown(() => pool.end())
  await pool.query('CREATE TABLE left_behind (id integer)')

  const inTransaction = await pool.connect()
  await inTransaction.query('BEGIN')
  await inTransaction.query('INSERT INTO left_behind VALUES (1)')
  inTransaction.release(true)
  t.strictSame((await pool.query('SELECT count(*)::integer AS n FROM left_behind')).rows, [{ n: 0 }],
    'a transaction open when its connection closed is rolled back')

  const aborted = await pool.connect()
  await aborted.query('BEGIN')
  await t.rejects(aborted.query('SELECT 1 / 0'), { code: '22012' })
  aborted.release(true)
  t.strictSame((await pool.query('SELECT 5 AS n')).rows, [{ n: 5 }], 'so is an aborted one')

  const named = { name: 'embedded_named', text: 'SELECT $1::integer AS n' }
  const first = await pool.connect()
  t.strictSame((await first.query({ ...named, values: [6] })).rows, [{ n: 6 }])
  first.release(true)
  t.strictSame((await pool.query({ ...named, values: [7] })).rows, [{ n: 7 }],
    'a named statement is prepared again on a new connection')
  t.strictSame((await pool.query('SHOW search_path')).rows, [{ search_path: 'public' }], 'tables are still found')

  const setter = await pool.connect()
  await setter.query('SET search_path TO pg_catalog')
  setter.release(true)
  t.strictSame((await pool.query('SHOW search_path')).rows, [{ search_path: 'public' }], 'a setting the previous connection made is gone')
})

t.test("a connection gets the settings its URL's options ask for, and only that connection", async (t) => {
  const server = await shared
  const pool = new pg.Pool({ connectionString: server.connectionString, max: 1 })
  t.teardown(() => pool.end())
  await pool.query('CREATE SCHEMA own_schema')
  await pool.query('CREATE TABLE own_schema.only_here (id integer)')
  const url = new URL(server.connectionString)
  url.searchParams.set('options', '-c search_path=own_schema -c statement_timeout=1234')
  const own = new pg.Client({ connectionString: url.toString() })
  await own.connect()
  t.strictSame((await own.query('SELECT current_setting(\'search_path\') AS path, current_setting(\'statement_timeout\') AS timeout')).rows,
    [{ path: 'own_schema', timeout: '1234ms' }])
  t.strictSame((await own.query('SELECT count(*)::integer AS n FROM only_here')).rows, [{ n: 0 }], 'its tables are found unqualified')
  await own.end()
  t.strictSame((await pool.query('SHOW search_path')).rows, [{ search_path: 'public' }], 'the next connection has the default again')
  await pool.query('DROP SCHEMA own_schema CASCADE')
})

t.test('startup options are read as libpq writes them', async (t) => {
  /** A protocol 3 startup message with these parameters. */
  const startup = (...fields: string[]): Buffer => {
    const body = Buffer.from(fields.map((field) => field + '\0').join('') + '\0')
    const message = Buffer.alloc(8 + body.length)
    message.writeInt32BE(message.length, 0)
    message.writeInt32BE(196608, 4)
    body.copy(message, 8)
    return message
  }
  const cases: Array<[string, string[], Array<[string, string]>]> = [
    ['no options', ['user', 'postgres', 'database', 'postgres'], []],
    ['-c with a space', ['user', 'u', 'options', '-c search_path=a'], [['search_path', 'a']]],
    ['-c joined, and --name with dashes', ['options', '-csearch_path=a --statement-timeout=5'], [['search_path', 'a'], ['statement_timeout', '5']]],
    ['escaped spaces and backslashes', ['options', '-c search_path=my\\ schema\\\\x'], [['search_path', 'my schema\\x']]],
    ['words that set nothing', ['options', '-c =1 --x -v'], []],
    ['-c at the end', ['options', '-c'], []],
    ['empty options', ['options', ''], []],
    ['a value named options', ['application_name', 'options'], []]
  ]
  for (const [name, fields, settings] of cases) t.strictSame(startupSettings(startup(...fields)), settings, name)
})

t.test('messages larger than a TCP chunk arrive whole', async (t) => {
  const server = await shared
  const pool = new pg.Pool({ connectionString: server.connectionString, max: 1 })
  t.teardown(() => pool.end())
  for (const size of [65535, 65536, 200000, 3000000]) {
    const text = 'é'.repeat(size)
    const { rows } = await pool.query('SELECT length($1::text) AS n, md5($1::text) = md5(repeat(\'é\', $2)) AS same', [text, size])
    t.strictSame(rows, [{ n: size, same: true }], `${size} characters`)
  }
  const values = Array.from({ length: 3000 }, (_, i) => `row ${i} ${'x'.repeat(40)}`)
  const { rows } = await pool.query(
    `SELECT count(*)::integer AS n FROM (VALUES ${values.map((_, i) => `($${i + 1}::text)`).join(', ')}) AS v (t)`, values)
  t.strictSame(rows, [{ n: 3000 }], 'a statement with 3000 parameters')
})

t.test('bytes that are not PostgreSQL are passed on, and the server goes on', async (t) => {
  const server = await shared
  const { port } = new URL(server.connectionString)
  const socket = connect(Number(port), '127.0.0.1')
  const answer = new Promise<Buffer>((resolve) => socket.once('data', resolve))
  socket.write(Buffer.from([0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8]))
  t.ok((await answer).length > 0, 'PGlite answers it as it will')
  socket.destroy()
  const pool = new pg.Pool({ connectionString: server.connectionString, max: 1 })
  t.teardown(() => pool.end())
  t.strictSame((await pool.query('SELECT 8 AS n')).rows, [{ n: 8 }])
})

/** A loopback port that was free a moment ago. */
async function freePort (): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

t.test('stops; a data directory keeps the data across restarts, on the port asked for', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'tablecrud-embedded-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const port = await freePort()

  const first = await startEmbeddedPostgres({ dataDir, port })
  t.equal(first.connectionString, `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`)
  const pool = new pg.Pool({ connectionString: first.connectionString, max: 1 })
  await pool.query('CREATE TABLE kept (id integer PRIMARY KEY, name text)')
  await pool.query("INSERT INTO kept VALUES (1, 'Alien'), (2, 'Heat')")
  await pool.end()
  await first.stop()
  const late = new pg.Client({ connectionString: first.connectionString })
  await t.rejects(late.connect(), { code: 'ECONNREFUSED' }, 'nothing listens after stop')

  const second = await startEmbeddedPostgres({ dataDir })
  const again = new pg.Pool({ connectionString: second.connectionString, max: 1 })
  t.strictSame((await again.query('SELECT id, name FROM kept ORDER BY id')).rows, [{ id: 1, name: 'Alien' }, { id: 2, name: 'Heat' }])
  await again.end()
  await second.stop()
})

t.test('starts from initial data: a data directory saved by dumpDataDir', async (t) => {
  const { PGlite } = await import('@electric-sql/pglite')
  const saved = await PGlite.create()
  await saved.exec("CREATE TABLE seeded (name text); INSERT INTO seeded VALUES ('Alien')")
  const data = await saved.dumpDataDir('none')
  await saved.close()
  const server = await startEmbeddedPostgres({ initialData: data })
  t.teardown(() => server.stop())
  t.strictSame(await seeded(server.connectionString), [{ name: 'Alien' }])

  t.test('and from the new-database image in the cache folder', async (t) => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'tablecrud-cache-'))
    t.teardown(() => rm(cacheDir, { recursive: true, force: true }))
    await writeFile(join(cacheDir, `pglite-${await pgliteVersion()}.tar`), Buffer.from(await data.arrayBuffer()))
    const cached = await startEmbeddedPostgres({ cacheDir })
    t.teardown(() => cached.stop())
    t.strictSame(await seeded(cached.connectionString), [{ name: 'Alien' }], 'the image is what the server holds')
  })
})

const seeded = async (connectionString: string): Promise<unknown[]> => {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try { return (await client.query('SELECT name FROM seeded')).rows } finally { await client.end() }
}

const pgliteVersion = async (): Promise<string> =>
  (JSON.parse(await readFile(join('node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version: string }).version

t.test('the cache of the new-database image', async (t) => {
  t.equal(defaultCacheDir(), join(process.cwd(), 'node_modules', '.cache', 'fastify-tablecrud'), 'by default beside PGlite, in node_modules/.cache')

  t.test('by default: the image in node_modules/.cache, made or read there', async (t) => {
    const server = await startEmbeddedPostgres()
    t.teardown(() => server.stop())
    t.ok((await readdir(defaultCacheDir())).includes(`pglite-${await pgliteVersion()}.tar`))
  })

  t.test('a first start makes it, and saves it for the next', async (t) => {
    const cacheDir = join(await mkdtemp(join(tmpdir(), 'tablecrud-cache-')), 'new', 'folder')
    t.teardown(() => rm(join(cacheDir, '..', '..'), { recursive: true, force: true }))
    const server = await startEmbeddedPostgres({ cacheDir })
    t.teardown(() => server.stop())
    t.strictSame(await readdir(cacheDir), [`pglite-${await pgliteVersion()}.tar`], 'the image, and no partial file')
    const client = new pg.Client({ connectionString: server.connectionString })
    await client.connect()
    t.strictSame((await client.query('SELECT 1 AS n')).rows, [{ n: 1 }])
    await client.end()
  })

  t.test('a folder it cannot write only costs the time: the server starts', async (t) => {
    const file = join(await mkdtemp(join(tmpdir(), 'tablecrud-cache-')), 'a-file')
    t.teardown(() => rm(join(file, '..'), { recursive: true, force: true }))
    await writeFile(file, 'not a folder')
    const server = await startEmbeddedPostgres({ cacheDir: join(file, 'cache') })
    t.teardown(() => server.stop())
    const client = new pg.Client({ connectionString: server.connectionString })
    await client.connect()
    t.strictSame((await client.query('SELECT 1 AS n')).rows, [{ n: 1 }])
    await client.end()
  })
})
