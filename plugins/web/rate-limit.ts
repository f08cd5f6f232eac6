import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { RateLimitPluginOptions } from '@fastify/rate-limit'
import { optionError, TABLECRUD_ERR_RATE_LIMITED } from '../../lib/errors.js'
import { guardedRedisStore, RedisGuard } from './rate-limit-store.js'
import type {} from './types.js'
import { documentResponses } from '../route-responses.js'
import { errorResponse, RetryAfterHeader, withHeaders } from '../../schemas/responses.js'

type Key = string | number
type KeyGenerator = (request: FastifyRequest) => Key | Promise<Key>
type AllowList = string[] | ((request: FastifyRequest, key: string) => boolean | Promise<boolean>)

/**
 * What the limiter needs of an ioredis client, said structurally so that the published types
 * do not require ioredis (only Redis users install it): a `new Redis(...)` is one.
 */
export interface RedisClient {
  readonly status: string
  defineCommand: (name: string, definition: { numberOfKeys?: number, lua: string }) => void
}

/**
 * Options of `rateLimit` (SPEC §5.7); all optional.
 * @example app.register(rateLimit, { max: 300, timeWindow: '1m', redis: new Redis({ enableOfflineQueue: false }) } satisfies RateLimitOptions)
 */
export interface RateLimitOptions {
  /** Requests per client per `timeWindow` on every route of the context. Default 1000. */
  max?: number
  /** Milliseconds, or a duration such as `'5m'`. Default `'5m'`. */
  timeWindow?: number | string
  /**
   * Who a client is. Default the IP as Fastify gives it (`request.ip`: `X-Forwarded-For` counts
   * only when the integrator set `trustProxy`), IPv6 addresses grouped by /64.
   */
  keyGenerator?: KeyGenerator
  /** An ioredis client: the counters are shared by every instance using that Redis. Default: memory in the process. */
  redis?: RedisClient
  /** Prefix of the Redis keys. Default `tablecrud-rate-limit-`. */
  nameSpace?: string
  /** Milliseconds a Redis command may take before the request passes unlimited. Default 200. */
  redisTimeout?: number
  /** Keys (IPs by default) never limited, or a function of the request and key saying so. */
  allowList?: AllowList
  /**
   * The extra limit per client on every login, register, change-password and MFA POST in the
   * context (routes with `config: { tablecrudLogin: true }`), counted per route, failed or not.
   * Default `{ max: 10, timeWindow: '15m' }`; `false` turns it off.
   */
  login?: { max?: number, timeWindow?: number | string } | false
}

const NAME = 'rateLimit'

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1
const isWindow = (value: unknown): boolean => (Number.isSafeInteger(value) && (value as number) >= 1) || (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*(ms|s|m|h|d|w|y)?\s*$/i.test(value))
const WINDOW_RULE = 'must be a whole number of milliseconds, 1 or more, or a duration such as \'5m\''

function checkOptions (options: RateLimitOptions): void {
  const { max, timeWindow, keyGenerator, redis, nameSpace, redisTimeout, allowList, login } = options
  if (max !== undefined && !isCount(max)) throw optionError(NAME, 'max', 'must be a whole number, 1 or more')
  if (timeWindow !== undefined && !isWindow(timeWindow)) throw optionError(NAME, 'timeWindow', WINDOW_RULE)
  if (keyGenerator !== undefined && typeof keyGenerator !== 'function') throw optionError(NAME, 'keyGenerator', 'must be a function (request) => string')
  if (redis !== undefined && (typeof redis !== 'object' || redis === null || typeof (redis as { defineCommand?: unknown }).defineCommand !== 'function')) {
    throw optionError(NAME, 'redis', 'must be an ioredis client')
  }
  if (nameSpace !== undefined && (typeof nameSpace !== 'string' || nameSpace === '')) throw optionError(NAME, 'nameSpace', 'must be a non-empty string')
  if (redisTimeout !== undefined && !isCount(redisTimeout)) throw optionError(NAME, 'redisTimeout', 'must be a whole number of milliseconds, 1 or more')
  if (allowList !== undefined && typeof allowList !== 'function' && !(Array.isArray(allowList) && allowList.every((k) => typeof k === 'string'))) {
    throw optionError(NAME, 'allowList', 'must be an array of keys or a function (request, key) => boolean')
  }
  if (login !== undefined && login !== false) {
    if (typeof login !== 'object' || login === null || Array.isArray(login)) throw optionError(NAME, 'login', 'must be { max, timeWindow } or false')
    if (login.max !== undefined && !isCount(login.max)) throw optionError(NAME, 'login', 'max must be a whole number, 1 or more')
    if (login.timeWindow !== undefined && !isWindow(login.timeWindow)) throw optionError(NAME, 'login', `timeWindow ${WINDOW_RULE}`)
  }
}

