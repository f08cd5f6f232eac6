import { Readable } from 'node:stream'
import { runnerOf, type DatabaseHandle } from '../db/port.js'
import { CONNECTION_CODES, errorCode, optionError, TABLECRUD_ERR_MEDIA_COLUMN, TABLECRUD_ERR_MEDIA_UNAVAILABLE } from '../errors.js'
import { compileFileKeys } from '../sql/media.js'
import { scalarOf } from '../table/column.js'
import { tableOf, type Table, type TableColumn } from '../table/table.js'
import { checkFileName, checkKey, fileKey, nameRules, type NameRules } from './names.js'

/**
 * What a file's bytes may be given as: a whole buffer, or a stream read once, never buffered whole.
 * @example
 * const data: FileData = createReadStream('poster.png')
 */
export type FileData = Buffer | Uint8Array | Readable

/**
 * The options of `storeFile`.
 * @example
 * await posters.storeFile('poster.png', data, { user: request.user } satisfies StoreFileOptions)
 */
export interface StoreFileOptions {
  /** The user storing the file (`request.user`), for storages that file by user. */
  user?: unknown
}

/**
 * Options every storage takes.
 * @example
 * const common: MediaStorageOptions = { column: movie.columnMap.get('poster')!, allowedExtensions: ['png', 'jpg'] }
 */
export interface MediaStorageOptions {
  /** The column holding the keys: a Varchar, Text, or an Array of them (`table.columnMap.get('poster')`). */
  column: TableColumn
  /** Lower-case extensions accepted; default SPEC §5.8's list; `null` accepts any. */
  allowedExtensions?: readonly string[] | null
  /** Characters accepted in a file name; default ASCII letters, digits, space and `- _ . ( )`; `null` accepts any but control characters. */
  allowedCharacters?: readonly string[] | null
}

const TEXT_TYPES = new Set(['varchar', 'text'])

/** Resolves the column's table and refuses a column that cannot hold keys. */
function columnOf (plugin: string, column: unknown): { table: Table, column: TableColumn } {
  const table = tableOf(column)
  if (table === undefined) throw optionError(plugin, 'column', 'must be a column of a table made by defineTable, such as movie.columnMap.get(\'poster\')')
  const spec = column as TableColumn
  if (!TEXT_TYPES.has(scalarOf(spec).type)) throw new TABLECRUD_ERR_MEDIA_COLUMN()
  return { table, column: spec }
}

function listOption (plugin: string, name: string, value: unknown): readonly string[] | null | undefined {
  if (value === undefined || value === null) return value
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== '')) {
    throw optionError(plugin, name, 'must be a non-empty array of non-empty strings, or null')
  }
  return value
}

/** File-system errors of a folder that cannot be written now: no permission, read-only, full, failing, not a folder. */
const STORE_CODES = new Set([...CONNECTION_CODES, 'ENETUNREACH', 'EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'EIO', 'ENOTDIR'])

/**
 * A write the store itself failed (unreachable, a 5xx from S3, a folder that refuses it) is a
 * 503 like a database outage (SPEC §1), the store's error as its cause; any other error is
 * returned as it is (the caller's, or a bug).
 */
function unavailable (error: unknown): unknown {
  const code = errorCode(error)
  // The AWS SDK's HTTP status, the one field here that is not an error code.
  const { $metadata: metadata } = error as { $metadata?: { httpStatusCode?: number } }
  const outage = (code !== null && STORE_CODES.has(code)) || (metadata?.httpStatusCode ?? 0) >= 500
  return outage ? new TABLECRUD_ERR_MEDIA_UNAVAILABLE({ cause: error }) : error
}

/**
 * What local and S3 storage share: the file-name rules, key making, and the comparison of the
 * stored files with the keys in the column (SPEC §5.8). Extend it for another store.
 * @example
 * const unused = await posters.getUnusedFileKeys(app.pg)   // files no row refers to
 * await posters.deleteUnusedFiles(app.pg)                   // and gone
 */
export abstract class MediaStorage {
  readonly table: Table
  readonly column: TableColumn
  protected readonly rules: NameRules

  constructor (plugin: string, options: MediaStorageOptions) {
    if (typeof options !== 'object' || options === null) throw optionError(plugin, 'options', 'must be an object')
    const { table, column } = columnOf(plugin, options.column)
    this.table = table
    this.column = column
    this.rules = nameRules(listOption(plugin, 'allowedExtensions', options.allowedExtensions), listOption(plugin, 'allowedCharacters', options.allowedCharacters))
  }

  /** Checks a file's name by the rules of SPEC §5.8 (a 400 naming the broken rule) and returns its base name. */
  validateFileName (fileName: string): string {
    return checkFileName(fileName, this.rules)
  }

  /** Checks a file's name (a path is reduced to its base name) and returns the key to store it under. */
  generateFileKey (fileName: string, _user?: unknown): string {
    return fileKey(this.validateFileName(fileName))
  }

  /** Stores the file under a new key and returns the key; a failed write leaves nothing behind. */
  async storeFile (fileName: string, data: FileData, options: StoreFileOptions = {}): Promise<string> {
    const key = checkKey(this.generateFileKey(fileName, options.user))
    const source = data instanceof Readable ? data : isBytes(data) ? Readable.from([data]) : null
    if (source === null) throw new TypeError('storeFile: data must be a Buffer or a readable stream')
    await this.write(key, source).catch((error: unknown) => { throw unavailable(error) })
    return key
  }

  /** Writes a new file; a failure must leave no file (or object) behind. */
  protected abstract write (key: string, data: Readable): Promise<void>

  abstract generateFileUrl (key: string, rootUrl?: string): Promise<string>
  abstract getFile (key: string): Promise<Readable>
  abstract deleteFile (key: string): Promise<void>
  abstract bulkDeleteFiles (keys: readonly string[]): Promise<void>
  /** Every key in the folder or under the bucket prefix, sorted. */
  abstract getFileKeys (): Promise<string[]>

  /** Every distinct key the column holds (an Array column's elements one by one), sorted. */
  async getFileKeysFromDb (pool: DatabaseHandle): Promise<string[]> {
    const result = await runnerOf(pool).run<{ key: string }>(compileFileKeys(this.table, this.column))
    return result.rows.map((r) => r.key)
  }

  /** The stored keys no row refers to. */
  async getUnusedFileKeys (pool: DatabaseHandle): Promise<string[]> {
    const used = new Set(await this.getFileKeysFromDb(pool))
    return (await this.getFileKeys()).filter((key) => !used.has(key))
  }

  /** Deletes the stored files no row refers to, and returns their keys. */
  async deleteUnusedFiles (pool: DatabaseHandle): Promise<string[]> {
    const unused = await this.getUnusedFileKeys(pool)
    await this.bulkDeleteFiles(unused)
    return unused
  }
}

function isBytes (data: unknown): data is Uint8Array {
  return data instanceof Uint8Array
}

/** Checks every key before touching any file, so a bad key in a list deletes nothing. */
export function checkKeys (keys: readonly string[]): readonly string[] {
  if (!Array.isArray(keys)) throw new TypeError('bulkDeleteFiles: keys must be an array')
  for (const key of keys) checkKey(key)
  return keys
}
