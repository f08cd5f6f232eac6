import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { TABLECRUD_ERR_AUTH_HEADER_FORMAT, TABLECRUD_ERR_AUTH_HEADER_MISSING, TABLECRUD_ERR_AUTH_TOKEN_UNKNOWN } from '../../lib/errors.js'
import { optionError } from '../../lib/errors.js'
import { tableTokenProvider, type TokenAuthProvider } from '../../lib/auth/providers.js'
import { parseBearer } from '../../lib/auth/token.js'
import { databaseOf, excludedPathsOption } from './options.js'
import { fail, protectContext, refuse } from './protect.js'
import type { PoolOptions } from '../database.js'

/**
 * Options of `tokenAuth`.
 * @example api.register(tokenAuth, { provider: tableTokenProvider(), excludedPaths: ['/api/health', '/api/docs/*'] } satisfies TokenAuthOptions)
 */
export interface TokenAuthOptions extends PoolOptions {
  /** Who a token belongs to: `tableTokenProvider()` (default) or `staticTokenProvider([...])`. */
  provider?: TokenAuthProvider
  /**
   * Paths that need no token: an entry ending in `*` is a prefix (`/api/docs/*`), any other
   * must equal the request path (the full path, without the query string).
   */
  excludedPaths?: string[]
}

const NAME = 'tokenAuth'

const tokenAuthPlugin: FastifyPluginAsync<TokenAuthOptions> = async function tokenAuth (fastify, options) {
  const provider = options.provider ?? tableTokenProvider()
  if (typeof provider !== 'object' || provider === null || typeof provider.authenticate !== 'function') {
    throw optionError(NAME, 'provider', 'must have an authenticate(token, context) method')
  }
  const isExcluded = excludedPathsOption(NAME, options.excludedPaths)
  const context = { db: databaseOf(fastify, NAME, options, provider.usesDatabase !== false) }
  protectContext(fastify, isExcluded)

  fastify.addHook('onRequest', async (request, reply) => {
    if (isExcluded(request.url)) return
    const header = parseBearer(request.headers.authorization)
    if ('error' in header) {
      return refuse(reply, header.error === 'missing' ? new TABLECRUD_ERR_AUTH_HEADER_MISSING() : new TABLECRUD_ERR_AUTH_HEADER_FORMAT())
    }
    try {
      const user = await provider.authenticate(header.token, context)
      if (user === null) return refuse(reply, new TABLECRUD_ERR_AUTH_TOKEN_UNKNOWN())
      request.user = user
    } catch (error) {
      return fail(request, reply, error)
    }
  })
}

/**
 * Token auth (SPEC §3.1): every request of the context it is registered in (any method) must
 * carry `Authorization: Bearer <token>`, else a 401 with `WWW-Authenticate: Bearer`:
 * `The Authorization header is missing.`, `The header is in the wrong format.` or
 * `Token not recognised`. Sets `request.user`. Register it inside the context that holds the
 * protected routes.
 * @example
 * app.register(async (api) => {
 *   await api.register(tokenAuth, { excludedPaths: ['/api/health'] })
 *   await api.register(tableCrud, { table: movie, prefix: '/movies' })
 * }, { prefix: '/api' })
 */
export const tokenAuth = fp(tokenAuthPlugin, { name: 'fastify-tablecrud/token-auth', fastify: '5.x' })
