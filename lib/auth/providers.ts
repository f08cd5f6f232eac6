import { isBearerToken, safeEqual } from './token.js'
import type { DatabaseHandle } from '../db/port.js'
import { setupError } from '../errors.js'
import { checkLogin, recordLogin, tokenOf, userByToken, type AuthUser } from './users.js'
import { userTable } from '../table/auth-tables.js'

/**
 * What a provider is given for each call: the plugin's database port (its `pg` or `pool`
 * option, else `fastify.pg`), null when the provider says it does not use one and
 * @fastify/postgres is not registered. The plugins give the port (`run(statement)`, and pg's
 * `query(text, values)` for your own SQL); a direct call may give a pool.
 * @example const { rows } = await (context.db as Database).run({ text: 'SELECT 1 AS one', values: [] })
 */
export interface ProviderContext {
  db: DatabaseHandle | null
}

/**
 * Tells `tokenAuth` whose token a request carries.
 * @example
 * const provider: TokenAuthProvider = {
 *   usesDatabase: false,
 *   async authenticate (token) { return token === process.env.ADMIN_TOKEN ? { id: null, username: 'admin', active: true, admin: true, superuser: false } : null }
 * }
 */
export interface TokenAuthProvider {
  /** Resolves to the token's user, or null when the token is not recognised. */
  authenticate: (token: string, context: ProviderContext) => Promise<AuthUser | null>
  /** False when the provider does not query the database, so @fastify/postgres need not be registered. */
  readonly usesDatabase?: boolean
}

/**
 * Gives `tokenLogin` the token of a username and password.
 * @example
 * const provider: TokenLoginProvider = { usesDatabase: false, async login (username, password) { return await myDirectory.tokenFor(username, password) } }
 */
export interface TokenLoginProvider {
  /** Resolves to the user's token, or null when the credentials are incorrect. */
  login: (username: string, password: string, context: ProviderContext) => Promise<string | null>
  /** False when the provider does not query the database, so @fastify/postgres need not be registered. */
  readonly usesDatabase?: boolean
}

/**
 * Options of `tableTokenProvider`.
 * @example app.register(tokenLogin, { provider: tableTokenProvider({ bcryptCost: 12 }) })
 */
export interface TableTokenProviderOptions {
  /** bcrypt cost of the dummy hash checked for unknown users; default `TABLECRUD_BCRYPT_COST`, else 12. */
  bcryptCost?: number
}

function need (db: DatabaseHandle | null): DatabaseHandle {
  if (db === null) throw setupError('tableTokenProvider needs the database: register @fastify/postgres')
  return db
}

/**
 * The default provider of `tokenLogin` and `tokenAuth`: tokens in the built-in `auth_token`
 * table, users in `auth_user`. A token of an inactive or deleted user is not recognised.
 * @example app.register(tokenAuth, { provider: tableTokenProvider() })
 */
export function tableTokenProvider (options: TableTokenProviderOptions = {}): TokenAuthProvider & TokenLoginProvider {
  return {
    usesDatabase: true,
    async authenticate (token, { db }) {
      const found = await userByToken(need(db), token)
      // The index lookup found it; compare again in constant time before trusting the match.
      return found !== null && safeEqual(found.token, token) ? found.user : null
    },
    async login (username, password, context) {
      const db = need(context.db)
      const user = await checkLogin(db, userTable, username, password, options.bcryptCost)
      if (user === null) return null
      const token = await tokenOf(db, user.id!)
      if (token !== null) await recordLogin(db, userTable, user.id!)
      return token
    }
  }
}

/**
 * A fixed list of tokens, for service-to-service calls. `request.user` is
 * `{ id: null, username: null, active: true, admin: false, superuser: false }`.
 * @example app.register(tokenAuth, { provider: staticTokenProvider([process.env.API_TOKEN!]) })
 */
export function staticTokenProvider (tokens: readonly string[]): TokenAuthProvider {
  if (!Array.isArray(tokens) || tokens.length === 0) throw setupError('staticTokenProvider: tokens must be a non-empty array of strings')
  for (const token of tokens) {
    if (typeof token !== 'string' || !isBearerToken(token)) {
      throw setupError('staticTokenProvider: each token must be a non-empty string of the characters A-Z a-z 0-9 - . _ ~ + / (and = at the end)')
    }
  }
  const list = [...tokens]
  return {
    usesDatabase: false,
    async authenticate (token) {
      // Every entry is compared, so the time does not tell which one (if any) matched.
      let found = false
      for (const candidate of list) found = safeEqual(candidate, token) || found
      return found ? { id: null, username: null, active: true, admin: false, superuser: false } : null
    }
  }
}
