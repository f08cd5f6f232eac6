import t from 'tap'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { S3Client } from '@aws-sdk/client-s3'
import { HttpError } from '../../../lib/errors.js'
import { localMediaStorage } from '../../../lib/media/local.js'
import { s3MediaStorage } from '../../../lib/media/s3.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { tableCrud, type TableCrudOptions } from '../../../plugins/crud/table-crud.js'
import { databaseHealth } from '../../../plugins/database.js'
import { openApi } from '../../../plugins/openapi.js'
import { buildApp } from '../../helpers/app.js'
import { testDatabase } from '../../helpers/db.js'
import { testS3 } from '../../helpers/s3.js'

/** POST `/media/` and GET `/media/url/` (SPEC §5.8). */

const film = defineTable('film', {
  title: column.varchar({ length: 100 }),
  poster: column.varchar({ length: 200, null: true }),
  stills: column.array(column.text())
})
const poster = film.columnMap.get('poster')!
const stills = film.columnMap.get('stills')!
const other = defineTable('other_film', { poster: column.text() })

const db = await testDatabase(t)
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as (options: { type: 'major' | 'minor', execution: 'sync' }) => void
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
type Teardown = { teardown: (fn: () => unknown) => void }

async function tempDir (t: Teardown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tc-f-media-'))
  t.teardown(async () => await rm(dir, { recursive: true, force: true }))
  return dir
}

/** Every entry under a folder, as paths relative to it. */
const tree = async (dir: string): Promise<string[]> => (await readdir(dir, { recursive: true })).sort()

type Part = { name: string, value: string } | { name: string, filename: string, data: Buffer | string, type?: string }
const BOUNDARY = '----tablecrud-test-boundary'

/** A multipart/form-data body, built by hand so any part (bad names included) can be sent. */
function form (parts: readonly Part[]): { payload: Buffer, headers: Record<string, string> } {
  const chunks: Buffer[] = []
  for (const part of parts) {
    const head = 'filename' in part
      ? `Content-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.type ?? 'application/octet-stream'}`
      : `Content-Disposition: form-data; name="${part.name}"`
    chunks.push(Buffer.from(`--${BOUNDARY}\r\n${head}\r\n\r\n`), Buffer.from('filename' in part ? part.data : part.value), Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }
}

async function filmApp (t: Teardown, options: Partial<TableCrudOptions>, setup?: (app: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  return await buildApp(t, db, [film], async (app) => {
    if (setup !== undefined) await setup(app)
    await app.register(tableCrud, { table: film, prefix: '/films', readOnly: false, ...options })
  })
}

async function upload (app: FastifyInstance, parts: readonly Part[]): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: '/films/media/', ...form(parts) })
}

const errorOf = (response: LightMyRequestResponse): Record<string, unknown> => response.json()
const media400 = (message: string): Record<string, unknown> => ({ statusCode: 400, code: 'TABLECRUD_ERR_MEDIA', error: 'Bad Request', message })

t.test('upload a file, then ask for its URL', async (t) => {
  const root = await tempDir(t)
  const dir = join(root, 'posters')
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })] })
  const response = await upload(app, [{ name: 'column', value: 'poster' }, { name: 'file', filename: 'Alien (1979).png', data: 'png bytes' }])
  t.equal(response.statusCode, 201)
  const key = response.json().file_key as string
  t.match(key, new RegExp(`^Alien \\(1979\\)-${UUID}\\.png$`))
  t.same(Object.keys(response.json()), ['file_key'])
  t.equal(await readFile(join(dir, key), 'utf8'), 'png bytes')
  const url = await app.inject({ url: `/films/media/url/?column=poster&file_key=${encodeURIComponent(key)}` })
  t.equal(url.statusCode, 200)
  t.same(url.json(), { file_url: `/media/${encodeURIComponent(key)}` })
  t.equal((await app.inject({ method: 'HEAD', url: `/films/media/url?column=poster&file_key=${encodeURIComponent(key)}` })).statusCode, 200)
  const noSlash = await app.inject({ method: 'POST', url: '/films/media', ...form([{ name: 'column', value: 'poster' }, { name: 'file', filename: 'b.txt', data: 'b' }]) })
  t.equal(noSlash.statusCode, 201, 'without the trailing slash too')
})

