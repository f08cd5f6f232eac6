import t, { type Test } from 'tap'
import fc from 'fast-check'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { GetObjectCommand, ListObjectsCommand } from '@aws-sdk/client-s3'
import { localMediaStorage } from '../../../lib/media/local.js'
import { s3MediaStorage } from '../../../lib/media/s3.js'
import type { MediaStorage } from '../../../lib/media/storage.js'
import { DEFAULT_CHARACTERS, DEFAULT_EXTENSIONS } from '../../../lib/media/names.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { buildApp } from '../../helpers/app.js'
import { contractProblem } from '../../helpers/contract.js'
import { testDatabase } from '../../helpers/db.js'
import { testS3, type TestS3 } from '../../helpers/s3.js'

/*
 * Property test of the media routes (SPEC §5.8, docs/media.md): random and hostile uploads
 * (multipart shapes, file names, sizes, bodies that are not multipart or end early), URL
 * requests with random columns and keys, and rows written with keys then deleted, on a table
 * mounted with local storage (a temporary folder) and with S3 storage (s3rver). Every answer
 * is in the SPEC §1 shape and never a 5xx; a refused upload stores nothing; an accepted one
 * stores exactly the bytes sent, under the key answered, in its own folder and nowhere else;
 * a URL answered points at its key; deleting or replacing a row leaves its files, and
 * `deleteUnusedFiles` removes exactly the ones no row holds.
 */

const db = await testDatabase(t)

/** Runs per property; FUZZ_RUNS raises it for a longer hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 150)

/** Small, so that files at and over the limit are cheap to send. */
const MAX = 64

const film = defineTable('fm_film', {
  title: column.varchar({ length: 40, null: true }),
  poster: column.varchar({ length: 200, null: true }),
  stills: column.array(column.text())
})

/** `poster` keeps the default name rules; `stills` accepts any character and any extension. */
const OPEN = { allowedCharacters: null, allowedExtensions: null } as const
type Mount = 'local' | 's3'
type Store = `${Mount}/${'poster' | 'stills'}`
const MOUNTS: readonly Mount[] = ['local', 's3']
const COLUMNS = ['poster', 'stills'] as const

interface World {
  app: FastifyInstance
  root: string
  s3: TestS3
  storages: Record<Store, MediaStorage>
  /** What each store must hold: key → bytes. */
  files: Record<Store, Map<string, Buffer>>
}

async function world (t: Test): Promise<World> {
  const root = await mkdtemp(join(tmpdir(), 'tc-fuzz-media-'))
  t.teardown(async () => await rm(root, { recursive: true, force: true }))
  const s3 = await testS3(t, 'fuzz-media')
  const storages: Record<Store, MediaStorage> = {
    'local/poster': localMediaStorage({ column: film.columnMap.get('poster')!, mediaPath: join(root, 'media', 'posters') }),
    'local/stills': localMediaStorage({ column: film.columnMap.get('stills')!, mediaPath: join(root, 'media', 'stills'), ...OPEN }),
    's3/poster': s3MediaStorage({ column: film.columnMap.get('poster')!, bucket: s3.bucket, client: s3.client, folder: 'posters' }),
    's3/stills': s3MediaStorage({ column: film.columnMap.get('stills')!, bucket: s3.bucket, client: s3.client, folder: 'stills', ...OPEN })
  }
  const app = await buildApp(t, db, [film], async (app) => {
    for (const mount of MOUNTS) {
      await app.register(tableCrud, { table: film, prefix: `/${mount}`, readOnly: false, mediaMaxBytes: MAX, mediaStorage: [storages[`${mount}/poster`], storages[`${mount}/stills`]] })
    }
  })
  await app.pg.query('TRUNCATE fm_film RESTART IDENTITY')
  return { app, root, s3, storages, files: { 'local/poster': new Map(), 'local/stills': new Map(), 's3/poster': new Map(), 's3/stills': new Map() } }
}

const FOLDERS: Record<string, 'poster' | 'stills'> = { posters: 'poster', stills: 'stills' }
const folderOf = (name: string | undefined): 'poster' | 'stills' | undefined => name !== undefined && Object.hasOwn(FOLDERS, name) ? FOLDERS[name] : undefined

/**
 * Everything stored, by store: the whole temporary folder and the whole bucket are listed, so
 * a file written beside the folders (a path that escaped) or a leftover shows up as `stray`.
 */