/** The 429 of SPEC §5.7 (the library has set `Retry-After` and the `x-ratelimit-*` headers). */
const errorResponseBuilder = (): Error => new TABLECRUD_ERR_RATE_LIMITED()

/** Whether the request is a POST to a route an auth plugin marked as a login (SPEC §5.7). */
const isLoginPost = (request: FastifyRequest): boolean => request.method === 'POST' && request.routeOptions.config.tablecrudLogin === true

const rateLimitPlugin: FastifyPluginAsync<RateLimitOptions> = async function rateLimit (fastify, options) {
  checkOptions(options)
  const { max = 1000, timeWindow = '5m', keyGenerator, redis, nameSpace = 'tablecrud-rate-limit-', redisTimeout = 200, allowList } = options
  const guard = redis === undefined ? null : new RedisGuard(redis, redisTimeout, fastify.log)
  const storeFor = (prefix: string): Pick<RateLimitPluginOptions, 'store'> => guard === null ? {} : { store: guardedRedisStore(guard, prefix) }
  const common = { skipOnError: true, errorResponseBuilder, hook: 'onRequest' } as const
  const { default: fastifyRateLimit, normalizeIP } = await import('@fastify/rate-limit')
  documentResponses(fastify, { 429: withHeaders(errorResponse('Too many requests from this client: try again after `Retry-After` seconds.'), { 'Retry-After': RetryAfterHeader }) })

  await fastify.register(fastifyRateLimit, { ...common, max, timeWindow, allowList, ...(keyGenerator === undefined ? {} : { keyGenerator }), ...storeFor(nameSpace) })
  // The library counts in a hook of each route, and a route's hooks run after the onRequest
  // hooks of its contexts: a request an auth plugin refuses (a guessed cookie or token) would
  // never be counted. The same limiter runs here, as a hook of the context, before any plugin
  // registered after this one; the route's hook then sees it ran and does nothing. A route
  // with a `config.rateLimit` of its own keeps only that. A rateLimit nested in another's
  // context gets the outer one's decorator here (@fastify/rate-limit decorates once per chain
  // of contexts), a no-op once the outer hook ran: its own limit is counted in the routes'
  // hooks only, after the auth plugins'.
  const limit = fastify.rateLimit()
  fastify.addHook('onRequest', async function (request, reply) {
    if (request.routeOptions.config.rateLimit === undefined) await limit.call(this, request, reply)
  })
  if (options.login === false) return

  // A second limiter: @fastify/rate-limit runs one limit per request and instance, and the
  // login limit comes on top of the global one. Every request but a login POST (and an allowed
  // client's) gets the empty key, which it lets through at once; a login POST is counted per
  // route and client.
  const baseKey: KeyGenerator = keyGenerator ?? ((request) => normalizeIP(request.ip))
  const allowed = allowList === undefined
    ? async () => false
    : typeof allowList === 'function' ? allowList : async (_request: FastifyRequest, key: string) => allowList.includes(key)
  await fastify.register(fastifyRateLimit, {
    ...common,
    max: options.login?.max ?? 10,
    timeWindow: options.login?.timeWindow ?? '15m',
    keyGenerator: async (request) => {
      if (!isLoginPost(request)) return ''
      const key = String(await baseKey(request))
      return await allowed(request, key) ? '' : `${request.routeOptions.url!} ${key}`
    },
    allowList: (_request, key) => key === '',
    ...storeFor(`${nameSpace}login-`)
  })
}

/**
 * Rate limiting for the context it is registered in (SPEC §5.7), on @fastify/rate-limit: each
 * client (its IP, `trustProxy` respected) gets `max` requests per `timeWindow` (1000 per 5
 * minutes), and 10 per 15 minutes on each login, register, change-password and MFA POST.
 * Over a limit: 429 `Too many requests` (`TABLECRUD_ERR_RATE_LIMITED`) with `Retry-After` in
 * seconds; every response carries `x-ratelimit-limit`, `x-ratelimit-remaining` and
 * `x-ratelimit-reset`. With `redis` (an ioredis client) every instance shares the counters; a
 * Redis that is down or slow lets requests through and logs a warning. Register it before the
 * routes it limits.
 * @example
 * import { Redis } from 'ioredis'
 * const redis = new Redis(process.env.REDIS_URL!, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
 * await app.register(rateLimit, { max: 600, timeWindow: '5m', redis })
 */
export const rateLimit = fp(rateLimitPlugin, { name: 'fastify-tablecrud/rate-limit', fastify: '5.x' })
