import type { FastifyPluginAsync } from 'fastify'
import { optionError, TABLECRUD_ERR_AUTH_BAD_CREDENTIALS, TABLECRUD_ERR_AUTH_NO_CREDENTIALS } from '../../lib/errors.js'
import { tableTokenProvider, type TokenLoginProvider } from '../../lib/auth/providers.js'
import { credentialsOf } from './credentials.js'
import { loginRoutes } from './login-routes.js'
import { costOption, databaseOf } from './options.js'
import type { PoolOptions } from '../database.js'
import { sendError } from '../errors.js'

/**
 * Options of `tokenLogin`.
 * @example app.register(tokenLogin, { prefix: '/token-login', bcryptCost: 12 } satisfies TokenLoginOptions)
 */
export interface TokenLoginOptions extends PoolOptions {
  /** Where tokens come from; default `tableTokenProvider()` (the built-in tables). */
  provider?: TokenLoginProvider
  /** bcrypt cost of the default provider's dummy hash; default `TABLECRUD_BCRYPT_COST`, else 12. */
  bcryptCost?: number
}

const NAME = 'tokenLogin'

/**
 * Token login (SPEC §3.1): POST `{ username, password }` at the prefix answers
 * `{ "token": "<token>" }`, the user's token from the token table. Missing fields are a 401
 * `No credentials were found.`; a wrong password, an unknown or inactive user, or a user
 * without a token a 401 `The credentials were incorrect`. Other methods are a 405.
 * @example
 * app.register(tokenLogin, { prefix: '/token-login' })
 */
export const tokenLogin: FastifyPluginAsync<TokenLoginOptions> = async function tokenLogin (fastify, options) {
  const cost = costOption(NAME, options.bcryptCost)
  const provider = options.provider ?? tableTokenProvider({ bcryptCost: cost })
  if (typeof provider !== 'object' || provider === null || typeof provider.login !== 'function') {
    throw optionError(NAME, 'provider', 'must have a login(username, password, context) method')
  }
  const db = databaseOf(fastify, NAME, options, provider.usesDatabase !== false)

  loginRoutes(fastify, NAME, 'Log in with a username and password; answers the user\'s API token', async (request, reply) => {
    const credentials = credentialsOf(request.body)
    if (credentials === null) return sendError(reply, new TABLECRUD_ERR_AUTH_NO_CREDENTIALS())
    const token = await provider.login(credentials.username, credentials.password, { db })
    if (token === null) return sendError(reply, new TABLECRUD_ERR_AUTH_BAD_CREDENTIALS())
    return { token }
  })
}