async function stored (w: World): Promise<{ files: Record<Store, string[]>, stray: string[] }> {
  const files: Record<Store, string[]> = { 'local/poster': [], 'local/stills': [], 's3/poster': [], 's3/stills': [] }
  const stray: string[] = []
  for (const entry of await readdir(w.root, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name).slice(w.root.length + 1)
    const [top, folder, key, ...deeper] = path.split('/')
    const own = folderOf(folder)
    if (top === 'media' && (folder === undefined || (key === undefined && own !== undefined && entry.isDirectory()))) continue
    if (top === 'media' && own !== undefined && key !== undefined && deeper.length === 0 && entry.isFile()) files[`local/${own}`].push(key)
    else stray.push(`local: ${path}`)
  }
  const listing = await w.s3.client.send(new ListObjectsCommand({ Bucket: w.s3.bucket }))
  for (const { Key } of listing.Contents ?? []) {
    const [folder, key, ...deeper] = Key!.split('/')
    const own = folderOf(folder)
    if (own !== undefined && key !== undefined && deeper.length === 0) files[`s3/${own}`].push(key)
    else stray.push(`s3: ${Key!}`)
  }
  for (const list of Object.values(files)) list.sort()
  return { files, stray }
}

async function bytesOf (w: World, store: Store, key: string): Promise<Buffer> {
  const [mount, columnName] = store.split('/') as [Mount, string]
  const folder = columnName === 'poster' ? 'posters' : 'stills'
  if (mount === 'local') return await readFile(join(w.root, 'media', folder, key))
  const answer = await w.s3.client.send(new GetObjectCommand({ Bucket: w.s3.bucket, Key: `${folder}/${key}` }))
  return Buffer.from(await answer.Body!.transformToByteArray())
}

/** The stores hold what the model says, byte for byte, and nothing else anywhere. */
async function storesProblem (w: World): Promise<string | null> {
  const { files, stray } = await stored(w)
  if (stray.length > 0) return `stored outside the storages' folders: ${stray.join(', ')}`
  for (const store of Object.keys(files) as Store[]) {
    const expected = [...w.files[store].keys()].sort()
    if (JSON.stringify(files[store]) !== JSON.stringify(expected)) return `${store} holds ${JSON.stringify(files[store])}, expected ${JSON.stringify(expected)}`
  }
  return null
}

// ---------------------------------------------------------------------------------------------
// Multipart bodies, built by hand so that any shape can be sent.

interface FieldPart { kind: 'field', name: string, value: string, type?: string }
/** `filename` undefined: no filename parameter; `star`: sent as RFC 5987 `filename*`. */
interface FilePart { kind: 'file', name: string, filename: string | undefined, star: boolean, type: string | undefined, data: Buffer }
type Part = FieldPart | FilePart

interface Upload {
  mount: Mount
  parts: Part[]
  /** The request's content type; `boundary` stands for the body's boundary. */
  contentType: string | undefined
  /** Bytes cut from the end of the body; 0 sends it whole. */
  cut: number
  /** Leaves the closing boundary out. */
  unterminated: boolean
  /** A body that is not multipart at all, sent instead of the parts. */
  raw: string | undefined
}

