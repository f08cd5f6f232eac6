import t from 'tap'
import { totpCode } from '../../lib/auth/totp.js'
import { browserMissing, demoInBrowser, watchedPage, BROWSER_FILE_LIMIT_MS } from '../helpers/browser.js'
import { freshCode } from '../helpers/totp.js'

t.setTimeout(BROWSER_FILE_LIMIT_MS)

/*
 * SPEC §5.3 in a real browser, against the demo: sign up, log in through the form, set up MFA
 * (the secret read from the page, the code computed here), log out, log in again with a TOTP
 * code, change the password (every session ends), log in with the new password (and a recovery
 * code read from the set-up page). Every page is served under
 * `Content-Security-Policy: default-src 'self'`, and no violation may be reported.
 */

process.env.TABLECRUD_BCRYPT_COST ??= '4'

/** A skipped test, with its reason in tap's summary, when there is no browser to drive: never a pass. */
const skip = browserMissing() ?? false

t.test('sign up, log in, set up MFA, log out, log in with a code, change the password, log in again', { skip }, async (t) => {
  const { app, base, browser } = await demoInBrowser(t)
  const { page, context, violations, errors, requested } = await watchedPage(browser, { csp: "default-src 'self'" })
  const sessions = async (): Promise<number> =>
    (await app.pg.query('SELECT count(*)::int AS n FROM auth_session s JOIN auth_user u ON u.id = s."user" WHERE u.username = $1', ['ada'])).rows[0].n
  const submit = async (url: string, button = 'button[type=submit]'): Promise<void> => {
    await Promise.all([page.waitForURL(url), page.click(button)])
  }
  const logIn = async (password: string, code: string | null): Promise<void> => {
    await page.goto(`${base}/login/`)
    await page.fill('#username', 'ada')
    await page.fill('#password', password)
    if (code !== null) await page.fill('#mfa_code', code)
    await page.click('button[type=submit]')
    await page.waitForLoadState()
  }

  // Sign up
  let response = await page.goto(`${base}/register/`)
  t.equal(response?.status(), 200)
  t.equal(await page.title(), 'Sign up')
  await page.fill('#username', 'ada')
  await page.fill('#email', 'Ada@Example.com')
  await page.fill('#password', 'first-password')
  await page.fill('#confirm_password', 'other-password')
  await submit(`${base}/register/`)
  t.equal(await page.locator('.message').textContent(), 'Passwords do not match.', 'a refusal shows the page again')
  t.equal(await page.inputValue('#email'), 'Ada@Example.com', 'the email kept')
  await page.fill('#password', 'first-password')
  await page.fill('#confirm_password', 'first-password')
  await submit(`${base}/login/`)
  t.equal(await page.title(), 'Log in', 'sent on to the login page')

  // Log in, reach a page behind sessionAuth
  await page.fill('#username', 'ada')
  await page.fill('#password', 'first-password')
  await submit(`${base}/me/`)
  t.equal(await page.locator('#username').textContent(), 'ada')

  // Set up MFA
  await Promise.all([page.waitForURL(`${base}/mfa/`), page.click('a[href="/mfa/"]')])
  await page.fill('#password', 'first-password')
  await submit(`${base}/mfa/`)
  const secret = (await page.locator('#secret').textContent())!
  t.match(secret, /^[A-Z2-7]{32}$/, 'the key is on the page')
  const recovery = await page.locator('#recovery-codes li').allTextContents()
  t.equal(recovery.length, 8)
  // The image may still be on its way when the page's load event has fired for the form: wait for it.
  const qrWidth = await page.locator('#qrcode').evaluate(async (element) => {
    const img = element as unknown as { complete: boolean, naturalWidth: number, decode: () => Promise<void> }
    if (!img.complete) await img.decode().catch(() => {})
    return img.naturalWidth
  })
  t.ok(qrWidth > 0, 'the QR code image loaded, under default-src self')
  await page.fill('#code', await freshCode(secret))
  await submit(`${base}/mfa/`)
  t.equal(await page.locator('.notice').textContent(), 'MFA enabled')
  const usedStep = Math.floor(Date.now() / 30_000)

  // Log out
  await page.goto(`${base}/logout/`)
  await submit(`${base}/login/`)
  t.equal(await sessions(), 0)

  // Log in again: the code is asked for
  await logIn('first-password', null)
  t.equal(await page.locator('.message').textContent(), 'MFA code required')
  // The confirming code's time step is spent: wait for the next one, as a user would.
  const wait = (usedStep + 1) * 30_000 - Date.now() + 200
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  await logIn('first-password', totpCode(secret))
  t.equal(page.url(), `${base}/me/`, 'logged in with the TOTP code')
  t.equal(await sessions(), 1)
  const oldSession = (await context.cookies(base)).find((c) => c.name === 'id')!.value

  // Change the password: every session ends
  await page.goto(`${base}/change-password/`)
  t.equal(await page.title(), 'Change password')
  await page.fill('#current_password', 'wrong-password')
  await page.fill('#new_password', 'second-password')
  await page.fill('#confirm_new_password', 'second-password')
  await submit(`${base}/change-password/`)
  t.equal(await page.locator('.message').textContent(), 'Incorrect password.')
  await page.fill('#current_password', 'first-password')
  await page.fill('#new_password', 'second-password')
  await page.fill('#confirm_new_password', 'second-password')
  await submit(`${base}/login/`)
  t.equal(await sessions(), 0, 'every session of the user is gone')
  t.equal((await context.cookies(base)).find((c) => c.name === 'id'), undefined, 'the cookie is cleared')
  const replay = await app.inject({ url: '/me/', cookies: { id: oldSession } })
  t.same([replay.statusCode, replay.headers.location], [303, '/login/?next=%2Fme%2F'], 'the old session cookie no longer opens anything: the page sends to the login')
  response = await page.goto(`${base}/me/`)
  t.equal(page.url(), `${base}/login/?next=%2Fme%2F`, 'and so does the browser, logged out')
  t.equal(response?.status(), 200)

  // Log in with the new password (the second factor: a recovery code from the set-up page)
  await logIn('first-password', recovery[0]!)
  t.equal(await page.locator('.message').textContent(), 'Login failed', 'the old password is refused')
  await logIn('second-password', recovery[0]!)
  t.equal(page.url(), `${base}/me/`)
  t.equal(await page.locator('#username').textContent(), 'ada')
  await logIn('second-password', recovery[0]!)
  t.equal(await page.locator('.message').textContent(), 'MFA failed', 'a recovery code works once')

  t.strictSame(requested.filter((u) => !u.startsWith(base)), [], 'nothing fetched from anywhere but the application')
  t.strictSame([...errors, ...violations], [], 'no script error, no CSP violation')
})
