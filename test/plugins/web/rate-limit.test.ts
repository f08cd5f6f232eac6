import t, { type Test } from 'tap'
import { createServer, type Server, type Socket } from 'node:net'
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Redis } from 'ioredis'
import { rateLimit, type RateLimitOptions } from '../../../plugins/web/rate-limit.js'
import { jwtLogin } from '../../../plugins/auth/jwt-login.js'
import { tokenLogin } from '../../../plugins/auth/token-login.js'
import { sessionAuth } from '../../../plugins/auth/session-auth.js'
import { createUser } from '../../../lib/auth/users.js'
import { testDatabase } from '../../helpers/db.js'
import { authApp, createAuthTables } from '../auth/auth-app.js'
import { createSessionTables } from '../auth/session-app.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
/** This file's Redis keys: tc-c-rate-<random>-..., deleted at the end (never a FLUSH). */
const PREFIX = `tc-c-rate-${randomBytes(4).toString('hex')}-`

const LIMITED = { statusCode: 429, code: 'TABLECRUD_ERR_RATE_LIMITED', error: 'Too Many Requests', message: 'Too many requests' }

/** Log lines of an app, parsed. */
function logSink (): { lines: Array<{ level: number, msg: string }>, stream: Writable } {
  const lines: Array<{ level: number, msg: string }> = []
  const stream = new Writable({ write (chunk: Buffer, _encoding, done) { lines.push(JSON.parse(chunk.toString())); done() } })
  return { lines, stream }
}

async function build (t: Test, options: RateLimitOptions, fastifyOptions: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(fastifyOptions)
  await app.register(async (site) => {
    await site.register(rateLimit, options)
    site.get('/', async () => ({ ok: true }))
    site.post('/login', { config: { tablecrudLogin: true } }, async () => ({ ok: true }))
    site.post('/register', { config: { tablecrudLogin: true } }, async () => ({ ok: true }))
    site.get('/login', { config: { tablecrudLogin: true } }, async () => ({ page: true }))
    site.get('/tight', { config: { rateLimit: { max: 1 } } }, async () => ({ ok: true }))
  })
  app.get('/outside', async () => ({ ok: true }))
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

function redisClient (t: Test, url = REDIS_URL, options = {}): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, ...options })
  redis.on('error', () => {})
  t.teardown(() => { redis.disconnect() })
  return redis
}

/** A client to the test Redis, connected. */
async function readyRedis (t: Test): Promise<Redis> {
  const redis = redisClient(t)
  await redis.ping()
  return redis
}

t.teardown(async () => {
  const redis = new Redis(REDIS_URL)
  const keys = await redis.keys(`${PREFIX}*`)
  if (keys.length > 0) await redis.del(...keys)
  redis.disconnect()
})

t.test('with max 5, requests 1 to 5 pass and the sixth is a 429 in the SPEC shape', async (t) => {
  const app = await build(t, { max: 5 })
  for (let i = 1; i <= 5; i++) {
    const res = await app.inject('/')
    t.equal(res.statusCode, 200, `request ${i}`)
    t.equal(res.headers['x-ratelimit-limit'], '5')
    t.equal(res.headers['x-ratelimit-remaining'], String(5 - i))
    t.equal(res.headers['x-ratelimit-reset'], '300', 'seconds left in the 5-minute window')
  }
  const sixth = await app.inject('/')
  t.equal(sixth.statusCode, 429)
  t.strictSame(sixth.json(), LIMITED)
  t.equal(sixth.headers['retry-after'], '300', 'Retry-After in seconds')
  t.equal(sixth.headers['x-ratelimit-remaining'], '0')
  t.equal(sixth.headers['x-ratelimit-limit'], '5')
  t.equal((await app.inject({ url: '/', remoteAddress: '10.0.0.2' })).statusCode, 200, 'another client has its own count')
  t.equal((await app.inject('/outside')).headers['x-ratelimit-limit'], undefined, 'not outside its context')
  const defaults = await build(t, {})
  const res = await defaults.inject('/')
  t.equal(res.headers['x-ratelimit-limit'], '1000', 'default max')
  t.equal(res.headers['x-ratelimit-reset'], '300', 'default window: 5 minutes')
})