const BOUNDARY = 'fuzz-media-boundary'
const quoted = (text: string): string => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`
const star = (text: string): string => `utf-8''${encodeURIComponent(text).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`

function body (upload: Upload): Buffer {
  if (upload.raw !== undefined) return Buffer.from(upload.raw)
  const chunks: Buffer[] = []
  for (const part of upload.parts) {
    let head = `Content-Disposition: form-data; name=${quoted(part.name)}`
    if (part.kind === 'file' && part.filename !== undefined) head += part.star ? `; filename*=${star(part.filename)}` : `; filename=${quoted(part.filename)}`
    if (part.type !== undefined) head += `\r\nContent-Type: ${part.type}`
    chunks.push(Buffer.from(`--${BOUNDARY}\r\n${head}\r\n\r\n`), part.kind === 'file' ? part.data : Buffer.from(part.value), Buffer.from('\r\n'))
  }
  if (!upload.unterminated) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  const whole = Buffer.concat(chunks)
  return whole.subarray(0, Math.max(0, whole.length - upload.cut))
}

const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`
/** The same type written otherwise: the boundary quoted, another parameter, other case. */
const SAME_MULTIPART = [`multipart/form-data; boundary="${BOUNDARY}"`, `multipart/form-data; charset=utf-8; boundary=${BOUNDARY}`, `Multipart/Form-Data;boundary=${BOUNDARY}`]

// ---------------------------------------------------------------------------------------------
// The oracle: what the docs say an upload gets, worked out apart from the library.

const CHARACTERS = new Set(DEFAULT_CHARACTERS)
const EXTENSIONS = new Set(DEFAULT_EXTENSIONS)
const CONTROL = /\p{Cc}/u

/** The name a multipart parser hands on: its last path segment (`.` and `..` are no name). */
function sentName (filename: string): string {
  const last = filename.split(/[/\\]/).at(-1)!
  return last === '.' || last === '..' ? '' : last
}

/** docs/media.md, "File names and keys": the first rule a name breaks, or null. */
function nameRefusal (name: string, open: boolean): string | null {
  if (name === '') return "The file name can't be empty."
  if (name.startsWith('.')) return 'File names must not start with a period.'
  if (name.includes('..')) return "File names must not contain '..'."
  for (const c of name) {
    if (open ? CONTROL.test(c) : !CHARACTERS.has(c)) return `'${c}' is not allowed in the filename.`
  }
  const dot = name.lastIndexOf('.')
  if (dot !== -1 && !open && !EXTENSIONS.has(name.slice(dot + 1).toLowerCase())) return "This file type isn't allowed."
  if (dot === -1 || dot === name.length - 1) return 'The file has no extension.'
  if ([...name].length > 255) return 'The file name must not be longer than 255 characters.'
  if (keyBytes(name) > 255) return 'The file name is too long to be stored: its key would be over 255 bytes.'
  return null
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The key a name must get, around its UUID: the name without extension, cut to 50 when longer than 50, then the extension. */
function keyParts (name: string): [string, string] {
  const dot = name.lastIndexOf('.')
  const stem = [...name.slice(0, dot)]
  return [([...name].length > 50 ? stem.slice(0, 50) : stem).join(''), name.slice(dot)]
}

const keyPattern = (name: string): RegExp => new RegExp(`^${keyParts(name).map(escapeRegExp).join(`-${UUID}`)}$`, 'u')

/** The key's length in UTF-8 bytes: a UUID and its `-` are 37. */
const keyBytes = (name: string): number => Buffer.byteLength(keyParts(name).join('')) + 37

/** `orLimit`: a 400 of the parser's limits is as good an answer. */
type Expected = ({ status: 201, column: 'poster' | 'stills', name: string, data: Buffer } | { status: 400 | 413 | 415, message?: string }) & { orLimit?: boolean }

/** What the docs promise for a well-formed multipart body, walking the parts as the route reads them. */
function expected (upload: Upload): Expected | null {
  if (upload.contentType === undefined || !/^multipart\/form-data/i.test(upload.contentType)) return { status: 415, message: `The body must be multipart/form-data, not ${JSON.stringify(upload.contentType ?? 'none')}.` }
  if (upload.raw !== undefined || (upload.contentType.toLowerCase() !== MULTIPART && !SAME_MULTIPART.includes(upload.contentType))) return null
  // @fastify/multipart refuses a part named like a property of Object.prototype, when it reaches it.
  // Cutting 2 bytes takes the CRLF after the closing boundary, which nothing needs.
  if (upload.cut > 2 || upload.unterminated || upload.parts.some((p) => p.name in Object.prototype)) return { status: 400 }
  // A line break sent as it is in a part's head ends the head line: a broken part, no promise.
  if (upload.parts.some((p) => p.kind === 'file' && !p.star && /[\r\n]/.test(p.filename ?? ''))) return null
  const verdict = walk(upload.parts)
  // More than 4 fields, 2 files or 6 parts: the parser, reading ahead of the route, may refuse
  // the body for its limits before the route reaches its own verdict.
  return upload.parts.length > 4 ? { ...verdict, orLimit: true } : verdict
}

/** The route's verdict on well-formed parts, read in order. */
function walk (parts: readonly Part[]): Expected {
  let target: 'poster' | 'stills' | undefined
  let file: { name: string, data: Buffer } | undefined
  for (const part of parts) {
    const isFile = part.kind === 'file' && (part.filename !== undefined || part.type?.toLowerCase() === 'application/octet-stream')
    if (part.kind === 'file' && part.filename !== undefined && /[\r\n]/.test(part.filename)) continue
    // @fastify/multipart parses a field of type application/json; none here is a JSON string.
    if (!isFile && part.type?.toLowerCase().startsWith('application/json') === true) return { status: 400 }
    if (!isFile) {
      if (part.name === 'file') return { status: 400, message: 'The file field must be a file, with a filename.' }
      if (part.name !== 'column') return { status: 400, message: `${part.name} isn't a valid field: send column, then file.` }
      if (target !== undefined) return { status: 400, message: 'The column field is given more than once.' }
      const value = part.kind === 'field' ? part.value : part.data.toString()
      if (value !== 'poster' && value !== 'stills') return { status: 400 }
      target = value
      continue
    }
    const filePart = part as FilePart
    if (part.name === 'column') return { status: 400, message: 'The column field must be text, not a file.' }
    if (part.name !== 'file') return { status: 400, message: `${part.name} isn't a valid field: send column, then file.` }
    if (file !== undefined) return { status: 400, message: 'Send one file only.' }
    if (target === undefined) return { status: 400, message: 'The column field must come before the file.' }
    const name = sentName(filePart.filename ?? '')
    const refusal = nameRefusal(name, target === 'stills')
    if (refusal !== null) return { status: 400, message: refusal }
    if (filePart.data.length > MAX) return { status: 413, message: `The file is larger than ${MAX} bytes.` }
    file = { name, data: filePart.data }
  }
  if (target === undefined) return { status: 400, message: 'The column field is required.' }
  if (file === undefined) return { status: 400, message: 'The file field is required.' }
  return { status: 201, column: target, ...file }
}

// ---------------------------------------------------------------------------------------------
// Arbitraries.

const STEMS = ['poster', 'Alien (1979)', 'a', 'a..b', '.hidden', '..', '.', 'con', 'a b', 'x'.repeat(60), 'é'.repeat(60), '🎬'.repeat(30), '名前', 'a;b', 'a%2e%2e', '%2e%2e', '\u202Egnp', 'tab\there', 'nul\0']
const EXTS = ['.png', '.PNG', '.Png', '.jpg', '.txt', '.exe', '', '.', '.tar.gz', '.png.exe', '.exe.png', '.webp', '.ünï', `.${'e'.repeat(200)}`, `.${'名'.repeat(120)}`]
const PREFIXES = ['', '', '', '../', '../../etc/', '..\\', 'C:\\Users\\me\\', '/abs/', 'dir/', '%2e%2e/', '..%2f', './']

const fileName = fc.oneof(
  { weight: 10, arbitrary: fc.tuple(fc.constantFrom('poster', 'Alien (1979)', 'a b', 'x'.repeat(60), 'still_01-b'), fc.constantFrom('.png', '.PNG', '.jpg', '.txt', '.webp')).map(([s, e]) => s + e) },
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...PREFIXES), fc.constantFrom(...STEMS), fc.constantFrom(...EXTS)).map(([p, s, e]) => p + s + e) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ unit: 'grapheme', maxLength: 20 }), fc.constantFrom(...EXTS)).map(([s, e]) => s + e) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '..', '.', '/', 'a.png/', 'poster.png\r\nX: y', 'a\nb.png', `${'a'.repeat(252)}.png`, `${'a'.repeat(251)}.png`, `${'é'.repeat(251)}.txt`) }
)

