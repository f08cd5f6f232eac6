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
  const db = await PGlite.create(options.dataDir)
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: options.port ?? 0 })
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
