/**
 * The cost of the `rateLimit` plugin on the list: TableCRUD with it (memory store, and Redis at
 * REDIS_URL when it answers) against TableCRUD without it, ABBA, both in the bench's process.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import autocannon from 'autocannon'
import { Redis } from 'ioredis'
import { rateLimit, tableCrud } from '../index.js'
import { movie } from './cases.js'

/** A limit no run reaches: every request is counted, none refused. */
const UNREACHED = 1e9

export async function rateLimitCost (connectionString: string, seconds: number, connections: number): Promise<string[]> {
  const server = async (setup: (app: FastifyInstance) => Promise<void>): Promise<{ app: FastifyInstance, url: string }> => {
    const app = Fastify()
    await app.register(fastifyPostgres, { connectionString, max: connections })
    await setup(app)
    return { app, url: await app.listen({ port: 0, host: '127.0.0.1' }) }
  }
  const measure = async (url: string): Promise<number> => {
    const result = await autocannon({ url: url + '/movies/', connections, duration: seconds })
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`rate limit: ${result.non2xx} non-2xx, ${result.errors} errors`)
    return result.requests.average
  }
  const crud = await server(async (app) => { await app.register(tableCrud, { table: movie, prefix: '/movies' }) })
  const limited = await server(async (app) => {
    await app.register(rateLimit, { max: UNREACHED })
    await app.register(tableCrud, { table: movie, prefix: '/movies' })
  })
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1, lazyConnect: true })
  redis.on('error', () => {})
  const redisUp = await redis.connect().then(() => true, () => false)
  const nameSpace = `tablecrud-bench-${process.pid}-`
  const withRedis = redisUp
    ? await server(async (app) => {
      await app.register(rateLimit, { max: UNREACHED, redis, nameSpace })
      await app.register(tableCrud, { table: movie, prefix: '/movies' })
    })
    : null
  const lines = ['| rate limit on the list, first page of 15 | without req/s | with req/s | ratio |', '|---|---:|---:|---:|']
  const targets: Array<[string, { url: string } | null]> = [['memory store', limited], ['Redis store', withRedis]]
  for (const [label, target] of targets) {
    if (target === null) {
      lines.push(`| ${label} | - | - | skipped: no Redis at REDIS_URL |`)
      continue
    }
    const a1 = await measure(crud.url)
    const b1 = await measure(target.url)
    const b2 = await measure(target.url)
    const a2 = await measure(crud.url)
    const a = (a1 + a2) / 2
    const b = (b1 + b2) / 2
    lines.push(`| ${label} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(2)} |`)
  }
  await crud.app.close()
  await limited.app.close()
  await withRedis?.app.close()
  if (redisUp) {
    const keys = await redis.keys(`${nameSpace}*`)
    if (keys.length > 0) await redis.del(...keys)
  }
  redis.disconnect()
  return lines
}
