/**
 * What a browser-facing answer needs to know about the request, as pure functions of its
 * headers and fields: whether it asks for a page, and where it may be sent back to after a
 * login (`next`) without becoming an open redirect (docs/auth.md, "Pages for people").
 */

/** The longest `next` kept: a path of a page, not a payload. */
export const MAX_NEXT_LENGTH = 2000

/**
 * `value` when it is a path of this site to send a browser back to, else null. Only a path
 * that starts with one `/` and holds printable ASCII without `\` passes: `//host`, `/\host`
 * (which browsers read as `//host`), a scheme (`https:`, `javascript:`) or a tab or line
 * break (which browsers strip, turning `/\t/host` into `//host`) would leave the site.
 * @example safeNext('/me/?tab=mfa') // '/me/?tab=mfa'; safeNext('//evil.example/') // null
 */
export function safeNext (value: unknown): string | null {
  if (typeof value !== 'string' || value.length > MAX_NEXT_LENGTH) return null
  return /^\/(?![/\\])[\x21-\x5b\x5d-\x7e]*$/.test(value) ? value : null
}

/**
 * The login URL with `next` added to its query (after any query it has).
 * @example withNext('/login/', '/me/') // '/login/?next=%2Fme%2F'
 */
export function withNext (loginUrl: string, next: string): string {
  return `${loginUrl}${loginUrl.includes('?') ? '&' : '?'}next=${encodeURIComponent(next)}`
}

/**
 * Whether an `Accept` header lists `text/html` (with a quality above 0): what a browser sends
 * when it navigates to a page, and what API clients (`*\/*`, `application/json`) do not.
 * @example acceptsHtml('text/html,application/xhtml+xml,*\/*;q=0.8') // true
 */
export function acceptsHtml (accept: string | undefined): boolean {
  if (accept === undefined) return false
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase())
    return type === 'text/html' && !params.some((p) => /^q=0(\.0*)?$/.test(p))
  })
}

/**
 * How long until a limit lets the client in again, in words, from `Retry-After` seconds.
 * @example retryIn(61) // '2 minutes'
 */
export function retryIn (seconds: number): string {
  if (seconds < 60) return seconds === 1 ? '1 second' : `${seconds} seconds`
  const minutes = Math.ceil(seconds / 60)
  return minutes === 1 ? '1 minute' : `${minutes} minutes`
}

/** What a page may say just happened, after a form sent the browser on to it (303). */
export type NoticeKind = 'registered' | 'logged-out' | 'password-changed'

const NOTICES = new Map(Object.entries({
  registered: 'Your account is ready: log in.',
  'logged-out': 'You are logged out.',
  'password-changed': 'Your password is changed: log in with the new one.'
} satisfies Record<NoticeKind, string>))

/**
 * The cookie that carries a notice across the redirect of a form (the `Location` stays the
 * option SPEC §5.1 names); the next built-in page shows it and clears it.
 */
export const NOTICE_COOKIE = 'tablecrud_notice'

/**
 * The words of a notice cookie's value, or null for anything else.
 * @example noticeText('logged-out') // 'You are logged out.'
 */
export function noticeText (value: unknown): string | null {
  return typeof value === 'string' ? NOTICES.get(value) ?? null : null
}
