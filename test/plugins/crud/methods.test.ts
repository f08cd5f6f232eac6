import t from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { errorOf, freshApp, json, movie, person, studio } from './write-fixtures.js'

/**
 * OPTIONS and TRACE on TableCRUD paths (SPEC §6.13 as amended, issue 18 point 3): OPTIONS is a
 * 204 with `Allow`, TRACE a 405 with `Allow`, never a 404.
 */

const db = await testDatabase(t)

/** The methods of each route the tables add, by path. */
const routes = new Map<string, string[]>()
const app = await freshApp(t, db, async (app) => {
  app.addHook('onRoute', (route) => {
    routes.set(route.url, [...routes.get(route.url) ?? [], ...[route.method].flat()])
  })
  await app.register(tableCrud, { table: person, prefix: '/persons', readOnly: false })
  await app.register(tableCrud, { table: studio, prefix: '/studios', readOnly: false })
  await app.register(tableCrud, { table: movie, prefix: '/movies' })
  await app.register(tableCrud, { table: movie, prefix: '/admin/movies', readOnly: false, allowBulkDelete: true })
  // What @fastify/cors installs: an onRequest hook around the context that answers preflights itself.
  await app.register(async (site) => {
    site.addHook('onRequest', async (request, reply) => {
      if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
        return await reply.code(204).header('access-control-allow-origin', '*').header('access-control-allow-methods', 'GET').send()
      }
    })
    await site.register(tableCrud, { table: movie, prefix: '/cors/movies' })
  })
})

const READ = 'GET, HEAD'
const PATHS: Array<[string, string]> = [
  ['/movies/', READ], ['/movies', READ], ['/movies/1/', READ], ['/movies/1', READ],
  ['/movies/schema/', READ], ['/movies/ids', READ], ['/movies/count/', READ], ['/movies/new/', READ], ['/movies/references/', READ],
  ['/admin/movies/', 'GET, HEAD, POST, DELETE'], ['/admin/movies/1/', 'GET, HEAD, PUT, PATCH, DELETE'], ['/admin/movies/count/', READ],
  ['/persons/', 'GET, HEAD, POST'], ['/persons/7', 'GET, HEAD, PUT, PATCH, DELETE'],
  // Past maxParamLength: the router hands it to the catch-all, which answers as for an id.
  [`/admin/movies/${'9'.repeat(150)}/`, 'GET, HEAD, PUT, PATCH, DELETE']
]

t.test('OPTIONS: 204 with Allow, no body, on every path of the table', async (t) => {
  for (const [url, allow] of PATHS) {
    const res = await app.inject({ method: 'OPTIONS', url })
    t.equal(res.statusCode, 204, url)
    t.equal(res.headers.allow, allow, url)
    t.equal(res.body, '', url)
  }
})

t.test('TRACE: 405 with Allow, in the SPEC shape', async (t) => {
  for (const [url, allow] of PATHS) {
    const res = await app.inject({ method: 'TRACE', url })
    t.equal(res.statusCode, 405, url)
    t.equal(res.headers.allow, allow, url)
    t.strictSame(json(res), errorOf(405, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', 'Method Not Allowed', `TRACE is not allowed on ${url}.`), url)
  }
})

t.test('a path that is not the table\'s stays a 404 for every method', async (t) => {
  for (const method of ['OPTIONS', 'TRACE'] as const) {
    const res = await app.inject({ method, url: '/movies/1/extra/' })
    t.equal(res.statusCode, 404, method)
    t.equal(json(res).code, 'TABLECRUD_ERR_ROUTE_NOT_FOUND', method)
  }
})

t.test('CORS preflights: a 204 without consent here; @fastify/cors around the context answers them first', async (t) => {
  const preflight = { origin: 'https://elsewhere.example', 'access-control-request-method': 'DELETE' }
  const bare = await app.inject({ method: 'OPTIONS', url: '/movies/', headers: preflight })
  t.equal(bare.statusCode, 204)
  t.equal(bare.headers.allow, READ)
  t.equal(bare.headers['access-control-allow-origin'], undefined, 'no CORS consent given: the browser refuses the cross-origin request')
  const cors = await app.inject({ method: 'OPTIONS', url: '/cors/movies/', headers: preflight })
  t.equal(cors.statusCode, 204)
  t.equal(cors.headers['access-control-allow-origin'], '*', 'the CORS plugin\'s answer')
  t.equal(cors.headers.allow, undefined)
  const plain = await app.inject({ method: 'OPTIONS', url: '/cors/movies/' })
  t.equal(plain.headers.allow, READ, 'a plain OPTIONS there is still ours')
})

t.test('a method no TableCRUD route serves (PROPFIND) is a 404 on every path of the table, not a 405', async (t) => {
  for (const [url] of PATHS) {
    const res = await app.inject({ method: 'PROPFIND' as 'GET', url })
    t.equal(res.statusCode, 404, url)
    t.strictSame(json(res), errorOf(404, 'TABLECRUD_ERR_ROUTE_NOT_FOUND', 'Not Found', `Route PROPFIND:${url} not found`), url)
  }
})

t.test('the 405s come from the not-found handler: a route per missing method only where /:id/ would take the path', async (t) => {
  const under = (prefix: string): Array<[string, string[]]> => [...routes].filter(([url]) => url.startsWith(`${prefix}/`) || url === prefix)
  // Read-only: GET and HEAD on each path and on the catch-all for ids past maxParamLength; nothing else.
  const readOnly = under('/movies')
  t.ok(readOnly.length > 0)
  for (const [url, methods] of readOnly) t.strictSame(methods.filter((m) => m !== 'GET' && m !== 'HEAD'), [], url)
  // Writable: the helper paths refuse PUT, PATCH and DELETE by a route (not POST, OPTIONS or TRACE), `/` those it lacks.
  const writable = new Map(under('/persons'))
  t.strictSame(writable.get('/persons/count/'), ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'])
  t.strictSame(writable.get('/persons'), ['PUT', 'PATCH', 'DELETE', 'GET', 'HEAD', 'POST'])
  t.strictSame(writable.get('/persons/:id/'), ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'])
  t.strictSame(writable.get('/persons/*'), ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'])
})

t.test('an id past maxParamLength, with a method /:id/ has: the invalid id, as any other', async (t) => {
  for (const method of ['GET', 'PUT', 'DELETE'] as const) {
    const res = await app.inject({ method, url: `/admin/movies/${'9'.repeat(150)}/`, payload: method === 'PUT' ? { name: 'x' } : undefined })
    t.equal(res.statusCode, 400, method)
    t.equal(json(res).code, 'TABLECRUD_ERR_ID_INVALID', method)
  }
  const post = await app.inject({ method: 'POST', url: `/admin/movies/${'9'.repeat(150)}/` })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET, HEAD, PUT, PATCH, DELETE')
})
