import { hash } from 'node:crypto'

/*
 * Entity tags of rows (SPEC §7.3, RFC 9110 §8.8.3 and §13.1). An ETag is a strong validator:
 * a hash of the row exactly as served, so two answers with the same ETag have the same bytes
 * (the same fields, the same values). Hand-written: @fastify/etag hashes whole payloads after
 * serialisation, too late to compare before a write, and knows nothing of If-Match.
 */

/**
 * `"<hash>"`: the SHA-256 of the row's JSON, base64url, quoted as RFC 9110 wants. One-shot
 * `hash`, the same digest without a Hash object per row: every GET `/:id/` and write pays it.
 */
export function rowETag (row: Readonly<Record<string, unknown>>): string {
  return `"${hash('sha256', JSON.stringify(row), 'base64url')}"`
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
