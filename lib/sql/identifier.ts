import { createHash } from 'node:crypto'

/**
 * Quoting for names that come from table definitions. Names from a request never reach these:
 * they are looked up in the definition first and only the canonical name is quoted.
 */
export function quoteIdent (name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** A string literal for DDL and other statements that cannot take bind parameters. */
export { quoteLiteral } from '../table/literal.js'

/** PostgreSQL's limit on a name, in bytes: past it, the server cuts the name where it is used. */
export const MAX_IDENTIFIER_BYTES = 63

/** The longest start of `text` that fits in `bytes` bytes of UTF-8, whole characters. */
export function cutToBytes (text: string, bytes: number): string {
  let out = ''
  for (const ch of text) {
    if (Buffer.byteLength(out + ch) > bytes) break
    out += ch
  }
  return out
}

/**
 * The name of an object `createTables` makes, `<base>_<suffix>`. Past 63 bytes PostgreSQL would
 * cut it, and two cut alike (or one cut to its table's name) would be one name: IF NOT EXISTS
 * and duplicate_object would skip the second without a word. So a long one is cut here, whole
 * characters, and told apart by a hash of the whole.
 */
export function objectName (base: string, suffix: string): string {
  const name = `${base}_${suffix}`
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES) return name
  const tail = `_${createHash('sha256').update(name).digest('hex').slice(0, 8)}_${suffix}`
  return cutToBytes(base, MAX_IDENTIFIER_BYTES - Buffer.byteLength(tail)) + tail
}