t.test('an Array column stores files like any other', async (t) => {
  const dir = await tempDir(t)
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: join(dir, 'p') }), localMediaStorage({ column: stills, mediaPath: join(dir, 's') })] })
  const response = await upload(app, [{ name: 'column', value: 'stills' }, { name: 'file', filename: 'still.jpg', data: 'jpg' }])
  t.equal(response.statusCode, 201)
  t.same(await tree(dir), ['s', `s/${response.json().file_key as string}`])
})

t.test('bad input is a 400 in the SPEC §1 shape, and nothing is written anywhere', async (t) => {
  const root = await tempDir(t)
  const dir = join(root, 'media')
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })] })
  const column = { name: 'column', value: 'poster' }
  const file = (filename: string): Part => ({ name: 'file', filename, data: 'data' })
  const cases: Array<[string, Part[], Record<string, unknown>]> = [
    ['no file', [column], media400('The file field is required.')],
    ['nothing', [], media400('The column field is required.')],
    ['the file first', [file('a.png'), column], media400('The column field must come before the file.')],
    ['two files', [column, file('a.png'), file('b.png')], media400('Send one file only.')],
    ['an unknown column', [{ name: 'column', value: 'nope' }, file('a.png')], { ...media400("nope isn't a column of film."), validFields: ['poster'] }],
    ['a column without storage', [{ name: 'column', value: 'title' }, file('a.png')], { ...media400('title has no media storage.'), validFields: ['poster'] }],
    ['a path escaping the folder', [column, file('../../etc/passwd')], media400('The file has no extension.')],
    ['a NUL', [column, file('a\0.png')], media400("'\0' is not allowed in the filename.")],
    ['300 characters', [column, file(`${'a'.repeat(296)}.png`)], media400('The file name must not be longer than 255 characters.')],
    ['a bad character', [column, file('a;b.png')], media400("';' is not allowed in the filename.")],
    ['an empty name', [column, file('')], media400("The file name can't be empty.")],
    ['an unknown field', [column, { name: 'extra', value: 'x' }, file('a.png')], { ...media400("extra isn't a valid field: send column, then file."), validFields: ['column', 'file'] }],
    ['a file in another field', [column, { name: 'upload', filename: 'a.png', data: 'x' }], { ...media400("upload isn't a valid field: send column, then file."), validFields: ['column', 'file'] }],
    ['column twice', [column, column, file('a.png')], media400('The column field is given more than once.')],
    ['column twice, after the file', [column, file('a.png'), column], media400('The column field is given more than once.')]
  ]
  for (const [name, parts, body] of cases) {
    const response = await upload(app, parts)
    t.equal(response.statusCode, 400, name)
    t.same(errorOf(response), body, name)
    t.same(await tree(root), await tree(root).then((entries) => entries.filter((e) => e === 'media')), `${name}: no file`)
  }
  t.same((await tree(root)).filter((e) => e !== 'media'), [])
})

t.test('a file part without a filename (Content-Type application/octet-stream) is a 400 for its empty name, not a 500', async (t) => {
  const dir = await tempDir(t)
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })] })
  // The parser takes an octet-stream part for a file even without a filename: its name is then missing.
  const payload = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="column"\r\n\r\nposter\r\n` +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"\r\nContent-Type: application/octet-stream\r\n\r\nbytes\r\n--${BOUNDARY}--\r\n`
  const response = await app.inject({ method: 'POST', url: '/films/media/', headers: form([]).headers, payload })
  t.equal(response.statusCode, 400)
  t.same(errorOf(response), media400("The file name can't be empty."))
  t.same(await readdir(dir).catch(() => []), [])
})

