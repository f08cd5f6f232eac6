import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { MultipartFile, MultipartValue } from '@fastify/multipart'
import {
  optionError, TABLECRUD_ERR_MEDIA, TABLECRUD_ERR_MEDIA_BODY_TYPE, TABLECRUD_ERR_MEDIA_TOO_LARGE,
  TABLECRUD_ERR_QS_REPEATED, TABLECRUD_ERR_QS_UNKNOWN_FIELD, withBody
} from '../../lib/errors.js'
import { checkKey } from '../../lib/media/names.js'
import { MediaStorage } from '../../lib/media/storage.js'
import type { Table } from '../../lib/table/table.js'
import { mediaUploadBody, MediaUploadResponse, mediaUrlQuery, MediaUrlResponse } from '../../schemas/media.js'
import { MediaUnavailableResponse } from '../../schemas/responses.js'
import type { CrudContext } from './context.js'
import { route, type OnlyMethods } from './routing.js'

/** The default of `mediaMaxBytes`: 10 MiB (SPEC §5.8). */
export const MEDIA_MAX_BYTES = 10 * 1024 * 1024

/** Checks `mediaStorage` at registration: storages of this table's columns, one per column. */
export function checkMediaStorage (table: Table, storages: unknown): readonly MediaStorage[] {
  if (storages === undefined) return []
  if (!Array.isArray(storages)) throw optionError('tableCrud', 'mediaStorage', 'must be an array of localMediaStorage or s3MediaStorage objects')
  const seen = new Set<string>()
  for (const storage of storages) {
    if (!(storage instanceof MediaStorage)) throw optionError('tableCrud', 'mediaStorage', 'must be an array of localMediaStorage or s3MediaStorage objects')
    if (storage.table !== table) throw optionError('tableCrud', 'mediaStorage', `holds a storage of ${storage.table.name}.${storage.column.name}, not a column of ${table.name}`)
    if (seen.has(storage.column.name)) throw optionError('tableCrud', 'mediaStorage', `holds two storages for the column ${storage.column.name}`)
    seen.add(storage.column.name)
  }
  return storages
}

const refuse = (message: string): Error => new TABLECRUD_ERR_MEDIA(message)

/**
 * The file's bytes, failing the stream past `max` bytes: the storage's write then fails and
 * removes what it wrote (SPEC §5.8: over the limit, nothing is stored). Busboy stops reading at
 * `max + 1`, so no more than that is ever read into the process.
 */
function limited (source: Readable, max: number): Readable {
  return Readable.from((async function * () {
    let size = 0
    try {
      for await (const chunk of source) {
        size += (chunk as Buffer).length
        if (size > max) break
        yield chunk as Buffer
      }
    } catch (error) {
      // Only the part's own stream throws in here: a body that ends mid-file is the client's doing.
      throw malformed(error as Error)
    }
    if (size > max) throw new TABLECRUD_ERR_MEDIA_TOO_LARGE(max)
  })(), { objectMode: false })
}

/** The multipart parser's own failures (a truncated or malformed body) are the client's: a 400, not a 500. */
const malformed = (error: Error): Error => refuse(`The multipart body cannot be read: ${error.message}`)

const notMultipart = (request: FastifyRequest): Error => new TABLECRUD_ERR_MEDIA_BODY_TYPE(JSON.stringify(request.headers['content-type'] ?? 'none'))

/** What the media routes of one TableCRUD registration share. */
interface Media {
  readonly c: CrudContext
  readonly columns: readonly string[]
  readonly maxBytes: number
  /** The storage of a column named in a request, or the 400 naming the valid ones. */
  readonly storageOf: (name: string) => MediaStorage
}

/**
 * POST `/media/` and GET `/media/url/` (SPEC §5.8), in a child context of their own so the
 * multipart parser is registered for these routes only: everywhere else a multipart body is
 * still a 415. Their other methods are refused as the table's other paths' are (`only`).
 */
export async function mediaRoutes (c: CrudContext, only: OnlyMethods): Promise<void> {
  const { mediaStorage: storages, mediaMaxBytes: maxBytes, readOnly } = c.options
  if (storages.length === 0) return
  const byColumn = new Map(storages.map((s) => [s.column.name, s]))
  const columns = [...byColumn.keys()]
  const storageOf = (name: string): MediaStorage => {
    const storage = byColumn.get(name)
    if (storage !== undefined) return storage
    const message = c.table.columnMap.has(name) ? `${name} has no media storage.` : `${name} isn't a column of ${c.table.name}.`
    throw withBody(refuse(message), { validFields: columns })
  }
  const m: Media = { c, columns, maxBytes, storageOf }
  // POST /media/: 405 in read-only mode, like every write (SPEC §5.8); its `Allow` is then empty.
  only('/media/', readOnly ? [] : ['POST'])
  only('/media/url/', ['GET', 'HEAD'])

  await c.fastify.register(async (media) => {
    // Loaded here, not at import: an application without media routes does not pay for it.
    const { default: fastifyMultipart } = await import('@fastify/multipart')
    // These routes read multipart only. A body of another type was parsed (JSON: a 400 when it
    // is not JSON) or refused by Fastify as on a JSON route ("must be application/json", the
    // wrong advice here); it is now refused before it is read, with the upload's own 415, and
    // Node drops what is left of it.
    media.removeAllContentTypeParsers()
    await media.register(fastifyMultipart, { limits: { fileSize: maxBytes + 1, files: 2, fields: 4, fieldSize: 1024, parts: 6 } })
    media.addContentTypeParser('*', (request, _payload, done) => {
      done(notMultipart(request), undefined)
    })
    if (!readOnly) uploadRoute(media, m)
    urlRoute(media, m)
  })
}

