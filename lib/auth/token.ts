import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** A new API token: 256 random bits, base64url (43 characters). */
export function generateToken (): string {
  return randomBytes(32).toString('base64url')
}

/**
 * Compares two secrets in time that does not depend on where they differ. Both sides are
 * digested first so their lengths are equal, which `timingSafeEqual` requires and which would
 * otherwise leak the secret's length.
 */
export function safeEqual (a: string, b: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest()
  return timingSafeEqual(digest(a), digest(b))
}

/** RFC 6750's b64token: the characters a bearer token may have. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

export function isBearerToken (value: string): boolean {
  return B64TOKEN.test(value)
}

export type BearerHeader =
  | { token: string }
  | { error: 'missing' | 'format' }

/**
 * Reads `Authorization: Bearer <token>`. The scheme is case-insensitive (RFC 7235); anything
 * but one scheme and one token is a format error.
 */
export function parseBearer (header: string | undefined): BearerHeader {
  if (header === undefined || header.trim() === '') return { error: 'missing' }
  const match = /^Bearer +(\S+) *$/i.exec(header)
  if (match === null || !isBearerToken(match[1]!)) return { error: 'format' }
  return { token: match[1]! }
}
