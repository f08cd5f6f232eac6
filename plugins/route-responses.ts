import type { FastifyInstance, RouteOptions } from 'fastify'

/** @fastify/swagger's key for a response's description, beside the body schema. */
const DESCRIPTION = 'x-response-description'

type Responses = Record<string, Record<string, unknown>>

/**
 * For OpenAPI: adds `responses` (status: schema) to each route registered in the context from
 * now on that documents its responses and for which `applies` holds, so every error a plugin's
 * hook can answer (401, 403, 429...) is listed on the routes it guards (docs/openapi.md). A
 * status the route documents already keeps its schema, its description joined with ours.
 */
export function documentResponses (fastify: FastifyInstance, responses: Responses, applies: (route: RouteOptions) => boolean = () => true): void {
  fastify.addHook('onRoute', (route) => {
    const own = route.schema?.response as Responses | undefined
    if (own === undefined || !applies(route)) return
    const merged: Responses = { ...responses }
    for (const [status, schema] of Object.entries(own)) {
      const added = merged[status]?.[DESCRIPTION]
      const mine = schema[DESCRIPTION]
      merged[status] = added === undefined || mine === undefined || mine === added ? schema : { ...schema, [DESCRIPTION]: `${mine as string} Or: ${added as string}` }
    }
    // A copy: the schema object may be shared with routes outside this context.
    route.schema = { ...route.schema, response: merged }
  })
}
