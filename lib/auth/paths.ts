/**
 * Matches request URLs against `excludedPaths` (SPEC §3.1): an entry ending in `*` is a prefix
 * (`/docs/*` matches `/docs/` and `/docs/x`, not `/docs`), any other entry must equal the
 * path. The query string is not part of the path. The raw path is compared, not a decoded or
 * normalised one: a request that spells a path differently is not excluded and must
 * authenticate, which is the safe way to be wrong.
 */
export function pathMatcher (entries: readonly string[]): (url: string) => boolean {
  const exact = new Set<string>()
  const prefixes: string[] = []
  for (const entry of entries) {
    if (entry.endsWith('*')) prefixes.push(entry.slice(0, -1))
    else exact.add(entry)
  }
  return (url) => {
    const q = url.indexOf('?')
    const path = q === -1 ? url : url.slice(0, q)
    return exact.has(path) || prefixes.some((p) => path.startsWith(p))
  }
}

/** The reason an `excludedPaths` option is unusable, or null. */
export function excludedPathsProblem (entries: unknown): string | null {
  if (!Array.isArray(entries)) return 'must be an array of paths'
  for (const entry of entries) {
    if (typeof entry !== 'string' || !entry.startsWith('/')) return `has ${JSON.stringify(entry)}, which is not a path starting with /`
    if (entry.indexOf('*') !== -1 && entry.indexOf('*') !== entry.length - 1) return `has ${JSON.stringify(entry)}: * is allowed only at the end`
  }
  return null
}
