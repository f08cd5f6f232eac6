import t from 'tap'
import { acceptsHtml, MAX_NEXT_LENGTH, noticeText, retryIn, safeNext, withNext } from '../../../lib/web/pages.js'

t.test('safeNext keeps a path of this site and refuses anything that could leave it', async (t) => {
  for (const path of ['/', '/me/', '/me/?tab=mfa&x=%2F%2Fhost', '/a/b/c.html#top', `/${'a'.repeat(MAX_NEXT_LENGTH - 1)}`]) {
    t.equal(safeNext(path), path, path.slice(0, 40))
  }
  const refused: unknown[] = [
    undefined, null, 1, ['/me/'], '', 'me/', '//evil.example/', '///evil.example', '/\\evil.example', '/a\\b',
    'https://evil.example/', 'javascript:alert(1)', ' /me/', '/\t/evil.example', '/me/\n', '/é', '/a b', `/${'a'.repeat(MAX_NEXT_LENGTH)}`
  ]
  for (const value of refused) t.equal(safeNext(value), null, JSON.stringify(value))
})

t.test('withNext adds next to the query, encoded', async (t) => {
  t.equal(withNext('/login/', '/me/?a=1&b=2'), '/login/?next=%2Fme%2F%3Fa%3D1%26b%3D2')
  t.equal(withNext('/login/?lang=en', '/me/'), '/login/?lang=en&next=%2Fme%2F')
})

t.test('acceptsHtml: what a browser navigating sends, not what API clients send', async (t) => {
  t.equal(acceptsHtml('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'), true, "Chromium's navigation")
  t.equal(acceptsHtml('TEXT/HTML'), true)
  t.equal(acceptsHtml('application/json, text/html;q=0.5'), true)
  t.equal(acceptsHtml(undefined), false)
  t.equal(acceptsHtml('*/*'), false, 'curl, fetch')
  t.equal(acceptsHtml('application/json'), false, 'Swagger UI')
  t.equal(acceptsHtml('text/html;q=0'), false, 'refused explicitly')
  t.equal(acceptsHtml('text/html; q=0.000'), false)
  t.equal(acceptsHtml('text/html-x'), false)
})

t.test('retryIn says how long, in seconds under a minute and in whole minutes, rounded up, above', async (t) => {
  t.equal(retryIn(1), '1 second')
  t.equal(retryIn(59), '59 seconds')
  t.equal(retryIn(60), '1 minute')
  t.equal(retryIn(61), '2 minutes')
  t.equal(retryIn(900), '15 minutes')
})

t.test('noticeText: a closed set of notices', async (t) => {
  t.equal(noticeText('registered'), 'Your account is ready: log in.')
  t.equal(noticeText('logged-out'), 'You are logged out.')
  t.equal(noticeText('password-changed'), 'Your password is changed: log in with the new one.')
  for (const value of [undefined, '', 'constructor', '__proto__', '<script>', 1]) t.equal(noticeText(value), null, String(value))
})
