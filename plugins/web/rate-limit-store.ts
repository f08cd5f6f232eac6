import { createRequire } from 'node:module'
import type { FastifyBaseLogger } from 'fastify'
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { RedisClient } from './rate-limit.js'

/**
 * @fastify/rate-limit's own Redis store (its Lua script: one round trip, INCR and PEXPIRE
 * together), wrapped so that a Redis that is down or slow never holds a request up: a client
 * that is not connected fails at once, a command that takes longer than `timeout` fails then,
 * and either way the limiter skips (`skipOnError`) and one warning is logged per outage.
 */

type RedisStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, redis: RedisClient, nameSpace: string) => FastifyRateLimitStore
type Callback = Parameters<FastifyRateLimitStore['incr']>[1]

// The store is not exported by name; the package has no `exports` map, so its file is the API.
const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as RedisStoreCtor

/** ioredis states in which a command would wait in the offline queue or fail. */
const DOWN = new Set(['close', 'end', 'reconnecting'])

/** One per rateLimit registration: the client's health and the outage's warning, shared by its stores. */
export class RedisGuard {
  private failing = false
  constructor (readonly redis: RedisClient, private readonly timeout: number, private readonly log: FastifyBaseLogger) {}

  /** Runs `command` with the guard's timeout; answers `callback` once. */
  run (command: (callback: Callback) => void, callback: Callback): void {
    if (DOWN.has(this.redis.status)) {
      this.fail(new Error(`Redis is ${this.redis.status}`), callback)
      return
    }
    let done = false
    const timer = setTimeout(() => {
      done = true
      this.fail(new Error(`Redis did not answer within ${this.timeout} ms`), callback)
    }, this.timeout)
    command((error, result) => {
      if (done) return
      done = true
      clearTimeout(timer)
      if (error !== null) {
        this.fail(error, callback)
        return
      }
      if (this.failing) this.log.info('rate limit: Redis answers again; limits apply')
      this.failing = false
      callback(null, result)
    })
  }

  private fail (error: Error, callback: Callback): void {
    if (!this.failing) this.log.warn({ err: error }, 'rate limit: Redis is unavailable; requests pass unlimited until it is back')
    this.failing = true
    callback(error)
  }
}

class GuardedStore implements FastifyRateLimitStore {
  constructor (private readonly inner: FastifyRateLimitStore, private readonly guard: RedisGuard) {}

  incr (key: string, callback: Callback, timeWindow: number, max: number): void {
    this.guard.run((cb) => { this.inner.incr(key, cb, timeWindow, max) }, callback)
  }

  child (routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
    return new GuardedStore(this.inner.child(routeOptions), this.guard)
  }
}

/** The `store` option of @fastify/rate-limit: its Redis store under `nameSpace`, guarded. */
export function guardedRedisStore (guard: RedisGuard, nameSpace: string): FastifyRateLimitStoreCtor {
  return class {
    constructor (options: { continueExceeding?: boolean, exponentialBackoff?: boolean }) {
      const inner = new RedisStore(options.continueExceeding === true, options.exponentialBackoff === true, guard.redis, nameSpace)
      return new GuardedStore(inner, guard)
    }
  } as unknown as FastifyRateLimitStoreCtor
}
