import { hash } from 'node:crypto'

/*
 * Entity tags of rows (SPEC §7.3, RFC 9110 §8.8.3 and §13.1). An ETag is a strong validator:
 * a hash of the row's JSON exactly as served, so two answers with the same ETag have the same
 * bytes. Hand-written: @fastify/etag hashes whole payloads after serialisation, too late to
 * compare before a write, and knows nothing of If-Match.
 */

/**
 * `"<hash>"`: the SHA-256 of the row's JSON text as the response carries it, base64url, quoted
 * as RFC 9110 wants. The text is the one sent (or, for If-Match, the one GET would send): the
 * tag is of exactly the bytes served, and no second `JSON.stringify` of the row is made. One-shot
 * `hash`, the same digest without a Hash object per row: every GET `/:id/` and write pays it.
 */
export function textETag (text: string): string {
  return `"${hash('sha256', text, 'base64url')}"`
}

/** The entity tags of an If-Match or If-None-Match header: a comma-separated list, or `*`. */
function tags (header: string): string[] {
  return header.split(',').map((t) => t.trim()).filter((t) => t !== '')
}

/**
 * If-Match: `*` matches any current row; otherwise one listed tag must equal `etag` by strong
 * comparison, so a weak tag (`W/"..."`) never matches.
 */
export function ifMatch (header: string, etag: string): boolean {
  const list = tags(header)
  return list.includes('*') || list.includes(etag)
}

/** If-None-Match: `*`, or a listed tag equal to `etag` by weak comparison (`W/` ignored). */
export function ifNoneMatch (header: string, etag: string): boolean {
  const list = tags(header)
  return list.includes('*') || list.some((t) => (t.startsWith('W/') ? t.slice(2) : t) === etag)
}
