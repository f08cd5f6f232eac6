import t, { type Test } from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import type { Page } from 'playwright-core'
import { createUser } from '../../lib/auth/users.js'
import { sessionLogin } from '../../plugins/auth/session-login.js'
import { sessionLogout } from '../../plugins/auth/session-logout.js'
import { csrf } from '../../plugins/web/csrf.js'
import { appPool, testDatabase } from '../helpers/db.js'
import { createSessionTables } from '../plugins/auth/session-app.js'
import { browserMissing, launchChromium, watchedPage, BROWSER_FILE_LIMIT_MS } from '../helpers/browser.js'

t.setTimeout(BROWSER_FILE_LIMIT_MS)

/*
 * Login and logout CSRF from a same-site page over plain HTTP (issue 27 point 4). A page on
 * another port of the same host reads the application's `csrftoken` cookie (cookies ignore
 * ports) and posts it to `/login/` (the victim would be logged in as the attacker) or
 * `/logout/`. With the token right, only where the form came from tells: refused. A page of
 * another loopback host name (localhost) is another site: refused too, and the application's
 * own forms pass.
 */

const APP_PORT = 15700
const ATTACKER_PORT = 15701

const missing = browserMissing()
if (missing !== null) {
  t.test('the browser checks', { skip: missing }, () => {})
} else {
  process.env.TABLECRUD_BCRYPT_COST ??= '4'
  const db = await testDatabase(t)
  await createSessionTables(db)

  const app = Fastify()
  await app.register(fastifyPostgres, appPool(db))
  await app.register(async (site) => {
    await site.register(csrf)
    await site.register(sessionLogin, { prefix: '/login', redirectTo: '/login/' })
    await site.register(sessionLogout, { prefix: '/logout', redirectTo: '/login/' })
  })
  await app.ready()
  await createUser(app.pg, { username: 'victim', password: 'victim-password' })
  await createUser(app.pg, { username: 'mallory', password: 'mallory-password' })
  t.teardown(async () => await app.close())
  const base = await app.listen({ host: '127.0.0.1', port: APP_PORT })

  // The attacker's pages: a form to the application, its token copied from document.cookie.
  const attacker = Fastify()
  attacker.get('/:action', async (request, reply) => reply.type('text/html; charset=utf-8').send(attackPage(base, (request.params as { action: string }).action)))
  t.teardown(async () => await attacker.close())
  await attacker.listen({ host: '127.0.0.1', port: ATTACKER_PORT })
  const sameSite = `http://127.0.0.1:${ATTACKER_PORT}`
  const otherSite = `http://localhost:${ATTACKER_PORT}`

  const browser = await launchChromium()
  t.teardown(async () => await browser.close())

  const sessions = async (): Promise<string[]> =>
    (await app.pg.query('SELECT u.username FROM auth_session s JOIN auth_user u ON u.id = s."user" ORDER BY s.id')).rows.map((r: { username: string }) => r.username)

  /** Submits the form of the page open at `url`, and the application's answer to it. */
  const submit = async (page: Page, url: string, target: string): Promise<{ status: number, body: string }> => {
    await page.goto(url)
    const [response] = await Promise.all([page.waitForResponse((r) => r.url() === target && r.request().method() === 'POST'), page.locator('button').click()])
    return { status: response.status(), body: await response.text() }
  }

  const appToken = async (page: Page): Promise<string | undefined> => (await page.context().cookies(base)).find((c) => c.name === 'csrftoken')?.value

  t.test('a login posted from another port of the host, with the token it read, is refused; from another host name too', async (t: Test) => {
    const { page } = await watchedPage(browser)
    await page.goto(`${base}/login/`)
    const token = await appToken(page)
    t.ok(token, 'the victim holds the application\'s token cookie')

    await page.goto(`${sameSite}/login`)
    t.equal(await page.locator('#token').inputValue(), token, 'the page on another port read it: cookies ignore ports')
    const fromPort = await submit(page, `${sameSite}/login`, `${base}/login/`)
    t.equal(fromPort.status, 403, 'refused')
    t.match(JSON.parse(fromPort.body), { code: 'TABLECRUD_ERR_CSRF', message: 'Same-site request from another origin refused' })

    const fromHost = await submit(page, `${otherSite}/login`, `${base}/login/`)
    t.equal(fromHost.status, 403, 'another host name: another site')
    t.match(JSON.parse(fromHost.body), { code: 'TABLECRUD_ERR_CSRF', message: 'Cross-site request refused' })
    t.strictSame(await sessions(), [], 'nobody was logged in')
    t.notOk((await page.context().cookies(base)).some((c) => c.name === 'id'), 'the browser holds no session cookie')
  })

  t.test('a logout posted from another port is refused; the application\'s own login and logout forms pass', async (t: Test) => {
    const { page } = await watchedPage(browser)
    await page.goto(`${base}/login/`)
    await page.locator('input[name="username"]').fill('victim')
    await page.locator('input[name="password"]').fill('victim-password')
    const [login] = await Promise.all([page.waitForResponse((r) => r.url() === `${base}/login/` && r.request().method() === 'POST'), page.locator('button[type="submit"]').click()])
    t.equal(login.status(), 303, 'the application\'s own login form passes')
    t.strictSame(await sessions(), ['victim'])

    const fromPort = await submit(page, `${sameSite}/logout`, `${base}/logout/`)
    t.equal(fromPort.status, 403, 'the foreign logout is refused')
    t.strictSame(await sessions(), ['victim'], 'the session is still there')

    await page.goto(`${base}/logout/`)
    const [logout] = await Promise.all([page.waitForResponse((r) => r.url() === `${base}/logout/` && r.request().method() === 'POST'), page.locator('button[type="submit"]').click()])
    t.equal(logout.status(), 303, 'the application\'s own logout form passes')
    t.strictSame(await sessions(), [], 'and ends the session')
  })
}

/** A page that posts the credentials of `mallory` (login) or nothing (logout), with the token its script reads from the cookie. */
function attackPage (base: string, action: string): string {
  const fields = action === 'login' ? '<input name="username" value="mallory"><input name="password" value="mallory-password">' : ''
  return `<!doctype html><html><head><meta charset="utf-8"><title>Prize</title></head><body>
<form method="post" action="${base}/${action === 'login' ? 'login' : 'logout'}/">${fields}<input type="hidden" name="format" value="html"><input type="hidden" name="csrftoken" id="token"><button type="submit">Claim</button></form>
<script>document.getElementById('token').value = (/(?:^|; )csrftoken=([^;]*)/.exec(document.cookie) || [])[1] || ''</script>
</body></html>`
}