t.test('file sent as a text field, or column sent as a file: a 400 that says so, not that the field is unknown', async (t) => {
  const dir = await tempDir(t)
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })] })
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="column"\r\n\r\nposter\r\n`
  // curl -F file=text, a form's text input named file: no filename, so the parser hands on a field.
  const text = await app.inject({ method: 'POST', url: '/films/media/', headers: form([]).headers, payload: `${head}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"\r\n\r\nbytes\r\n--${BOUNDARY}--\r\n` })
  t.same(errorOf(text), media400('The file field must be a file, with a filename.'))
  // A part of type application/octet-stream is a file to the parser, filename or not.
  const asFile = await app.inject({ method: 'POST', url: '/films/media/', headers: form([]).headers, payload: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="column"\r\nContent-Type: application/octet-stream\r\n\r\nposter\r\n--${BOUNDARY}--\r\n` })
  t.same(errorOf(asFile), media400('The column field must be text, not a file.'))
  t.same(await readdir(dir).catch(() => []), [])
})

t.test('a name whose key would be over 255 bytes is a 400, not a 500 from the file system', async (t) => {
  const dir = await tempDir(t)
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir, allowedExtensions: null, allowedCharacters: null })] })
  // 197 characters, within rule 7, but its key is 12 + 37 + 361 bytes: ENAMETOOLONG on any file system.
  const response = await upload(app, [{ name: 'column', value: 'poster' }, { name: 'file', filename: `Alien (1979).${'名'.repeat(120)}`, data: 'x' }])
  t.equal(response.statusCode, 400)
  t.same(errorOf(response), media400('The file name is too long to be stored: its key would be over 255 bytes.'))
  t.same(await readdir(dir), [])
  const url = await app.inject({ url: `/films/media/url/?column=poster&file_key=${encodeURIComponent('名'.repeat(86))}` })
  t.same(errorOf(url), media400(`The file key "${'名'.repeat(86)}" is invalid.`), 'a key no file system holds')
})

t.test('a malformed multipart body is a 400, and nothing is stored', async (t) => {
  const dir = await tempDir(t)
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })] })
  const { headers } = form([])
  const truncated = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="column"\r\n\r\nposter\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nhalf a fi`
  for (const payload of [truncated, 'no boundary at all']) {
    const response = await app.inject({ method: 'POST', url: '/films/media/', headers, payload })
    t.equal(response.statusCode, 400, payload)
    t.match(errorOf(response), { statusCode: 400, code: 'TABLECRUD_ERR_MEDIA', message: /^The multipart body cannot be read: / })
  }
  t.same(await readdir(dir).catch(() => []), [])
})

t.test('a body that is not multipart is a 415', async (t) => {
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: await tempDir(t) })] })
  const response = await app.inject({ method: 'POST', url: '/films/media/', payload: { column: 'poster' } })
  t.equal(response.statusCode, 415)
  t.same(errorOf(response), { statusCode: 415, code: 'TABLECRUD_ERR_MEDIA_BODY_TYPE', error: 'Unsupported Media Type', message: 'The body must be multipart/form-data, not "application/json".' })
  const none = await app.inject({ method: 'POST', url: '/films/media/' })
  t.equal(none.statusCode, 415)
  t.equal(errorOf(none).message, 'The body must be multipart/form-data, not "none".')
  // Bodies of a type no parser takes were refused by Fastify first, as a JSON route's are: code
  // TABLECRUD_ERR_BODY_MEDIA_TYPE and "must be application/json", the wrong advice here.
  const untyped = await app.inject({ method: 'POST', url: '/films/media/', payload: Buffer.from('bytes') })
  t.same(errorOf(untyped), { statusCode: 415, code: 'TABLECRUD_ERR_MEDIA_BODY_TYPE', error: 'Unsupported Media Type', message: 'The body must be multipart/form-data, not "none".' })
  for (const type of ['multipart/mixed; boundary=x', 'application/octet-stream', 'image/png', 'application/json', 'text/plain']) {
    const other = await app.inject({ method: 'POST', url: '/films/media/', headers: { 'content-type': type }, payload: 'bytes' })
    t.same(errorOf(other), { statusCode: 415, code: 'TABLECRUD_ERR_MEDIA_BODY_TYPE', error: 'Unsupported Media Type', message: `The body must be multipart/form-data, not ${JSON.stringify(type)}.` }, type)
  }
  const multipartElsewhere = await app.inject({ method: 'POST', url: '/films/', ...form([{ name: 'title', value: 'x' }]) })
  t.equal(multipartElsewhere.statusCode, 415, 'the multipart parser serves the media routes only')
})

