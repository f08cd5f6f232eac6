import t from 'tap'
import { csrfNamesOf, fetchSiteProblem, hostOf, isCsrfToken, originOf, recordCsrf, SAFE_METHODS, sourceAllowed } from '../../../lib/web/csrf.js'

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

t.test('originOf: the origin of an http or https URL', async (t) => {
  t.equal(originOf('https://Example.org:443/x?y'), 'https://example.org')
  t.equal(originOf('http://127.0.0.1:15700/form'), 'http://127.0.0.1:15700')
  for (const bad of ['null', 'file:///x', 'api.example.org', 'javascript:alert(1)', '']) t.equal(originOf(bad), null, bad)
})

t.test('sourceAllowed: Origin, else Referer, is the request\'s own origin or an allowed one, over HTTP and HTTPS alike', async (t) => {
  const allowed = { origins: new Set(['https://admin.example.org']), hosts: new Set(['static.example.org']) }
  const on = (protocol: string, host: string) => (origin: string | undefined, referer?: string): boolean => sourceAllowed({ origin, referer, protocol, host }, allowed)
  const https = on('https', 'api.example.org')
  t.equal(https('https://api.example.org'), true)
  t.equal(https(undefined, 'https://api.example.org/x'), true)
  t.equal(https('https://admin.example.org'), true, 'an allowed origin')
  t.equal(https('http://admin.example.org'), false, 'an allowed origin is its scheme too')
  t.equal(https('http://static.example.org'), true, 'an allowed host, either scheme')
  t.equal(https('https://evil.example', 'https://api.example.org/'), false, 'Origin wins over Referer')
  t.equal(https(undefined), false, 'HTTPS: a browser always sends Origin')
  t.equal(https('null'), false)
  t.equal(https('http://api.example.org'), false, 'a plain-HTTP page posting to HTTPS')
  const http = on('http', '127.0.0.1:15700')
  t.equal(http('http://127.0.0.1:15700'), true)
  t.equal(http('http://127.0.0.1:15701'), false, 'another port is another origin')
  t.equal(http('http://localhost:15700'), false, 'another host name')
  t.equal(http(undefined, 'http://127.0.0.1:15701/page'), false, 'Referer when there is no Origin')
  t.equal(http(undefined), true, 'HTTP without either header: not a browser')
  t.equal(http('https://127.0.0.1:15700'), true, 'an HTTPS page through a TLS proxy the application does not trust')
  t.equal(on('http', '')('http://x.example'), false, 'no host to compare with')
})

t.test('fetchSiteProblem: same-site and cross-site are refused unless the origin is allowed', async (t) => {
  const allowed = { origins: new Set(['http://127.0.0.1:15701']), hosts: new Set<string>() }
  t.equal(fetchSiteProblem(undefined, undefined, allowed), null)
  t.equal(fetchSiteProblem('same-origin', undefined, allowed), null)
  t.equal(fetchSiteProblem('none', undefined, allowed), null)
  t.equal(fetchSiteProblem('cross-site', 'https://evil.example', allowed), 'Cross-site request refused')
  t.equal(fetchSiteProblem('same-site', 'http://127.0.0.1:15702', allowed), 'Same-site request from another origin refused')
  t.equal(fetchSiteProblem('same-site', undefined, allowed), 'Same-site request from another origin refused')
  t.equal(fetchSiteProblem('same-site', 'null', allowed), 'Same-site request from another origin refused')
  t.equal(fetchSiteProblem('same-site', 'http://127.0.0.1:15701', allowed), null, 'an allowed origin')
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
