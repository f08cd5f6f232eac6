import t from 'tap'
import { csrfNamesOf, hostOf, isCsrfToken, originAllowed, recordCsrf, SAFE_METHODS } from '../../../lib/web/csrf.js'

t.test('hostOf: the host of a URL or of a bare host, normalised', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['https://Example.org', 'example.org'],
    ['https://example.org:443/path?q', 'example.org'],
    ['https://example.org:8443', 'example.org:8443'],
    ['http://example.org:80', 'example.org'],
    ['example.org', 'example.org'],
    ['example.org:443', 'example.org'],
    ['[::1]:8080', '[::1]:8080'],
    ['file:///etc/passwd', null],
    ['', null],
    ['a:b:c', null]
  ]
  for (const [input, host] of cases) t.equal(hostOf(input), host, input)
  t.equal(hostOf('example.org:80', 'http'), 'example.org', 'the default port of the given protocol')
})

t.test('originAllowed', async (t) => {
  const allowed = new Set(['admin.example.org'])
  t.equal(originAllowed('https://api.example.org', undefined, 'api.example.org', allowed), true)
  t.equal(originAllowed(undefined, 'https://api.example.org/x', 'api.example.org', allowed), true)
  t.equal(originAllowed('https://admin.example.org', undefined, 'api.example.org', allowed), true)
  t.equal(originAllowed('https://evil.example', 'https://api.example.org/', 'api.example.org', allowed), false, 'Origin wins over Referer')
  t.equal(originAllowed(undefined, undefined, 'api.example.org', allowed), false)
  t.equal(originAllowed('null', undefined, 'api.example.org', allowed), false)
  t.equal(originAllowed('file:///x', undefined, '', allowed), false)
})

t.test('tokens, methods, and the registry Swagger UI reads', async (t) => {
  t.equal(isCsrfToken('a'.repeat(43)), true)
  t.equal(isCsrfToken('a'.repeat(44)), false)
  t.equal(isCsrfToken('a'.repeat(42) + '='), false)
  t.equal(isCsrfToken(undefined), false)
  t.strictSame([...SAFE_METHODS], ['GET', 'HEAD', 'OPTIONS', 'TRACE'])
  const server = {}
  t.strictSame(csrfNamesOf(server), [])
  recordCsrf(server, { cookieName: 'a', headerName: 'x-a', maxAge: 60 })
  recordCsrf(server, { cookieName: 'a', headerName: 'x-a', maxAge: 60 })
  recordCsrf(server, { cookieName: 'b', headerName: 'x-a', maxAge: 60 })
  t.strictSame(csrfNamesOf(server), [{ cookieName: 'a', headerName: 'x-a', maxAge: 60 }, { cookieName: 'b', headerName: 'x-a', maxAge: 60 }], 'once each')
})
