/**
 * The OpenAPI security schemes the auth plugins put on their routes (SPEC §6.21, §5.1). Routes
 * get `security: [{ bearerAuth: [] }]` (token and JWT auth) or `[{ cookieAuth: [] }]` (session
 * auth); the document must then declare the scheme, which the OpenAPI integration does for
 * every application in which such a plugin was registered.
 */
export const BEARER_SCHEME_NAME = 'bearerAuth'

/**
 * Swagger UI renders the description as CommonMark: in a code span `<token>` is shown, where
 * bare it would be taken for an HTML tag and vanish.
 */
export const BEARER_SECURITY_SCHEME = Object.freeze({
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'API token or JWT',
  description: '`Authorization: Bearer <token>`, the token from token login or JWT login. Paste the token alone: Swagger UI adds `Bearer `.'
} as const)

/** The scheme name of session auth with the default cookie `id`. */
export const COOKIE_SCHEME_NAME = 'cookieAuth'

/** Whether a scheme name is one `recordCookieAuth` gives: session auth's cookie. */
export function isCookieAuthScheme (name: string): boolean {
  return name === COOKIE_SCHEME_NAME || name.startsWith(`${COOKIE_SCHEME_NAME}_`)
}

export interface BearerSecurityScheme { readonly type: 'http', readonly scheme: 'bearer', readonly bearerFormat: string, readonly description: string }
export interface CookieSecurityScheme { readonly type: 'apiKey', readonly in: 'cookie', readonly name: string, readonly description: string }
export interface HeaderSecurityScheme { readonly type: 'apiKey', readonly in: 'header', readonly name: string, readonly description: string }
export type SecurityScheme = BearerSecurityScheme | CookieSecurityScheme | HeaderSecurityScheme

/**
 * The schemes of each application, keyed by its HTTP server: every encapsulation context of
 * one Fastify application shares `fastify.server`, so any context can record and any can ask.
 */
const applications = new WeakMap<object, Map<string, SecurityScheme>>()

/** Records that the application's routes may refer to the scheme `name`. */
export function recordSecurityScheme (server: object, name: string, scheme: SecurityScheme): void {
  let schemes = applications.get(server)
  if (schemes === undefined) applications.set(server, schemes = new Map())
  schemes.set(name, scheme)
}

export function recordBearerAuth (server: object): void {
  recordSecurityScheme(server, BEARER_SCHEME_NAME, BEARER_SECURITY_SCHEME)
}

/**
 * Records that session auth with this cookie protects routes of the application, and returns
 * the scheme name its routes refer to: `cookieAuth` for the default cookie `id`, else
 * `cookieAuth_<cookieName>`, so two session auths with different cookies are told apart.
 */
export function recordCookieAuth (server: object, cookieName: string): string {
  const name = cookieName === 'id' ? COOKIE_SCHEME_NAME : `${COOKIE_SCHEME_NAME}_${cookieName}`
  recordSecurityScheme(server, name, Object.freeze({
    type: 'apiKey', in: 'cookie', name: cookieName, description: `The session cookie ${cookieName}, from session login`
  }))
  return name
}

/** What the csrf plugin checks (SPEC §5.5), named as its options name them. */
export interface CsrfSettings { readonly cookieName: string, readonly headerName: string, readonly formField: string | null }

/**
 * Records the two schemes a csrf plugin's checked routes require together (SPEC §5.5): its
 * cookie and the header that repeats it, and returns their names: `csrfCookie` and
 * `csrfHeader` for the default names, else suffixed with the name (`csrfHeader_x-token`), as
 * `recordCookieAuth` does. A security requirement is met only when both are sent.
 */
export function recordCsrfSchemes (server: object, { cookieName, headerName, formField }: CsrfSettings): { cookie: string, header: string } {
  const cookie = cookieName === 'csrftoken' ? 'csrfCookie' : `csrfCookie_${cookieName}`
  const header = headerName === 'x-csrftoken' ? 'csrfHeader' : `csrfHeader_${headerName}`
  const field = formField === null ? '' : ` An \`application/x-www-form-urlencoded\` form may send it in the \`${formField}\` field instead.`
  recordSecurityScheme(server, cookie, Object.freeze({
    type: 'apiKey',
    in: 'cookie',
    name: cookieName,
    description: `The CSRF cookie: any GET of this part of the application sets it. Readable by scripts, which copy it into the \`${headerName}\` header.`
  }))
  recordSecurityScheme(server, header, Object.freeze({
    type: 'apiKey',
    in: 'header',
    name: headerName,
    description: `The CSRF token: the value of the \`${cookieName}\` cookie, repeated on every POST, PUT, PATCH and DELETE (a 403 otherwise).${field} A request with an \`Authorization\` header is not checked.`
  }))
  return { cookie, header }
}

