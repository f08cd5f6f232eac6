/**
 * The pure parts of the double-submit CSRF check (SPEC §5.5): which methods are safe, what a
 * token looks like, and whether the `Origin` or `Referer` of a request names an allowed host.
 */

/** Methods that must not change anything, so they are never checked and may receive the cookie. */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])

/** A token this library issues: 32 random bytes in base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/

/**
 * Whether a cookie value is a token this library could have issued. Anything else in the
 * cookie (empty, a value planted with markup in it) is replaced on the next safe request
 * rather than echoed into a page.
 */
export function isCsrfToken (value: unknown): value is string {
  return typeof value === 'string' && TOKEN.test(value)
}

/** The host (`name` or `name:port`, lower case, default port dropped) of an absolute URL, or null. */
export function hostOf (url: string, protocol = 'https'): string | null {
  try {
    const parsed = new URL(url.includes('://') ? url : `${protocol}://${url}`)
    return parsed.host === '' ? null : parsed.host
  } catch {
    return null
  }
}

/**
 * Whether a request over HTTPS came from a page of an allowed host: the host of `Origin`, else
 * of `Referer`, must be the request's own host or one of `allowedHosts` (already normalised by
 * `hostOf`). A request with neither header, or with `Origin: null` (an opaque origin: a
 * sandboxed frame, a `data:` page), is refused: browsers send `Origin` on every POST they make.
 */
export function originAllowed (origin: string | undefined, referer: string | undefined, requestHost: string, allowedHosts: ReadonlySet<string>): boolean {
  const source = origin ?? referer
  if (source === undefined) return false
  const host = hostOf(source)
  if (host === null || !source.includes('://')) return false
  return host === hostOf(requestHost) || allowedHosts.has(host)
}

/**
 * The cookie and header names of the `csrf` plugins of an application, for Swagger UI to copy
 * the token, and the cookie's lifetime in seconds, for the page to issue the cookie.
 */
export interface CsrfNames { cookieName: string, headerName: string, maxAge: number }

/**
 * Applications with a `csrf` plugin, keyed by their HTTP server (every context of one
 * application shares it), so the OpenAPI page, registered anywhere, can copy the token.
 */
const registered = new WeakMap<object, CsrfNames[]>()

export function recordCsrf (server: object, names: CsrfNames): void {
  const list = registered.get(server) ?? []
  if (!list.some((n) => n.cookieName === names.cookieName && n.headerName === names.headerName)) list.push(names)
  registered.set(server, list)
}

/** The cookie and header names of every `csrf` plugin registered in the application of `server`. */
export function csrfNamesOf (server: object): readonly CsrfNames[] {
  return registered.get(server) ?? []
}
