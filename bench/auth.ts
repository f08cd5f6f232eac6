/**
 * CPU per request of `GET /movies/1234/` behind tokenAuth and behind jwtAuth (the auth lookup
 * and the read), on the bench's data: `node --import tsx bench/auth.ts`. Needs
 * BENCH_DATABASE_URL (or DATABASE_URL); seeds the movie table like bench/run.ts when it is
 * missing, and a user with a token. BENCH_SECONDS (default 5) per case, three rounds each.
 */
import { spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import autocannon from 'autocannon'
import { createTables, createToken, createUser, tokenTable, userTable } from '../index.js'
import { seed } from './cases.js'
import { cpuMicros } from './measure.js'

const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL!
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const JWT_SECRET = 'the-bench-jwt-secret-of-32-bytes!'

const admin = new pg.Pool({ connectionString: DATABASE_URL })
const exists = (await admin.query("SELECT to_regclass('bench_movie') AS t")).rows[0].t !== null
if (!exists) await seed(admin)
await createTables(admin, [userTable, tokenTable])
await admin.query("DELETE FROM auth_token WHERE \"user\" IN (SELECT id FROM auth_user WHERE username = 'bench')")
await admin.query("DELETE FROM auth_user WHERE username = 'bench'")
const user = await createUser(admin, { username: 'bench', password: 'bench-password' }, { bcryptCost: 4 })
const token = await createToken(admin, user.id)
await admin.end()

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
const now = Math.floor(Date.now() / 1000)
const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ user_id: user.id, iat: now, exp: now + 3600 })}`
const jwt = `${body}.${createHmac('sha256', JWT_SECRET).update(body).digest('base64url')}`

const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./auth-server.ts', import.meta.url))], {
  env: { ...process.env, BENCH_DATABASE_URL: DATABASE_URL }, stdio: ['ignore', 'inherit', 'inherit', 'ipc']
})
const url = await new Promise<string>((resolve) => child.once('message', (m) => resolve((m as { url: string }).url)))

for (const [label, path, authorization] of [['tokenAuth', '/token/movies/1234/', `Bearer ${token}`], ['jwtAuth', '/jwt/movies/1234/', `Bearer ${jwt}`]] as const) {
  const figures: string[] = []
  // A warm-up round, so every connection has prepared its statements, then three measured.
  for (let round = 0; round < 4; round++) {
    const before = cpuMicros(child.pid!)
    const result = await autocannon({ url: url + path, connections: 10, duration: round === 0 ? 2 : SECONDS, headers: { authorization } })
    const cpu = cpuMicros(child.pid!) - before
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${label}: ${result.non2xx} non-2xx, ${result.errors} errors`)
    if (round > 0) figures.push(`${Math.round(result.requests.average)} req/s, ${(cpu / result.requests.total).toFixed(0)} µs CPU/request`)
  }
  console.log(`${label} by id: ${figures.join('; ')}`)
}
child.disconnect()