const bytes = fc.oneof(
  { weight: 4, arbitrary: fc.uint8Array({ maxLength: MAX }).map((a) => Buffer.from(a)) },
  { weight: 1, arbitrary: fc.constantFrom(0, MAX, MAX + 1, 3 * MAX).map((n) => Buffer.alloc(n, 0x2d)) },
  // Bytes that look like a boundary or a part's head, inside the file: only CRLF and `--` then
  // the boundary would end it (the sender's to avoid).
  { weight: 1, arbitrary: fc.constantFrom(`x--${BOUNDARY}`, `\r\n-${BOUNDARY}`, '\r\n--other\r\n', '\r\n\r\n', '--').map((s) => Buffer.from(s)) }
)

const partName = fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('Column', 'file ', 'upload', '', 'column[]', '__proto__') })
const columnValue = fc.oneof({ weight: 8, arbitrary: fc.constantFrom('poster', 'stills') }, { weight: 1, arbitrary: fc.constantFrom('title', 'id', 'nope', '', 'POSTER', '__proto__', 'constructor', 'poster ', 'x'.repeat(2000)) })
const fileType = fc.constantFrom(undefined, 'image/png', 'application/octet-stream', 'APPLICATION/OCTET-STREAM', 'text/html', 'application/json', 'multipart/mixed')

const columnPart: fc.Arbitrary<Part> = fc.tuple(partName, columnValue, fc.integer({ min: 0, max: 9 })).map(([name, value, odd]) => odd === 0 && value.length < 20
  // Now and then the column sent as a file part.
  ? { kind: 'file', name: name ?? 'column', filename: undefined, star: false, type: 'application/octet-stream', data: Buffer.from(value) }
  : { kind: 'field', name: name ?? 'column', value })
const filePart: fc.Arbitrary<Part> = fc.record({
  kind: fc.constant('file' as const),
  name: partName.map((n) => n ?? 'file'),
  filename: fc.option(fileName, { freq: 12, nil: undefined }),
  star: fc.boolean(),
  type: fileType,
  data: bytes
})