t.test('a file over mediaMaxBytes is a 413 and nothing is stored', async (t) => {
  const dir = await tempDir(t)
  const app = await filmApp(t, { mediaMaxBytes: 1000, mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })] })
  const column = { name: 'column', value: 'poster' }
  const over = await upload(app, [column, { name: 'file', filename: 'big.png', data: Buffer.alloc(1001, 7) }])
  t.equal(over.statusCode, 413)
  t.same(errorOf(over), { statusCode: 413, code: 'TABLECRUD_ERR_MEDIA_TOO_LARGE', error: 'Payload Too Large', message: 'The file is larger than 1000 bytes.' })
  const far = await upload(app, [column, { name: 'file', filename: 'big.png', data: Buffer.alloc(100000, 7) }])
  t.equal(far.statusCode, 413)
  t.same(await readdir(dir), [])
  const exact = await upload(app, [column, { name: 'file', filename: 'fits.png', data: Buffer.alloc(1000, 7) }])
  t.equal(exact.statusCode, 201)
  t.same(await readdir(dir), [exact.json().file_key])
})

t.test('read-only: POST /media/ is a 405, the URL route still answers', async (t) => {
  const dir = await tempDir(t)
  const app = await filmApp(t, { readOnly: true, mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })] })
  const response = await upload(app, [{ name: 'column', value: 'poster' }, { name: 'file', filename: 'a.png', data: 'x' }])
  t.equal(response.statusCode, 405)
  t.equal(response.headers.allow, '')
  t.match(errorOf(response), { code: 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', message: 'POST is not allowed on /films/media/.' })
  t.same(await readdir(dir), [])
  t.equal((await app.inject({ url: '/films/media/url/?column=poster&file_key=a-1.png' })).statusCode, 200)
})

t.test('media joins the reserved helper words', async (t) => {
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: await tempDir(t) })] })
  for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'] as const) {
    const response = await app.inject({ method, url: '/films/media/' })
    t.equal(response.statusCode, 405, method)
    t.equal(response.headers.allow, 'POST', method)
  }
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    const response = await app.inject({ method, url: '/films/media/url/' })
    t.equal(response.statusCode, 405, method)
    t.equal(response.headers.allow, 'GET, HEAD', method)
  }
  const plain = await buildApp(t, db, [], async (app) => {
    await app.register(tableCrud, { table: film, prefix: '/films', readOnly: false })
  })
  const asId = await plain.inject({ url: '/films/media/' })
  t.match(asId.json(), { statusCode: 400, code: 'TABLECRUD_ERR_ID_INVALID' }, 'without storage, media is an id like any other')
})

