import t, { type Test } from 'tap'
import net, { type AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { clientErrorOf, errorShape, frameworkErrors, rawErrorResponse } from '../../plugins/error-shape.js'
import { TABLECRUD_ERR_ROUTE_NOT_FOUND } from '../../lib/errors.js'

/**
 * errorShape (issue 18, SPEC §1): every error the application answers carries statusCode,
 * code, error and message, Fastify's and Node's own answers included. What inject cannot
 * reach (Node's HTTP parser) is sent over a real socket.
 */

const JSON_TYPE = 'application/json; charset=utf-8'

async function build (t: Test, options: FastifyServerOptions = {}, before?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify(options)
  before?.(app)
  await app.register(errorShape)
  app.get('/things/:id', async (request) => ({ id: (request.params as { id: string }).id }))
  app.post('/small', { bodyLimit: 10 }, async () => ({ ok: true }))
  app.get('/boom', async () => { throw new Error('SELECT secret FROM x') })
  await app.register(async (child) => { child.get('/here', async () => ({ ok: true })) }, { prefix: '/nested' })
  t.teardown(async () => await app.close())
  await app.ready()
  return app
}

/** Sends `request` as raw bytes and resolves to all the server wrote back before closing. */
async function raw (app: FastifyInstance, request: string): Promise<string> {
  if (app.server.address() === null) await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  return await new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let out = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { out += chunk })
    socket.on('close', () => resolve(out))
    socket.on('error', reject)
    socket.end(request)
  })
}

function parse (response: string): { status: string, headers: Record<string, string>, body: unknown } {
  const [head, body] = response.split('\r\n\r\n') as [string, string]
  const [status, ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(lines.map((l) => { const i = l.indexOf(':'); return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()] }))
  return { status: status!, headers, body: JSON.parse(body) }
}

t.test('a path no route has: 404 in the shape, nested contexts included', async (t) => {
  const app = await build(t)
  for (const [method, url] of [['GET', '/nope?x=1'], ['POST', '/nested/nope'], ['DELETE', '/things']] as const) {
    const res = await app.inject({ method, url })
    t.equal(res.statusCode, 404, url)
    t.equal(res.headers['content-type'], JSON_TYPE, url)
    t.strictSame(res.json(), {
      statusCode: 404, code: 'TABLECRUD_ERR_ROUTE_NOT_FOUND', error: 'Not Found', message: `Route ${method}:${url.split('?')[0]} not found`
    }, url)
  }
  t.equal((await app.inject('/nested/here')).statusCode, 200)
})

t.test('a path no route has, with a body that does not parse: still the 404, before the body is read', async (t) => {
  const app = await build(t)
  for (const [type, payload] of [['application/json', '{"name": '], ['text/plain', 'x'], ['application/json', '{}']]) {
    for (const url of ['/nope/', '/nested/nope']) {
      const res = await app.inject({ method: 'PATCH', url, payload, headers: { 'content-type': type } })
      t.equal(res.statusCode, 404, `${url} ${type} ${payload}`)
      t.equal(res.json().code, 'TABLECRUD_ERR_ROUTE_NOT_FOUND')
    }
  }
})

t.test('a body over the limit: 413 in the shape', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/small', payload: { name: 'far too long for ten bytes' } })
  t.equal(res.statusCode, 413)
  t.strictSame(res.json(), { statusCode: 413, code: 'TABLECRUD_ERR_BODY_TOO_LARGE', error: 'Payload Too Large', message: 'The body is too large.' })
  const declared = await raw(app, 'POST /small HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n' + '1'.repeat(100))
  const parsed = parse(declared)
  t.equal(parsed.status, 'HTTP/1.1 413 Payload Too Large', 'a Content-Length over the limit, through a socket')
  t.strictSame(parsed.body, { statusCode: 413, code: 'TABLECRUD_ERR_BODY_TOO_LARGE', error: 'Payload Too Large', message: 'The body is too large.' })
})

