import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyStatic from '@fastify/static'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { localMediaStorage } from '../../../lib/media/local.js'
import { DEFAULT_CHARACTERS } from '../../../lib/media/names.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { useDatabase } from '../../helpers/app.js'

// Issue 27 point 7: the media routes' smaller defects.
const db = await testDatabase(t)
const film = defineTable('edge_film', { poster: column.varchar({ length: 200, null: true }) })
const poster = film.columnMap.get('poster')!

async function tempDir (): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tc-sec27-media-'))
  t.teardown(async () => await rm(dir, { recursive: true, force: true }))
  return dir
}

async function app (mediaPath: string, readOnly = false): Promise<FastifyInstance> {
  const server = Fastify()
  await useDatabase(server, db)
  await server.register(tableCrud, { table: film, prefix: '/films', readOnly, mediaStorage: [localMediaStorage({ column: poster, mediaPath })] })
  t.teardown(async () => await server.close())
  return server
}

const BOUNDARY = '----sec27-boundary'
const upload = (name: string): { payload: string, headers: Record<string, string> } => ({
  headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  payload: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="column"\r\n\r\nposter\r\n` +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: image/png\r\n\r\npng\r\n--${BOUNDARY}--\r\n`
})

t.test('a media folder path that is a file: 503 TABLECRUD_ERR_MEDIA_UNAVAILABLE with Retry-After, not a 500', async (t) => {
  const file = join(await tempDir(), 'not-a-folder')
  await writeFile(file, 'x')
  const res = await (await app(file)).inject({ method: 'POST', url: '/films/media/', ...upload('poster.png') })
  t.equal(res.statusCode, 503)
  t.same(res.json(), { statusCode: 503, code: 'TABLECRUD_ERR_MEDIA_UNAVAILABLE', error: 'Service Unavailable', message: 'The media storage is unavailable; try again shortly.' })
  t.match(res.headers['retry-after'], /^\d+$/)
})

t.test('OPTIONS and TRACE on /media/ and /media/url/: 204 and 405 with the path\'s own Allow; deeper paths and unknown methods 404', async (t) => {
  const writable = await app(await tempDir())
  const readOnly = await app(await tempDir(), true)
  const cases: Array<[FastifyInstance, string, string]> = [
    [writable, '/films/media/', 'POST'],
    [writable, '/films/media/url/', 'GET, HEAD'],
    [readOnly, '/films/media/url/', 'GET, HEAD']
  ]
  for (const [server, url, allow] of cases) {
    const options = await server.inject({ method: 'OPTIONS', url })
    t.same([options.statusCode, options.headers.allow, options.body], [204, allow, ''], `OPTIONS ${url}`)
    const trace = await server.inject({ method: 'TRACE', url })
    t.same([trace.statusCode, trace.headers.allow, trace.json().code], [405, allow, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED'], `TRACE ${url}`)
  }
  // Read-only, /media/ allows nothing: OPTIONS is refused too, as on a disabled /aggregate/.
  for (const method of ['OPTIONS', 'TRACE', 'POST'] as const) {
    const refused = await readOnly.inject({ method, url: '/films/media/' })
    t.same([refused.statusCode, refused.headers.allow, refused.json()], [405, '', {
      statusCode: 405, code: 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', error: 'Method Not Allowed', message: `${method} is not allowed on /films/media/.`
    }], `${method} /films/media/, read-only`)
  }
  for (const [method, url] of [['GET', '/films/media/url/x/'], ['POST', '/films/media/x/'], ['PROPFIND', '/films/media/url/']] as const) {
    const missing = await writable.inject({ method, url })
    t.same([missing.statusCode, missing.json().code], [404, 'TABLECRUD_ERR_ROUTE_NOT_FOUND'], `${method} ${url}`)
  }
})

t.test('keys with + ; and the other characters a path segment may hold get URLs the docs\' @fastify/static set-up serves', async (t) => {
  const mediaPath = await tempDir()
  const storage = localMediaStorage({ column: poster, mediaPath, allowedCharacters: [...DEFAULT_CHARACTERS, '+', ';', ',', '=', '@', '$', '&'] })
  const server = Fastify()
  // docs/media.md, "Local set-up and serving files".
  await server.register(fastifyStatic, { root: mediaPath, prefix: '/media/', index: false })
  t.teardown(async () => await server.close())
  for (const name of ['a+b.png', 'a;b.png', 'c++ (v2),x=y@z$1&2.png', 'plain name.png']) {
    const key = await storage.storeFile(name, Readable.from([Buffer.from(name)]))
    const url = await storage.generateFileUrl(key)
    t.notMatch(url, /%2B|%3B/i, `${url}: + and ; as they are`)
    const res = await server.inject(url)
    t.equal(res.statusCode, 200, `${name} is served at ${url}`)
    t.equal(res.body, name)
  }
  t.equal(await storage.generateFileUrl('a b#c?.png'), '/media/a%20b%23c%3F.png', 'what would end or split a path stays encoded')
})
