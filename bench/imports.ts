/**
 * What each step of a TableCRUD server's start-up adds to its memory: run compiled (bench/.build,
 * see bench/memory.ts) with `--expose-gc`; after each step a GC, then RSS and the V8 heap in use.
 * The first steps are the hand-written server's own (Fastify, pg), so what follows is
 * TableCRUD's. Prints one JSON line per step to stdout.
 */
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { getHeapSpaceStatistics } from 'node:v8'

const mb = (n: number): number => Math.round(n / 1048576 * 10) / 10
function step (name: string): void {
  globalThis.gc?.()
  const { rss, heapUsed, heapTotal, external } = process.memoryUsage()
  // The young generation's size: it grows while much of what is allocated survives, as at start-up.
  const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size
  console.log(JSON.stringify({ step: name, rss: mb(rss), heapUsed: mb(heapUsed), heapTotal: mb(heapTotal), newSpace: mb(newSpace), external: mb(external) }))
}

step('node, fastify and @fastify/postgres imported')
const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } })
await app.register(fastifyPostgres, { connectionString: process.env.BENCH_DATABASE_URL!, max: 10 })
await app.ready()
step('fastify app with a pool, ready (the hand-written server before its routes)')
// The dependencies the package imports from node_modules (TypeBox is linked into it: scripts/bundle.mjs).
for (const name of (process.env.BENCH_IMPORTS ?? 'ajv ajv-formats fast-json-stringify @fastify/error otpauth fastify-plugin').split(' ')) {
  await import(name)
  step(`import ${name}`)
}
const { crudRoutes } = await import('./cases.js')
step('import fastify-tablecrud (index.js) and the bench tables')
const crud = Fastify({ routerOptions: { ignoreTrailingSlash: true } })
await crud.register(fastifyPostgres, { connectionString: process.env.BENCH_DATABASE_URL!, max: 10 })
await crudRoutes(crud)
step('20 tables registered (not ready)')
await crud.ready()
step('ready')
await app.close()
await crud.close()
