import { existsSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { buildDemo, type DemoOptions } from '../../examples/movies/app.js'
import { appPool, testDatabase } from './db.js'

/**
 * Debian's chromium, driven by playwright-core; CI installs it (.ci/browser-deps). CHROMIUM_PATH
 * moves it (or, pointed nowhere, shows the skip).
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Why the browser tests cannot run here, or null when they can. */
export function browserMissing (): string | null {
  return existsSync(CHROMIUM) ? null : `chromium is absent: ${CHROMIUM} not found (apt-get install chromium); the browser test did not run`
}

/*
 * Guards against a hang, not waits: every wait is for a condition. Measured on 2 cores at load
 * 20 (seven test runs at once), Swagger UI drew in up to 48 s (2 s idle) and the slowest browser
 * file took 104 s; the guards are several times that, so a busy CI machine does not fail them.
 */
/** How long one page action may wait for its condition. */
export const PAGE_TIMEOUT_MS = 120_000
/** How long a browser test file may run (`t.setTimeout` at its top). */
export const BROWSER_FILE_LIMIT_MS = 600_000

export async function launchChromium (): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync']
  })
}

export interface WatchedPage {
  page: Page
  /** The page's own context: its cookies. */
  context: BrowserContext
  violations: string[]
  errors: string[]
  /** Every URL the page requested. */
  requested: string[]
}

/**
 * A page in a fresh browser context that records every CSP violation (the
 * `securitypolicyviolation` event, from a listener installed before any script of the page and
 * outside its policy, and Chromium's console report), every script error and every request.
 * With `csp`, every response reaches the page under that `Content-Security-Policy` header (as the
 * csp plugin would add it), redirects passed on as they are; with `viewport`, a page that size.
 */
export async function watchedPage (browser: Browser, { csp, viewport }: { csp?: string, viewport?: { width: number, height: number } } = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  page.setDefaultTimeout(PAGE_TIMEOUT_MS)
  const violations: string[] = []
  const errors: string[] = []
  const requested: string[] = []
  await page.exposeFunction('reportViolation', (text: string) => { violations.push(text) })
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => { window.reportViolation(e.violatedDirective + ' ' + e.blockedURI) })"
  })
  if (csp !== undefined) {
    await page.route('**/*', async (route) => {
      const response = await route.fetch({ maxRedirects: 0 })
      await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': csp } })
    })
  }
  page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) violations.push(message.text()) })
  page.on('pageerror', (error) => { errors.push(error.message) })
  page.on('request', (request) => { requested.push(request.url()) })
  return { page, context, violations, errors, requested }
}

interface Teardown { teardown: (fn: () => unknown) => void }

/** The demo on the test database, listening at `base` on an ephemeral port, and a browser; both closed after `t`. */
export async function demoInBrowser (t: Teardown, options: Partial<DemoOptions> = {}): Promise<{ app: FastifyInstance, base: string, browser: Browser }> {
  const db = await testDatabase(t)
  const app = await buildDemo({ ...appPool(db), ...options })
  t.teardown(async () => await app.close())
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const browser = await launchChromium()
  t.teardown(async () => await browser.close())
  return { app, base, browser }
}

/**
 * Every operation Swagger UI draws on the page at `/docs/`, as `METHOD /path`, scrolling from
 * the top to the bottom: from 150 tags and operations on, Swagger UI draws only those in view
 * (docs/openapi.md, "Swagger UI").
 */
export async function drawnOperations (page: Page): Promise<Set<string>> {
  const drawn = new Set<string>()
  await page.evaluate('window.scrollTo(0, 0)')
  for (let last = -1; ;) {
    const shown = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((block) =>
      `${block.querySelector('.opblock-summary-method')?.textContent ?? ''} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''}`))
    shown.forEach((operation) => drawn.add(operation))
    const y = await page.evaluate('window.scrollBy(0, window.innerHeight / 2), window.scrollY') as number
    if (y === last) return drawn
    last = y
    // The virtualizer draws on the next frame.
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
  }
}
