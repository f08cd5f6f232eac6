import { createCipheriv, createDecipheriv, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto'

/**
 * The cryptography of MFA secrets (SPEC §5.4), pure and database-free: the TOTP secret
 * encrypted at rest with AES-256-GCM, and recovery codes kept as salted hashes.
 */

/** An AES-256 key as the integrator gives it: 32 bytes, as a Buffer, 64 hex characters or base64. */
export type EncryptionKey = Buffer | string

export interface MfaKey {
  /** Stored beside each ciphertext, so decryption picks its key without trying them all. */
  readonly id: string
  readonly key: Buffer
}

const KEY_BYTES = 32
export const KEY_RULE = 'must be 32 bytes (a Buffer, 64 hex characters or base64), or a non-empty array of them'

function keyBytes (value: unknown): Buffer | null {
  if (Buffer.isBuffer(value)) return value.length === KEY_BYTES ? Buffer.from(value) : null
  if (typeof value !== 'string') return null
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex')
  // 43 base64 (or base64url) characters, padded or not, are 32 bytes exactly.
  return /^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value) ? Buffer.from(value, 'base64') : null
}

/**
 * A key's id: 8 hex characters of an HMAC keyed by it. It names the key in the stored value
 * (so a rotated-out key is found at once) and says nothing usable about the key itself.
 */
function keyId (key: Buffer): string {
  return createHmac('sha256', key).update('fastify-tablecrud/mfa-key-id').digest('hex').slice(0, 8)
}

/**
 * The keys of the `encryptionKey` option, the encrypting one first; null when the option is
 * missing, short or malformed (the caller throws the option error).
 */
export function parseKeys (option: unknown): MfaKey[] | null {
  const list = Array.isArray(option) ? option : [option]
  if (list.length === 0) return null
  const keys: MfaKey[] = []
  for (const value of list) {
    const key = keyBytes(value)
    if (key === null) return null
    keys.push({ id: keyId(key), key })
  }
  return keys
}

const VERSION = 'v1'

/**
 * Encrypts with the first key. `context` (the user's id) is authenticated data: a ciphertext
 * copied to another user's row does not decrypt there. The result is
 * `v1:<key id>:<iv>:<tag>:<ciphertext>`, base64url parts.
 */
export function encryptSecret (keys: readonly MfaKey[], plaintext: string, context: string): string {
  const { id, key } = keys[0]!
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return [VERSION, id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join(':')
}

/** The plaintext of `encryptSecret`'s output, or null when no key opens it or it was altered. */
export function decryptSecret (keys: readonly MfaKey[], stored: string, context: string): string | null {
  const parts = stored.split(':')
  if (parts.length !== 5 || parts[0] !== VERSION) return null
  const [, id, iv, tag, ciphertext] = parts as [string, string, string, string, string]
  const found = keys.find((k) => k.id === id)
  if (found === undefined) return null
  try {
    const decipher = createDecipheriv('aes-256-gcm', found.key, Buffer.from(iv, 'base64url'))
    decipher.setAAD(Buffer.from(context, 'utf8'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8')
  } catch {
    return null // a wrong tag: the value was altered, or the id collided with another key's
  }
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** A recovery code: 12 characters of `[a-z0-9]` (62 bits), written `xxxxxx-xxxxxx`. */
export function generateRecoveryCode (): string {
  let code = ''
  for (let i = 0; i < 12; i++) code += ALPHABET[randomInt(ALPHABET.length)]
  return `${code.slice(0, 6)}-${code.slice(6)}`
}

/**
 * A code as typed, reduced to its 12 characters: case and the dash (or spaces) do not matter.
 * Null when it cannot be a recovery code.
 */
export function normalizeRecoveryCode (input: string): string | null {
  if (input.length > 32) return null
  const code = input.toLowerCase().replace(/[\s-]/g, '')
  return /^[a-z0-9]{12}$/.test(code) ? code : null
}

/**
 * The stored form of a recovery code: `<salt>$<HMAC-SHA256(salt, code)>`, hex. A code has 62
 * random bits, so a fast salted hash is enough (a slow one guards guessable passwords); the
 * per-code salt keeps equal codes from having equal hashes.
 */
export function hashRecoveryCode (code: string, salt = randomBytes(16)): string {
  const normal = normalizeRecoveryCode(code) ?? code
  return `${salt.toString('hex')}$${createHmac('sha256', salt).update(normal, 'utf8').digest('hex')}`
}

/**
 * The stored hash that `input` matches, or null. Every hash is checked, in constant time each,
 * so the time taken does not tell which code (if any) matched.
 */
export function matchRecoveryCode (input: string, hashes: readonly string[]): string | null {
  const code = normalizeRecoveryCode(input)
  let found: string | null = null
  for (const stored of hashes) {
    const [salt, digest] = stored.split('$')
    if (salt === undefined || digest === undefined || !/^[0-9a-f]{32}\$[0-9a-f]{64}$/.test(stored)) continue
    const expected = Buffer.from(digest, 'hex')
    const actual = createHmac('sha256', Buffer.from(salt, 'hex')).update(code ?? '', 'utf8').digest()
    if (timingSafeEqual(actual, expected) && code !== null) found = stored
  }
  return found
}
