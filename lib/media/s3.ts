import { Readable } from 'node:stream'
import { optionError, setupError, TABLECRUD_ERR_MEDIA_NOT_FOUND } from '../errors.js'
import { checkKey, contentTypeOf } from './names.js'
import { checkKeys, MediaStorage, type MediaStorageOptions } from './storage.js'

/**
 * The S3 SDK is an optional peer dependency: only S3 users install it, so it is imported on
 * first use, never at load. The client is typed by what we use of it, for the same reason: the
 * public types must not name a package the integrator may not have.
 * @example
 * const client: S3ClientLike = new S3Client({ region: 'eu-west-1' })
 */
export interface S3ClientLike {
  send: (command: any) => Promise<any>
}

/**
 * The options of `s3MediaStorage`.
 * @example
 * const options: S3MediaStorageOptions = { column, bucket: 'media', folder: 'posters', client, signedUrlExpiry: 600 }
 */
export interface S3MediaStorageOptions extends MediaStorageOptions {
  bucket: string
  /** A prefix inside the bucket (`posters` puts objects at `posters/<key>`); keys in the column never carry it. */
  folder?: string
  /** An `S3Client` of `@aws-sdk/client-s3`. */
  client: S3ClientLike
  /** URLs are presigned (the bucket stays private). Default true; false gives plain object URLs. */
  signUrls?: boolean
  /** Lifetime of a presigned URL in seconds. Default 3600 (S3 allows at most 604800, a week). */
  signedUrlExpiry?: number
  /** More PutObject / CreateMultipartUpload parameters (`CacheControl`, `ACL`, `Metadata`, `ContentDisposition`, ...). */
  uploadMetadata?: Record<string, unknown>
}

type Sdk = typeof import('@aws-sdk/client-s3') & Pick<typeof import('@aws-sdk/s3-request-presigner'), 'getSignedUrl'>

let sdk: Promise<Sdk> | undefined
async function loadSdk (): Promise<Sdk> {
  sdk ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')])
    .then(([s3, presigner]) => ({ ...s3, getSignedUrl: presigner.getSignedUrl }))
    /* c8 ignore next 4 -- the packages are installed here (dev dependencies); this is the message for an integrator without them */
    .catch((error: Error) => {
      sdk = undefined
      throw setupError(`s3MediaStorage needs @aws-sdk/client-s3 and @aws-sdk/s3-request-presigner: npm install them (${error.message})`)
    })
  return await sdk
}

/** Parts of a multipart upload: S3's minimum is 5 MiB; one part is held in memory at a time. */
export const PART_SIZE = 8 * 1024 * 1024
/** Keys per DeleteObjects request: S3's maximum. */
const DELETE_BATCH = 1000
const PLUGIN = 's3MediaStorage'

/**
 * Files as objects of an S3 bucket (SPEC §5.8); made by `s3MediaStorage`.
 * @example
 * const posters: S3MediaStorage = s3MediaStorage({ column, bucket: 'media', client })
 * const url = await posters.generateFileUrl(key)   // presigned for an hour
 */
export class S3MediaStorage extends MediaStorage {
  readonly bucket: string
  readonly folder: string | null
  readonly client: S3ClientLike
  readonly signUrls: boolean
  readonly signedUrlExpiry: number
  readonly uploadMetadata: Readonly<Record<string, unknown>>

  constructor (options: S3MediaStorageOptions) {
    super(PLUGIN, options)
    if (typeof options.bucket !== 'string' || options.bucket === '') throw optionError(PLUGIN, 'bucket', 'must be a non-empty string')
    const folder = options.folder ?? null
    if (folder !== null && (typeof folder !== 'string' || folder.replace(/^\/+|\/+$/g, '') === '')) throw optionError(PLUGIN, 'folder', 'must be a non-empty string')
    if (typeof options.client?.send !== 'function') throw optionError(PLUGIN, 'client', 'must be an S3Client of @aws-sdk/client-s3')
    const signUrls = options.signUrls ?? true
    if (typeof signUrls !== 'boolean') throw optionError(PLUGIN, 'signUrls', 'must be a boolean')
    const expiry = options.signedUrlExpiry ?? 3600
    if (!Number.isInteger(expiry) || expiry < 1 || expiry > 604800) throw optionError(PLUGIN, 'signedUrlExpiry', 'must be an integer from 1 to 604800 seconds')
    const metadata = options.uploadMetadata ?? {}
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw optionError(PLUGIN, 'uploadMetadata', 'must be an object')
    this.bucket = options.bucket
    this.folder = folder === null ? null : folder.replace(/^\/+|\/+$/g, '')
    this.client = options.client
    this.signUrls = signUrls
    this.signedUrlExpiry = expiry
    this.uploadMetadata = Object.freeze({ ...metadata })
  }

  /** The object's key in the bucket: the folder, then the file key. */
  private objectKey (key: string): string {
    return this.folder === null ? checkKey(key) : `${this.folder}/${checkKey(key)}`
  }

