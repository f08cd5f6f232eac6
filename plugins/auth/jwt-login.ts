import type { FastifyPluginAsync } from 'fastify'
import { optionError, TABLECRUD_ERR_AUTH_LOGIN_FAILED } from '../../lib/errors.js'
import { userTable } from '../../lib/table/auth-tables.js'
import { checkLogin, recordLogin } from '../../lib/auth/users.js'
import type { Table } from '../../lib/table/index.js'
import { credentialsOf } from './credentials.js'
import { checkMfa, mfaProvidersProblem, type MfaProvider } from './extensions.js'
import { loginRoutes } from './login-routes.js'
import { costOption, databaseOf, durationOption, secretProblem, tableOption } from './options.js'
import { privateJwt } from './private-jwt.js'
import type { PoolOptions } from '../database.js'
import { sendError } from '../errors.js'

/**
 * Options of `jwtLogin`.
 * @example app.register(jwtLogin, { prefix: '/login', secret: process.env.JWT_SECRET!, expiry: '15m' } satisfies JwtLoginOptions)
 */
export interface JwtLoginOptions extends PoolOptions {
  /** The HS256 signing secret, shared with `jwtAuth`. Required. */
  secret: string | Buffer
  /** The user table; default the built-in `auth_user`. */
  authTable?: Table
  /** Token lifetime: seconds, or a duration such as `"15m"`, `"12h"`, `"7d"`. Default one day. */
  expiry?: number | string
  /** bcrypt cost of the dummy hash checked for unknown users; default `TABLECRUD_BCRYPT_COST`, else 12. */
  bcryptCost?: number
  /** Second factors asked of users enrolled with one (SPEC §5.4): `mfa_code` (and `mfa_provider`) join the body. */
  mfaProviders?: MfaProvider[]
}

const NAME = 'jwtLogin'
const ONE_DAY = 86400

/**
 * JWT login (SPEC §3.2): POST `{ username, password }` at the prefix answers
 * `{ "token": "<jwt>" }`, an HS256 JWT with the claims `user_id`, `iat` and `exp`, and sets the
 * user's `last_login`. Any failure is a 401 `Login failed`. Other methods are a 405. With
 * `mfaProviders`, a user enrolled with one also sends `mfa_code` (401 `MFA code required`,
 * `MFA failed`, as SPEC §5.4).
 * @example
 * app.register(jwtLogin, { prefix: '/login', secret: process.env.JWT_SECRET!, expiry: '1h' })
 */
export const jwtLogin: FastifyPluginAsync<JwtLoginOptions> = async function jwtLogin (fastify, options) {
  const problem = secretProblem(options.secret)
  if (problem !== null) throw optionError(NAME, 'secret', problem)
  const table = tableOption(NAME, options.authTable ?? userTable)
  const expiry = durationOption(NAME, 'expiry', options.expiry ?? ONE_DAY)
  const cost = costOption(NAME, options.bcryptCost)
  const mfaIssue = mfaProvidersProblem(options.mfaProviders ?? [])
  if (mfaIssue !== null) throw optionError(NAME, 'mfaProviders', mfaIssue)
  const mfaProviders = [...options.mfaProviders ?? []]
  const db = databaseOf(fastify, NAME, options)!
  const jwt = await privateJwt(fastify, options.secret, expiry)

  loginRoutes(fastify, NAME, 'Log in with a username and password; answers a JWT', async (request, reply) => {
    const credentials = credentialsOf(request.body)
    const user = credentials === null ? null : await checkLogin(db, table, credentials.username, credentials.password, cost)
    if (user === null) return sendError(reply, new TABLECRUD_ERR_AUTH_LOGIN_FAILED())
    const mfaError = await checkMfa(mfaProviders, user, request.body, { db, request })
    if (mfaError !== null) return sendError(reply, mfaError)
    const token = jwt.sign({ user_id: user.id })
    await recordLogin(db, table, user.id!)
    return { token }
  }, mfaProviders.map((provider) => provider.name))
}
