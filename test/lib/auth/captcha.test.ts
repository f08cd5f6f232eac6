import t from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { hcaptcha, recaptcha, type SiteVerifyCaptcha } from '../../../lib/auth/captcha.js'

interface Seen { method: string, type: string, form: URLSearchParams }

/**
 * A loopback server that plays hCaptcha's and reCAPTCHA's siteverify: `good-token` with the
 * secret `s3cret` is a success. Other paths misbehave on purpose.
 */
async function fakeProvider (t: { teardown: (fn: () => unknown) => void }): Promise<{ url: string, seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = ''
    request.on('data', (chunk: Buffer) => { body += chunk.toString() })
    request.on('end', () => {
      const form = new URLSearchParams(body)
      seen.push({ method: request.method!, type: request.headers['content-type']!, form })
      const json = (status: number, value: string): void => { response.writeHead(status, { 'content-type': 'application/json' }).end(value) }
      switch (request.url) {
        case '/siteverify': return json(200, JSON.stringify({ success: form.get('secret') === 's3cret' && form.get('response') === 'good-token' }))
        case '/error': return json(500, '{"success": true}')
        case '/not-json': return json(200, '<html>')
        case '/null': return json(200, 'null')
        case '/truthy': return json(200, '{"success": "true"}')
        case '/slow': setTimeout(() => json(200, '{"success": true}'), 2000)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => await new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

t.test('hcaptcha and recaptcha post the secret and the token, urlencoded, and read success', async (t) => {
  const fake = await fakeProvider(t)
  const h = hcaptcha({ secret: 's3cret', verifyUrl: `${fake.url}/siteverify` })
  const r = recaptcha({ secret: 's3cret', verifyUrl: `${fake.url}/siteverify` })
  t.equal(h.field, 'h-captcha-response')
  t.equal(r.field, 'g-recaptcha-response')
  t.equal(await h.verify('good-token', { ip: '10.1.2.3' }), true)
  t.equal(await r.verify('good-token', {}), true)
  t.equal(await h.verify('bad-token', {}), false)
  t.equal(await hcaptcha({ secret: 'other', verifyUrl: `${fake.url}/siteverify` }).verify('good-token', {}), false)
  t.equal(fake.seen[0]!.method, 'POST')
  t.equal(fake.seen[0]!.type, 'application/x-www-form-urlencoded;charset=UTF-8')
  t.same(Object.fromEntries(fake.seen[0]!.form), { secret: 's3cret', response: 'good-token', remoteip: '10.1.2.3' })
  t.same(Object.fromEntries(fake.seen[1]!.form), { secret: 's3cret', response: 'good-token' })
})

t.test('a provider that errs, answers nonsense or is slow refuses', async (t) => {
  const fake = await fakeProvider(t)
  const at = (path: string, timeout?: number): SiteVerifyCaptcha => hcaptcha({ secret: 's3cret', verifyUrl: fake.url + path, timeout })
  t.equal(await at('/error').verify('good-token', {}), false, 'a 500, whatever its body')
  t.equal(await at('/null').verify('good-token', {}), false)
  t.equal(await at('/truthy').verify('good-token', {}), false, 'only the boolean true')
  await t.rejects(async () => await at('/not-json').verify('good-token', {}))
  const started = Date.now()
  await t.rejects(async () => await at('/slow', 200).verify('good-token', {}))
  t.ok(Date.now() - started < 1500, 'the timeout holds')
  await t.rejects(async () => await hcaptcha({ secret: 's', verifyUrl: 'http://127.0.0.1:1/' }).verify('x', {}), 'unreachable')
})

t.test('options are checked when made', async (t) => {
  const error = (option: string): RegExp => new RegExp(`the option ${option}`)
  t.throws(() => hcaptcha(undefined as never), { code: 'TABLECRUD_ERR_OPTIONS', message: error('secret') })
  t.throws(() => hcaptcha({ secret: '' }), { message: /^hcaptcha: the option secret is required/ })
  t.throws(() => recaptcha({ secret: 5 as never }), { message: /^recaptcha: the option secret/ })
  t.throws(() => hcaptcha({ secret: 's', verifyUrl: 'ftp://x' }), { message: error('verifyUrl') })
  t.throws(() => hcaptcha({ secret: 's', timeout: 0 }), { message: error('timeout') })
  t.throws(() => hcaptcha({ secret: 's', timeout: 1.5 }), { message: error('timeout') })
  t.doesNotThrow(() => hcaptcha({ secret: 's', verifyUrl: 'https://example.com/verify', timeout: 100 }))
})
