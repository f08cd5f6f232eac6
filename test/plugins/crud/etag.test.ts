import t from 'tap'
import { createHash } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { create, errorOf, freshApp, json, movie, person, rowsOf, studio } from './write-fixtures.js'

/*
 * Conditional requests (SPEC §7.3): ETags on GET `/:id/` and on every write that returns a row,
 * 304 on If-None-Match, 412 on a stale If-Match with nothing written, 428 with requireIfMatch,
 * and the order of checks (§6.14): validators, id, row lookup (404), then If-Match, then hooks.
 */

const db = await testDatabase(t)
const hooksRun: string[] = []
const app = await freshApp(t, db, async (app) => {
  await app.register(tableCrud, { table: person, prefix: '/persons', readOnly: false })
  await app.register(tableCrud, { table: studio, prefix: '/studios', readOnly: false })
  await app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false, maxJoins: 1 })
  await app.register(tableCrud, {
    table: person,
    prefix: '/strict',
    readOnly: false,
    requireIfMatch: true,
    validators: { patchSingle: [(_crud, request) => { if (request.headers['x-refuse'] !== undefined) throw Object.assign(new Error('No.'), { statusCode: 403 }) }] },
    hooks: [
      { hookType: 'prePatch', callable: (_id, values) => { hooksRun.push('prePatch'); return values } },
      { hookType: 'preSave', callable: (row) => { hooksRun.push('preSave'); return row } },
      { hookType: 'preDelete', callable: () => { hooksRun.push('preDelete') } }
    ]
  })
})

const STRONG = /^"[A-Za-z0-9_-]{43}"$/
const FAILED = errorOf(412, 'TABLECRUD_ERR_PRECONDITION_FAILED', 'Precondition Failed', 'The row has changed since it was read.')
const REQUIRED = errorOf(428, 'TABLECRUD_ERR_PRECONDITION_REQUIRED', 'Precondition Required', 'This write needs an If-Match header holding the ETag of the row.')
const notFound = (id: number): Record<string, unknown> => errorOf(404, 'TABLECRUD_ERR_ROW_NOT_FOUND', 'Not Found', `No person row has the id ${id}.`)

type Method = 'GET' | 'HEAD' | 'PUT' | 'PATCH' | 'DELETE'
const send = async (method: Method, url: string, headers: Record<string, string> = {}, payload?: unknown): Promise<LightMyRequestResponse> =>
  await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
const etagOf = async (url: string): Promise<string> => String((await send('GET', url)).headers.etag)
/** The ETag of an answer's body as sent: SHA-256 of its bytes, base64url, quoted. */
const hashOf = (res: LightMyRequestResponse): string => `"${createHash('sha256').update(res.rawPayload).digest('base64url')}"`

t.test('GET /:id/: a strong ETag of the row as served, and 304 on If-None-Match', async (t) => {
  const ann = await create(app, '/persons', { name: 'Ann' })
  const res = await send('GET', `/persons/${ann.id}/`)
  const etag = String(res.headers.etag)
  t.match(etag, STRONG)
  t.equal(etag, hashOf(res), 'the hash of the bytes served')
  const some = await send('GET', `/persons/${ann.id}/?__visible_fields=name`)
  t.equal(some.headers.etag, hashOf(some), 'of the fields served')
  t.equal(await etagOf(`/persons/${ann.id}`), etag, 'the same row, the same ETag')
  t.not(await etagOf(`/persons/${ann.id}/?__visible_fields=name`), etag, 'other fields, another representation')
  for (const header of [etag, `W/${etag}`, '*', `"x", ${etag}`]) {
    for (const method of ['GET', 'HEAD'] as const) {
      const same = await send(method, `/persons/${ann.id}/`, { 'if-none-match': header })
      t.equal(same.statusCode, 304, `${method} If-None-Match: ${header}`)
      t.equal(same.body, '')
      t.equal(same.headers.etag, etag)
    }
  }
  const other = await send('GET', `/persons/${ann.id}/`, { 'if-none-match': '"stale"' })
  t.equal(other.statusCode, 200)
  t.strictSame(json(other), ann)
  const fields = await send('GET', `/persons/${ann.id}/?__visible_fields=name`, { 'if-none-match': etag })
  t.equal(fields.statusCode, 200, 'the full row\'s ETag is not that of the name alone')
  const joined = await send('GET', '/movies/1/?__visible_fields=name,director.name&__readable=1', { 'if-none-match': '"x"' })
  t.equal(joined.statusCode, 404)
  t.equal(joined.headers.etag, undefined, 'no row, no ETag')
})

