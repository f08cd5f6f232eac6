import type { FastifyRequest } from 'fastify'
import { parse } from 'node:querystring'

/**
 * What a validator finds in `request.query`, for every operation alike (issue 27, SPEC §8.6):
 * the query string as the client sent it, each key's value a string, or an array of strings
 * when the key is repeated (`?owner=5&owner=6`), with no prototype (`constructor` is a key like
 * any other). The routes work on their own parsed forms of it, which differ by operation (a
 * list's query, a count's filters, the ids' search): a validator reading one of those forms
 * was right for some operations and let every row through on the others.
 * @example const ownRows: Validator = (crud, request) => { if (request.query.owner !== String(request.user?.id)) throw new HttpError(403, 'Your own rows only') }
 */
export type ValidatorQuery = Record<string, string | string[] | undefined>

/** The query string of `request`, as validators see it. */
export function validatorQuery (request: FastifyRequest): ValidatorQuery {
  const at = request.url.indexOf('?')
  return at === -1 ? Object.create(null) as ValidatorQuery : parse(request.url.slice(at + 1))
}

/** Runs `validators` with `request.query` in the shape validators see, and gives the route back its own. */
export async function withValidatorQuery (request: FastifyRequest, validators: () => Promise<void>): Promise<void> {
  const routes = request.query
  request.query = validatorQuery(request)
  try {
    await validators()
  } finally {
    request.query = routes
  }
}
