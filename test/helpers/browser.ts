import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'

/** Debian's chromium, driven by playwright-core; CI installs it (.ci/browser-deps). */
export const CHROMIUM = '/usr/bin/chromium'

/** Why the browser tests cannot run here, or null when they can. */
export function browserMissing (): string | null {
  return existsSync(CHROMIUM) ? null : `chromium is absent: ${CHROMIUM} not found (apt-get install chromium); the browser test did not run`
}

export async function launchChromium (): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync']
  })
}

export interface WatchedPage { page: Page, violations: string[], errors: string[] }

/**
 * A page in a fresh browser context that records every CSP violation (the
 * `securitypolicyviolation` event, from a listener installed before any script of the page and
 * outside its policy, and Chromium's console report) and every script error.
 */
export async function watchedPage (browser: Browser): Promise<WatchedPage> {
  const context = await browser.newContext()
  const page = await context.newPage()
  page.setDefaultTimeout(20000)
  const violations: string[] = []
  const errors: string[] = []
  await page.exposeFunction('reportViolation', (text: string) => { violations.push(text) })
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => { window.reportViolation(e.violatedDirective + ' ' + e.blockedURI) })"
  })
  page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) violations.push(message.text()) })
  page.on('pageerror', (error) => { errors.push(error.message) })
  return { page, violations, errors }
}