t.test('writes that return a row send the ETag GET /:id/ gives for it', async (t) => {
  const post = await app.inject({ method: 'POST', url: '/persons/', payload: { name: 'Bo' } })
  t.equal(post.statusCode, 201)
  const id = json(post).id as number
  t.equal(post.headers.etag, await etagOf(`/persons/${id}/`))
  t.equal(post.headers.etag, hashOf(post), 'the hash of the bytes served')
  const patch = await send('PATCH', `/persons/${id}/`, { 'if-match': String(post.headers.etag) }, { name: 'Bob' })
  t.equal(patch.statusCode, 200)
  t.strictSame(json(patch), { id, name: 'Bob' })
  t.equal(patch.headers.etag, await etagOf(`/persons/${id}/`))
  t.not(patch.headers.etag, post.headers.etag)
  const put = await send('PUT', `/persons/${id}/`, {}, { name: 'Bobby' })
  t.equal(put.headers.etag, await etagOf(`/persons/${id}/`))
  const nothing = await send('PATCH', `/persons/${id}/`, { 'if-match': String(put.headers.etag) }, {})
  t.equal(nothing.statusCode, 200)
  t.equal(nothing.headers.etag, put.headers.etag, 'a PATCH that changes nothing keeps the ETag')
  // A row with joined types and a secret column: the ETag is of the row as served, secret left out.
  await create(app, '/studios', { code: 'lf', name: 'Lucasfilm' })
  const film = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Star Wars', box_office: '1.50', studio: 'lf', tags: ['a'], grid: [[1]], released: '1977-05-25T10:00:00.5' } })
  t.equal(film.statusCode, 201)
  t.equal(film.headers.etag, await etagOf(`/movies/${json(film).id}/`))
  const password = await send('PATCH', `/movies/${json(film).id}/`, { 'if-match': String(film.headers.etag) }, { password: 'changed' })
  t.equal(password.statusCode, 200)
  t.equal(password.headers.etag, film.headers.etag, 'a secret column is not served, so not in the ETag')
})

t.test('a stale If-Match: 412 on PUT, PATCH and DELETE, nothing written', async (t) => {
  const cy = await create(app, '/persons', { name: 'Cy' })
  const url = `/persons/${cy.id}/`
  const read = await etagOf(url)
  t.equal((await send('PATCH', url, {}, { name: 'Cyd' })).statusCode, 200, 'someone else writes')
  for (const [method, payload] of [['PATCH', { name: 'Lost' }], ['PUT', { name: 'Lost' }], ['DELETE', undefined]] as const) {
    const res = await send(method, url, { 'if-match': read }, payload)
    t.equal(res.statusCode, 412, method)
    t.strictSame(json(res), FAILED)
  }
  t.strictSame((await rowsOf(app, person)).find((r) => r.id === cy.id), { id: cy.id, name: 'Cyd' })
  const weak = await send('PATCH', url, { 'if-match': `W/${await etagOf(url)}` }, { name: 'Weak' })
  t.equal(weak.statusCode, 412, 'If-Match compares strongly: a weak tag never matches')
  const current = await etagOf(url)
  t.equal((await send('PATCH', url, { 'if-match': `"old", ${current}` }, { name: 'Listed' })).statusCode, 200, 'one of a list')
  t.equal((await send('PATCH', url, { 'if-match': '*' }, { name: 'Any' })).statusCode, 200, '* matches any current row')
  t.equal((await send('DELETE', url, { 'if-match': await etagOf(url) })).statusCode, 204)
  t.strictSame(json(await send('PATCH', url, { 'if-match': '*' }, { name: 'Gone' })), notFound(cy.id), '* on no row: the 404 first')
  t.strictSame(json(await send('DELETE', '/persons/x/', { 'if-match': current })), errorOf(400, 'TABLECRUD_ERR_ID_INVALID', 'Bad Request', 'The ID is invalid'))
})

