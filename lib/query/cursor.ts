import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/*
 * Keyset cursors (SPEC §7.1): the sort-key values of the last row of a page, sealed with
 * AES-256-GCM. Encryption, not just a MAC, because the primary key (the tiebreaker of every
 * order) may be a secret column, and a cursor must carry no secret value in clear. The query
 * the cursor was made for (table, order, filters and their values) is the additional
 * authenticated data: a cursor replayed on another query, or altered, fails to open.
 */

/** One key per process unless the integrator gives one (several instances behind a balancer must share it). */
const PROCESS_KEY = randomBytes(32)

const IV_BYTES = 12
const TAG_BYTES = 16

/** A 32-byte AES key from the `cursorSecret` option, or the process's own. */
export function cursorKey (secret: string | undefined): Buffer {
  return secret === undefined ? PROCESS_KEY : createHash('sha256').update(secret).digest()
}

/** The text of sort-key values, in order; null where the row's value is NULL. */
export type CursorValues = ReadonlyArray<string | null>

export function sealCursor (key: Buffer, binding: string, values: CursorValues): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(binding))
  const sealed = Buffer.concat([cipher.update(JSON.stringify(values)), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')
}

/** The values a cursor holds, or undefined when it does not open for this binding (or is no cursor at all). */
export function openCursor (key: Buffer, binding: string, text: string, length: number): CursorValues | undefined {
  const raw = Buffer.from(text, 'base64url')
  // Node's decoder skips what is not base64url and reads padding and the last character's
  // spare bits leniently: only the exact spelling issued is the cursor (SPEC §7.1).
  if (raw.length <= IV_BYTES + TAG_BYTES || raw.toString('base64url') !== text) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES))
    decipher.setAAD(Buffer.from(binding))
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
    const plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()])
    const values: unknown = JSON.parse(plain.toString())
    // Sealed by us for this binding, so well formed; checked anyway, as a key may be shared.
    if (!Array.isArray(values) || values.length !== length || !values.every((v) => v === null || typeof v === 'string')) return undefined
    return values as CursorValues
  } catch {
    return undefined
  }
}
