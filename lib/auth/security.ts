/**
 * The OpenAPI security scheme the auth plugins put on their routes (SPEC §6.21). Routes get
 * `security: [{ bearerAuth: [] }]`; the document must then declare `bearerAuth`, which the
 * OpenAPI integration does for every application in which an auth plugin was registered.
 */
export const BEARER_SCHEME_NAME = 'bearerAuth'

export const BEARER_SECURITY_SCHEME = Object.freeze({
  type: 'http',
  scheme: 'bearer',
  description: 'Authorization: Bearer <token>, from token login or JWT login'
} as const)

/**
 * Applications with an auth plugin, keyed by their HTTP server: every encapsulation context of
 * one Fastify application shares `fastify.server`, so any context can record and any can ask.
 */
const bearerApplications = new WeakSet<object>()

export function recordBearerAuth (server: object): void {
  bearerApplications.add(server)
}

/**
 * The `components.securitySchemes` the application's OpenAPI document needs:
 * `{ bearerAuth: { type: 'http', scheme: 'bearer' } }` once an auth plugin is registered, else `{}`.
 * @example openapi.components.securitySchemes = { ...securitySchemesOf(app.server), ...mine }
 */
export function securitySchemesOf (server: object): Record<string, typeof BEARER_SECURITY_SCHEME> {
  return bearerApplications.has(server) ? { [BEARER_SCHEME_NAME]: BEARER_SECURITY_SCHEME } : {}
}
