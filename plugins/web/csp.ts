import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import type { FastifyHelmetOptions } from '@fastify/helmet'
import { optionError } from '../../lib/errors.js'
import { directivesProblem, policyOf, sourcesProblem, type Sources } from '../../lib/web/csp.js'

/**
 * Options of `csp` (SPEC §5.6); all optional.
 * @example app.register(csp, { directives: { imgSrc: ["'self'", 'https://images.example.org'] }, reportUri: '/csp-report' } satisfies CspOptions)
 */
export interface CspOptions {
  /** Sources of `default-src`: one string or a list. Default `'self'`. */
  defaultSrc?: Sources
  /** Where browsers report violations: appended as `; report-uri <uri>`. Default none. */
  reportUri?: string
  /** More directives, by name (`imgSrc` or `img-src`): sources as one string or a list. Default none. */
  directives?: Record<string, Sources>
  /** Send `Content-Security-Policy-Report-Only` instead: violations are reported, nothing is blocked. Default false. */
  reportOnly?: boolean
  /**
   * Options of @fastify/helmet for the other security headers, merged over this plugin's
   * (helmet's defaults without `Strict-Transport-Security`, `Referrer-Policy: same-origin`).
   * Its `contentSecurityPolicy` cannot be set: the options above write the policy.
   */
  helmet?: Omit<FastifyHelmetOptions, 'contentSecurityPolicy'>
}

const NAME = 'csp'

function checkOptions (options: CspOptions): void {
  const { defaultSrc, reportUri, directives, reportOnly, helmet } = options
  if (defaultSrc !== undefined) {
    const problem = sourcesProblem(defaultSrc)
    if (problem !== null) throw optionError(NAME, 'defaultSrc', problem)
  }
  if (reportUri !== undefined && (typeof reportUri !== 'string' || !/^[^\s;,\0]+$/.test(reportUri))) {
    throw optionError(NAME, 'reportUri', 'must be a non-empty URI without ; , spaces or line breaks')
  }
  if (directives !== undefined) {
    const problem = directivesProblem(directives)
    if (problem !== null) throw optionError(NAME, 'directives', problem)
  }
  if (reportOnly !== undefined && typeof reportOnly !== 'boolean') throw optionError(NAME, 'reportOnly', 'must be true or false')
  if (helmet !== undefined && (typeof helmet !== 'object' || helmet === null || Array.isArray(helmet))) throw optionError(NAME, 'helmet', 'must be an object of @fastify/helmet options')
  if (helmet !== undefined && 'contentSecurityPolicy' in helmet) throw optionError(NAME, 'helmet', 'cannot set contentSecurityPolicy: use defaultSrc, directives, reportUri and reportOnly')
}

const cspPlugin: FastifyPluginAsync<CspOptions> = async function csp (fastify, options) {
  checkOptions(options)
  const header = options.reportOnly === true ? 'content-security-policy-report-only' : 'content-security-policy'
  const policy = policyOf(options)
  await fastify.register(import('@fastify/helmet'), {
    // Helmet's default: same-origin POSTs would carry `Origin: null` under `no-referrer`, which
    // the CSRF check over HTTPS must refuse. `same-origin` keeps the Origin for this site only.
    referrerPolicy: { policy: 'same-origin' },
    // HSTS (with includeSubDomains) is the TLS terminator's decision for the whole domain, not a
    // plugin's for one context.
    ...(options.helmet?.hsts === undefined ? { strictTransportSecurity: false } : {}),
    ...options.helmet,
    contentSecurityPolicy: false
  } as FastifyHelmetOptions)
  // Written with reply.header, so a route that sets its own (in a hook or handler) keeps it.
  fastify.addHook('onRequest', async function contentSecurityPolicy (_request, reply) {
    reply.header(header, policy)
  })
}

/**
 * Content Security Policy and the other security headers for the context it is registered in
 * (SPEC §5.6): every response carries `Content-Security-Policy: default-src 'self'` (more
 * directives and `; report-uri <uri>` as configured), and the headers of @fastify/helmet
 * (`X-Content-Type-Options: nosniff`, `X-Frame-Options: SAMEORIGIN`, `Referrer-Policy:
 * same-origin`, ...). A route that sets its own policy keeps it. The built-in pages and Swagger
 * UI work under the default policy. Register it before the routes it covers.
 * @example
 * await app.register(csp, { directives: { imgSrc: ["'self'", 'data:'] }, reportUri: '/csp-report' })
 */
export const csp = fp(cspPlugin, { name: 'fastify-tablecrud/csp', fastify: '5.x' })