t.test('GET /media/url/: its query is checked', async (t) => {
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: await tempDir(t) })] })
  const cases: Array<[string, Record<string, unknown>]> = [
    ['file_key=a-1.png', media400('The column parameter is required.')],
    ['column=poster', media400('The file_key parameter is required.')],
    ['column=nope&file_key=a-1.png', { ...media400("nope isn't a column of film."), validFields: ['poster'] }],
    ['column=title&file_key=a-1.png', { ...media400('title has no media storage.'), validFields: ['poster'] }],
    ['column=poster&file_key=..%2Fsecret.png', media400('The file key "../secret.png" is invalid.')],
    ['column=poster&file_key=a-1.png&x=1', { statusCode: 400, code: 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', error: 'Bad Request', message: "x isn't a valid field name.", validFields: ['column', 'file_key'] }],
    ['column=poster&column=poster&file_key=a-1.png', { statusCode: 400, code: 'TABLECRUD_ERR_QS_REPEATED', error: 'Bad Request', message: 'column is given more than once.' }]
  ]
  for (const [query, body] of cases) {
    const response = await app.inject({ url: `/films/media/url/?${query}` })
    t.equal(response.statusCode, 400, query)
    t.same(errorOf(response), body, query)
  }
})

t.test('validators storeFile and getFileUrl run after the input checks, before anything is stored', async (t) => {
  const dir = await tempDir(t)
  const calls: string[] = []
  const refuse = (list: string) => () => { calls.push(list); throw new HttpError(403, `${list} refused`) }
  const app = await filmApp(t, {
    mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })],
    validators: { storeFile: [refuse('storeFile')], getFileUrl: [refuse('getFileUrl')] }
  })
  const refused = await upload(app, [{ name: 'column', value: 'poster' }, { name: 'file', filename: 'a.png', data: 'x' }])
  t.equal(refused.statusCode, 403)
  t.match(errorOf(refused), { statusCode: 403, message: 'storeFile refused' })
  const badName = await upload(app, [{ name: 'column', value: 'poster' }, { name: 'file', filename: 'a.exe', data: 'x' }])
  t.equal(badName.statusCode, 400, 'a bad name is a 400 before any validator')
  const url = await app.inject({ url: '/films/media/url/?column=poster&file_key=a-1.png' })
  t.equal(url.statusCode, 403)
  t.match(errorOf(url), { message: 'getFileUrl refused' })
  t.same(calls, ['storeFile', 'getFileUrl'])
  t.same(await tree(dir), [])

  const every = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })], validators: { every: [() => { throw new Error('no') }] } })
  t.match(errorOf(await upload(every, [{ name: 'column', value: 'poster' }, { name: 'file', filename: 'a.png', data: 'x' }])), { statusCode: 400, code: 'TABLECRUD_ERR_VALIDATION' })
  t.same(await tree(dir), [])
})

t.test('options: mediaStorage and mediaMaxBytes are checked at registration', async (t) => {
  const dir = await tempDir(t)
  const storage = localMediaStorage({ column: poster, mediaPath: dir })
  const cases: Array<[Partial<TableCrudOptions>, RegExp]> = [
    [{ mediaStorage: storage as never }, /mediaStorage must be an array of localMediaStorage or s3MediaStorage objects/],
    [{ mediaStorage: [{}] as never }, /mediaStorage must be an array of localMediaStorage or s3MediaStorage objects/],
    [{ mediaStorage: [localMediaStorage({ column: other.columnMap.get('poster')!, mediaPath: dir })] }, /mediaStorage holds a storage of other_film.poster, not a column of film/],
    [{ mediaStorage: [storage, localMediaStorage({ column: poster, mediaPath: dir })] }, /mediaStorage holds two storages for the column poster/],
    [{ mediaMaxBytes: 0 }, /mediaMaxBytes/],
    [{ mediaMaxBytes: 1.5 }, /mediaMaxBytes/]
  ]
  for (const [options, message] of cases) {
    await t.rejects(buildApp(t, db, [], async (app) => {
      await app.register(tableCrud, { table: film, prefix: '/films', ...options })
    }), { message }, String(message))
  }
})

