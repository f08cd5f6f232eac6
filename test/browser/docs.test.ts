import t from 'tap'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { browserMissing, demoInBrowser, watchedPage, BROWSER_FILE_LIMIT_MS } from '../helpers/browser.js'

t.setTimeout(BROWSER_FILE_LIMIT_MS)

/*
 * Swagger UI in a real browser: the demo's /docs renders every table's operations, and "Try it
 * out" on the movies list fetches rows.
 */

/** A skipped test, with its reason in tap's summary, when there is no browser to drive: never a pass. */
const skip = browserMissing() ?? false
const TABLES = ['movie', 'director', 'studio', 'role']

t.test('Swagger UI at /docs shows every table and runs "Try it out" on the movies list', { skip }, async (t) => {
  const { app, base, browser } = await demoInBrowser(t)
  const document = (await app.inject('/docs/json')).json() as { paths: Record<string, Record<string, { tags?: string[] }>> }
  const dir = await mkdtemp(join(tmpdir(), 'tablecrud-docs-'))
  t.teardown(async () => await rm(dir, { recursive: true, force: true }))

  const { page, requested, errors } = await watchedPage(browser, { viewport: { width: 1280, height: 900 } })

  await page.goto(`${base}/docs/`)
  await page.locator('.swagger-ui .info .title').filter({ hasText: 'fastify-tablecrud movies demo' }).waitFor()

  for (const tag of TABLES) {
    t.ok(await page.locator(`h3.opblock-tag[data-tag="${tag}"]`).isVisible(), `the ${tag} tag is shown`)
  }
  const shown = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((block) =>
    `${block.querySelector('.opblock-summary-method')?.textContent ?? ''} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''}`))
  const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
  t.equal(operations.length, shown.length, 'as many operations on the page as in the document')
  t.strictSame([...shown].sort(), [...operations].sort(), 'every operation of the document is on the page')
  for (const tag of TABLES) {
    const expected = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).filter(([, op]) => op.tags?.includes(tag) === true).map(([method]) => `${method.toUpperCase()} ${path}`))
    const inTag = await page.locator(`.opblock-tag-section:has(h3[data-tag="${tag}"]) .opblock`).evaluateAll((blocks) => blocks.map((block) =>
      `${block.querySelector('.opblock-summary-method')?.textContent ?? ''} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''}`))
    t.strictSame([...inTag].sort(), expected.sort(), `the ${tag} operations under their tag`)
    t.ok(expected.includes(`GET /api/${tag === 'studio' ? 'studios' : `${tag}s`}/`), `${tag} has its public list`)
  }

  const list = page.locator('.opblock-get').filter({ has: page.locator('.opblock-summary-path[data-path="/api/movies/"]') })
  t.equal(await list.count(), 1)
  await list.locator('.opblock-summary').first().click()
  const headers = list.locator('.responses-table .response[data-code="200"] .headers-wrapper')
  t.match(await headers.textContent(), 'Content-Range', 'the 200 documents Content-Range')
  t.match(await headers.textContent(), '<name> <first>-<last>/<total>', 'its description shown as written, not eaten as HTML')
  await list.locator('button.try-out__btn').click()
  await list.locator('tr[data-param-name="__page_size"] input').fill('2')
  await list.locator('tr[data-param-name="__order"] input').fill('name')
  await list.locator('button.execute').click()
  const status = list.locator('.live-responses-table .response .response-col_status').first()
  await status.filter({ hasText: '200' }).waitFor()
  const body = await list.locator('.live-responses-table .response-col_description .microlight').first().textContent()
  const rows = JSON.parse(body ?? '') as { rows: Array<Record<string, unknown>> }
  t.equal(rows.rows.length, 2, 'two rows, as asked')
  t.strictSame(rows, (await app.inject('/api/movies/?__page_size=2&__order=name')).json(), 'the rows the API gives')
  const url = await list.locator('.request-url pre').textContent()
  t.equal(url, `${base}/api/movies/?__order=name&__page_size=2`)

  // The example id is the one "Try it out" starts with: an integer key, 1.
  const single = page.locator('.opblock-get').filter({ has: page.locator('.opblock-summary-path[data-path="/api/movies/{id}/"]') })
  await single.locator('.opblock-summary').first().click()
  await single.locator('button.try-out__btn').click()
  t.equal(await single.locator('tr[data-param-name="id"] input').inputValue(), '1', 'the id parameter starts at its example')
  await single.locator('button.execute').click()
  await single.locator('.live-responses-table .response .response-col_status').first().filter({ hasText: '200' }).waitFor()

  // Authorize: the bearer scheme's description shows `Bearer <token>` as written.
  await page.locator('.auth-wrapper button.authorize').click()
  const dialog = page.locator('.modal-ux')
  await dialog.waitFor()
  t.match(await dialog.locator('.auth-container').filter({ hasText: 'bearerAuth' }).textContent(), 'Authorization: Bearer <token>', 'the scheme says how the token is sent, <token> shown')
  await dialog.locator('button.close-modal').click()

  const screenshot = join(dir, 'docs.png')
  await page.screenshot({ path: screenshot })
  t.ok((await stat(screenshot)).size > 10000, `a screenshot in ${screenshot}`)
  t.strictSame(requested.filter((u) => !u.startsWith(base)), [], 'nothing fetched from anywhere but the application')
  t.strictSame(errors, [], 'no script error on the page')
})