t.test('a bug on an integrator route: the generic 500', async (t) => {
  const app = await build(t)
  const res = await app.inject('/boom')
  t.equal(res.statusCode, 500)
  t.strictSame(res.json(), { statusCode: 500, code: 'TABLECRUD_ERR_INTERNAL', error: 'Internal Server Error', message: 'Internal Server Error' })
})

t.test('a path that does not decode: 400 FST_ERR_BAD_URL, in the shape with or without frameworkErrors', async (t) => {
  const plain = await build(t)
  const shaped = await build(t, { frameworkErrors })
  for (const url of ['/%zz', '/things/%E0%A4%A']) {
    const expected = { statusCode: 400, code: 'FST_ERR_BAD_URL', error: 'Bad Request', message: `'${url}' is not a valid url component` }
    const own = await plain.inject(url)
    t.equal(own.statusCode, 400, url)
    t.strictSame(own.json(), expected, `${url}: Fastify's own answer already has the four members`)
    const res = await shaped.inject(url)
    t.equal(res.statusCode, 400, url)
    t.equal(res.headers['content-type'], JSON_TYPE, url)
    t.strictSame(res.json(), expected, url)
  }
  const socket = parse(await raw(shaped, 'GET /%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
  t.equal(socket.status, 'HTTP/1.1 400 Bad Request')
  t.strictSame(socket.body, { statusCode: 400, code: 'FST_ERR_BAD_URL', error: 'Bad Request', message: "'/%zz' is not a valid url component" })
})

t.test('a path parameter over maxParamLength: 414 named URI Too Long with frameworkErrors', async (t) => {
  const app = await build(t, { frameworkErrors })
  const url = `/things/${'a'.repeat(101)}`
  const res = await app.inject(url)
  t.equal(res.statusCode, 414)
  t.strictSame(res.json(), { statusCode: 414, code: 'FST_ERR_MAX_PARAM_LENGTH', error: 'URI Too Long', message: `'${url}' is exceeding the max param length` })
})

t.test('a failing async route constraint: the generic 500, logged, with frameworkErrors', async (t) => {
  const lines: Array<Record<string, any>> = []
  const failing = {
    name: 'tenant',
    storage: () => { const map = new Map(); return { get: (k: string) => map.get(k) ?? null, set: (k: string, v: unknown) => { map.set(k, v) } } },
    deriveConstraint: (_request: unknown, _context: unknown, done: (error: Error | null, value?: string) => void) => { done(new Error('tenant lookup failed')) },
    mustMatchWhenDerived: true,
    validate: () => true
  }
  const app = await build(t, { frameworkErrors, constraints: { tenant: failing }, logger: { level: 'error', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } } as unknown as FastifyServerOptions,
    (app) => { app.get('/tenant', { constraints: { tenant: 'a' } }, async () => ({ ok: true })) })
  const res = await app.inject('/tenant')
  t.equal(res.statusCode, 500)
  t.strictSame(res.json(), { statusCode: 500, code: 'TABLECRUD_ERR_INTERNAL', error: 'Internal Server Error', message: 'Internal Server Error' })
  t.match(lines, [{ msg: 'request failed', err: { code: 'FST_ERR_ASYNC_CONSTRAINT' } }])
})

t.test('headers or a URL over the limit: 431 on the socket, in the shape', async (t) => {
  const app = await build(t)
  const expected = {
    statusCode: 431, code: 'TABLECRUD_ERR_HEADERS_TOO_LARGE', error: 'Request Header Fields Too Large', message: 'The request line and headers are over the limit of 16384 bytes.'
  }
  for (const [name, request] of [
    ['a header', `GET /things/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['the URL', `GET /things/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]
  ]) {
    const res = parse(await raw(app, request!))
    t.equal(res.status, 'HTTP/1.1 431 Request Header Fields Too Large', name!)
    t.equal(res.headers['content-type'], JSON_TYPE, name!)
    t.equal(res.headers.connection, 'close', name!)
    t.strictSame(res.body, expected, name!)
  }
  const small = await build(t, { http: { maxHeaderSize: 1024 } } as FastifyServerOptions)
  const res = parse(await raw(small, `GET /things/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(2000)}\r\n\r\n`))
  t.equal((res.body as { message: string }).message, 'The request line and headers are over the limit of 1024 bytes.', 'the server\'s own limit is named')
})

t.test('a request that is not HTTP: 400 on the socket, in the shape', async (t) => {
  const app = await build(t)
  for (const [request, reason] of [
    ['BLAH\r\n\r\n', 'Invalid method encountered'],
    ['GET / HTTP/9.9\r\nHost: x\r\n\r\n', 'Invalid HTTP version'],
    ['GET /things/1 HTTP/1.1\r\nBad Header\r\n\r\n', 'Invalid header token']
  ] as const) {
    const res = parse(await raw(app, request))
    t.equal(res.status, 'HTTP/1.1 400 Bad Request', request)
    t.strictSame(res.body, { statusCode: 400, code: 'TABLECRUD_ERR_BAD_REQUEST', error: 'Bad Request', message: `The request is not valid HTTP: ${reason}.` }, request)
  }
  t.match(parse(await raw(app, 'GET /things/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).body, { id: '1' }, 'a good request still works')
})

t.test('what Node reports without a request: timeouts, resets, closed sockets', async (t) => {
  t.strictSame(clientErrorOf(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), 1).statusCode, 408)
  t.equal(clientErrorOf(new Error('odd'), 1).message, 'The request is not valid HTTP: malformed request.', 'no reason given')
  const response = rawErrorResponse(clientErrorOf(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), 1))
  t.strictSame(parse(response).body, { statusCode: 408, code: 'TABLECRUD_ERR_REQUEST_TIMEOUT', error: 'Request Timeout', message: 'The request was not received in time.' })

  const app = await build(t)
  const calls: string[] = []
  const fake = (destroyed: boolean, writable: boolean) => ({
    destroyed, writable, end: () => calls.push('end'), destroy: () => calls.push('destroy')
  })
  app.server.emit('clientError', Object.assign(new Error('reset'), { code: 'ECONNRESET' }), fake(false, true))
  app.server.emit('clientError', new Error('gone'), fake(true, true))
  t.strictSame(calls, [], 'nothing written to a reset or destroyed socket')
  app.server.emit('clientError', new Error('half closed'), fake(false, false))
  t.strictSame(calls, ['destroy'], 'a socket that cannot be written is closed')
})

t.test('handlers the integrator set first are kept', async (t) => {
  const mine = { clientErrorHandler: (_error: Error, socket: net.Socket) => { socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmine') } }
  const app = await build(t, mine, (app) => {
    app.setErrorHandler(async (_error, _request, reply) => await reply.code(500).send({ mine: 'error' }))
    app.setNotFoundHandler(async (_request, reply) => await reply.code(404).send({ mine: 'not found' }))
  })
  t.strictSame((await app.inject('/boom')).json(), { mine: 'error' })
  t.strictSame((await app.inject('/nope')).json(), { mine: 'not found' })
  t.match(await raw(app, 'BLAH\r\n\r\n'), /\r\n\r\nmine$/)

  const twice = Fastify()
  await twice.register(errorShape)
  await twice.register(errorShape)
  await twice.ready()
  t.teardown(async () => await twice.close())
  t.equal((await twice.inject('/nope')).json().code, 'TABLECRUD_ERR_ROUTE_NOT_FOUND', 'registered twice: no error, same answers')
  t.equal(twice.server.listeners('clientError').length, 1, 'one clientError listener')
})

t.test('an error other than "already set" from setNotFoundHandler is not swallowed', async (t) => {
  // The handler is set from a child context of the instance: the fake is its own child.
  const fake: Record<string, unknown> = { errorHandler: { name: 'mine' }, setNotFoundHandler: () => { throw new Error('Cannot call "setNotFoundHandler" when fastify instance is already started!') } }
  fake.register = async (plugin: (child: unknown) => Promise<void>) => await plugin(fake)
  await t.rejects((errorShape as unknown as (f: unknown, o: unknown) => Promise<void>)(fake, {}), /already started/)
  t.equal(new TABLECRUD_ERR_ROUTE_NOT_FOUND('GET', '/').statusCode, 404)
})