t.test('the OpenAPI document describes both routes, the upload as a multipart body', async (t) => {
  const app = await filmApp(t, { mediaStorage: [localMediaStorage({ column: poster, mediaPath: await tempDir(t) })] }, async (app) => {
    await app.register(openApi)
  })
  const document = (await app.inject({ url: '/docs/json' })).json()
  const post = document.paths['/films/media/'].post
  t.same(Object.keys(document.paths['/films/media/']), ['post'])
  const resolve = (schema: { $ref: string }): unknown => document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
  const body = resolve(post.requestBody.content['multipart/form-data'].schema)
  t.match(body, { type: 'object', required: ['column', 'file'], properties: { column: { enum: ['poster'] }, file: { type: 'string', format: 'binary' } } })
  t.match(post.responses['201'], { description: 'Stored: write the key in the column', content: { 'application/json': { schema: { $ref: '#/components/schemas/MediaUploadResponse' } } } })
  t.match(resolve(post.responses['201'].content['application/json'].schema), { properties: { file_key: { type: 'string' } } })
  t.match(post.responses['503'], { description: 'The database or the media store cannot be reached or timed out.', headers: { 'Retry-After': { schema: { type: 'integer' } } } })
  const get = document.paths['/films/media/url/'].get
  t.same(get.parameters.map((p: { name: string, in: string, required: boolean }) => [p.name, p.in, p.required]), [['column', 'query', true], ['file_key', 'query', true]])
  t.match(resolve(get.responses['200'].content['application/json'].schema), { properties: { file_url: { type: 'string' } } })
})

t.test('S3: upload through the route, the URL serves the bytes; over the limit nothing reaches the bucket', async (t) => {
  const s3 = await testS3(t)
  const app = await filmApp(t, { mediaMaxBytes: 2000, mediaStorage: [s3MediaStorage({ column: poster, bucket: s3.bucket, client: s3.client, folder: 'posters' })] })
  const response = await upload(app, [{ name: 'column', value: 'poster' }, { name: 'file', filename: 'a.txt', data: 'hello s3' }])
  t.equal(response.statusCode, 201)
  const key = response.json().file_key as string
  const { file_url: url } = (await app.inject({ url: `/films/media/url/?column=poster&file_key=${encodeURIComponent(key)}` })).json()
  t.match(url, `${s3.endpoint}/${s3.bucket}/posters/`)
  t.equal(await (await fetch(url)).text(), 'hello s3')
  const over = await upload(app, [{ name: 'column', value: 'poster' }, { name: 'file', filename: 'b.txt', data: Buffer.alloc(2001, 1) }])
  t.equal(over.statusCode, 413)
  t.same(await s3MediaStorage({ column: poster, bucket: s3.bucket, client: s3.client, folder: 'posters' }).getFileKeys(), [key])
})

/** A loopback port nothing listens on: opened by the system, then closed. */
async function closedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

const unavailable = { statusCode: 503, code: 'TABLECRUD_ERR_MEDIA_UNAVAILABLE', error: 'Service Unavailable', message: 'The media storage is unavailable; try again shortly.' }

t.test('a store that is down is a 503 with Retry-After, not a 500; the database is not reported down', async (t) => {
  const down = new S3Client({ endpoint: `http://127.0.0.1:${await closedPort()}`, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } })
  t.teardown(() => down.destroy())
  const root = await tempDir(t)
  const notAFolder = join(root, 'file')
  await writeFile(notAFolder, 'not a folder')
  const stores: Array<[string, Parameters<typeof filmApp>[1]['mediaStorage']]> = [
    ['S3 refusing connections', [s3MediaStorage({ column: poster, bucket: 'media', client: down })]],
    ['a folder that cannot be made', [localMediaStorage({ column: poster, mediaPath: join(notAFolder, 'posters') })]]
  ]
  for (const [name, mediaStorage] of stores) {
    const app = await filmApp(t, { mediaStorage })
    const response = await upload(app, [{ name: 'column', value: 'poster' }, { name: 'file', filename: 'a.png', data: 'png bytes' }])
    t.equal(response.statusCode, 503, name)
    t.equal(response.headers['retry-after'], '5', name)
    t.same(errorOf(response), unavailable, name)
    t.equal(databaseHealth(app).down, false, `${name}: not a database outage`)
  }
  t.same(await tree(root), ['file'], 'nothing written')
})

