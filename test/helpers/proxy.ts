import net, { type AddressInfo } from 'node:net'

/**
 * A TCP forwarder to the database, to cut it away from an app while the server itself keeps
 * serving other test files: `close()` is the outage (no new connections, every open one cut),
 * `listen(port)` on the same port the return.
 */
export class TcpProxy {
  private server: net.Server | null = null
  private readonly sockets = new Set<net.Socket>()

  constructor (private readonly host: string, private readonly port: number) {}

  /** Listens on `port` (0: any free one) and resolves to the port. */
  async listen (port = 0): Promise<number> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.port, this.host)
      for (const socket of [client, upstream]) {
        this.sockets.add(socket)
        socket.on('close', () => this.sockets.delete(socket))
        socket.on('error', () => socket.destroy())
      }
      client.pipe(upstream).pipe(client)
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => { server.off('error', reject); resolve() })
    })
    this.server = server
    return (server.address() as AddressInfo).port
  }

  async close (): Promise<void> {
    const server = this.server
    this.server = null
    if (server === null) return
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
    await closed
  }
}

/** `connectionString` with its host and port replaced by the proxy's. */
export function through (connectionString: string, port: number): string {
  const url = new URL(connectionString)
  url.hostname = '127.0.0.1'
  url.port = String(port)
  return url.toString()
}