t.test('the client is request.ip: X-Forwarded-For counts only with trustProxy', async (t) => {
  const direct = await build(t, { max: 1 })
  t.equal((await direct.inject({ url: '/', headers: { 'x-forwarded-for': '1.1.1.1' } })).statusCode, 200)
  t.equal((await direct.inject({ url: '/', headers: { 'x-forwarded-for': '2.2.2.2' } })).statusCode, 429, 'a forged header changes nothing')
  const proxied = await build(t, { max: 1 }, { trustProxy: true })
  t.equal((await proxied.inject({ url: '/', headers: { 'x-forwarded-for': '1.1.1.1' } })).statusCode, 200)
  t.equal((await proxied.inject({ url: '/', headers: { 'x-forwarded-for': '2.2.2.2' } })).statusCode, 200, 'behind a trusted proxy, each client its own count')
  t.equal((await proxied.inject({ url: '/', headers: { 'x-forwarded-for': '2.2.2.2' } })).statusCode, 429)
})

t.test('keyGenerator and allowList', async (t) => {
  const keyed = await build(t, { max: 1, keyGenerator: (request) => String(request.headers['x-api-key']) })
  t.equal((await keyed.inject({ url: '/', headers: { 'x-api-key': 'a' } })).statusCode, 200)
  t.equal((await keyed.inject({ url: '/', headers: { 'x-api-key': 'b' } })).statusCode, 200)
  t.equal((await keyed.inject({ url: '/', headers: { 'x-api-key': 'a' } })).statusCode, 429)
  const listed = await build(t, { max: 1, login: { max: 1 }, allowList: ['127.0.0.1'] })
  for (let i = 0; i < 3; i++) {
    t.equal((await listed.inject('/')).statusCode, 200, 'an allowed client is not limited')
    t.equal((await listed.inject({ method: 'POST', url: '/login' })).statusCode, 200, 'not even on logins')
  }
  t.equal((await listed.inject({ url: '/', remoteAddress: '10.0.0.9' })).statusCode, 200)
  t.equal((await listed.inject({ url: '/', remoteAddress: '10.0.0.9' })).statusCode, 429)
  const byFunction = await build(t, { max: 1, login: { max: 1 }, allowList: (request) => request.headers['x-internal'] === 'yes' })
  for (let i = 0; i < 3; i++) t.equal((await byFunction.inject({ method: 'POST', url: '/login', headers: { 'x-internal': 'yes' } })).statusCode, 200)
  t.equal((await byFunction.inject({ method: 'POST', url: '/login' })).statusCode, 200)
  t.equal((await byFunction.inject({ method: 'POST', url: '/register' })).statusCode, 429, 'the global limit of 1')
})

