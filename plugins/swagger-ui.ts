import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui'
import { csrfNamesOf, type CsrfNames } from '../lib/web/csrf.js'
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
export function csrfScript (names: readonly CsrfNames[]): string {
  return `'use strict'
window.tablecrudCsrf = function (request) {
  var names = ${JSON.stringify(names)}
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

/* c8 ignore start: serialised into swagger-initializer.js and run by the browser (test/browser/csrf.test.ts) */
function requestInterceptor<R> (request: R): R {
  const copy = (globalThis as { tablecrudCsrf?: (request: R) => R }).tablecrudCsrf
  return copy === undefined ? request : copy(request)
}
/* c8 ignore stop */

type UiOptions = Omit<FastifySwaggerUiOptions, 'routePrefix'>

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
 * The integrator's @fastify/swagger-ui options with: the CSRF script among the theme's scripts
 * and Swagger UI's `requestInterceptor` calling it (unless the integrator gave their own
 * interceptor, which then has to copy the token itself); and the page's CSP, when a `csp`
 * plugin sets one, allowing what Swagger UI needs beyond `default-src 'self'`: the `data:`
 * images of its stylesheet and logo, and the hashes of its logo's style sheet.
 */
export async function secureSwaggerUi (server: object, ui: UiOptions): Promise<UiOptions> {
  const script = { filename: SCRIPT, get content () { return csrfScript(csrfNamesOf(server)) } }
  const styles = await swaggerUiStyleHashes()
  const transform = ui.transformStaticCSP
  const secure = (policy: string): string => allowSources(allowSources(policy, 'img-src', ['data:']), 'style-src', styles)
  return {
    ...ui,
    uiConfig: { requestInterceptor, ...ui.uiConfig },
    theme: { ...ui.theme, js: [...(ui.theme?.js ?? []), script] },
    transformStaticCSP: (header) => secure(transform === undefined ? header : transform(header))
  }
}
