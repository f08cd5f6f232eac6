import type { FastifyPluginAsync } from 'fastify'
import { TABLECRUD_ERR_AUTH_LOGIN_FAILED } from '../lib/errors.js'
import { parseDuration } from '../lib/auth/duration.js'
import { userTable } from '../lib/auth/tables.js'
import { checkLogin, recordLogin } from '../lib/auth/users.js'
import type { Table } from '../lib/table/index.js'
import { costOption, credentialsOf, databaseOf, loginRoutes, optionError, privateJwt, secretProblem, tableOption } from './auth-common.js'
import { sendError } from './errors.js'

/**
 * Options of `jwtLogin`.
 * @example app.register(jwtLogin, { prefix: '/login', secret: process.env.JWT_SECRET!, expiry: '15m' } satisfies JwtLoginOptions)
 */
export interface JwtLoginOptions {
  /** The HS256 signing secret, shared with `jwtAuth`. Required. */
  secret: string | Buffer
  /** The user table; default the built-in `auth_user`. */
  authTable?: Table
  /** Token lifetime: seconds, or a duration such as `"15m"`, `"12h"`, `"7d"`. Default one day. */
  expiry?: number | string
  /** bcrypt cost of the dummy hash checked for unknown users; default `TABLECRUD_BCRYPT_COST`, else 12. */
  bcryptCost?: number
}

const NAME = 'jwtLogin'
const ONE_DAY = 86400

/**
 * JWT login (SPEC §3.2): POST `{ username, password }` at the prefix answers
 * `{ "token": "<jwt>" }`, an HS256 JWT with the claims `user_id`, `iat` and `exp`, and sets the
 * user's `last_login`. Any failure is a 401 `Login failed`. Other methods are a 405.
 * @example
 * app.register(jwtLogin, { prefix: '/login', secret: process.env.JWT_SECRET!, expiry: '1h' })
 */
export const jwtLogin: FastifyPluginAsync<JwtLoginOptions> = async function jwtLogin (fastify, options) {
  const problem = secretProblem(options.secret)
  if (problem !== null) throw optionError(NAME, 'secret', problem)
  const table = tableOption(NAME, options.authTable ?? userTable)
  const expiry = parseDuration(options.expiry ?? ONE_DAY)
  if (expiry === undefined) throw optionError(NAME, 'expiry', 'must be a positive number of seconds or a duration such as "15m", "12h", "7d"')
  const cost = costOption(NAME, options.bcryptCost)
  const db = databaseOf(fastify, NAME)!
  const jwt = await privateJwt(fastify, options.secret, expiry)

  loginRoutes(fastify, 'Log in with a username and password; answers a JWT', async (request, reply) => {
    const credentials = credentialsOf(request.body)
    const user = credentials === null ? null : await checkLogin(db, table, credentials.username, credentials.password, cost)
    if (user === null) return sendError(reply, new TABLECRUD_ERR_AUTH_LOGIN_FAILED())
    const token = jwt.sign({ user_id: user.id })
    await recordLogin(db, table, user.id!)
    return { token }
  })
}