  /**
   * Streams the file up without holding it whole: a file smaller than one part is one
   * PutObject; a larger one a multipart upload of PART_SIZE parts, aborted on any failure so
   * no part is left behind. Hand-written rather than @aws-sdk/lib-storage: the loop is short
   * and integrators need one optional package less.
   */
  protected async write (key: string, data: Readable): Promise<void> {
    const s3 = await loadSdk()
    const target = { ContentType: contentTypeOf(key), ...this.uploadMetadata, Bucket: this.bucket, Key: this.objectKey(key) }
    let chunks: Buffer[] = []
    let size = 0
    let uploadId: string | undefined
    const parts: Array<{ ETag: string, PartNumber: number }> = []
    const flush = async (): Promise<void> => {
      const body = Buffer.concat(chunks, size)
      chunks = []
      size = 0
      const PartNumber = parts.length + 1
      const answer = await this.client.send(new s3.UploadPartCommand({ Bucket: this.bucket, Key: target.Key, UploadId: uploadId, PartNumber, Body: body }))
      parts.push({ ETag: answer.ETag, PartNumber })
    }
    try {
      for await (const chunk of data) {
        chunks.push(Buffer.from(chunk as Uint8Array))
        size += (chunk as Uint8Array).length
        if (size < PART_SIZE) continue
        uploadId ??= (await this.client.send(new s3.CreateMultipartUploadCommand(target))).UploadId
        await flush()
      }
      if (uploadId === undefined) {
        await this.client.send(new s3.PutObjectCommand({ ...target, Body: Buffer.concat(chunks, size) }))
        return
      }
      if (size > 0) await flush()
      await this.client.send(new s3.CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: target.Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }))
    } catch (error) {
      if (uploadId !== undefined) {
        await this.client.send(new s3.AbortMultipartUploadCommand({ Bucket: this.bucket, Key: target.Key, UploadId: uploadId })).catch(() => {})
      }
      throw error
    }
  }

  /**
   * A presigned GET URL valid for `signedUrlExpiry` seconds, or, with `signUrls: false`, the
   * plain object URL. The plain one is the presigned one without its query string, so the
   * client's own endpoint rules (region, path style, custom endpoint) make both.
   */
  async generateFileUrl (key: string, _rootUrl?: string): Promise<string> {
    const s3 = await loadSdk()
    const command = new s3.GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) })
    const url = await s3.getSignedUrl(this.client as never, command, { expiresIn: this.signedUrlExpiry })
    return this.signUrls ? url : url.split('?')[0]!
  }

  async getFile (key: string): Promise<Readable> {
    const s3 = await loadSdk()
    try {
      const answer = await this.client.send(new s3.GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }))
      return answer.Body as Readable
    } catch (error) {
      if ((error as Error).name === 'NoSuchKey') throw new TABLECRUD_ERR_MEDIA_NOT_FOUND(JSON.stringify(key))
      throw error
    }
  }

  async deleteFile (key: string): Promise<void> {
    const s3 = await loadSdk()
    await this.client.send(new s3.DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }))
  }

  async bulkDeleteFiles (keys: readonly string[]): Promise<void> {
    checkKeys(keys)
    const s3 = await loadSdk()
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const Objects = keys.slice(i, i + DELETE_BATCH).map((key) => ({ Key: this.objectKey(key) }))
      const answer = await this.client.send(new s3.DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects, Quiet: true } }))
      const failed = (answer.Errors ?? []) as Array<{ Key?: string, Message?: string }>
      if (failed.length > 0) throw new Error(`S3 did not delete ${failed.map((e) => `${String(e.Key)} (${String(e.Message)})`).join(', ')}`)
    }
  }

  /**
   * The objects directly under the folder (or the bucket's root). The listing stops at `/`:
   * keys never contain one, and objects deeper down belong to someone else, so cleaning unused
   * files cannot reach them. ListObjects (v1) pages by marker: every S3-compatible store has it,
   * where some (s3rver among them) break on ListObjectsV2's continuation tokens.
   */
  async getFileKeys (): Promise<string[]> {
    const s3 = await loadSdk()
    const prefix = this.folder === null ? '' : `${this.folder}/`
    const keys: string[] = []
    let marker: string | undefined
    do {
      const page = await this.client.send(new s3.ListObjectsCommand({ Bucket: this.bucket, Prefix: prefix, Delimiter: '/', Marker: marker }))
      const contents = (page.Contents ?? []) as Array<{ Key: string }>
      for (const object of contents) keys.push(object.Key.slice(prefix.length))
      // With a delimiter, S3 names the next marker of a truncated page itself.
      marker = page.IsTruncated === true ? page.NextMarker : undefined
    } while (marker !== undefined)
    return keys.sort()
  }
}

/**
 * Media storage in an S3 bucket (or any S3-compatible store), for `tableCrud`'s `mediaStorage`
 * (SPEC §5.8). Needs `@aws-sdk/client-s3` and `@aws-sdk/s3-request-presigner` installed.
 * @example
 * const posters = s3MediaStorage({ column: movie.columnMap.get('poster')!, bucket: 'my-app', folder: 'posters', client: new S3Client({}) })
 * const url = await posters.generateFileUrl(key)
 */
export function s3MediaStorage (options: S3MediaStorageOptions): S3MediaStorage {
  return new S3MediaStorage(options)
}
