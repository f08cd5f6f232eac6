import type { FastifyPluginAsync, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { FastifyDynamicSwaggerOptions, SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger'
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui'
import { recordDocumentTransform, securitySchemesOf, type SwaggerTransformFn } from '../lib/auth/security.js'
import { optionError, TABLECRUD_ERR_PEER_MISSING } from '../lib/errors.js'
import { allTables } from '../lib/table/table.js'
import { secureSwaggerUi } from './swagger-ui.js'
import { OPENAPI_RULES } from '../schemas/row.js'

/**
 * The document's `info` (OpenAPI 3.1 Info Object).
 * @example
 * const info: OpenApiInfo = { title: 'Movies', version: '1.0.0', description: 'Films and their directors.' }
 */
export interface OpenApiInfo {
  title: string
  version: string
  summary?: string
  description?: string
  termsOfService?: string
  contact?: { name?: string, url?: string, email?: string }
  license?: { name: string, identifier?: string, url?: string }
}

/**
 * One entry of the document's `servers` (OpenAPI 3.1 Server Object).
 * @example
 * const server: OpenApiServer = { url: 'https://api.example.org', description: 'production' }
 */
export interface OpenApiServer {
  url: string
  description?: string
  variables?: Record<string, { default: string, enum?: string[], description?: string }>
}

/*
 * The swagger packages are optional peers: the declarations of this package do not name their
 * types (a project without them, compiled with `skipLibCheck: false`, would fail), so the
 * options passed through are described here, loosely, and handed over as they are.
 */

/**
 * Options for @fastify/swagger (dynamic mode), passed through by `openApi`.
 * @example const swagger: OpenApiSwaggerOptions = { openapi: { tags: [{ name: 'movie', description: 'Films' }] }, hideUntagged: true }
 */
export interface OpenApiSwaggerOptions {
  /** Members of the OpenAPI document: `tags`, `components`, `externalDocs`, `security`... */
  openapi?: { tags?: Array<{ name: string, description?: string }>, components?: Record<string, unknown>, [member: string]: unknown }
  /** Runs on each route after `openApi`'s own. */
  transform?: (args: { schema: any, url: string, route: any, [key: string]: any }) => { schema: any, url: string }
  /** Runs on the document after `openApi`'s own. */
  transformObject?: (document: { openapiObject?: any, swaggerObject?: any }) => any
  hiddenTag?: string
  hideUntagged?: boolean
  exposeHeadRoutes?: boolean
  [option: string]: unknown
}

/**
 * Options for @fastify/swagger-ui, passed through by `openApi` (`routePrefix` is `openApi`'s own).
 * @example const ui: OpenApiUiOptions = { uiConfig: { docExpansion: 'none', persistAuthorization: true } }
 */
export interface OpenApiUiOptions {
  uiConfig?: Record<string, unknown>
  staticCSP?: boolean | string | Record<string, string | string[]>
  uiHooks?: Record<string, unknown>
  theme?: Record<string, unknown>
  logo?: Record<string, unknown> | null
  [option: string]: unknown
}

/**
 * The options of `openApi`; all optional.
 * @example
 * const options: OpenApiOptions = {
 *   routePrefix: '/docs',
 *   info: { title: 'Movies', version: '1.0.0' },
 *   ui: { uiConfig: { docExpansion: 'none' } }
 * }
 */
export interface OpenApiOptions {
  /** Where Swagger UI is served; the document is at `<routePrefix>/json` (and `/yaml`). Default `/docs`. */
  routePrefix?: string
  /** Title, version and the rest of `info`. Default: the name and version in `./package.json`. */
  info?: OpenApiInfo
  /** The document's `servers`. Default none: the UI calls the server it was loaded from. */
  servers?: OpenApiServer[]
  /** Anything else for @fastify/swagger; its `openapi` members are merged into the document. */
  swagger?: OpenApiSwaggerOptions
  /** Anything else for @fastify/swagger-ui (`uiConfig`, `staticCSP`, `uiHooks`, `theme`, ...). */
  ui?: OpenApiUiOptions
}

const NAME = 'openApi'

const optionProblem = (option: string, problem: string): Error => optionError(NAME, option, problem)

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function checkOptions (options: OpenApiOptions): void {
  const { routePrefix, info, servers, swagger, ui } = options
  if (routePrefix !== undefined && (typeof routePrefix !== 'string' || !/^\/[^?#\s]*[^/?#\s]$/.test(routePrefix))) {
    throw optionProblem('routePrefix', 'must be a path such as /docs: a leading slash, no trailing slash')
  }
  if (info !== undefined && (!isObject(info) || typeof info.title !== 'string' || typeof info.version !== 'string')) {
    throw optionProblem('info', 'must be an object with a string title and a string version')
  }
  if (servers !== undefined && (!Array.isArray(servers) || !servers.every((s) => isObject(s) && typeof s.url === 'string'))) {
    throw optionProblem('servers', 'must be an array of objects with a string url')
  }
  if (swagger !== undefined && !isObject(swagger)) throw optionProblem('swagger', 'must be an object')
  if (swagger !== undefined && 'mode' in swagger && (swagger as { mode?: unknown }).mode !== 'dynamic') {
    throw optionProblem('swagger', 'cannot set mode: the document is generated from the routes')
  }
  if (ui !== undefined && !isObject(ui)) throw optionProblem('ui', 'must be an object')
}

/**
 * Loads an optional peer dependency when the plugin is registered, not when the package is
 * imported: an application that documents nothing does not install the swagger packages.
 */
export async function importPeer<T> (specifier: string): Promise<T> {
  try {
    return (await import(specifier) as { default: T }).default
  } catch (error) {
    // The message, not the code: loaders (tsx, tap's) rethrow Node's error without its code. A
    // package that is there but misses one of its own modules is not reported as absent.
    if (!String((error as Error).message).startsWith(`Cannot find package '${specifier}'`)) throw error
    throw new TABLECRUD_ERR_PEER_MISSING(NAME, specifier, '@fastify/swagger @fastify/swagger-ui')
  }
}

/**
 * A body schema as the document shows it: each `extra` annotation (what `/schema/` shows of a
 * column, SPEC §2.8) written `x-extra`, as OpenAPI admits unknown schema keywords as vendor
 * extensions only, and the rules the server checks in code added (`OPENAPI_RULES`: a Numeric's
 * digits, no NUL in text, the columns a row cannot do without).
 * A copy; a member of `properties` named `extra` is a column, and stays.
 */
export function vendorExtra (schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(vendorExtra)
  if (!isObject(schema)) return schema
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => {
    if (key === 'properties' && isObject(value)) return [key, Object.fromEntries(Object.entries(value).map(([name, v]) => [name, vendorExtra(v)]))]
    return [key === 'extra' ? 'x-extra' : key, vendorExtra(value)]
  }))
  const rules = (schema as { [OPENAPI_RULES]?: Record<string, unknown> })[OPENAPI_RULES]
  return rules === undefined ? copy : { ...copy, ...rules }
}

/** The tags of the auth plugins' routes, and what they hold. */
const PLUGIN_TAGS: ReadonlyMap<string, string> = new Map([
  ['login', 'Token and JWT login: a username and password for a bearer token (`bearerAuth`).'],
  ['sessions', 'Session login and logout (the session cookie, `cookieAuth`), with the pages of the built-in forms.'],
  ['accounts', 'Sign-up and password change.'],
  ['mfa', 'Multi-factor authentication with an authenticator app.']
])

/** A table's tag, described by the table's `helpText` when it has one; an auth plugin's, by what it holds. */
function tagOf (name: string): { name: string, description?: string } {
  const described = allTables().find((table) => table.name === name && table.helpText !== null)
  if (described !== undefined) return { name, description: described.helpText! }
  return PLUGIN_TAGS.has(name) ? { name, description: PLUGIN_TAGS.get(name)! } : { name }
}

const methodsOf = (route: Pick<RouteOptions, 'method'>): string[] => [route.method].flat()

type Json = Record<string, unknown>

/** The media type objects of the request bodies and responses of every operation. */
function mediaObjects (paths: Json): Json[] {
  const out: Json[] = []
  const contentOf = (holder: unknown): void => {
    if (isObject(holder) && isObject(holder.content)) out.push(...Object.values(holder.content).filter(isObject))
  }
  for (const item of Object.values(paths).filter(isObject)) {
    for (const operation of Object.values(item).filter(isObject)) {
      contentOf(operation.requestBody)
      if (isObject(operation.responses)) Object.values(operation.responses).forEach(contentOf)
    }
  }
  return out
}

/** Component names OpenAPI accepts. */
const COMPONENT_NAME = /^[A-Za-z0-9._-]+$/

/**
 * A body schema and the schemas that are bodies within it: the branches of a union (POST `/`
 * takes a row or an array of rows), the items of an array, and the joined rows a property may
 * hold (an object branch of its union: `StudioJoined`). Not its properties themselves, whose
 * titles are column labels.
 */
function bodyShapes (schema: unknown): Json[] {
  if (!isObject(schema)) return []
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : []
  const joined = isObject(schema.properties)
    ? Object.values(schema.properties).flatMap((p) => isObject(p) && Array.isArray(p.anyOf) ? p.anyOf.filter((b) => isObject(b) && b.type === 'object') : [])
    : []
  return [schema, ...branches.flatMap(bodyShapes), ...bodyShapes(schema.items), ...joined.flatMap(bodyShapes)]
}

/**
 * Moves each titled body schema (`MovieRow`, `MovieIn`, `ErrorResponse`...) into
 * `components.schemas` under its title and refers to it, where it appears as a body (or a
 * branch or the items of one: `bodyShapes`) and
 * wherever the same schema is nested in one, so the error shape and each row are written
 * once and typed clients get named types. A title given to different schemas (a table mounted
 * twice with different options) or already taken by a component stays inline.
 */
function hoistBodySchemas (document: Json): void {
  // @fastify/swagger always writes both.
  const schemas = (document.components as { schemas: Json }).schemas
  const media = mediaObjects(document.paths as Json)
  const named = new Map<string, string | null>()
  for (const schema of media.flatMap((object) => bodyShapes(object.schema))) {
    if (typeof schema.title !== 'string' || !COMPONENT_NAME.test(schema.title) || Object.hasOwn(schemas, schema.title)) continue
    const json = JSON.stringify(schema)
    const seen = named.get(schema.title)
    named.set(schema.title, seen === undefined || seen === json ? json : null)
  }
  const referInside = (schema: Json): Json => {
    for (const [key, value] of Object.entries(schema)) {
      if (typeof value === 'object' && value !== null) schema[key] = refer(value)
    }
    return schema
  }
  // A schema object met twice (shared between operations) is changed once, and answered alike.
  const done = new WeakMap<object, unknown>()
  const refer = (schema: unknown): unknown => {
    if (Array.isArray(schema)) return schema.map(refer)
    if (!isObject(schema)) return schema
    if (done.has(schema)) return done.get(schema)
    const name = schema.title
    const match = typeof name === 'string' && named.get(name) === JSON.stringify(schema)
    const result = match ? { $ref: `#/components/schemas/${name}` } : schema
    done.set(schema, result)
    if (!match) referInside(schema)
    else if (!Object.hasOwn(schemas, name)) schemas[name] = referInside(schema)
    return result
  }
  for (const object of media) object.schema = refer(object.schema)
}

/**
 * The OpenAPI 3.1 document of the application (SPEC §4), generated by @fastify/swagger from
 * the route schemas, and Swagger UI with its assets served from the package, both under
 * `routePrefix`. Register it before the routes it documents. When an auth plugin is
 * registered anywhere in the application, before or after this one, the document declares
 * the `bearerAuth` HTTP bearer scheme its routes refer to (SPEC §6.21).
 */
const openApiPlugin: FastifyPluginAsync<OpenApiOptions> = async function openApi (fastify, options) {
  checkOptions(options)
  const routePrefix = options.routePrefix ?? '/docs'
  const swaggerOptions = options.swagger ?? {}
  const given = swaggerOptions.openapi ?? {}
  const givenComponents = (given.components ?? {}) as Record<string, unknown>
  const server = fastify.server

  const components = { ...givenComponents }
  // Read when the document is generated, after every plugin is registered: an auth plugin may
  // come after this one. @fastify/swagger needs the scheme while it builds the operations.
  Object.defineProperty(components, 'securitySchemes', {
    enumerable: true,
    get: () => ({ ...securitySchemesOf(server), ...(givenComponents.securitySchemes as object | undefined) })
  })

  // A route answered with and without its trailing slash is documented once, with it.
  const routes = new Set<string>()
  fastify.addHook('onRoute', (route) => {
    for (const method of methodsOf(route)) routes.add(`${method} ${route.url}`)
  })
  const alias = (route: RouteOptions): boolean =>
    !route.url.endsWith('/') && methodsOf(route).every((method) => routes.has(`${method} ${route.url}/`))

  const transform: SwaggerTransform = (args) => {
    const schema = args.schema?.body === undefined ? args.schema : { ...args.schema, body: vendorExtra(args.schema.body) }
    const own = alias(args.route) ? { schema: { ...schema, hide: true }, url: args.url } : { schema, url: args.url }
    return swaggerOptions.transform === undefined ? own : swaggerOptions.transform({ ...args, ...own })
  }
  // The route-level transforms of protected routes run this one after declaring their scheme.
  recordDocumentTransform(server, transform as SwaggerTransformFn)

  const transformObject: SwaggerTransformObject = (document) => {
    // Always an OpenAPI document: the version is set below.
    const { openapiObject } = document as Extract<typeof document, { openapiObject: unknown }>
    // A top-level tag for each tag of an operation (one per table), after those the integrator declared.
    const tags = [...(given.tags ?? [])]
    const declared = new Set(tags.map((tag) => tag.name))
    // @fastify/swagger always writes paths, each an object of operations.
    const paths = openapiObject.paths as Record<string, Record<string, { tags?: string[] }>>
    for (const path of Object.values(paths)) {
      for (const operation of Object.values(path)) {
        for (const name of operation.tags ?? []) {
          if (!declared.has(name)) tags.push(tagOf(name))
          declared.add(name)
        }
      }
    }
    if (tags.length > 0) openapiObject.tags = tags
    // Swagger UI calls the server it was loaded from; said explicitly, as OpenAPI linters ask.
    // Set here, after the paths are built: @fastify/swagger strips a server's path from them.
    openapiObject.servers ??= [{ url: '/', description: 'The server that serves this document' }]
    hoistBodySchemas(openapiObject as Json)
    return swaggerOptions.transformObject === undefined ? openapiObject : swaggerOptions.transformObject(document)
  }

  const fastifySwagger = await importPeer<typeof import('@fastify/swagger').default>('@fastify/swagger')
  const fastifySwaggerUi = await importPeer<typeof import('@fastify/swagger-ui').default>('@fastify/swagger-ui')
  await fastify.register(fastifySwagger, {
    ...(swaggerOptions as Omit<FastifyDynamicSwaggerOptions, 'mode'>),
    mode: 'dynamic',
    openapi: {
      ...given,
      openapi: '3.1.0',
      ...(options.info === undefined ? {} : { info: options.info }),
      ...(options.servers === undefined ? {} : { servers: options.servers }),
      components
    },
    transform,
    transformObject
  })
  // The page works under the csp plugin's policy and copies the csrf plugin's token (SPEC §5.5, §5.6).
  await fastify.register(fastifySwaggerUi, { ...await secureSwaggerUi(server, (options.ui ?? {}) as FastifySwaggerUiOptions), routePrefix })
}

/**
 * OpenAPI documentation (SPEC §4): the application's OpenAPI 3.1 document at
 * `<routePrefix>/json`, generated from the route schemas (every TableCRUD route, filter,
 * body and response; `bearerAuth` on the routes an auth plugin protects), and Swagger UI at
 * `routePrefix` (default `/docs`) with its assets served locally. Register it before the
 * routes to document.
 * @example
 * await app.register(openApi, { routePrefix: '/docs', info: { title: 'Movies', version: '1.0.0' } })
 * await app.register(tableCrud, { table: movie, prefix: '/api/movies' })
 * await app.ready()
 * const document = app.swagger()
 */
export const openApi = fp(openApiPlugin, { name: 'fastify-tablecrud/openapi', fastify: '5.x' })
