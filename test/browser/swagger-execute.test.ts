import t, { type Test } from 'tap'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Locator, Page } from 'playwright-core'
import { DEMO_USER } from '../../examples/movies/app.js'
import { browserMissing, demoInBrowser, watchedPage, BROWSER_FILE_LIMIT_MS } from '../helpers/browser.js'
import { freshCode } from '../helpers/totp.js'

t.setTimeout(BROWSER_FILE_LIMIT_MS)

/*
 * Swagger UI's Execute on every POST of the demo, in Chromium, as a person at /docs would do it
 * (issue 28, point 6): open the operation, "Try it out", keep the body Swagger UI prefills from
 * the schemas' examples, type only what a person must (their credentials, a file, the current
 * password, a code from the authenticator app), authorize through the dialog for the bearer
 * routes, Execute: each answers 2xx, with the body the API documents. The session forms pass
 * CSRF through the page's requestInterceptor.
 */

process.env.TABLECRUD_BCRYPT_COST ??= '4'

/** A skipped test, with its reason in tap's summary, when there is no browser to drive: never a pass. */
const skip = browserMissing() ?? false

/** What the person types: their own sign-up, not the examples'. */
const PERSON = { username: 'grace', email: 'grace@example.org', password: 'compiler-a0-1952', newPassword: 'cobol-1959-flowmatic' }
/** A poster: the head of a PNG is enough for the storage, which checks names, not content. */
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')
/** Each mount, and a column whose example the created row must hold. */
const MOUNTS = [['movies', 'name'], ['directors', 'name'], ['studios', 'code'], ['roles', 'actor']] as const

/** The operation's block on the page. */
function operation (page: Page, path: string): Locator {
  return page.locator('.opblock-post').filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) })
}

/**
 * The operation's block, drawn and in view: from 150 tags and operations on, Swagger UI draws
 * only those in view (docs/openapi.md), so the page is scrolled from the top until it is drawn.
 */
async function reveal (page: Page, path: string): Promise<Locator> {
  const block = operation(page, path)
  await page.evaluate('window.scrollTo(0, 0)')
  for (let last = -1; await block.count() === 0;) {
    const y = await page.evaluate('window.scrollBy(0, window.innerHeight / 2), window.scrollY') as number
    if (y === last) throw new Error(`POST ${path} is not on the page`)
    last = y
    // The virtualizer draws on the next frame.
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
  }
  await block.scrollIntoViewIfNeeded()
  return block
}

/** Opens the operation and turns "Try it out" on (Execute is there once it is). */
async function tryOut (page: Page, path: string): Promise<Locator> {
  const block = await reveal(page, path)
  // Closed after each use (close): open it, then turn "Try it out" on unless it still is.
  if (await block.locator('.opblock-body').count() === 0) await block.locator('.opblock-summary').first().click()
  await block.locator('button.execute, button.try-out__btn').first().waitFor()
  if (await block.locator('button.execute').count() === 0) await block.locator('button.try-out__btn').click()
  await block.locator('button.execute').waitFor()
  return block
}

/** The JSON body Swagger UI prefilled. */
async function prefilled (block: Locator): Promise<Record<string, unknown>> {
  return JSON.parse(await block.locator('textarea.body-param__text').inputValue()) as Record<string, unknown>
}

/** Types `fields` into the prefilled JSON body, keeping the rest as Swagger UI wrote it. */
async function type (block: Locator, fields: Record<string, unknown>): Promise<void> {
  const body = await prefilled(block)
  await block.locator('textarea.body-param__text').fill(JSON.stringify({ ...body, ...fields }, null, 2))
}

/** Executes, waits for the live response, returns its status and its body as JSON. */
async function execute (block: Locator): Promise<{ status: number, body: any }> {
  // A second Execute on the same block: the previous response goes first, so the wait is for this one.
  if (await block.locator('button.btn-clear').count() > 0) await block.locator('button.btn-clear').click()
  await block.locator('button.execute').click()
  const status = block.locator('.live-responses-table .response .response-col_status').first()
  await status.waitFor()
  const text = await block.locator('.live-responses-table .response-col_description .microlight').first().textContent() ?? ''
  let body: unknown
  try { body = JSON.parse(text) } catch { body = text }
  return { status: Number((await status.textContent())?.trim()), body }
}

