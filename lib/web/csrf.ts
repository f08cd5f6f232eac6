/**
 * The pure parts of the double-submit CSRF check (SPEC §5.5): which methods are safe, what a
 * token looks like, and whether the `Origin` or `Referer` of a request names an allowed page.
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

/** An origin (`scheme://host[:port]`, lower case, default port dropped) of an http or https URL, or null. */
export function originOf (url: string): string | null {
  try {
    const parsed = new URL(url)
    return (parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.host !== '' ? parsed.origin : null
  } catch {
    return null
  }
}

/** The pages allowed to post besides the request's own origin: whole origins, or hosts on either scheme. */
export interface AllowedSources { readonly origins: ReadonlySet<string>, readonly hosts: ReadonlySet<string> }

/** Where a request comes from, and where it was sent. */
export interface RequestSource {
  /** The `Origin` and `Referer` headers. */
  readonly origin: string | undefined
  readonly referer: string | undefined
  /** The request's scheme and host as Fastify sees them (`trustProxy` honoured). */
  readonly protocol: string
  readonly host: string
}

/** Whether `source` (an origin) is one of the allowed pages. */
function allowedSource (source: string, allowed: AllowedSources): boolean {
  return allowed.origins.has(source) || allowed.hosts.has(new URL(source).host)
}

/**
 * Whether a state-changing request came from a page allowed to send it (issue 27): the origin of
 * `Origin`, else of `Referer`, must be the request's own origin or an allowed one, over HTTP and
 * HTTPS alike, for another port of the same host is another origin whose page can read the
 * token cookie (cookies ignore ports). An `https` page posting to the same host seen as `http`
 * is its own (a TLS proxy the application does not trust). Without either header a request
 * passes over HTTP (a client that is not a browser) and is refused over HTTPS, where browsers
 * always send `Origin`; `Origin: null` (a sandboxed frame, a `data:` page) is refused.
 */
export function sourceAllowed (request: RequestSource, allowed: AllowedSources): boolean {
  const header = request.origin ?? request.referer
  if (header === undefined) return request.protocol !== 'https'
  const source = originOf(header)
  const own = originOf(`${request.protocol}://${request.host}`)
  if (source === null || own === null) return false
  return source === own || source === own.replace(/^http:/, 'https:') || allowedSource(source, allowed)
}

/**
 * What `Sec-Fetch-Site` refuses, or null: a page of another site, or of another origin of this
 * site (another port of the same host), unless its `Origin` is an allowed one.
 */
export function fetchSiteProblem (site: string | undefined, origin: string | undefined, allowed: AllowedSources): string | null {
  if (site !== 'cross-site' && site !== 'same-site') return null
  const source = origin === undefined ? null : originOf(origin)
  if (source !== null && allowedSource(source, allowed)) return null
  return site === 'cross-site' ? 'Cross-site request refused' : 'Same-site request from another origin refused'
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
