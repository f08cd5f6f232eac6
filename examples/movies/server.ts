/**
 * `npm start`: the movies demo on 127.0.0.1:3000 (PORT, HOST and DATABASE_URL honoured). Without
 * DATABASE_URL it runs on the embedded PostgreSQL, in memory. With REDIS_URL the rate limits are
 * counted in Redis, shared by every instance. PREPARED_STATEMENTS=unnamed when DATABASE_URL is a
 * transaction-mode pooler's.
 */
import { mkdtemp } from 'node:fs/promises'
import { Redis } from 'ioredis'
import { startEmbeddedPostgres } from '../../index.js'
import { buildDemo, DEFAULT_MEDIA_PATH, DEMO_USER } from './app.js'

function preparedStatements (value: string | undefined): 'named' | 'unnamed' | undefined {
  if (value === undefined || value === '') return undefined
  if (value === 'named' || value === 'unnamed') return value
  console.error(`PREPARED_STATEMENTS=${value}: it is named (the default) or unnamed (behind a transaction-mode pooler).`)
  process.exit(1)
}

// Before anything starts: a wrong value is one line, not a half-started demo.
const prepared = preparedStatements(process.env.PREPARED_STATEMENTS)
const embedded = process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === '' ? await startEmbeddedPostgres() : null
const redis = process.env.REDIS_URL === undefined || process.env.REDIS_URL === '' ? undefined : new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1 })
// The limiter logs an outage once; ioredis would print every failed reconnection.
redis?.on('error', () => {})
// A folder of its own unless told: two demos on one machine must not share (and clean) one.
const mediaPath = process.env.MEDIA_PATH ?? await mkdtemp(`${DEFAULT_MEDIA_PATH}-`)
const app = await buildDemo({
  redis,
  connectionString: embedded?.connectionString ?? process.env.DATABASE_URL!,
  max: embedded === null ? 10 : 1,
  secret: process.env.JWT_SECRET,
  mfaKey: process.env.MFA_KEY,
  mediaPath,
  preparedStatements: prepared
})
const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 3000)
let url: string
try {
  url = await app.listen({ host, port })
} catch (error) {
  if ((error as { code?: string }).code !== 'EADDRINUSE') throw error
  // The usual first-hour mistake (a demo still running): one line that says what to do, not a stack.
  console.error(`Port ${port} on ${host} is in use (another \`npm start\`?): stop that one, or run PORT=${port + 1} npm start.`)
  await app.close()
  await embedded?.stop()
  process.exit(1)
}

console.log(`fastify-tablecrud movies demo on ${url} (${embedded === null ? 'DATABASE_URL' : 'embedded PostgreSQL, in memory'})

  Docs (Swagger UI)    ${url}/docs
  Public, read-only    ${url}/api/movies/  /api/directors/  /api/studios/  /api/roles/
                       e.g. ${url}/api/movies/?__visible_fields=name,director.name&__readable=true&__order=-rating
  Writable (JWT)       ${url}/api/admin/<table>/
  Writable (token)     ${url}/api/token/<table>/
  Browser login        ${url}/login/   (${DEMO_USER.username} / ${DEMO_USER.password}), then ${url}/me/ shows who is logged in
  Log out              ${url}/logout/
  Sign up              ${url}/register/   Change password ${url}/change-password/   MFA set-up ${url}/mfa/

  Get a JWT:    curl -s -X POST ${url}/login/jwt/ -H 'content-type: application/json' -d '{"username":"${DEMO_USER.username}","password":"${DEMO_USER.password}"}'
  Get a token:  curl -s -X POST ${url}/login/token/ -H 'content-type: application/json' -d '{"username":"${DEMO_USER.username}","password":"${DEMO_USER.password}"}'
  Then:         curl -s -X PATCH ${url}/api/admin/movies/1/ -H "authorization: Bearer <token>" -H 'content-type: application/json' -d '{"rating": 9.5}'

Routes under each table prefix (writable ones under /api/admin and /api/token):
  GET / (list, filters, ordering, paging)   POST /   DELETE / (bulk, filtered)
  GET /:id/   PUT /:id/   PATCH /:id/   DELETE /:id/
  GET /count/   GET /ids/   GET /new/   GET /references/   GET /schema/
Movie posters:  POST /api/admin/movies/media/ (multipart: column=poster, file=<image>, or "Try it out" in the docs),
                GET /api/movies/media/url/?column=poster&file_key=<key>; files in ${mediaPath}, served at /media/
Logins: POST /login/jwt/, POST /login/token/, POST /login/ (session cookie); POST /logout/.   OpenAPI document: ${url}/docs/json

Ctrl-C stops.`)

let stopping = false
async function stop (): Promise<void> {
  if (stopping) return
  stopping = true
  await app.close()
  redis?.disconnect()
  await embedded?.stop()
  process.exit(0)
}
process.on('SIGINT', () => { stop().catch(() => process.exit(1)) })
process.on('SIGTERM', () => { stop().catch(() => process.exit(1)) })