/**
 * Collapses the operation again. Swagger UI draws every open operation again on each change of
 * the page: left open, each next operation took longer to open (4 s at first, 20 s by the last
 * of 25, measured), and the file 220 s where it now takes 115 (both at load 6.5 on 2 cores).
 */
async function close (block: Locator): Promise<void> {
  await block.locator('.opblock-summary').first().click()
  await block.locator('.opblock-body').waitFor({ state: 'detached' })
}

/** Puts `token` in the Authorize dialog's bearerAuth box, logging out a previous one first. */
async function authorize (page: Page, token: string): Promise<void> {
  await page.locator('.auth-wrapper button.authorize').click()
  const bearer = page.locator('.modal-ux .auth-container').filter({ hasText: 'bearerAuth' })
  const logout = bearer.locator('button', { hasText: 'Logout' })
  if (await logout.count() > 0) await logout.click()
  await bearer.locator('input').first().fill(token)
  await bearer.locator('button.authorize').click()
  await logout.waitFor()
  await page.locator('.modal-ux button.close-modal').click()
  await page.locator('.modal-ux').waitFor({ state: 'detached' })
}

t.test('Execute on each POST of the demo answers 2xx', { skip }, async (t) => {
  const mediaPath = await mkdtemp(join(tmpdir(), 'tc-swagger-execute-'))
  t.teardown(async () => await rm(mediaPath, { recursive: true, force: true }))
  const { app, base, browser } = await demoInBrowser(t, { mediaPath })
  const { page, errors, violations } = await watchedPage(browser, { viewport: { width: 1280, height: 900 } })
  await page.goto(`${base}/docs/`)
  await page.locator('.swagger-ui .info .title').filter({ hasText: 'fastify-tablecrud movies demo' }).waitFor()

  /** Opens POST `path`, types `fields` into its prefilled body (when given) and executes it. */
  const post = async (path: string, fields?: Record<string, unknown>): Promise<{ status: number, body: any, prefill: Record<string, unknown> }> => {
    const block = await tryOut(page, path)
    const prefill = await block.locator('textarea.body-param__text').count() > 0 ? await prefilled(block) : {}
    if (fields !== undefined) await type(block, fields)
    const done = { ...await execute(block), prefill }
    await close(block)
    return done
  }

  await t.test('sign-up, session login and logout, MFA, password change: CSRF through the page', async (t) => {
    const signUp = await post('/register/', { username: PERSON.username, email: PERSON.email, password: PERSON.password, confirm_password: PERSON.password })
    t.strictSame(signUp.prefill, { username: 'ada', email: 'ada@example.com', password: 'correct horse battery staple', confirm_password: 'correct horse battery staple' },
      'the example holds the required fields only (no format: html, which would answer with a page)')
    // A 403 unless the page sent the CSRF cookie, which its script issued, back in the header.
    t.equal(signUp.status, 201, 'sign-up')
    t.match(signUp.body, { id: Number, username: PERSON.username })
    t.ok((await page.context().cookies(base)).some((c) => c.name === 'csrftoken' && !c.httpOnly), 'the page brought the CSRF cookie')

    const credentials = { username: PERSON.username, password: PERSON.password }
    const login = await post('/login/', credentials)
    t.strictSame(login.prefill, { username: 'ada', password: 'correct horse battery staple' }, 'the login example: no format, no mfa_code')
    t.match(login, { status: 200, body: { message: 'logged in' } }, 'session login')
    t.ok((await page.context().cookies(base)).some((c) => c.name === 'id' && c.httpOnly), 'the session cookie is set')
    t.match(await post('/logout/'), { status: 200, body: { message: 'Successfully logged out' }, prefill: {} }, 'logout: the example sends nothing')
    t.match(await post('/login/', credentials), { status: 200, body: { message: 'logged in' } }, 'session login again')

    const setup = await post('/mfa/', { password: PERSON.password })
    t.equal(setup.prefill.action, 'register', 'MFA set-up starts with register')
    t.equal(setup.status, 200, 'MFA set-up')
    t.match(setup.body, { qrcode_image: /^data:image\/png;base64,/, otpauth_url: /^otpauth:\/\/totp\//, secret: /^[A-Z2-7]+=*$/, recovery_codes: Array })
    const confirm = await post('/mfa/', { action: 'confirm', code: await freshCode(setup.body.secret as string) })
    t.match(confirm, { status: 200, body: { message: 'MFA enabled' } }, 'MFA confirmed with the code the app shows')

    const change = await post('/change-password/', { current_password: PERSON.password, new_password: PERSON.newPassword, confirm_new_password: PERSON.newPassword })
    t.match(change, { status: 200, body: { message: 'Password changed' } }, 'password changed')
    const user = await app.pg.query('SELECT count(*)::int AS sessions FROM auth_session s JOIN auth_user u ON u.id = s."user" WHERE u.username = $1', [PERSON.username])
    t.equal(user.rows[0].sessions, 0, 'every session of the user ended')
  })

  /** The created row as the public API gives it. */
  const row = async (mount: string, key: unknown): Promise<unknown> => (await app.inject(`/api/${mount}/${encodeURIComponent(String(key))}/`)).json()

  /** Executes each table POST of `/api/<area>/` with the body Swagger UI prefilled; the rows created, by mount. */
  const tablePosts = async (t: Test, area: string): Promise<Map<string, Record<string, unknown>>> => {
    const created = new Map<string, Record<string, unknown>>()
    for (const [mount, column] of MOUNTS) {
      const { status, body, prefill } = await post(`/api/${area}/${mount}/`)
      t.equal(status, 201, `POST /api/${area}/${mount}/ with its example`, { prefill, body })
      t.equal(body[column], prefill[column], `the ${column} of the example`)
      const key = mount === 'studios' ? body.code : body.id
      t.strictSame(body, await row(mount, key), 'the row the API then gives')
      created.set(mount, body)
    }
    const upload = await tryOut(page, `/api/${area}/movies/media/`)
    await upload.locator('tr[data-property-name="column"] select').selectOption('poster')
    await upload.locator('tr[data-property-name="file"] input[type="file"]').setInputFiles({ name: `${area} poster.png`, mimeType: 'image/png', buffer: PNG })
    const { status, body } = await execute(upload)
    await close(upload)
    t.equal(status, 201, `POST /api/${area}/movies/media/ with a file`)
    t.match(body, { file_key: new RegExp(`^${area} poster-[0-9a-f-]{36}\\.png$`) })
    t.ok((await readdir(mediaPath)).includes(body.file_key), 'the file is stored')
    return created
  }

  await t.test('the JWT mounts, authorized with the JWT from /login/jwt/', async (t) => {
    const login = await post('/login/jwt/', { ...DEMO_USER })
    t.strictSame(login.prefill, { username: 'ada', password: 'correct horse battery staple' }, 'the example: no mfa_code')
    t.equal(login.status, 200, 'JWT login')
    t.match(login.body, { token: /^[\w-]+\.[\w-]+\.[\w-]+$/ })
    await authorize(page, login.body.token as string)
    const created = await tablePosts(t, 'admin')
    // The unique columns' examples (a director's and a studio's name) fit one row each: the
    // token mounts then start from the demo as it was, these rows deleted.
    for (const mount of ['roles', 'movies', 'directors', 'studios']) {
      const key = mount === 'studios' ? created.get(mount)!.code : created.get(mount)!.id
      const deleted = await app.inject({ method: 'DELETE', url: `/api/admin/${mount}/${encodeURIComponent(String(key))}/`, headers: { authorization: `Bearer ${login.body.token as string}` } })
      t.equal(deleted.statusCode, 204, `the ${mount} row deleted`)
    }
  })

  await t.test('the token mounts, re-authorized with the token from /login/token/', async (t) => {
    const login = await post('/login/token/', { ...DEMO_USER })
    t.equal(login.status, 200, 'token login')
    t.match(login.body, { token: /^\S+$/ })
    // The JWT still in the dialog would be a 401 here (Token not recognised): the 201s show it was replaced.
    await authorize(page, login.body.token as string)
    await tablePosts(t, 'token')
  })

  t.strictSame(errors, [], 'no script error on the page')
  t.strictSame(violations, [], 'no CSP violation')
})
