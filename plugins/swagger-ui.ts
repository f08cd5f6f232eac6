import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui'
import { generateToken } from '../lib/auth/token.js'
import { csrfNamesOf, isCsrfToken, type CsrfNames } from '../lib/web/csrf.js'
import { allowSources } from '../lib/web/csp.js'

/**
 * What the Swagger UI page needs from the browser-security plugins (SPEC §5.5, §5.6), as
 * options of @fastify/swagger-ui, so plugins/openapi.ts only spreads them in.
 */

const SCRIPT = 'tablecrud-csrf.js'

/**
 * The served script (no inline script: CSP) that copies each `csrf` cookie into its header on
 * Swagger UI's same-origin requests. The names are read when the script is requested, so a
 * `csrf` plugin registered after `openApi` counts.
 */
export function csrfScript (names: ReadonlyArray<Pick<CsrfNames, 'cookieName' | 'headerName'>>): string {
  return `'use strict'
window.tablecrudCsrf = function (request) {
  var names = ${JSON.stringify(names.map(({ cookieName, headerName }) => ({ cookieName, headerName })))}
  var url
  try { url = new URL(request.url, window.location.href) } catch (e) { return request }
  if (url.origin !== window.location.origin) return request
  var cookies = document.cookie.split(';')
  names.forEach(function (name) {
    cookies.forEach(function (cookie) {
      var at = cookie.indexOf('=')
      if (at > 0 && cookie.slice(0, at).trim() === name.cookieName) request.headers[name.headerName] = decodeURIComponent(cookie.slice(at + 1).trim())
    })
  })
  return request
}
`
}

/**
 * The `Set-Cookie` values that give a browser the cookie of each `csrf` plugin it lacks (or
 * holds with a value that is no token), with the attributes the plugin sets (SPEC §5.5): the
 * page may be outside every `csrf` context, and a person may open it first.
 */
export function missingCsrfCookies (names: readonly CsrfNames[], cookieHeader: string | undefined): string[] {
  const held = new Map((cookieHeader ?? '').split(';').map((pair) => {
    const at = pair.indexOf('=')
    return [pair.slice(0, Math.max(at, 0)).trim(), pair.slice(at + 1).trim()]
  }))
  // Two plugins may share a cookie (with other headers): one token for it.
  const issued = new Map<string, string>()
  for (const { cookieName, maxAge } of names) {
    if (!isCsrfToken(held.get(cookieName)) && !issued.has(cookieName)) issued.set(cookieName, `${cookieName}=${generateToken()}; Max-Age=${maxAge}; Path=/; SameSite=Lax`)
  }
  return [...issued.values()]
}

/* c8 ignore start: serialised into swagger-initializer.js and run by the browser (test/browser/csrf.test.ts) */
function requestInterceptor<R> (request: R): R {
  const copy = (globalThis as { tablecrudCsrf?: (request: R) => R }).tablecrudCsrf
  return copy === undefined ? request : copy(request)
}
/* c8 ignore stop */

type UiOptions = Omit<FastifySwaggerUiOptions, 'routePrefix'>
type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>

/** The `onRequest` hook of the page's routes: the CSRF script's answer brings the cookies it copies. */
function issueCsrfCookies (server: object): Hook {
  return async (request, reply) => {
    if (!request.url.split('?')[0]!.endsWith(`/${SCRIPT}`)) return
    const cookies = missingCsrfCookies(csrfNamesOf(server), request.headers.cookie)
    if (cookies.length > 0) reply.header('set-cookie', cookies)
  }
}

/**
 * CSP hashes of the `<style>` elements Swagger UI's top bar creates (its logo is an SVG with a
 * style sheet inside), read from the installed bundle so an upgrade keeps them right.
 */
async function swaggerUiStyleHashes (): Promise<string[]> {
  const root = dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui'))
  const preset = await readFile(join(root, 'static', 'swagger-ui-standalone-preset.js'), 'utf8')
  return [...preset.matchAll(/createElement\("style",null,("(?:[^"\\]|\\.)*")\)/g)]
    .map((match) => `'sha256-${createHash('sha256').update(JSON.parse(match[1]!) as string).digest('base64')}'`)
}

/**
 * The integrator's @fastify/swagger-ui options with: the CSRF script among the theme's scripts,
 * its answer setting the CSRF cookies the browser lacks (after the integrator's own `onRequest`
 * hooks), and Swagger UI's `requestInterceptor` calling it (unless the integrator gave their own
 * interceptor, which then has to copy the token itself); and the page's CSP, when a `csp`
 * plugin sets one, allowing what Swagger UI needs beyond `default-src 'self'`: the `data:`
 * images of its stylesheet and logo, and the hashes of its logo's style sheet.
 */
export async function secureSwaggerUi (server: object, ui: UiOptions): Promise<UiOptions> {
  const script = { filename: SCRIPT, get content () { return csrfScript(csrfNamesOf(server)) } }
  const styles = await swaggerUiStyleHashes()
  const transform = ui.transformStaticCSP
  const secure = (policy: string): string => allowSources(allowSources(policy, 'img-src', ['data:']), 'style-src', styles)
  const hooks = ui.uiHooks ?? {}
  return {
    ...ui,
    uiHooks: { ...hooks, onRequest: [...[hooks.onRequest ?? []].flat(), issueCsrfCookies(server)] as unknown as Hook },
    uiConfig: { requestInterceptor, ...ui.uiConfig },
    theme: { ...ui.theme, js: [...(ui.theme?.js ?? []), script] },
    transformStaticCSP: (header) => secure(transform === undefined ? header : transform(header))
  }
}
