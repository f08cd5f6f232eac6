import { chmod, mkdir, open, readdir, rm } from 'node:fs/promises'
import { resolve, join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { errorCode, optionError, TABLECRUD_ERR_MEDIA_EXISTS, TABLECRUD_ERR_MEDIA_NOT_FOUND } from '../errors.js'
import { checkKey } from './names.js'
import { checkKeys, MediaStorage, type MediaStorageOptions } from './storage.js'

/**
 * The options of `localMediaStorage`.
 * @example
 * const options: LocalMediaStorageOptions = { column: movie.columnMap.get('poster')!, mediaPath: './media', filePermissions: 0o640 }
 */
export interface LocalMediaStorageOptions extends MediaStorageOptions {
  /** The folder the files go in; created (with its parents) when missing. */
  mediaPath: string
  /** Mode of each stored file. Default 0o600: readable by the server's user only. */
  filePermissions?: number
  /** Where the folder is served, for `generateFileUrl` without a `rootUrl`. Default `/media`. */
  rootUrl?: string
}

const PLUGIN = 'localMediaStorage'

/**
 * Files in a folder on the server's disk (SPEC §5.8); made by `localMediaStorage`.
 * @example
 * const posters: LocalMediaStorage = localMediaStorage({ column, mediaPath: './media' })
 * await posters.deleteUnusedFiles(app.pg)
 */
export class LocalMediaStorage extends MediaStorage {
  readonly mediaPath: string
  readonly filePermissions: number
  readonly rootUrl: string

  constructor (options: LocalMediaStorageOptions) {
    super(PLUGIN, options)
    if (typeof options.mediaPath !== 'string' || options.mediaPath === '') throw optionError(PLUGIN, 'mediaPath', 'must be a non-empty path')
    const mode = options.filePermissions ?? 0o600
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw optionError(PLUGIN, 'filePermissions', 'must be a file mode from 0o000 to 0o777')
    const rootUrl = options.rootUrl ?? '/media'
    if (typeof rootUrl !== 'string') throw optionError(PLUGIN, 'rootUrl', 'must be a string')
    this.mediaPath = resolve(options.mediaPath)
    this.filePermissions = mode
    this.rootUrl = rootUrl
  }

  /** The file's path: keys are plain names (checkKey), so it is always directly in the folder. */
  private path (key: string): string {
    return join(this.mediaPath, checkKey(key))
  }

  protected async write (key: string, data: Readable): Promise<void> {
    await mkdir(this.mediaPath, { recursive: true }).catch((error: unknown) => {
      // A file where the folder should be: the store cannot be written, a 503 (issue 27), not a 500.
      throw errorCode(error) === 'EEXIST' ? Object.assign(new Error(`${this.mediaPath} is not a folder`), { code: 'ENOTDIR', cause: error }) : error
    })
    const path = this.path(key)
    // 'wx' fails when the file exists: a key is never reused, and another upload's file never
    // overwritten. Opened before the data flows, so a failure that comes at once (a first
    // chunk over the size limit) cannot remove the file before a lazy open creates it.
    const handle = await open(path, 'wx', this.filePermissions).catch((error: unknown) => {
      data.destroy()
      throw errorCode(error) === 'EEXIST' ? new TABLECRUD_ERR_MEDIA_EXISTS(key) : error
    })
    try {
      await pipeline(data, handle.createWriteStream())
    } catch (error) {
      await rm(path, { force: true })
      throw error
    }
    // The umask may have narrowed the mode given at creation; the option is what the integrator asked for.
    await chmod(path, this.filePermissions)
  }

  /** `rootUrl` (default the `rootUrl` option) without its trailing `/`, then `/<key>`, the key a URL path segment. */
  async generateFileUrl (key: string, rootUrl: string = this.rootUrl): Promise<string> {
    return `${rootUrl.replace(/\/+$/, '')}/${pathSegment(checkKey(key))}`
  }

  /** The file as a stream; a key without a regular file (missing, or a folder) is a 404. */
  async getFile (key: string): Promise<Readable> {
    const notFound = new TABLECRUD_ERR_MEDIA_NOT_FOUND(JSON.stringify(key))
    const handle = await open(this.path(key), 'r').catch((error: unknown) => {
      throw errorCode(error) === 'ENOENT' ? notFound : error
    })
    if (!(await handle.stat()).isFile()) {
      await handle.close()
      throw notFound
    }
    return handle.createReadStream()
  }

  /** Deletes the file; a key without a file is no error (as on S3). */
  async deleteFile (key: string): Promise<void> {
    await rm(this.path(key), { force: true })
  }

  async bulkDeleteFiles (keys: readonly string[]): Promise<void> {
    for (const key of checkKeys(keys)) await this.deleteFile(key)
  }

  /** The folder's files; names starting with a period (`.gitkeep`) can never be keys and are left out. */
  async getFileKeys (): Promise<string[]> {
    let entries
    try {
      entries = await readdir(this.mediaPath, { withFileTypes: true })
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return []
      throw error
    }
    return entries.filter((e) => e.isFile() && !e.name.startsWith('.')).map((e) => e.name).sort()
  }
}

/**
 * A key as a URL path segment: percent-encoded, but for the characters RFC 3986 lets a segment
 * hold as they are (`$ & + , : ; = @`). Fastify's router leaves those encoded when it decodes a
 * path, so @fastify/static looked for `a%2Bb.png` and answered 404 for the file `a+b.png`
 * (issue 27).
 */
function pathSegment (key: string): string {
  return encodeURIComponent(key).replace(/%(24|26|2B|2C|3A|3B|3D|40)/g, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16)))
}

/**
 * Media storage in a local folder, for `tableCrud`'s `mediaStorage` (SPEC §5.8).
 * @example
 * const posters = localMediaStorage({ column: movie.columnMap.get('poster')!, mediaPath: './media' })
 * const key = await posters.storeFile('poster.png', createReadStream('poster.png'))
 */
export function localMediaStorage (options: LocalMediaStorageOptions): LocalMediaStorage {
  return new LocalMediaStorage(options)
}
