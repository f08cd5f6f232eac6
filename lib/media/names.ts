import { randomUUID } from 'node:crypto'
import { extname } from 'node:path'
import { TABLECRUD_ERR_MEDIA } from '../errors.js'

/**
 * The file types accepted when a storage names none (SPEC §5.8), lower case.
 * @example localMediaStorage({ column, mediaPath: './media', allowedExtensions: [...DEFAULT_EXTENSIONS, 'zip'] })
 */
export const DEFAULT_EXTENSIONS: readonly string[] = Object.freeze([
  'mp3', 'wav', 'csv', 'tsv', 'pdf', 'gif', 'jpeg', 'jpg', 'png', 'svg', 'tif', 'webp', 'rtf', 'txt',
  'mov', 'mp4', 'webm'
])

/**
 * ASCII letters, digits, space and `- _ . ( )`: nothing a shell, a URL or a file system reads specially.
 * @example localMediaStorage({ column, mediaPath: './media', allowedCharacters: [...DEFAULT_CHARACTERS, '+'] })
 */
export const DEFAULT_CHARACTERS: readonly string[] = Object.freeze([
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.()'
])

/** Longer names are refused: no file system keeps more, so such a name is not a real file's. */
export const MAX_NAME_LENGTH = 255

/** A key is a file's name, and file systems hold 255 bytes of one (in UTF-8), whatever the characters. */
const MAX_KEY_BYTES = 255

/** The bytes a key's UUID and the `-` before it take. */
const UUID_BYTES = 37

/** The part of a key taken from the file's name, when the name is longer than this. */
const KEPT_NAME_LENGTH = 50

export interface NameRules {
  /** Lower-case extensions, or null for any. */
  readonly extensions: ReadonlySet<string> | null
  /** Allowed characters, or null for any character but control characters. */
  readonly characters: ReadonlySet<string> | null
}

// Control characters can never be allowed: a NUL ends a path in the kernel, others corrupt logs.
const CONTROL = /\p{Cc}/u

/** A path as a browser or a client may send it, reduced to its last segment (either separator). */
export function baseName (fileName: string): string {
  return fileName.split(/[/\\]/).at(-1)!
}

/**
 * Checks a file's name against the rules of SPEC §5.8, in their order, and returns its base
 * name. Each failure is a 400 `TABLECRUD_ERR_MEDIA` with the SPEC's sentence.
 */
export function checkFileName (fileName: string, rules: NameRules): string {
  const name = baseName(fileName)
  const fail = (message: string): never => { throw new TABLECRUD_ERR_MEDIA(message) }
  if (name === '') fail("The file name can't be empty.")
  if (name.startsWith('.')) fail('File names must not start with a period.')
  if (name.includes('..')) fail("File names must not contain '..'.")
  for (const character of name) {
    if (rules.characters === null ? CONTROL.test(character) : !rules.characters.has(character)) {
      fail(`'${character}' is not allowed in the filename.`)
    }
  }
  const dot = name.lastIndexOf('.')
  if (dot !== -1 && rules.extensions !== null && !rules.extensions.has(name.slice(dot + 1).toLowerCase())) {
    fail("This file type isn't allowed.")
  }
  if (dot === -1 || dot === name.length - 1) fail('The file has no extension.')
  if ([...name].length > MAX_NAME_LENGTH) fail(`The file name must not be longer than ${MAX_NAME_LENGTH} characters.`)
  // Only a long extension or four-byte characters get here (the name part is cut to 50): the
  // local store would fail to open the file, a 500.
  if (Buffer.byteLength(keyParts(name).join('')) + UUID_BYTES > MAX_KEY_BYTES) fail(`The file name is too long to be stored: its key would be over ${MAX_KEY_BYTES} bytes.`)
  return name
}

/** A checked name's key around its UUID: the name without extension, cut to 50 characters when the whole name is longer, and the extension. */
function keyParts (name: string): [string, string] {
  const dot = name.lastIndexOf('.')
  const stem = [...name.slice(0, dot)]
  const kept = [...name].length > KEPT_NAME_LENGTH ? stem.slice(0, KEPT_NAME_LENGTH) : stem
  return [kept.join(''), name.slice(dot)]
}

/**
 * A new key for a checked file name: `<name, cut to 50 characters when the whole name is
 * longer than 50>-<uuid v4>.<ext>`. Characters are counted as code points, so a cut never
 * splits one.
 */
export function fileKey (name: string): string {
  const [kept, extension] = keyParts(name)
  return `${kept}-${randomUUID()}${extension}`
}

/**
 * Refuses a key that is not a plain file name: keys come back from clients (GET
 * `/media/url/`) and must never reach outside the storage's folder or prefix.
 */
export function checkKey (key: string): string {
  if (typeof key !== 'string' || key === '' || key.startsWith('.') || key.includes('..') ||
      /[/\\]/.test(key) || CONTROL.test(key) || Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new TABLECRUD_ERR_MEDIA(`The file key ${JSON.stringify(key)} is invalid.`)
  }
  return key
}

const CONTENT_TYPES = new Map(Object.entries({
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  pdf: 'application/pdf',
  gif: 'image/gif',
  jpeg: 'image/jpeg',
  jpg: 'image/jpeg',
  png: 'image/png',
  svg: 'image/svg+xml',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  webp: 'image/webp',
  rtf: 'application/rtf',
  txt: 'text/plain',
  mov: 'video/quicktime',
  mp4: 'video/mp4',
  webm: 'video/webm'
}))

/** The media type of a key by its extension; unknown ones are plain bytes. */
export function contentTypeOf (key: string): string {
  return CONTENT_TYPES.get(extname(key).slice(1).toLowerCase()) ?? 'application/octet-stream'
}

/** Options as given to a storage, turned into rules; bad ones are refused by the caller's check. */
export function nameRules (extensions: readonly string[] | null | undefined, characters: readonly string[] | null | undefined): NameRules {
  return Object.freeze({
    extensions: extensions === null ? null : new Set((extensions ?? DEFAULT_EXTENSIONS).map((e) => e.replace(/^\./, '').toLowerCase())),
    characters: characters === null ? null : new Set(characters ?? DEFAULT_CHARACTERS)
  })
}
