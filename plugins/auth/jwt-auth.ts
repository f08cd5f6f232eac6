import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import {
  TABLECRUD_ERR_AUTH_TOKEN_EXPIRED, TABLECRUD_ERR_AUTH_TOKEN_INVALID, TABLECRUD_ERR_AUTH_TOKEN_NOT_FOUND,
  TABLECRUD_ERR_AUTH_TOKEN_REVOKED, TABLECRUD_ERR_AUTH_USER_NOT_FOUND, errorCode, optionError
} from '../../lib/errors.js'
import { userTable } from '../../lib/table/auth-tables.js'
import { activeUserById, type AuthUser } from '../../lib/auth/users.js'
import type { Table } from '../../lib/table/index.js'
import { typeOf } from '../../lib/table/column-types.js'
import { databaseOf, secretProblem, tableOption } from './options.js'
import { privateJwt } from './private-jwt.js'
import { fail, protectContext, refuse } from './protect.js'
import type { PoolOptions } from '../database.js'

/**
 * Options of `jwtAuth`.
 * @example api.register(jwtAuth, { secret: process.env.JWT_SECRET!, blacklist: async (token) => await isRevoked(token) } satisfies JwtAuthOptions)
 */
export interface JwtAuthOptions extends PoolOptions {
  /** The HS256 secret `jwtLogin` signs with. Required. */
  secret: string | Buffer
  /** The user table; default the built-in `auth_user`. */
  authTable?: Table
  /** Revoked tokens: a token for which this resolves to true is a 401 `Token revoked`. */
  blacklist?: (token: string) => boolean | Promise<boolean>
  /**
   * Let requests without a valid token through, with `request.user = null` and
   * `request.jwtError` holding the reason. Default false.
   */
  allowUnauthenticated?: boolean
}

const NAME = 'jwtAuth'

/** Three base64url segments, unpadded: anything else (padding, spaces, `alg: none`'s empty signature) is not a JWS. */
const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/**
 * Whether `id` can be a value of the table's primary key, so the lookup cannot fail on its
 * type: of the JSON type its key type's descriptor gives (`jwtLogin` signed what pg read), and
 * a value of that type as a filter would take it (in range, a UUID's form, no NUL); a value that
 * merely matches no user is looked up, and is `User not found`.
 */
function idChecker (table: Table): (id: unknown) => id is number | string {
  const column = table.primaryKey
  const type = typeOf(column)
  const key = type.key!
  const ofType = key.json === 'number' ? (id: unknown) => typeof id === 'number' : (id: unknown) => typeof id === 'string'
  return (id): id is number | string => ofType(id) && type.parse(column, String(id)) !== undefined
}

/**
 * The time claims SPEC §3.2 asks for beyond what fast-jwt checks (it wants numbers, any
 * numbers: `1e309` parses as Infinity, a token that never expires): `exp`, and `iat` and `nbf`
 * when present, are whole seconds, and `iat` is not in the future (no clock tolerance).
 */
function datesValid (payload: Record<string, unknown>): boolean {
  const { exp, iat, nbf } = payload
  if (!Number.isSafeInteger(exp)) return false
  if (nbf !== undefined && !Number.isSafeInteger(nbf)) return false
  if (iat === undefined) return true
  return Number.isSafeInteger(iat) && (iat as number) <= Math.floor(Date.now() / 1000)
}

const jwtAuthPlugin: FastifyPluginAsync<JwtAuthOptions> = async function jwtAuth (fastify, options) {
  const problem = secretProblem(options.secret)
  if (problem !== null) throw optionError(NAME, 'secret', problem)
  const table = tableOption(NAME, options.authTable ?? userTable)
  const { blacklist, allowUnauthenticated = false } = options
  if (blacklist !== undefined && typeof blacklist !== 'function') throw optionError(NAME, 'blacklist', 'must be a function (token) => boolean | Promise<boolean>')
  if (typeof allowUnauthenticated !== 'boolean') throw optionError(NAME, 'allowUnauthenticated', 'must be true or false')
  const db = databaseOf(fastify, NAME, options)!
  const isId = idChecker(table)
  const jwt = await privateJwt(fastify, options.secret)
  protectContext(fastify, undefined, undefined, { unauthenticated: !allowUnauthenticated, forbidden: false })

  /** The request's user, or the 401 it gets. */
  async function authenticate (authorization: string | undefined): Promise<AuthUser | Error> {
    const token = /^Bearer +(.+)$/i.exec(authorization ?? '')?.[1]?.trim() ?? ''
    if (token === '') return new TABLECRUD_ERR_AUTH_TOKEN_NOT_FOUND()
    if (!JWS.test(token)) return new TABLECRUD_ERR_AUTH_TOKEN_INVALID()
    let payload: Record<string, unknown>
    try {
      payload = jwt.verify(token)
    } catch (error) {
      // Every verifier error is a 401: @fastify/jwt would let several through as 500s.
      return errorCode(error) === 'FAST_JWT_EXPIRED' ? new TABLECRUD_ERR_AUTH_TOKEN_EXPIRED() : new TABLECRUD_ERR_AUTH_TOKEN_INVALID()
    }
    if (!isId(payload.user_id) || !datesValid(payload)) return new TABLECRUD_ERR_AUTH_TOKEN_INVALID()
    if (blacklist !== undefined && await blacklist(token)) return new TABLECRUD_ERR_AUTH_TOKEN_REVOKED()
    return await activeUserById(db, table, payload.user_id) ?? new TABLECRUD_ERR_AUTH_USER_NOT_FOUND()
  }

  fastify.addHook('onRequest', async (request, reply) => {
    let result: AuthUser | Error
    try {
      result = await authenticate(request.headers.authorization)
    } catch (error) {
      return fail(request, reply, error)
    }
    if (!(result instanceof Error)) {
      request.user = result
      request.jwtError = null
    } else if (allowUnauthenticated) {
      request.user = null
      request.jwtError = result.message
    } else {
      return refuse(reply, result)
    }
  })
}

/**
 * JWT auth (SPEC §3.2): every request of the context it is registered in must carry
 * `Authorization: Bearer <jwt>` signed by `jwtLogin` with the same secret (HS256 only, `exp`
 * required, no clock tolerance), else a 401 with `WWW-Authenticate: Bearer` and one of
 * `Token not found`, `Token revoked`, `Token has expired`, `Token is invalid`, `User not found`.
 * Sets `request.user`; with `allowUnauthenticated`, lets the request through with
 * `request.user = null` and the message in `request.jwtError`.
 * @example
 * app.register(async (api) => {
 *   await api.register(jwtAuth, { secret: process.env.JWT_SECRET! })
 *   await api.register(tableCrud, { table: movie, prefix: '/movies' })
 * }, { prefix: '/api' })
 */
export const jwtAuth = fp(jwtAuthPlugin, { name: 'fastify-tablecrud/jwt-auth', fastify: '5.x' })