t.test('the login limit: per client and login route, on top of the global one', async (t) => {
  const app = await build(t, { max: 100, login: { max: 3, timeWindow: '1m' } })
  for (let i = 1; i <= 3; i++) {
    const res = await app.inject({ method: 'POST', url: '/login' })
    t.equal(res.statusCode, 200, `login ${i}`)
    t.equal(res.headers['x-ratelimit-limit'], '3', 'the headers tell the tighter limit')
    t.equal(res.headers['x-ratelimit-remaining'], String(3 - i))
  }
  const fourth = await app.inject({ method: 'POST', url: '/login' })
  t.equal(fourth.statusCode, 429)
  t.strictSame(fourth.json(), LIMITED)
  t.equal(fourth.headers['retry-after'], '60')
  t.equal((await app.inject({ method: 'POST', url: '/register' })).statusCode, 200, 'another login route counts apart')
  t.equal((await app.inject({ method: 'GET', url: '/login' })).statusCode, 200, 'only POSTs')
  t.equal((await app.inject({ method: 'POST', url: '/login', remoteAddress: '10.0.0.3' })).statusCode, 200, 'another client')
  const res = await app.inject('/')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-ratelimit-remaining'], String(100 - 7), 'login POSTs count toward the global limit too (the refused one as well)')

  const tight = await build(t, { max: 2 })
  t.equal((await tight.inject({ method: 'POST', url: '/login' })).statusCode, 200)
  t.equal((await tight.inject({ method: 'POST', url: '/login' })).statusCode, 200)
  t.equal((await tight.inject({ method: 'POST', url: '/login' })).statusCode, 429, 'the global limit applies to logins')
  const off = await build(t, { max: 100, login: false })
  for (let i = 0; i < 12; i++) t.equal((await off.inject({ method: 'POST', url: '/login' })).statusCode, 200, `login: false, attempt ${i + 1}`)
})

t.test('the login preset stops a password-guessing loop of 11 attempts on jwtLogin and tokenLogin', async (t) => {
  const db = await testDatabase(t)
  await createAuthTables(db)
  const app = await authApp(t, db, async (app) => {
    await app.register(async (site) => {
      await site.register(rateLimit)
      await site.register(jwtLogin, { prefix: '/login/jwt', secret: 'a-secret-of-enough-length-0123456789' })
      await site.register(tokenLogin, { prefix: '/login/token' })
    })
  })
  await createUser(app.pg, { username: 'ann', password: 'right-password' })
  for (const url of ['/login/jwt', '/login/token']) {
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) {
      statuses.push((await app.inject({ method: 'POST', url, payload: { username: 'ann', password: `guess-${i}` } })).statusCode)
    }
    t.strictSame(statuses, [...Array(10).fill(401), 429], `${url}: ten guesses, then refused`)
    const right = await app.inject({ method: 'POST', url, payload: { username: 'ann', password: 'right-password' } })
    t.equal(right.statusCode, 429, 'even the right password, until the window ends')
    t.strictSame(right.json(), LIMITED)
    t.equal(right.headers['retry-after'], '900', 'fifteen minutes')
  }
})

t.test('requests an auth plugin refuses are counted: cookie or token guessing is limited too', async (t) => {
  const db = await testDatabase(t)
  await createSessionTables(db)
  const app = await authApp(t, db, async (app) => {
    await app.register(async (site) => {
      await site.register(rateLimit, { max: 3 })
      await site.register(async (me) => {
        await me.register(sessionAuth)
        me.get('/me/', async () => ({ ok: true }))
      })
      site.get('/tight', { config: { rateLimit: { max: 1 } } }, async () => ({ ok: true }))
    })
  })
  const answers = []
  for (let i = 0; i < 4; i++) answers.push(await app.inject({ url: '/me/', headers: { cookie: `id=guess-${i}` } }))
  t.strictSame(answers.map((a) => a.statusCode), [401, 401, 401, 429], 'three guesses, then refused before the session is looked up')
  t.strictSame(answers.map((a) => a.headers['x-ratelimit-remaining']), ['2', '1', '0', '0'], 'each refused answer carries the headers')
  t.strictSame(answers[3]!.json(), LIMITED)
  const root = Fastify()
  t.teardown(async () => await root.close())
  await root.register(rateLimit, { max: 1 })
  const unknown = [await root.inject('/nowhere'), await root.inject('/nowhere')]
  t.strictSame(unknown.map((a) => a.statusCode), [404, 429], 'registered at the root, unknown paths are counted too (path scanning)')
  const tight = [await app.inject('/tight'), await app.inject('/tight')]
  t.strictSame(tight.map((a) => a.statusCode), [200, 429], 'a route with its own limit keeps it, apart from the global count')
  // A rateLimit inside another's context still limits its routes (in their own hooks, after auth).
  const nested = Fastify()
  t.teardown(async () => await nested.close())
  await nested.register(rateLimit, { max: 100 })
  await nested.register(async (inner) => {
    await inner.register(rateLimit, { max: 2 })
    inner.get('/inner', async () => ({ ok: true }))
  })
  const inner = [await nested.inject('/inner'), await nested.inject('/inner'), await nested.inject('/inner')]
  t.strictSame(inner.map((a) => a.statusCode), [200, 200, 429], 'a nested rateLimit keeps its own limit')
})