function uploadRoute (media: FastifyInstance, m: Media): void {
  const { c, columns, maxBytes } = m
  route(media, {
    method: 'POST',
    url: '/media/',
    // 415: not multipart; 413: a file over mediaMaxBytes.
    schema: c.routeSchema('storeFile', 'mediaUpload', [400, 413, 415], {
      summary: `Upload a file for a media column of ${c.table.name}`,
      description: `Multipart form: \`column\` first, then \`file\`. At most ${maxBytes} bytes. Answers the key to write in the column.`,
      consumes: ['multipart/form-data'],
      body: mediaUploadBody(columns),
      response: { 201: MediaUploadResponse, 503: MediaUnavailableResponse }
    }),
    // The body is a stream the handler reads; the schema above is for the document only.
    validatorCompiler: () => (data: unknown) => ({ value: data }),
    handler: async (request, reply) => {
      const key = await upload(m, request, reply)
      return reply.code(201).send({ file_key: key })
    }
  })
}

function urlRoute (media: FastifyInstance, m: Media): void {
  const { c, columns } = m
  route(media, {
    method: 'GET',
    url: '/media/url/',
    schema: c.routeSchema('getFileUrl', 'mediaUrl', [400], {
      summary: `The URL of a file of a media column of ${c.table.name}`,
      querystring: mediaUrlQuery(columns),
      response: { 200: MediaUrlResponse }
    }),
    // The query string is the route's only validated part.
    validatorCompiler: () => (data: unknown) => {
      try {
        return { value: urlQuery(m, data as Record<string, unknown>) }
      } catch (error) {
        return { error: error as Error }
      }
    },
    handler: async (request) => {
      const { column, fileKey } = request.query as { column: MediaStorage, fileKey: string }
      await c.validate('getFileUrl', request)
      return { file_url: await column.generateFileUrl(fileKey) }
    }
  })
}

/** GET `/media/url/`'s query: `column` and `file_key`, once each, nothing else. */
function urlQuery (m: Media, query: Record<string, unknown>): { column: MediaStorage, fileKey: string } {
  for (const name of Object.keys(query)) {
    if (name !== 'column' && name !== 'file_key') throw withBody(new TABLECRUD_ERR_QS_UNKNOWN_FIELD(name, ''), { validFields: ['column', 'file_key'] })
    if (Array.isArray(query[name])) throw new TABLECRUD_ERR_QS_REPEATED(name)
  }
  const { column, file_key: fileKey } = query as { column?: string, file_key?: string }
  if (column === undefined) throw refuse('The column parameter is required.')
  if (fileKey === undefined) throw refuse('The file_key parameter is required.')
  return { column: m.storageOf(column), fileKey: checkKey(fileKey) }
}

/**
 * Reads the form part by part: `column`, then `file`, streamed into the storage. Anything
 * else is a 400; a failure after the file was stored removes it.
 */
async function upload (m: Media, request: FastifyRequest, reply: FastifyReply): Promise<string> {
  if (!request.isMultipart()) throw notMultipart(request)
  let storage: MediaStorage | undefined
  let key: string | undefined
  const parts = request.parts()[Symbol.asyncIterator]()
  const next = async (): Promise<IteratorResult<MultipartFile | MultipartValue>> => await parts.next().catch((error: Error) => { throw malformed(error) })
  try {
    for (let result = await next(); result.done !== true; result = await next()) {
      const part = result.value
      if (part.type === 'field') {
        columnPart(part, storage)
        storage = m.storageOf(String(part.value))
      } else {
        key = await filePart(m, request, part, storage, key)
      }
    }
  } catch (error) {
    if (key !== undefined) await storage!.deleteFile(key).catch((failure: unknown) => request.log.error({ err: failure }, 'an upload refused after it was stored could not be removed'))
    refused(request, reply)
    throw error
  }
  if (storage === undefined) throw refuse('The column field is required.')
  if (key === undefined) throw refuse('The file field is required.')
  return key
}

function columnPart (part: MultipartValue, storage: MediaStorage | undefined): void {
  // A file sent without a filename reaches the parser as text: say so, not that the field is unknown.
  if (part.fieldname === 'file') throw refuse('The file field must be a file, with a filename.')
  if (part.fieldname !== 'column') throw withBody(refuse(`${part.fieldname} isn't a valid field: send column, then file.`), { validFields: ['column', 'file'] })
  if (storage !== undefined) throw refuse('The column field is given more than once.')
}

async function filePart (m: Media, request: FastifyRequest, part: MultipartFile, target: MediaStorage | undefined, stored: string | undefined): Promise<string> {
  if (part.fieldname === 'column') throw refuse('The column field must be text, not a file.')
  if (part.fieldname !== 'file') throw withBody(refuse(`${part.fieldname} isn't a valid field: send column, then file.`), { validFields: ['column', 'file'] })
  if (stored !== undefined) throw refuse('Send one file only.')
  if (target === undefined) throw refuse('The column field must come before the file.')
  // The parser takes a part of type application/octet-stream for a file even without a
  // filename: its name is then missing, which the rules refuse as empty, not a 500.
  const name = part.filename ?? ''
  target.validateFileName(name)
  await m.c.validate('storeFile', request)
  return await target.storeFile(name, limited(part.file, m.maxBytes), { user: (request as { user?: unknown }).user })
}

/**
 * A refused upload may still be arriving: what is left is read and dropped while the answer
 * goes out, and the connection is closed after it rather than kept for another request (Node
 * would otherwise stop reading once the answer is sent, leaving the client blocked mid-upload).
 */
function refused (request: FastifyRequest, reply: FastifyReply): void {
  if (request.raw.readableEnded) return
  reply.header('connection', 'close')
  request.raw.unpipe()
  request.raw.resume()
}
