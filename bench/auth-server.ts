/**
 * The by-id route of the bench's movie table behind `tokenAuth` and behind `jwtAuth`, in a
 * process of its own (bench/auth.ts measures its CPU): the auth lookup made on every protected
 * request, plus the read.
 */
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { jwtAuth, tableCrud, tokenAuth } from '../index.js'
import { movie } from './cases.js'

export const JWT_SECRET = 'the-bench-jwt-secret-of-32-bytes!'

const app = Fastify()
await app.register(fastifyPostgres, { connectionString: process.env.BENCH_DATABASE_URL!, max: 10 })
await app.register(async (api) => {
  await api.register(tokenAuth)
  await api.register(tableCrud, { table: movie, prefix: '/movies' })
}, { prefix: '/token' })
await app.register(async (api) => {
  await api.register(jwtAuth, { secret: JWT_SECRET })
  await api.register(tableCrud, { table: movie, prefix: '/movies' })
}, { prefix: '/jwt' })
const url = await app.listen({ port: 0, host: '127.0.0.1' })
process.send!({ url })
process.on('disconnect', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
