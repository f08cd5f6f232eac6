/**
 * One server of the bench, in its own process so its CPU time and memory are its own:
 * compiled to bench/.build by bench/measure.ts, started as `server.js crud|hand|platformatic`. Tells the
 * parent its address over IPC.
 */
import type { FastifyInstance } from 'fastify'
import type { App } from './platformatic/server.js'
import { Session } from 'node:inspector/promises'
import { writeFileSync } from 'node:fs'
import { getHeapSpaceStatistics } from 'node:v8'

const kind = process.argv[2]
const pool = Number(process.env.BENCH_POOL ?? 10)

/** The hand-written server and TableCRUD: one Fastify application each, on @fastify/postgres. */
async function fastifyApp (): Promise<FastifyInstance> {
  const { default: Fastify } = await import('fastify')
  const { default: fastifyPostgres } = await import('@fastify/postgres')
  // Both servers take paths with and without the trailing slash from the router: TableCRUD then
  // mounts each route once instead of twice (docs/performance.md).
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } })
  // With a replica, the hand-written server sends its statements there: the cases run on a replica
  // are reads, and a developer points the read routes at the replica's pool.
  const hand = kind !== 'crud'
  await app.register(fastifyPostgres, { connectionString: (hand ? process.env.BENCH_REPLICA : undefined) ?? process.env.BENCH_DATABASE_URL!, max: pool })
  // The topologies of SPEC §9 (bench/run.ts, bench/topologies.ts): statements unnamed for a
  // transaction-mode pooler, reads on a replica. pg's own statements are unnamed: the
  // hand-written server goes through PgBouncer as it is.
  if (!hand && (process.env.BENCH_PREPARED !== undefined || process.env.BENCH_REPLICA !== undefined)) {
    const { tablecrudDatabase } = await import('../index.js')
    await app.register(tablecrudDatabase, {
      preparedStatements: process.env.BENCH_PREPARED === 'unnamed' ? 'unnamed' : 'named',
      ...(process.env.BENCH_REPLICA === undefined ? {} : { replicas: [{ connectionString: process.env.BENCH_REPLICA, max: pool }] })
    })
  }
  // Each kind imports only its own routes: the hand-written server loads nothing of TableCRUD.
  await (hand ? (await import('./hand.js')).handRoutes(app) : (await import('./cases.js')).crudRoutes(app))
  return app
}

// Imported only by the kind that runs them: Platformatic DB brings its own Fastify, and the
// others' Fastify and pg would count in its memory and start-up.
const app: App = kind === 'platformatic'
  ? await (await import('./platformatic/server.js')).platformaticApp(process.env.BENCH_DATABASE_URL!, pool)
  : await fastifyApp()
const url = await app.listen({ port: 0, host: '127.0.0.1' })
process.send!({ url })
const session = new Session()
process.on('message', (message: string) => {
  (async () => {
    if (message === 'gc') {
      // Idle memory: what stays after a collection, not garbage the process has not yet swept.
      globalThis.gc?.()
    } else if (message.startsWith('stats:')) {
      // What the RSS is made of (bench/memory.ts): the V8 heap by space, and memory outside it.
      writeFileSync(message.slice('stats:'.length), JSON.stringify({ usage: process.memoryUsage(), spaces: getHeapSpaceStatistics() }))
    } else if (message === 'allocations:start') {
      // Sampled allocations that live through young-generation GCs (bench/profile.ts, BENCH_ALLOC=1):
      // what is promoted to the old generation, whose growth under load sets the peak RSS.
      session.connect()
      await session.post('HeapProfiler.enable')
      // Flags of V8's protocol that Node's types do not list yet.
      const sampling = { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false }
      await session.post('HeapProfiler.startSampling', sampling)
    } else if (message.startsWith('allocations:stop:')) {
      const { profile } = await session.post('HeapProfiler.stopSampling')
      writeFileSync(message.slice('allocations:stop:'.length), JSON.stringify(profile))
      session.disconnect()
    } else if (message === 'profile:start') {
      // Profiles of the load alone, without start-up (bench/profile.ts).
      session.connect()
      await session.post('Profiler.enable')
      await session.post('Profiler.setSamplingInterval', { interval: 200 })
      await session.post('Profiler.start')
    } else if (message.startsWith('profile:stop:')) {
      const { profile } = await session.post('Profiler.stop')
      writeFileSync(message.slice('profile:stop:'.length), JSON.stringify(profile))
      session.disconnect()
    } else if (message.startsWith('heap:')) {
      globalThis.gc?.()
      session.connect()
      const chunks: string[] = []
      const collect = (m: { params: { chunk: string } }): void => { chunks.push(m.params.chunk) }
      session.on('HeapProfiler.addHeapSnapshotChunk', collect)
      await session.post('HeapProfiler.takeHeapSnapshot')
      // Left listening, this snapshot's text would be in the next one.
      session.off('HeapProfiler.addHeapSnapshotChunk', collect)
      writeFileSync(message.slice('heap:'.length), chunks.join(''))
      session.disconnect()
    }
    process.send!({ done: message })
  })().catch((error: unknown) => { console.error(error); process.exit(1) })
})
process.on('disconnect', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