t.test('requireIfMatch: 428 without If-Match; the order of checks; hooks only after the match', async (t) => {
  const di = await create(app, '/persons', { name: 'Di' })
  const url = `/strict/${di.id}/`
  hooksRun.length = 0
  for (const [method, payload] of [['PATCH', { name: 'x' }], ['PUT', { name: 'x' }], ['DELETE', undefined]] as const) {
    const res = await send(method, url, {}, payload)
    t.strictSame([res.statusCode, json(res)], [428, REQUIRED], method)
    t.strictSame(json(await send(method, '/strict/99999/', {}, payload)), notFound(99999), `${method}: no row is a 404 first`)
    t.strictSame(json(await send(method, '/strict/99999/', { 'if-match': '"x"' }, payload)), notFound(99999), `${method}: 404 before 412`)
    t.strictSame(json(await send(method, url, { 'if-match': '"x"' }, payload)), FAILED, method)
  }
  t.equal((await send('PATCH', url, { 'if-match': '"x"', 'x-refuse': '1' }, { name: 'x' })).statusCode, 403, 'validators before If-Match')
  t.equal((await send('PATCH', url, { 'if-match': '"x"' }, { name: 1 })).statusCode, 400, 'the body before If-Match')
  t.strictSame(hooksRun, [], 'no hook ran for a refused write')
  const patched = await send('PATCH', url, { 'if-match': await etagOf(url) }, { name: 'Dee' })
  t.equal(patched.statusCode, 200)
  const put = await send('PUT', url, { 'if-match': String(patched.headers.etag) }, { name: 'Dede' })
  t.equal(put.statusCode, 200)
  t.equal((await send('DELETE', url, { 'if-match': String(put.headers.etag) })).statusCode, 204)
  t.strictSame(hooksRun, ['prePatch', 'preSave', 'preDelete'])
  t.equal((await send('GET', url)).statusCode, 404)
})

t.test('a hook that refuses inside the If-Match transaction writes nothing', async (t) => {
  const ed = await create(app, '/persons', { name: 'Ed' })
  const local = await freshApp(t, db, async (a) => {
    await a.register(tableCrud, { table: person, prefix: '/p', readOnly: false, hooks: [{ hookType: 'prePatch', callable: () => { throw new Error('Refused') } }] })
  }, [])
  const res = await local.inject({ method: 'PATCH', url: `/p/${ed.id}/`, headers: { 'if-match': '*' }, payload: { name: 'No' } })
  t.strictSame([res.statusCode, json(res)], [400, errorOf(400, 'TABLECRUD_ERR_HOOK', 'Bad Request', 'Refused')])
  t.strictSame((await rowsOf(app, person)).find((r) => r.id === ed.id), { id: ed.id, name: 'Ed' })
})

t.test('two PATCHes with the same If-Match, sent together: exactly one wins, 30 times', async (t) => {
  const race = await create(app, '/persons', { name: 'Start' })
  const url = `/persons/${race.id}/`
  for (let round = 0; round < 30; round++) {
    const etag = await etagOf(url)
    const [a, b] = await Promise.all([
      send('PATCH', url, { 'if-match': etag }, { name: `a${round}` }),
      send('PATCH', url, { 'if-match': etag }, { name: `b${round}` })
    ])
    const statuses = [a.statusCode, b.statusCode].sort()
    t.strictSame(statuses, [200, 412], `round ${round}`)
    const winner = a.statusCode === 200 ? `a${round}` : `b${round}`
    t.strictSame((await rowsOf(app, person)).find((r) => r.id === race.id), { id: race.id, name: winner })
  }
})