/** Mostly column then file; now and then parts missing, repeated, reordered or unknown. */
const partsOf = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(columnPart, filePart).map((p) => [...p]) },
  { weight: 1, arbitrary: fc.tuple(filePart, columnPart).map((p) => [...p]) },
  { weight: 2, arbitrary: fc.array(fc.oneof(columnPart, filePart, fc.record({ kind: fc.constant('field' as const), name: fc.constantFrom('extra', 'csrftoken', 'file'), value: fc.string() })), { maxLength: 8 }) }
)

const upload: fc.Arbitrary<Upload> = fc.record({
  mount: fc.constantFrom(...MOUNTS),
  parts: partsOf,
  contentType: fc.oneof({ weight: 12, arbitrary: fc.constant(MULTIPART) }, { weight: 1, arbitrary: fc.constantFrom(...SAME_MULTIPART) }, { weight: 1, arbitrary: fc.constantFrom(undefined, 'multipart/form-data', 'application/json', 'text/plain', 'application/x-www-form-urlencoded', `MULTIPART/FORM-DATA; BOUNDARY=${BOUNDARY}`, 'multipart/form-data; boundary=other', 'multipart/mixed; boundary=' + BOUNDARY) }),
  cut: fc.oneof({ weight: 10, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }) }),
  unterminated: fc.oneof({ weight: 15, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  raw: fc.oneof({ weight: 15, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('{"column": "poster"}', 'column=poster&file=x', '', '--', `--${BOUNDARY}--`) })
})

// ---------------------------------------------------------------------------------------------
// Checks.

const decodedTail = (url: string): string => decodeURIComponent(url.split('?')[0]!.split('/').at(-1)!)

/** The URL answered for `key` points at it: under the storage's root (local) or its bucket folder (S3). */
function urlProblem (w: World, mount: Mount, columnName: string, key: string, url: unknown): string | null {
  if (typeof url !== 'string') return `file_url ${JSON.stringify(url)}`
  const folder = columnName === 'poster' ? 'posters' : 'stills'
  if (mount === 'local') {
    if (!url.startsWith('/media/') || url.slice('/media/'.length).includes('/') || decodedTail(url) !== key) return `the URL ${url} is not /media/<${key}>`
    return null
  }
  const parsed = new URL(url)
  if (parsed.origin !== w.s3.endpoint || decodeURIComponent(parsed.pathname) !== `/${w.s3.bucket}/${folder}/${key}`) return `the URL ${url} is not the object ${folder}/${key}`
  return null
}

async function send (w: World, sent: Upload): Promise<LightMyRequestResponse> {
  const headers = sent.contentType === undefined ? {} : { 'content-type': sent.contentType }
  return await w.app.inject({ method: 'POST', url: `/${sent.mount}/media/`, headers, payload: body(sent) })
}

const describe = (sent: Upload): string => JSON.stringify({ ...sent, parts: sent.parts.map((p) => p.kind === 'file' ? { ...p, data: `${p.data.length} bytes` } : p) })

