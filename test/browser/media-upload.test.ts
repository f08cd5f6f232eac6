import t from 'tap'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEMO_USER } from '../../examples/movies/app.js'
import { browserMissing, demoInBrowser, watchedPage, BROWSER_FILE_LIMIT_MS } from '../helpers/browser.js'

t.setTimeout(BROWSER_FILE_LIMIT_MS)

/*
 * The demo's poster upload from Swagger UI, in a real browser: authorize with a token, "Try it
 * out" on POST /api/token/movies/media/, pick a file, execute; the file lands in the media
 * folder and is served at its URL.
 */

process.env.TABLECRUD_BCRYPT_COST ??= '4'

/** A skipped test, with its reason in tap's summary, when there is no browser to drive: never a pass. */
const skip = browserMissing() ?? false

t.test('Swagger UI uploads a poster through the multipart form', { skip }, async (t) => {
  const mediaPath = await mkdtemp(join(tmpdir(), 'tc-f-swagger-media-'))
  t.teardown(async () => await rm(mediaPath, { recursive: true, force: true }))
  const { app, base, browser } = await demoInBrowser(t, { mediaPath })
  const login = await app.inject({ method: 'POST', url: '/login/token', payload: DEMO_USER })
  const token = login.json().token as string

  const { page, errors } = await watchedPage(browser, { viewport: { width: 1280, height: 900 } })

  await page.goto(`${base}/docs/`)
  await page.locator('.swagger-ui .info .title').waitFor()
  await page.locator('button.authorize').first().click()
  // The document may declare other schemes (a session cookie): the token goes in bearerAuth's box.
  const bearer = page.locator('.modal-ux .auth-container').filter({ hasText: 'bearerAuth' })
  await bearer.locator('input').first().fill(token)
  await bearer.locator('button.authorize').click()
  await page.locator('.modal-ux button.btn-done').first().click()

  const upload = page.locator('.opblock-post').filter({ has: page.locator('.opblock-summary-path[data-path="/api/token/movies/media/"]') })
  t.equal(await upload.count(), 1, 'the upload route is in the docs')
  await upload.locator('.opblock-summary').first().click()
  await upload.locator('button.try-out__btn').click()
  await upload.locator('tr[data-property-name="column"] select').selectOption('poster')
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')
  await upload.locator('tr[data-property-name="file"] input[type="file"]').setInputFiles({ name: 'Alien (1979).png', mimeType: 'image/png', buffer: png })
  await upload.locator('button.execute').click()
  await upload.locator('.live-responses-table .response .response-col_status').first().filter({ hasText: '201' }).waitFor()
  const body = JSON.parse(await upload.locator('.live-responses-table .response-col_description .microlight').first().textContent() ?? '') as { file_key: string }
  t.match(body.file_key, /^Alien \(1979\)-[0-9a-f-]{36}\.png$/)
  t.same(await readdir(mediaPath), [body.file_key])
  t.same(await readFile(join(mediaPath, body.file_key)), png)
  const served = await fetch(`${base}/media/${encodeURIComponent(body.file_key)}`)
  t.equal(served.status, 200)
  t.same(Buffer.from(await served.arrayBuffer()), png)
  t.strictSame(errors, [], 'no script error on the page')
})
