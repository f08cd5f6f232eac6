import t from 'tap'
import { DEMO_USER } from '../../examples/movies/app.js'
import { browserMissing, demoInBrowser, watchedPage, BROWSER_FILE_LIMIT_MS } from '../helpers/browser.js'

t.setTimeout(BROWSER_FILE_LIMIT_MS)

/*
 * Session login in a real browser, against the demo: the form at /login/, the cookie, the page
 * behind session auth at /me/, logout, and refused again. Every page is served under
 * `Content-Security-Policy: default-src 'self'` (added here, as the csp plugin would), and no
 * violation may be reported.
 */

/** A skipped test, with its reason in tap's summary, when there is no browser to drive: never a pass. */
const skip = browserMissing() ?? false

t.test('log in through the form, see /me/, log out, be refused again', { skip }, async (t) => {
  const { app, base, browser } = await demoInBrowser(t)
  const { page, context, violations, errors, requested } = await watchedPage(browser, { csp: "default-src 'self'" })

  let response = await page.goto(`${base}/me/`)
  t.equal(page.url(), `${base}/login/?next=%2Fme%2F`, 'sent to the login page before logging in')
  t.equal(response?.status(), 200)
  t.equal(await page.title(), 'Log in')
  await page.fill('#username', DEMO_USER.username)
  await page.fill('#password', 'wrong-password')
  await Promise.all([page.waitForURL(`${base}/login/`), page.click('button[type=submit]')])
  t.equal(await page.locator('.message').textContent(), 'Login failed', 'a wrong password shows the page again with the message')
  t.equal(await page.inputValue('#username'), DEMO_USER.username, 'the username kept')

  await page.fill('#password', DEMO_USER.password)
  await Promise.all([page.waitForURL(`${base}/me/`), page.click('button[type=submit]')])
  t.equal(page.url(), `${base}/me/`, 'landed on redirectTo')
  t.equal(await page.locator('#username').textContent(), DEMO_USER.username, 'the protected page shows who is logged in')
  const cookies = await context.cookies(base)
  const session = cookies.find((c) => c.name === 'id')
  t.match(session, { httpOnly: true, sameSite: 'Lax', path: '/', secure: false })
  t.match(session?.value, /^[A-Za-z0-9_-]{43}$/)
  t.equal(String(await page.evaluate('document.cookie')).includes('id='), false, 'scripts cannot read the session cookie')

  await Promise.all([page.waitForURL(`${base}/logout/`), page.click('a[href="/logout/"]')])
  await Promise.all([page.waitForURL(`${base}/login/`), page.click('button[type=submit]')])
  t.equal((await context.cookies(base)).find((c) => c.name === 'id'), undefined, 'the cookie is gone')
  response = await page.goto(`${base}/me/`)
  t.equal(page.url(), `${base}/login/?next=%2Fme%2F`, 'sent to the login page again')
  t.equal(await page.title(), 'Log in')
  const { rows } = await app.pg.query('SELECT count(*)::int AS n FROM auth_session')
  t.equal(rows[0].n, 0, 'the session row is gone')

  t.strictSame(requested.filter((u) => !u.startsWith(base)), [], 'nothing fetched from anywhere but the application')
  t.strictSame([...errors, ...violations], [], 'no script error, no CSP violation')
})