/**
 * The `components.securitySchemes` the application's OpenAPI document needs:
 * `{ bearerAuth: { type: 'http', scheme: 'bearer' } }` once a bearer auth plugin is registered,
 * `{ cookieAuth: { type: 'apiKey', in: 'cookie', name: 'id' } }` once session auth is, else `{}`.
 * @example openapi.components.securitySchemes = { ...securitySchemesOf(app.server), ...mine }
 */
export function securitySchemesOf (server: object): Record<string, SecurityScheme> {
  return Object.fromEntries(applications.get(server) ?? [])
}

/** What @fastify/swagger gives a route-level `swaggerTransform` (`swaggerObject` in Swagger 2.0 mode). */
export interface SwaggerTransformArgs {
  schema: unknown
  url: string
  route: unknown
  openapiObject?: { components?: { securitySchemes?: Record<string, unknown>, [key: string]: unknown } }
  [key: string]: unknown
}

export type SwaggerTransformFn = (args: SwaggerTransformArgs) => { schema?: unknown, url?: string }

/** The document-wide transform of the `openApi` plugin, which route-level transforms must not bypass. */
const documentTransforms = new WeakMap<object, SwaggerTransformFn>()

export function recordDocumentTransform (server: object, transform: SwaggerTransformFn): void {
  documentTransforms.set(server, transform)
}

/**
 * A route-level `swaggerTransform` for a protected route. @fastify/swagger reads the scheme of
 * each `security` entry while it builds the operation, and throws (a 500 on the document) when
 * the document does not declare it; the route-level transform is the one hook that runs
 * before, with the document in hand, whether @fastify/swagger was registered through `openApi`
 * or directly. It declares the application's schemes (keeping any the integrator declared),
 * then does what would have run without it: the route's own transform, else `openApi`'s.
 * A `transform` given to @fastify/swagger directly does not run for protected routes (it
 * cannot be reached from here; docs/openapi.md says so).
 */
export function securedSwaggerTransform (server: object, own: unknown): SwaggerTransformFn {
  return (args) => {
    const document = args.openapiObject
    if (document !== undefined) {
      const components = document.components ??= {}
      components.securitySchemes = { ...securitySchemesOf(server), ...components.securitySchemes }
    }
    if (typeof own === 'function') return (own as SwaggerTransformFn)(args)
    if (own === false) return {}
    return documentTransforms.get(server)?.(args) ?? {}
  }
}

type Requirement = Record<string, string[]>
const FORM = 'application/x-www-form-urlencoded'

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The security of a route the csrf plugin checks: each requirement also needs the CSRF cookie
 * and header (a public route: those two alone), except one with a bearer token, whose
 * `Authorization` header exempts the request from the check.
 */
function withCsrf (security: unknown, names: { cookie: string, header: string }): Requirement[] {
  const requirements = Array.isArray(security) && security.length > 0 ? security as Requirement[] : [{}]
  return requirements.map((r) => Object.hasOwn(r, BEARER_SCHEME_NAME) ? r : { ...r, [names.cookie]: [], [names.header]: [] })
}

/** A body taken as JSON or a form, documented per media type: the form's with the CSRF field beside its own. */
function withFormField (schema: Record<string, unknown>, field: string): Record<string, unknown> {
  const { body, consumes } = schema
  if (!isObject(body) || !isObject(body.properties) || !Array.isArray(consumes) || !consumes.includes(FORM)) return schema
  const token = { type: 'string', description: 'The CSRF token, as the header would carry it (the value of the cookie).' }
  const form = { ...body, properties: { ...body.properties, [field]: token } }
  return { ...schema, body: { content: Object.fromEntries(consumes.map((type: string) => [type, { schema: type === FORM ? form : body }])) } }
}

/**
 * The route-level `swaggerTransform` of a route the csrf plugin checks (SPEC §5.5): the route's
 * security with the CSRF schemes (`withCsrf`) and, when forms may carry the token, the form
 * field in its urlencoded body; then what `securedSwaggerTransform` does (the schemes declared,
 * the route's own transform or `openApi`'s run).
 */
export function csrfSwaggerTransform (server: object, names: { cookie: string, header: string }, formField: string | null, own: unknown): SwaggerTransformFn {
  const next = securedSwaggerTransform(server, own)
  return (args) => {
    // A route may have no schema at all.
    const given = (args.schema ?? {}) as Record<string, unknown>
    const secured = { ...given, security: withCsrf(given.security, names) }
    const schema = formField === null ? secured : withFormField(secured, formField)
    const result = next({ ...args, schema })
    return { ...result, schema: result.schema ?? schema }
  }
}
