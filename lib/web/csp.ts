/**
 * Content-Security-Policy header values (SPEC §5.6), written once at registration: `default-src`
 * first, the integrator's other directives in their order, `report-uri` last, joined by `; `.
 */

export type Sources = string | readonly string[]

export interface PolicyOptions {
  defaultSrc?: Sources
  reportUri?: string
  directives?: Readonly<Record<string, Sources>>
}

/** `scriptSrc` → `script-src`; a name already in kebab case is kept. */
export function directiveName (name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
}

/** Characters that would end a source list, a directive or the header. */
const BREAKS = /[;,\r\n\0]/
const NAME = /^[a-z][a-z-]*$/

/** Why `sources` cannot be a directive's value, or null when it can. */
export function sourcesProblem (sources: unknown): string | null {
  const list = typeof sources === 'string' ? [sources] : sources
  if (!Array.isArray(list) || list.length === 0) return 'must be a source or a non-empty array of sources'
  if (!list.every((s) => typeof s === 'string' && s.trim() !== '' && !BREAKS.test(s))) return 'must hold non-empty sources without ; , or line breaks'
  return null
}

/** Why `directives` cannot be used, or null: each name a directive, each value sources, none set by another option. */
export function directivesProblem (directives: unknown): string | null {
  if (typeof directives !== 'object' || directives === null || Array.isArray(directives)) return 'must be an object of directive: sources'
  for (const [key, value] of Object.entries(directives)) {
    const name = directiveName(key)
    if (!NAME.test(name)) return `has ${JSON.stringify(key)}, which is not a directive name`
    if (name === 'default-src' || name === 'report-uri') return `cannot set ${name}: use the ${name === 'default-src' ? 'defaultSrc' : 'reportUri'} option`
    const problem = sourcesProblem(value)
    if (problem !== null) return `${key} ${problem}`
  }
  return null
}

const join = (sources: Sources): string => typeof sources === 'string' ? sources : sources.join(' ')

/** The header value: `default-src 'self'`, then each directive, then `report-uri <uri>`. Options are checked before. */
export function policyOf (options: PolicyOptions): string {
  const parts = [`default-src ${join(options.defaultSrc ?? "'self'")}`]
  for (const [key, value] of Object.entries(options.directives ?? {})) parts.push(`${directiveName(key)} ${join(value)}`)
  if (options.reportUri !== undefined) parts.push(`report-uri ${options.reportUri}`)
  return parts.join('; ')
}

const splitPolicy = (policy: string): string[] => policy.split(';').map((d) => d.trim()).filter((d) => d !== '')
const sourcesOf = (directive: string): string[] => directive.split(/\s+/).slice(1)
const find = (directives: string[], name: string): number => directives.findIndex((d) => d.toLowerCase() === name || d.toLowerCase().startsWith(`${name} `))

/**
 * The policy with `extra` sources allowed for one fetch directive (`img-src`, `style-src`...):
 * added to the directive, or to a copy of `default-src` when the directive is absent (placed
 * before `report-uri`). A directive that already allows anything (`*`, or `'unsafe-inline'` when
 * hashes are added, which would switch it off) is kept; `'none'` is replaced. A policy with
 * neither the directive nor `default-src` restricts nothing there and is kept.
 */
export function allowSources (policy: string, name: string, extra: readonly string[]): string {
  const directives = splitPolicy(policy)
  const at = find(directives, name)
  const fallback = find(directives, 'default-src')
  if (at < 0 && fallback < 0) return policy
  const current = sourcesOf(directives[at < 0 ? fallback : at]!)
  const hashes = extra.some((s) => s.startsWith("'sha"))
  if (current.includes('*') || (hashes && current.includes("'unsafe-inline'"))) return policy
  const sources = [...current.filter((s) => s !== "'none'"), ...extra.filter((s) => !current.includes(s))]
  const directive = [name, ...sources].join(' ')
  if (at >= 0) directives[at] = directive
  else {
    const report = find(directives, 'report-uri')
    directives.splice(report < 0 ? directives.length : report, 0, directive)
  }
  return directives.join('; ')
}
