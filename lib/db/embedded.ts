import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Socket } from 'node:net'
import path from 'node:path'

export interface EmbeddedPostgres {
  /** A `postgres://` URL for pg; use a pool of one connection (`max: 1`). */
  connectionString: string
  stop: () => Promise<void>
}

export interface EmbeddedOptions {
  /** Loopback port; 0 (default) lets the system choose. */
  port?: number
  /** A directory to keep the data in; in memory when absent. */
  dataDir?: string
  /**
   * A data directory saved by PGlite's `dumpDataDir()` to start from, for a new database:
   * about a second instead of the five initdb takes (the tests start one server per file).
   */
  initialData?: Blob
  /**
   * Where a server in memory keeps the image of a new database: the first start makes it, the
   * next ones load it (about a second where PGlite's initdb takes five). Default
   * `node_modules/.cache/fastify-tablecrud`, beside PGlite; `false`: initdb at every start.
   * Unused with `dataDir` or `initialData`; a folder it cannot write only costs the time.
   */
  cacheDir?: string | false
}

/** A simple-protocol Query message. */
function queryMessage (sql: string): Uint8Array {
  const text = Buffer.from(sql + '\0')
  const message = Buffer.alloc(5 + text.length)
  message.write('Q', 0)
  message.writeInt32BE(4 + text.length, 1)
  text.copy(message, 5)
  return message
}

/** Sync ends an extended-protocol exchange a client left half done. */
const SESSION_RESET = [Uint8Array.of(0x53, 0, 0, 0, 4), queryMessage('ROLLBACK'), queryMessage('DEALLOCATE ALL')]

const PROTOCOL_3 = 196608

/** libpq's rule for `options`: words split at spaces, a backslash keeps the next character. */
function optionWords (options: string): string[] {
  return (options.match(/(?:\\.|[^\s\\])+/g) ?? []).map((word) => word.replace(/\\(.)/g, '$1'))
}

/** The settings a startup message asks for through `options` (`-c name=value`, `--name=value`). */
export function startupSettings (startup: Buffer): Array<[string, string]> {
  const fields = startup.toString('utf8', 8).split('\0')
  const at = fields.findIndex((field, i) => i % 2 === 0 && field === 'options')
  const words = at === -1 ? [] : optionWords(fields[at + 1]!)
  const settings: Array<[string, string]> = []
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    const setting = word === '-c' ? words[++i] : word.startsWith('-c') ? word.slice(2) : word.startsWith('--') ? word.slice(2) : undefined
    const equals = setting?.indexOf('=') ?? -1
    if (equals > 0) settings.push([setting!.slice(0, equals).replaceAll('-', '_'), setting!.slice(equals + 1)])
  }
  return settings
}

/**
 * pglite-socket 0.0.20 hands each TCP chunk to PGlite as if it held whole protocol messages: a
 * message spread over two chunks (over about 64 KiB: a large INSERT, a long text value) crashes
 * the WebAssembly, and the process with it (fixed upstream in pglite-socket PR #873). This
 * regroups a socket's data into whole messages before the handler sees it, and hands the
 * startup message to `onStartup` before PGlite sees it.
 */
function wholeMessages (socket: Socket, onStartup: (startup: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0)
  let typed = false // the startup message and the requests before it have no type byte
  const emit = socket.emit.bind(socket)
  socket.emit = ((event: string | symbol, ...args: unknown[]): boolean => {
    if (event !== 'data') return emit(event, ...args)
    pending = pending.length === 0 ? args[0] as Buffer : Buffer.concat([pending, args[0] as Buffer])
    let end = 0
    while (pending.length - end >= (typed ? 5 : 8)) {
      const size = typed ? 1 + pending.readInt32BE(end + 1) : pending.readInt32BE(end)
      if (size < (typed ? 5 : 8)) { end = pending.length; break } // not PostgreSQL: let PGlite refuse it
      if (pending.length - end < size) break
      if (!typed && pending.readInt32BE(end + 4) === PROTOCOL_3) {
        typed = true
        onStartup(pending.subarray(end, end + size))
      }
      end += size
    }
    if (end === 0) return true
    const complete = pending.subarray(0, end)
    pending = pending.subarray(end)
    return emit('data', complete)
  }) as Socket['emit']
}

