import t from 'tap'
import { browserMissing, demoInBrowser, watchedPage, BROWSER_FILE_LIMIT_MS } from '../helpers/browser.js'

t.setTimeout(BROWSER_FILE_LIMIT_MS)

/*
 * The demo's pages under its `csp` plugin (SPEC §5.6), in headless Chromium: each is served
 * with `default-src 'self'` and reports no violation and no script error once shown.
 */

/** The built-in pages: [path, a selector shown once the page has rendered]. One line per page. */
const PAGES: Array<[string, string]> = [
  ['/docs/', '.swagger-ui .info .title'],
  ['/login/', 'form button[type=submit]'],
  ['/logout/', 'form button[type=submit]'],
  ['/register/', 'form button[type=submit]']
]

const missing = browserMissing()
if (missing !== null) {
  // A skipped test, with its reason in tap's summary: never a pass.
  t.test('the browser checks', { skip: missing }, () => {})
} else {
  const { base, browser } = await demoInBrowser(t)

  for (const [path, ready] of PAGES) {
    t.test(`${path}: no CSP violation under default-src 'self'`, async (t) => {
      const { page, violations, errors } = await watchedPage(browser)
      const response = await page.goto(`${base}${path}`)
      t.match(response!.headers()['content-security-policy'], /^default-src 'self'(;|$)/, 'served under the policy')
      await page.locator(ready).first().waitFor()
      // Expand what the page hides at first (Swagger UI draws selects with data: arrows then).
      for (const summary of (await page.locator('.opblock-summary').all()).slice(0, 8)) await summary.click()
      await page.waitForLoadState('networkidle')
      t.strictSame(violations, [], 'no violation')
      t.strictSame(errors, [], 'no script error')
    })
  }
}