/**
 * Sends a multipart upload of `size` bytes over HTTP, generated as it goes: the test holds no copy.
 * `onMebibyte` runs after each MiB is handed to the socket.
 */
async function streamUpload (url: string, size: number, onMebibyte = (): void => {}): Promise<{ status: number, body: string, sha256: string }> {
  const chunk = Buffer.alloc(256 * 1024)
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31) % 256
  const hash = createHash('sha256')
  const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="column"\r\n\r\nposter\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="film.mp4"\r\nContent-Type: video/mp4\r\n\r\n`)
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`)
  return await new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': head.length + size + tail.length } }, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (d: string) => { body += d }).on('end', () => resolve({ status: response.statusCode!, body, sha256: hash.digest('hex') }))
    })
    request.on('error', reject)
    let sent = 0
    request.write(head)
    const pump = (): void => {
      while (sent < size) {
        const piece = chunk.subarray(0, Math.min(chunk.length, size - sent))
        sent += piece.length
        hash.update(piece)
        if (sent % (1024 * 1024) === 0) onMebibyte()
        if (!request.write(piece)) { request.once('drain', pump); return }
      }
      request.end(tail)
    }
    pump()
  })
}

t.test('a 20 MB upload is streamed to disk: the process does not grow by the file', async (t) => {
  const dir = await tempDir(t)
  const size = 20 * 1024 * 1024
  const app = await filmApp(t, { mediaMaxBytes: 32 * 1024 * 1024, mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })] })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  // A first upload warms everything up (code, buffers, and V8's young generation, which grows to
  // its working size as an upload allocates), so the measure is of the file alone. A major
  // collection here shrank the young generation again, and its regrowth during the measured
  // upload (up to 22 MiB on a loaded machine) was counted as the upload's.
  await streamUpload(`${address}/films/media/`, 8 * 1024 * 1024)
  // Chunks already written are garbage until a collection; collecting the young generation as
  // we sample keeps them out of the figure, which is then what the upload holds, not what it left.
  // The sample is taken at each MiB the client sends, not only on a timer, which can fall behind.
  gc({ type: 'minor', execution: 'sync' })
  const before = process.memoryUsage().rss
  let peak = before
  const sample = (): void => {
    gc({ type: 'minor', execution: 'sync' })
    peak = Math.max(peak, process.memoryUsage().rss)
  }
  const sampler = setInterval(sample, 25)
  const result = await streamUpload(`${address}/films/media/`, size, sample)
  clearInterval(sampler)
  sample()
  t.equal(result.status, 201)
  const key = JSON.parse(result.body).file_key as string
  const stored = await readFile(join(dir, key))
  t.equal(stored.length, size)
  t.equal(createHash('sha256').update(stored).digest('hex'), result.sha256)
  const growth = peak - before
  t.comment(`RSS before ${(before / 2 ** 20).toFixed(1)} MiB, peak growth during the upload ${(growth / 2 ** 20).toFixed(1)} MiB for a ${size / 2 ** 20} MiB file`)
  t.ok(growth < size / 2, `RSS grew by ${(growth / 2 ** 20).toFixed(1)} MiB, less than half the file's size`)
})

t.test('over HTTP, an upload far over the limit is answered 413 while the client is still sending, and nothing is stored', async (t) => {
  const dir = await tempDir(t)
  const app = await filmApp(t, { mediaMaxBytes: 1024 * 1024, mediaStorage: [localMediaStorage({ column: poster, mediaPath: dir })] })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const result = await streamUpload(`${address}/films/media/`, 8 * 1024 * 1024)
  t.equal(result.status, 413)
  t.match(JSON.parse(result.body), { code: 'TABLECRUD_ERR_MEDIA_TOO_LARGE' })
  t.same(await readdir(dir), [])
})
