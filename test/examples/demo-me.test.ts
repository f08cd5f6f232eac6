import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { appPool, testDatabase } from '../helpers/db.js'
import { buildDemo, DEMO_USER } from '../../examples/movies/app.js'

/*
 * The rest of the demo by inject: the /me/ page behind session auth, and the rate limits
 * counted in Redis when `npm start` is given REDIS_URL (the browser tests, which also visit
 * /me/, skip without chromium).
 */

process.env.TABLECRUD_BCRYPT_COST ??= '4'
const db = await testDatabase(t)

const cookieOf = (setCookie: string | string[] | undefined, name: string): string => {
  const line = [setCookie ?? []].flat().find((c) => c.startsWith(`${name}=`))!
  return line.slice(name.length + 1).split(';')[0]!
}

t.test('/me/: who is logged in, for a session only', async (t) => {
  const app = await buildDemo(appPool(db))
  t.teardown(async () => await app.close())
  const anonymous = await app.inject('/me/')
  t.equal(anonymous.statusCode, 303, 'a page: sent to log in (test/examples/demo-pages.test.ts)')
  t.equal(anonymous.headers.location, '/login/?next=%2Fme%2F')
  const page = await app.inject('/login/')
  const token = cookieOf(page.headers['set-cookie'], 'csrftoken')
  const login = await app.inject({
    method: 'POST',
    url: '/login/',
    headers: { cookie: `csrftoken=${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `format=html&username=${DEMO_USER.username}&password=${DEMO_USER.password}&csrftoken=${token}`
  })
  t.equal(login.statusCode, 303)
  const me = await app.inject({ url: '/me/', cookies: { id: cookieOf(login.headers['set-cookie'], 'id') } })
  t.equal(me.statusCode, 200)
  t.equal(me.headers['content-type'], 'text/html; charset=utf-8')
  t.match(me.body, /^<!doctype html>/)
  t.match(me.body, '<title>Who am I</title>')
  t.match(me.body, `<p>Logged in as <strong id="username">${DEMO_USER.username}</strong>.</p>`)
  t.match(me.body, '<li><a href="/change-password/">Change password</a></li><li><a href="/mfa/">Two-factor authentication</a></li><li><a href="/logout/">Log out</a></li>')
  t.match(me.body, '<link rel="stylesheet" href="/login/style.css">')
})

t.test('with a Redis client, the rate limits are counted in Redis under the demo\'s name space', async (t) => {
  // The client prefixes every key, so this file's keys are its own; deleted at the end.
  const prefix = `tc-c-demo-${randomBytes(4).toString('hex')}-`
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { keyPrefix: prefix, maxRetriesPerRequest: 1 })
  const admin = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  t.teardown(async () => {
    const keys = await admin.keys(`${prefix}*`)
    if (keys.length > 0) await admin.del(...keys)
    redis.disconnect()
    admin.disconnect()
  })
  const app = await buildDemo({ ...appPool(db), redis })
  t.teardown(async () => await app.close())
  for (const remaining of ['999', '998']) {
    const res = await app.inject('/api/movies/?__page_size=1')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-ratelimit-limit'], '1000')
    t.equal(res.headers['x-ratelimit-remaining'], remaining)
  }
  t.equal(await admin.get(`${prefix}movies-demo-rl-127.0.0.1`), '2', 'the count lives in Redis')
})