t.test('Redis: two instances share the count', async (t) => {
  const nameSpace = `${PREFIX}shared-`
  const a = await build(t, { max: 5, redis: await readyRedis(t), nameSpace })
  const b = await build(t, { max: 5, redis: await readyRedis(t), nameSpace })
  const statuses: number[] = []
  for (let i = 0; i < 3; i++) {
    statuses.push((await a.inject('/')).statusCode)
    statuses.push((await b.inject('/')).statusCode)
  }
  t.strictSame(statuses, [200, 200, 200, 200, 200, 429], 'the sixth request, on either, is a 429')
  const redis = await readyRedis(t)
  t.equal(await redis.get(`${nameSpace}127.0.0.1`), '6', 'the counter lives in Redis under the name space')
  t.ok(await redis.pttl(`${nameSpace}127.0.0.1`) > 290000, 'expiring with the window')

  t.equal((await a.inject('/tight')).statusCode, 200, 'a route with a limit of its own (@fastify/rate-limit\'s config.rateLimit)')
  t.equal((await b.inject('/tight')).statusCode, 429, 'shares its count too')
  t.equal(await redis.get(`${nameSpace}GET/tight-127.0.0.1`), '2')

  const loginA = await build(t, { max: 100, login: { max: 2 }, redis: await readyRedis(t), nameSpace: `${PREFIX}login-shared-` })
  const loginB = await build(t, { max: 100, login: { max: 2 }, redis: await readyRedis(t), nameSpace: `${PREFIX}login-shared-` })
  t.equal((await loginA.inject({ method: 'POST', url: '/login' })).statusCode, 200)
  t.equal((await loginB.inject({ method: 'POST', url: '/login' })).statusCode, 200)
  t.equal((await loginA.inject({ method: 'POST', url: '/login' })).statusCode, 429, 'the login counts too')
  t.equal(await redis.get(`${PREFIX}login-shared-login-/login 127.0.0.1`), '3')
})

t.test('Redis down: requests pass, one warning is logged', async (t) => {
  const { lines, stream } = logSink()
  // A closed port: the client is reconnecting, so the limiter does not wait for it.
  const redis = redisClient(t, 'redis://127.0.0.1:1', { maxRetriesPerRequest: 20 })
  const app = await build(t, { max: 2, redis, nameSpace: `${PREFIX}down-` }, { logger: { level: 'info', stream }, disableRequestLogging: true })
  const started = Date.now()
  for (let i = 0; i < 5; i++) {
    const res = await app.inject('/')
    t.equal(res.statusCode, 200, `request ${i + 1} passes`)
  }
  t.ok(Date.now() - started < 2000, 'without waiting for Redis')
  const warnings = lines.filter((line) => line.level === 40)
  t.equal(warnings.length, 1, 'one warning for the outage')
  t.equal(warnings[0]!.msg, 'rate limit: Redis is unavailable; requests pass unlimited until it is back')
})