/** Where PGlite is installed: its package folder. */
function pgliteFolder (): string {
  // The package's main file is <folder>/dist/index.cjs; its exports do not include package.json.
  return path.dirname(path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')))
}

/** The default `cacheDir`: node_modules/.cache/fastify-tablecrud of the node_modules PGlite is in. */
export function defaultCacheDir (): string {
  return path.join(pgliteFolder(), '..', '..', '.cache', 'fastify-tablecrud')
}

/**
 * The data directory of a new database, as `dumpDataDir` saves it, for this PGlite version:
 * read from `folder`, or made by initdb and saved there under a temporary name and renamed
 * (servers starting at once never read half of it).
 */
async function newDatabaseImage (folder: string): Promise<Blob> {
  const { version } = JSON.parse(await readFile(path.join(pgliteFolder(), 'package.json'), 'utf8')) as { version: string }
  const file = path.join(folder, `pglite-${version}.tar`)
  try {
    return new Blob([await readFile(file)])
  } catch {
    // Not made yet: made below.
  }
  const { PGlite } = await import('@electric-sql/pglite')
  const db = await PGlite.create()
  const data = await db.dumpDataDir('none')
  await db.close()
  const partial = `${file}.${process.pid}`
  try {
    await mkdir(folder, { recursive: true })
    await writeFile(partial, Buffer.from(await data.arrayBuffer()))
    await rename(partial, file)
  } catch {
    // A folder it cannot write: the next start runs initdb again.
  }
  return data
}

/** A SQL string literal. */
function literal (value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}

/**
 * Starts PGlite (PostgreSQL compiled to WebAssembly) behind a PostgreSQL wire-protocol socket
 * on 127.0.0.1, so the same `pg` code serves it and a real server. PGlite is one session:
 * give it a pool of one connection, or concurrent transactions interleave.
 * @example
 * const db = await startEmbeddedPostgres()
 * await app.register(fastifyPostgres, { connectionString: db.connectionString, max: 1 })
 * app.addHook('onClose', db.stop)
 */
export async function startEmbeddedPostgres (options: EmbeddedOptions = {}): Promise<EmbeddedPostgres> {
  // Optional peer dependencies: only the embedded path needs them.
  const { PGlite } = await import('@electric-sql/pglite')
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket')
  // The cache only for a new database in memory: with `dataDir` or `initialData` it is not looked up.
  const initialData = options.initialData ?? (options.dataDir === undefined && options.cacheDir !== false ? await newDatabaseImage(options.cacheDir ?? defaultCacheDir()) : undefined)
  const db = await PGlite.create({ dataDir: options.dataDir, loadDataDir: initialData })
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: options.port ?? 0 })
  const initialSearchPath = (await db.query<{ search_path: string }>('SHOW search_path')).rows[0]!.search_path
  const sessionReset = [...SESSION_RESET, queryMessage(`SET search_path TO ${initialSearchPath}`)]
  // PGlite is one session that every connection shares in turn: a client that leaves in a
  // transaction, with prepared statements or with its own settings would hand them to the next
  // one (pg's named statements then fail with "already exists"). Each connection starts
  // without them, and with the settings its startup message asks for (`options=-c
  // search_path=...` in the URL), as on a real server, which PGlite itself ignores. The reset
  // is synchronous, so it runs before the new client's first message. (Not DISCARD ALL: its
  // RESET ALL leaves PGlite with search_path pg_catalog.)
  const startup = (message: Buffer): void => {
    for (const [name, value] of startupSettings(message)) {
      db.execProtocolRawSync(queryMessage(`SELECT set_config(${literal(name)}, ${literal(value)}, false)`))
    }
  }
  const internals = server as unknown as { handleConnection: (socket: Socket) => Promise<void> }
  const handleConnection = internals.handleConnection.bind(server)
  internals.handleConnection = async (socket) => {
    wholeMessages(socket, startup)
    await handleConnection(socket)
  }
  server.addEventListener('connection', () => {
    for (const message of sessionReset) db.execProtocolRawSync(message)
  })
  await server.start()
  const address = server.getServerConn()
  return {
    connectionString: `postgres://postgres@${address}/postgres?sslmode=disable`,
    async stop () {
      await server.stop()
      await db.close()
    }
  }
}
