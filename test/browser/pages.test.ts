import t from 'tap'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { browserMissing, demoInBrowser, watchedPage } from '../helpers/browser.js'
import { freshCode } from '../helpers/totp.js'

/*
 * The demo's pages as a person meets them in Chromium, at a phone's and a desktop's width: the
 * home page, a page behind the session sending to the login page and back (`next`), sign-up
 * with its notice, the login limit's 429 page, the MFA "code just used" message. Each page is
 * checked by axe-core (no serious or critical violation) and photographed; with
 * UPDATE_SCREENSHOTS=1 the photographs replace those in docs/images/ (docs/auth.md shows them).
 */

process.env.TABLECRUD_BCRYPT_COST ??= '4'
const skip = browserMissing() ?? false
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const
const IMAGES = process.env.UPDATE_SCREENSHOTS === '1' ? join(import.meta.dirname, '..', '..', 'docs', 'images') : null

interface Violation { id: string, impact: string | null, help: string, nodes: Array<{ target: string[] }> }

/** axe-core's serious and critical violations on the page, as `rule: help (targets)`; run through the debugger, so the page's CSP does not stop it. */
async function seriousViolations (page: Page): Promise<string[]> {
  await page.evaluate(`${AXE};0`)
  const violations = await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)') as Violation[]
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`)
}

for (const [width, viewport] of Object.entries(WIDTHS)) {
  t.test(`the pages at a ${width}'s width: what they say, axe-clean, photographed`, { skip }, async (t) => {
    const { base, browser } = await demoInBrowser(t)
    const dir = IMAGES ?? await mkdtemp(join(tmpdir(), 'tablecrud-pages-'))
    if (IMAGES === null) t.teardown(async () => await rm(dir, { recursive: true, force: true }))
    await mkdir(dir, { recursive: true })
    const { page, violations, errors, requested } = await watchedPage(browser, { viewport })
    const check = async (name: string): Promise<void> => {
      t.strictSame(await seriousViolations(page), [], `${name}: no serious accessibility violation`)
      const file = join(dir, `${name}-${width}.png`)
      await page.screenshot({ path: file })
      t.ok((await stat(file)).size > 2000, `${name}: photographed`)
    }
    /** Posts the page's (last) form and waits for the page it leads to, which may be at the same address. */
    const submit = async (url: string, button = 'main form button[type=submit] >> nth=-1'): Promise<number> => {
      const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click(button)])
      await page.waitForURL(url)
      await page.waitForLoadState('load')
      return response.status()
    }

    // Home, logged out
    await page.goto(`${base}/`)
    t.equal(await page.locator('h1').textContent(), 'fastify-tablecrud movies demo')
    t.match(await page.locator('#who').textContent(), 'You are not logged in.')
    t.equal(await page.locator('main a[href="/docs/"]').textContent(), 'API docs')
    t.equal(await page.evaluate('getComputedStyle(document.querySelector("main")).backgroundColor'), 'rgb(255, 255, 255)', 'the stylesheet applies')
    await check('home')

    // A page behind the session: to the login page, then back
    await page.goto(`${base}/mfa/`)
    t.equal(page.url(), `${base}/login/?next=%2Fmfa%2F`, 'sent to log in, with next')
    t.equal(await page.inputValue('input[name=next]'), '/mfa/')
    t.ok(await page.locator('a[href="/register/"]').isVisible(), 'a link to sign up')
    await check('login')
    await page.click('a[href="/register/"]')
    await page.waitForURL(`${base}/register/`)
    await page.fill('#username', `ada-${width}`)
    await page.fill('#email', `ada-${width}@example.com`)
    await page.fill('#password', 'first-password')
    await page.fill('#confirm_password', 'other-password')
    await submit(`${base}/register/`)
    t.equal(await page.locator('.message').textContent(), 'Passwords do not match.')
    t.equal(await page.getAttribute('#confirm_password', 'aria-describedby'), 'form-message', 'the message is tied to the fields')
    await check('register-refused')
    await page.fill('#password', 'first-password')
    await page.fill('#confirm_password', 'first-password')
    await submit(`${base}/login/`)
    t.equal(await page.locator('.notice').textContent(), 'Your account is ready: log in.')
    await check('login-notice')
    await page.goto(`${base}/login/?next=%2Fmfa%2F`)
    await page.fill('#username', `ada-${width}`)
    await page.fill('#password', 'first-password')
    await submit(`${base}/mfa/`)
    t.equal(page.url(), `${base}/mfa/`, 'back where the person was going')

    // MFA: set up, then the code just used is refused with a message that says to wait
    await page.fill('#password', 'first-password')
    await submit(`${base}/mfa/`)
    const secret = (await page.locator('#secret').textContent())!
    await check('mfa-pending')
    const code = await freshCode(secret, 8000)
    await page.fill('#code', code)
    await submit(`${base}/mfa/`, 'form:has(input[value=confirm]) button')
    t.equal(await page.locator('.notice').textContent(), 'MFA enabled')
    await check('mfa-enabled')
    await page.goto(`${base}/logout/`)
    await check('logout')
    await submit(`${base}/login/`)
    t.equal(await page.locator('.notice').textContent(), 'You are logged out.')
    await page.fill('#username', `ada-${width}`)
    await page.fill('#password', 'first-password')
    await page.fill('#mfa_code', code)
    await submit(`${base}/login/`)
    t.equal(await page.locator('.message').textContent(), 'This code was just used; wait for the next one')
    await check('login-mfa-used')

    // The login limit: the 11th attempt, right password or not, is the page with when to try again
    // Two login POSTs so far from this address (the limit is per route and client): eight more refused, then the 11th.
    for (let i = 0; i < 8; i++) {
      await page.fill('#password', 'wrong-password')
      t.equal(await submit(`${base}/login/`), 401, `attempt ${i + 3}`)
    }
    await page.fill('#password', 'first-password')
    t.equal(await submit(`${base}/login/`), 429, 'the 11th, with the right password')
    t.equal(await page.locator('.message').textContent(), 'Too many requests. Try again in 15 minutes.')
    t.equal(await page.title(), 'Log in', 'the login page, not JSON')
    await check('login-429')

    t.strictSame(requested.filter((u) => !u.startsWith(base)), [], 'nothing fetched from elsewhere')
    t.strictSame([...errors, ...violations], [], 'no script error, no CSP violation')
  })
}