t.test('Redis slow: a command that does not answer in redisTimeout lets the request pass', async (t) => {
  // A server that accepts connections and never answers.
  const sockets = new Set<Socket>()
  const silent: Server = createServer((socket) => { sockets.add(socket) })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { for (const s of sockets) s.destroy(); await new Promise((resolve) => silent.close(resolve)) })
  const port = (silent.address() as { port: number }).port
  const { lines, stream } = logSink()
  const redis = redisClient(t, `redis://127.0.0.1:${port}`, { enableReadyCheck: false })
  await new Promise((resolve) => redis.once('connect', resolve))
  const app = await build(t, { max: 1, redis, redisTimeout: 100, nameSpace: `${PREFIX}slow-` }, { logger: { level: 'info', stream }, disableRequestLogging: true })
  for (let i = 0; i < 3; i++) {
    const started = Date.now()
    t.equal((await app.inject('/')).statusCode, 200, `request ${i + 1} passes`)
    const took = Date.now() - started
    t.ok(took >= 90 && took < 1000, `after the timeout (${took} ms)`)
  }
  t.match(lines.filter((line) => line.level === 40), [{ msg: 'rate limit: Redis is unavailable; requests pass unlimited until it is back', err: { message: 'Redis did not answer within 100 ms' } }])
})

t.test('Redis back: limits apply again, and the log says so', async (t) => {
  const { lines, stream } = logSink()
  const redis = await readyRedis(t)
  const app = await build(t, { max: 2, redis, nameSpace: `${PREFIX}back-` }, { logger: { level: 'info', stream }, disableRequestLogging: true })
  t.equal((await app.inject('/')).statusCode, 200)
  redis.disconnect()
  t.equal((await app.inject('/')).statusCode, 200, 'passes while Redis is gone')
  t.equal((await app.inject('/')).statusCode, 200)
  await redis.connect()
  t.equal((await app.inject('/')).statusCode, 200, 'the second counted request')
  t.equal((await app.inject('/')).statusCode, 429, 'the third counted request')
  t.strictSame(lines.filter((line) => line.level >= 30).map((line) => line.msg), [
    'rate limit: Redis is unavailable; requests pass unlimited until it is back',
    'rate limit: Redis answers again; limits apply'
  ])
  // A command failing in Redis itself (not a connection problem) also lets the request through.
  await redis.set(`${PREFIX}back-127.0.0.1`, 'not a number')
  t.equal((await app.inject('/')).statusCode, 200, 'a Redis error passes')
  t.equal(lines.filter((line) => line.level === 40).length, 2, 'a new outage, a new warning')
})

t.test('invalid options fail at registration', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ max: 0 }, 'rateLimit: the option max must be a whole number, 1 or more'],
    [{ max: '5' }, 'rateLimit: the option max must be'],
    [{ timeWindow: 'soon' }, 'rateLimit: the option timeWindow must be a whole number of milliseconds, 1 or more, or a duration such as \'5m\''],
    [{ timeWindow: 0 }, 'rateLimit: the option timeWindow must be'],
    [{ keyGenerator: 'ip' }, 'rateLimit: the option keyGenerator must be a function (request) => string'],
    [{ redis: {} }, 'rateLimit: the option redis must be an ioredis client'],
    [{ redis: null }, 'rateLimit: the option redis must be'],
    [{ nameSpace: '' }, 'rateLimit: the option nameSpace must be a non-empty string'],
    [{ redisTimeout: -1 }, 'rateLimit: the option redisTimeout must be a whole number of milliseconds, 1 or more'],
    [{ allowList: '127.0.0.1' }, 'rateLimit: the option allowList must be an array of keys or a function (request, key) => boolean'],
    [{ allowList: [1] }, 'rateLimit: the option allowList must be'],
    [{ login: true }, 'rateLimit: the option login must be { max, timeWindow } or false'],
    [{ login: null }, 'rateLimit: the option login must be'],
    [{ login: { max: 0 } }, 'rateLimit: the option login max must be a whole number, 1 or more'],
    [{ login: { timeWindow: '' } }, 'rateLimit: the option login timeWindow must be a whole number of milliseconds']
  ]
  for (const [options, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(rateLimit, options as RateLimitOptions); await app.ready() }, { code: 'TABLECRUD_ERR_OPTIONS', message: new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) }, JSON.stringify(options))
    await app.close()
  }
})