t.test('POST /media/: no 5xx; a refused upload stores nothing; an accepted one stores the bytes sent under its key', async (t) => {
  const w = await world(t)
  const statuses = new Map<number, number>()
  await fc.assert(fc.asyncProperty(upload, async (sent) => {
    const promise = expected(sent)
    // s3rver keeps an object as a file named by its key and 15 bytes more, and throws out of
    // the process on a name over 255 bytes; S3 itself takes keys of 1024 bytes.
    fc.pre(!(sent.mount === 's3' && promise?.status === 201 && keyBytes(promise.name) > 240))
    const response = await send(w, sent)
    statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
    const fail = (why: string): never => { throw new Error(`${describe(sent)}: ${why} (${response.statusCode} ${response.body.slice(0, 300)})`) }
    const found = contractProblem(response, [201, 400, 413, 415], (body) => typeof body.file_key === 'string' && Object.keys(body).length === 1 ? null : 'a 201 without file_key')
    if (found !== null) fail(found)
    const limited = promise?.orLimit === true && response.statusCode === 400
    if (promise !== null && !limited && promise.status !== response.statusCode) fail(`expected ${promise.status}`)
    if (promise !== null && !limited && promise.status !== 201 && promise.message !== undefined && response.json().message !== promise.message) fail(`expected the message ${promise.message}`)
    if (response.statusCode === 201) {
      const key = response.json().file_key as string
      if (promise !== null && promise.status !== 201) return fail('accepted, but the docs refuse it')
      // A body the docs make no promise for (a broken part head) may be read as a good one: the
      // file must then be in one of the mount's stores, and only there.
      const { files } = promise === null ? await stored(w) : { files: null }
      const column = promise?.column ?? COLUMNS.find((c) => files![`${sent.mount}/${c}`].includes(key))
      if (column === undefined) return fail(`${key} is stored nowhere`)
      const store: Store = `${sent.mount}/${column}`
      if (promise !== null && !keyPattern(promise.name).test(key)) fail(`the key ${key} is not made from ${promise.name}`)
      w.files[store].set(key, promise?.data ?? await bytesOf(w, store, key))
      if (!(await bytesOf(w, store, key)).equals(w.files[store].get(key)!)) fail(`${store}/${key} does not hold the bytes sent`)
      const url = await w.app.inject({ url: `/${sent.mount}/media/url/?${new URLSearchParams({ column, file_key: key }).toString()}` })
      if (url.statusCode !== 200) fail(`its URL: ${url.statusCode} ${url.body}`)
      const wrong = urlProblem(w, sent.mount, column, key, url.json().file_url)
      if (wrong !== null) fail(wrong)
    }
    const stores = await storesProblem(w)
    if (stores !== null) fail(stores)
  }), { numRuns: RUNS, endOnFailure: true })
  t.comment(`statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  t.ok((statuses.get(201) ?? 0) >= RUNS / 10, 'some uploads are accepted')
})

// ---------------------------------------------------------------------------------------------
// GET /media/url/.

/** docs/media.md: a key coming back from a client is a plain name of at most 255 bytes. */
const keyRefused = (key: string): boolean => key === '' || key.startsWith('.') || key.includes('..') || /[/\\]/.test(key) || CONTROL.test(key) || Buffer.byteLength(key) > 255

/** Ways to tamper with a key: paths, hidden names, other folders, case, normal forms, length. */
const TAMPER: Array<(key: string) => string> = [
  (k) => `../${k}`,
  (k) => `..\\${k}`,
  (k) => `posters/${k}`,
  (k) => `.${k}`,
  (k) => `${k}\0`,
  (k) => `${k}/`,
  (k) => k.toUpperCase(),
  (k) => `%2e%2e%2f${k}`,
  (k) => k.replace('-', '..'),
  (k) => `${k}${'名'.repeat(80)}`,
  (k) => ` ${k}`,
  (k) => k.normalize('NFD')
]

/** Keys to ask about: stored ones (of any store), the same tampered with, and made-up ones. */
function keyOf (known: readonly string[]): fc.Arbitrary<string> {
  const stored = fc.constantFrom(...known)
  const tamper = fc.constantFrom(...TAMPER)
  return fc.oneof(
    { weight: 3, arbitrary: stored },
    { weight: 3, arbitrary: fc.tuple(stored, tamper).map(([k, f]) => f(k)) },
    { weight: 2, arbitrary: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 })) },
    { weight: 1, arbitrary: fc.constantFrom('..', '.', '', '/etc/passwd', 'C:\\x.png', 'a?b#c.png', 'a%2Fb.png', 'a+b.png', '名'.repeat(85), '名'.repeat(86), 'x'.repeat(256), 'a\u2028b.png', '\uFEFFa.png') }
  )
}

/** `body`: a body sent along, which a GET ignores. */
interface UrlAsk { mount: Mount, pairs: Array<[string, string]>, raw: string | undefined, body: [string, string] | undefined }

function urlAsk (known: readonly string[]): fc.Arbitrary<UrlAsk> {
  const columnName = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('poster', 'stills') }, { weight: 1, arbitrary: fc.constantFrom('title', 'id', 'nope', '', 'Poster', '__proto__', 'constructor') })
  const pair = fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constant('column'), columnName) },
    { weight: 4, arbitrary: fc.tuple(fc.constant('file_key'), keyOf(known)) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', 'file', '__proto__', 'column[]', 'FILE_KEY', ''), fc.string({ maxLength: 5 })) })
  const pairs = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(columnName, keyOf(known)).map(([c, k]): Array<[string, string]> => [['column', c], ['file_key', k]]) },
    { weight: 2, arbitrary: fc.array(pair, { maxLength: 4 }) })
  const raw = fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, {
    weight: 1,
    arbitrary: fc.constantFrom(
      'column=poster&file_key=%2e%2e%2fx.png', 'column=poster&file_key=a%00.png', 'column=poster&file_key=%E0%A4%A', 'column=poster&file_key=%', 'column=poster&file_key=a%2fb.png',
      'column=poster&file_key[]=a.png', 'column=poster&file_key=a.png&', 'column=poster;file_key=a.png', 'column=poster&file_key=%ED%A0%80.png', 'column&file_key')
  })
  const body = fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom<[string, string]>(['application/json', '{"column": "x"}'], ['application/json', 'not json'], ['text/plain', 'x'], ['image/png', 'x'], [MULTIPART, `--${BOUNDARY}--\r\n`]) })
  return fc.record({ mount: fc.constantFrom(...MOUNTS), pairs, raw, body })
}

/** What the docs promise for a query: 200, or a 400 of the kind named. */
function urlExpected (ask: UrlAsk): { status: 200, column: string, key: string } | { status: 400 } | null {
  if (ask.raw !== undefined) return null
  const names = ask.pairs.map(([name]) => name)
  if (names.some((name) => name !== 'column' && name !== 'file_key') || new Set(names).size !== names.length) return { status: 400 }
  const query = Object.fromEntries(new URLSearchParams(ask.pairs))
  if (query.column === undefined || query.file_key === undefined) return { status: 400 }
  if ((query.column !== 'poster' && query.column !== 'stills') || keyRefused(query.file_key)) return { status: 400 }
  return { status: 200, column: query.column, key: query.file_key }
}

t.test('GET /media/url/ with random columns and keys: no 5xx, a URL only for a valid key, pointing at it', async (t) => {
  const w = await world(t)
  // Files to ask about, in each store.
  for (const mount of MOUNTS) {
    for (const columnName of COLUMNS) {
      for (const name of ['poster.png', 'a b (1).jpg', 'x.txt']) {
        const response = await send(w, { mount, parts: [{ kind: 'field', name: 'column', value: columnName }, { kind: 'file', name: 'file', filename: name, star: false, type: undefined, data: Buffer.from(name) }], contentType: MULTIPART, cut: 0, unterminated: false, raw: undefined })
        w.files[`${mount}/${columnName}`].set(response.json().file_key, Buffer.from(name))
      }
    }
  }
  const statuses = new Map<number, number>()
  const known = Object.values(w.files).flatMap((files) => [...files.keys()])
  await fc.assert(fc.asyncProperty(urlAsk(known), fc.constantFrom('GET', 'HEAD') as fc.Arbitrary<'GET' | 'HEAD'>, async (ask, method) => {
    const query = ask.raw ?? new URLSearchParams(ask.pairs).toString()
    const sent = ask.body === undefined ? {} : { headers: { 'content-type': ask.body[0] }, payload: ask.body[1] }
    const response = await w.app.inject({ method, url: `/${ask.mount}/media/url/?${query}`, ...sent })
    statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
    const fail = (why: string): never => { throw new Error(`${method} ${JSON.stringify(ask)}: ${why} (${response.statusCode} ${response.body.slice(0, 300)})`) }
    const promise = urlExpected(ask)
    if (promise !== null && promise.status !== response.statusCode) fail(`expected ${promise.status}`)
    if (method === 'HEAD') return
    const found = contractProblem(response, [200, 400], (body) => typeof body.file_url === 'string' && Object.keys(body).length === 1 ? null : 'a 200 without file_url')
    if (found !== null) fail(found)
    if (promise?.status === 200) {
      const wrong = urlProblem(w, ask.mount, promise.column, promise.key, response.json().file_url)
      if (wrong !== null) fail(wrong)
    }
  }), { numRuns: RUNS, endOnFailure: true })
  t.comment(`statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  t.ok((statuses.get(200) ?? 0) >= RUNS / 10, 'some URLs are answered')
  t.equal(await storesProblem(w), null, 'asking stores nothing')
})

// ---------------------------------------------------------------------------------------------
// Rows holding keys, then deleted or changed: the files stay until deleteUnusedFiles.

/** One step: an upload, a row written with keys (uploaded ones, or not), a row changed or deleted. */
type Step =
  | { op: 'upload', store: Store, name: string, data: Buffer }
  | { op: 'write', mount: Mount, method: 'POST' | 'PUT' | 'PATCH', row: number, poster: number | string | null | undefined, stills: Array<number | string | null> | undefined }
  | { op: 'delete', mount: Mount, row: number }

/** A key: the n-th uploaded so far (any store), or one that never was. */
const keyRef = fc.oneof({ weight: 6, arbitrary: fc.nat(20) }, { weight: 1, arbitrary: fc.constantFrom('never-uploaded.png', '../x.png', '', 'a'.repeat(300)) })

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('upload' as const), store: fc.constantFrom<Store>('local/poster', 'local/stills', 's3/poster', 's3/stills'), name: fc.constantFrom('poster.png', 'Still 1.JPG', 'a.b.txt', 'e.webm'), data: fc.uint8Array({ maxLength: MAX }).map((a) => Buffer.from(a)) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('write' as const),
      mount: fc.constantFrom(...MOUNTS),
      method: fc.constantFrom('POST' as const, 'POST' as const, 'PUT' as const, 'PATCH' as const, 'PATCH' as const),
      row: fc.integer({ min: 1, max: 4 }),
      poster: fc.option(fc.option(keyRef, { nil: null }), { nil: undefined }),
      stills: fc.option(fc.array(fc.option(keyRef, { nil: null, freq: 6 }), { maxLength: 3 }), { nil: undefined })
    })
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), mount: fc.constantFrom(...MOUNTS), row: fc.integer({ min: 1, max: 4 }) }) }
)

