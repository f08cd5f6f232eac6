/**
 * `npm start`: the movies demo on 127.0.0.1:3000 (PORT, HOST and DATABASE_URL honoured). Without
 * DATABASE_URL it runs on the embedded PostgreSQL, in memory.
 */
import { startEmbeddedPostgres } from '../../index.js'
import { buildDemo, DEMO_USER } from './app.js'

const embedded = process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === '' ? await startEmbeddedPostgres() : null
const app = await buildDemo({
  connectionString: embedded?.connectionString ?? process.env.DATABASE_URL!,
  max: embedded === null ? 10 : 1,
  secret: process.env.JWT_SECRET
})
const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 3000)
const url = await app.listen({ host, port })

console.log(`fastify-tablecrud movies demo on ${url} (${embedded === null ? 'DATABASE_URL' : 'embedded PostgreSQL, in memory'})

  Docs (Swagger UI)    ${url}/docs
  Public, read-only    ${url}/api/movies/  /api/directors/  /api/studios/  /api/roles/
                       e.g. ${url}/api/movies/?__visible_fields=name,director.name&__readable=true&__order=-rating
  Writable (JWT)       ${url}/api/admin/<table>/
  Writable (token)     ${url}/api/token/<table>/

  Get a JWT:    curl -s -X POST ${url}/login/jwt -H 'content-type: application/json' -d '{"username":"${DEMO_USER.username}","password":"${DEMO_USER.password}"}'
  Get a token:  curl -s -X POST ${url}/login/token -H 'content-type: application/json' -d '{"username":"${DEMO_USER.username}","password":"${DEMO_USER.password}"}'
  Then:         curl -s -X PATCH ${url}/api/admin/movies/1/ -H "authorization: Bearer <token>" -H 'content-type: application/json' -d '{"rating": 9.5}'

Routes under each table prefix (writable ones under /api/admin and /api/token):
  GET / (list, filters, ordering, paging)   POST /   DELETE / (bulk, filtered)
  GET /:id/   PUT /:id/   PATCH /:id/   DELETE /:id/
  GET /count/   GET /ids/   GET /new/   GET /references/   GET /schema/
Logins: POST /login/jwt, POST /login/token.   OpenAPI document: ${url}/docs/json

Ctrl-C stops.`)

let stopping = false
async function stop (): Promise<void> {
  if (stopping) return
  stopping = true
  await app.close()
  await embedded?.stop()
  process.exit(0)
}
process.on('SIGINT', () => { stop().catch(() => process.exit(1)) })
process.on('SIGTERM', () => { stop().catch(() => process.exit(1)) })
