import net, { type AddressInfo } from 'node:net'

/**
 * A TCP forwarder to the database, to cut it away from an app while the server itself keeps
 * serving other test files: `cut()` is the outage (every open connection cut, each new one
 * closed as it comes), `restore()` the return, `close()` the end. The port stays held through
 * the outage: freed, another test file's listener given the same port could answer the app.
 */
export class TcpProxy {
  private server: net.Server | null = null
  private cutOff = false
  private readonly sockets = new Set<net.Socket>()

  constructor (private readonly host: string, private readonly port: number) {}

  /** Listens on any free port and resolves to it. */
  async listen (): Promise<number> {
    const server = net.createServer((client) => {
      if (this.cutOff) return client.destroy()
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
      server.listen(0, '127.0.0.1', () => { server.off('error', reject); resolve() })
    })
    this.server = server
    return (server.address() as AddressInfo).port
  }

  /** The outage: every open connection cut, and each new one closed as soon as it is made. */
  cut (): void {
    this.cutOff = true
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
  }

  /** The return: new connections reach the database again. */
  restore (): void {
    this.cutOff = false
  }

  async close (): Promise<void> {
    const server = this.server
    this.server = null
    if (server === null) return
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    this.cut()
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