t.test('rows written with keys, changed and deleted: the files stay; deleteUnusedFiles removes exactly the ones no row holds', async (t) => {
  const w = await world(t)
  const stores = Object.keys(w.storages) as Store[]
  let writes = 0
  const statuses = new Map<number, number>()
  await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
    const uploaded: string[] = []
    const keyAt = (ref: number | string | null): string | null => typeof ref === 'number' ? uploaded[ref % Math.max(1, uploaded.length)] ?? 'none-yet.png' : ref
    /** The n-th row there is now (n = 4: one that is not). */
    const idAt = async (n: number): Promise<number> => {
      const { rows } = await w.app.pg.query('SELECT id FROM fm_film ORDER BY id')
      return n === 4 || rows.length === 0 ? 99999 : rows[n % rows.length].id
    }
    for (const s of steps) {
      let response: LightMyRequestResponse
      if (s.op === 'upload') {
        const [mount, columnName] = s.store.split('/') as [Mount, string]
        response = await send(w, { mount, parts: [{ kind: 'field', name: 'column', value: columnName }, { kind: 'file', name: 'file', filename: s.name, star: false, type: undefined, data: s.data }], contentType: MULTIPART, cut: 0, unterminated: false, raw: undefined })
        if (response.statusCode !== 201) throw new Error(`upload ${s.name} to ${s.store}: ${response.statusCode} ${response.body}`)
        uploaded.push(response.json().file_key)
        w.files[s.store].set(response.json().file_key, s.data)
        continue
      }
      if (s.op === 'delete') {
        const url = `/${s.mount}/${await idAt(s.row)}/`
        response = await w.app.inject({ method: 'DELETE', url })
        // A 204 has no body to judge.
        const found = response.statusCode === 204 ? null : contractProblem(response, [404], () => null)
        if (found !== null) throw new Error(`DELETE ${url}: ${found}`)
        continue
      }
      const row: Record<string, unknown> = { title: `row ${s.row}` }
      if (s.poster !== undefined) row.poster = keyAt(s.poster)
      if (s.stills !== undefined) row.stills = s.stills.map(keyAt)
      const url = s.method === 'POST' ? `/${s.mount}/` : `/${s.mount}/${await idAt(s.row)}/`
      response = await w.app.inject({ method: s.method, url, payload: row })
      writes += response.statusCode < 300 ? 1 : 0
      statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
      const found = contractProblem(response, [200, 201, 400, 404], () => null)
      if (found !== null) throw new Error(`${s.method} ${url} ${JSON.stringify(row)}: ${found}`)
    }
    // docs/media.md: deleting or changing a row leaves its files, for deleteUnusedFiles.
    const kept = await storesProblem(w)
    if (kept !== null) throw new Error(`after ${JSON.stringify(steps)}: ${kept}`)
    const { rows } = await w.app.pg.query('SELECT poster, stills FROM fm_film')
    const held = { poster: new Set(rows.map((r) => r.poster as string | null)), stills: new Set(rows.flatMap((r) => r.stills as Array<string | null>)) }
    for (const store of stores) {
      const columnName = store.split('/')[1] as 'poster' | 'stills'
      const unused = [...w.files[store].keys()].filter((key) => !held[columnName].has(key)).sort()
      const removed = await w.storages[store].deleteUnusedFiles(w.app.pg)
      if (JSON.stringify(removed) !== JSON.stringify(unused)) throw new Error(`${store}: deleteUnusedFiles removed ${JSON.stringify(removed)}, expected ${JSON.stringify(unused)}`)
      for (const key of unused) w.files[store].delete(key)
    }
    const left = await storesProblem(w)
    if (left !== null) throw new Error(`after deleteUnusedFiles: ${left}`)
  }), { numRuns: Math.ceil(RUNS / 3), endOnFailure: true })
  t.comment(`write statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  t.ok(writes > RUNS / 4, `rows written: ${writes}`)
})
