import t from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import {
  category, CATEGORY_ROWS, director, json, movie, MOVIE_COLUMNS, MOVIE_FIELDS_JOINED, MOVIE_ROWS, requests, role, ROLE_ROWS,
  seededApp, studio, STUDIO_ROWS
} from '../../fixtures/movies.js'

/*
 * GET `/:id/` (SPEC §2.4, §6.11), the routes and methods of a TableCRUD prefix (SPEC §2,
 * §6.13, §6.22) and the error shape of each (SPEC §1).
 */

const { app } = await seededApp(t, async (app) => {
  await app.register(tableCrud, { table: movie, prefix: '/movies', maxJoins: 1 })
  await app.register(tableCrud, { table: movie, prefix: '/movies-flat' })
  await app.register(tableCrud, { table: movie, prefix: '/movies-rw', readOnly: false })
  await app.register(tableCrud, { table: movie, prefix: '/movies-bulk', readOnly: false, allowBulkDelete: true })
  await app.register(tableCrud, { table: director, prefix: '/directors' })
  await app.register(tableCrud, { table: studio, prefix: '/studios' })
  await app.register(tableCrud, { table: role, prefix: '/roles', maxJoins: 2 })
  await app.register(tableCrud, { table: category, prefix: '/categories', maxJoins: 1 })
})
const { get, expectOk, expectError } = requests(app)

const INVALID_ID = ['TABLECRUD_ERR_ID_INVALID', 'The ID is invalid'] as const
const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const

t.test('one row by id, with or without the trailing slash', async (t) => {
  for (const row of MOVIE_ROWS) {
    await expectOk(t, `/movies/${row.id}/`, row)
    await expectOk(t, `/movies/${row.id}`, row)
  }
  await expectOk(t, '/directors/1/', { id: 1, name: 'George Lucas' })
  await expectOk(t, '/categories/4/', CATEGORY_ROWS[3])
  await expectOk(t, '/roles/2', ROLE_ROWS[1])
  const response = await get('/movies/2/')
  t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
})

t.test('a Varchar primary key', async (t) => {
  await expectOk(t, '/studios/ZOE/', STUDIO_ROWS[2])
  await expectOk(t, '/studios/A24', STUDIO_ROWS[1])
  await expectError(t, '/studios/zoe/', 404, 'TABLECRUD_ERR_ROW_NOT_FOUND', 'No studio row has the id "zoe".')
  await expectError(t, '/studios/ABCDEFGH/', 404, 'TABLECRUD_ERR_ROW_NOT_FOUND', 'No studio row has the id "ABCDEFGH".')
  // The length is counted in characters, not bytes.
  await expectError(t, `/studios/${encodeURIComponent('éééééééé')}/`, 404, 'TABLECRUD_ERR_ROW_NOT_FOUND', 'No studio row has the id "éééééééé".')
  await expectError(t, '/studios/ABCDEFGHI/', 400, ...INVALID_ID)
  await expectError(t, '/studios/%00/', 400, ...INVALID_ID)
  await expectError(t, '/studios//', 400, ...INVALID_ID)
})

t.test('HEAD answers like GET, without a body', async (t) => {
  for (const url of ['/movies/1/', '/movies/1', '/movies/1/?__visible_fields=name,director.name&__readable=1', '/studios/ZOE/']) {
    const got = await get(url)
    const head = await get(url, 'HEAD')
    t.equal(head.statusCode, 200, url)
    t.equal(head.body, '', url)
    t.equal(head.headers['content-type'], got.headers['content-type'], url)
    t.equal(head.headers['content-length'], got.headers['content-length'], url)
  }
  for (const [url, status] of [['/movies/99/', 404], ['/movies/abc/', 400]] as const) {
    const head = await get(url, 'HEAD')
    t.equal(head.statusCode, status, url)
    t.equal(head.body, '', url)
  }
})

t.test('filter and other parameters are ignored', async (t) => {
  await expectOk(t, '/movies/1/?name=zzz&foo=bar&year__operator=gt&__page=x&__page_size=0&__order=nope&__range_header=2', MOVIE_ROWS[0])
  const response = await get('/movies/1/?__range_header=1')
  t.equal(response.headers['content-range'], undefined)
})

t.test('__visible_fields on one row', async (t) => {
  await expectOk(t, '/movies/1/?__visible_fields=name,year', { name: 'Star Wars', year: 1977 })
  await expectOk(t, '/movies/1/?__visible_fields=name&__visible_fields=box_office', { name: 'Star Wars', box_office: '775398007.00' })
  await expectOk(t, '/movies/3/?__visible_fields=name,director.name,studio.code', { name: 'Lost in Translation', director: { name: 'Sofia Coppola' }, studio: { code: 'ZOE' } })
  await expectOk(t, '/movies/4/?__visible_fields=director,director.name', { director: { id: null, name: null } })
  await expectOk(t, '/roles/3/?__visible_fields=movie.director.name,movie.studio.name', { movie: { director: { name: 'Sofia Coppola' }, studio: { name: 'American Zoetrope' } } })
  await expectOk(t, '/categories/3/?__visible_fields=parent.name,parent.parent', { parent: { name: 'Science fiction', parent: 1 } })
  await expectError(t, '/movies/1/?__visible_fields=nope', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', `nope isn't a valid field name. Valid names: ${MOVIE_FIELDS_JOINED.join(', ')}.`, { validFields: MOVIE_FIELDS_JOINED })
  await expectError(t, '/movies/1/?__visible_fields=director.email', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', `director.email isn't a valid field name. Valid names: ${MOVIE_FIELDS_JOINED.join(', ')}.`, { validFields: MOVIE_FIELDS_JOINED })
  await expectError(t, '/directors/1/?__visible_fields=email', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', `email isn't a valid field name. Valid names: ${['id', 'name'].join(', ')}.`, { validFields: ['id', 'name'] })
  await expectError(t, '/movies-flat/1/?__visible_fields=name,zzz', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', `zzz isn't a valid field name. Valid names: ${MOVIE_COLUMNS.join(', ')}.`, { validFields: MOVIE_COLUMNS })
  await expectError(t, '/movies-flat/1/?__visible_fields=director.name', 400, 'TABLECRUD_ERR_QS_MAX_JOIN_DEPTH', 'Max join depth exceeded')
  await expectError(t, '/categories/3/?__visible_fields=parent.parent.name', 400, 'TABLECRUD_ERR_QS_MAX_JOIN_DEPTH', 'Max join depth exceeded')
  // The query is checked before the id (SPEC §6.14).
  await expectError(t, '/movies/abc/?__visible_fields=nope', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', `nope isn't a valid field name. Valid names: ${MOVIE_FIELDS_JOINED.join(', ')}.`, { validFields: MOVIE_FIELDS_JOINED })
})

t.test('__readable on one row', async (t) => {
  const response = await expectOk(t, '/movies/1/?__readable=yes', { ...MOVIE_ROWS[0], director_readable: 'George Lucas', studio_readable: 'Lucasfilm' })
  t.strictSame(Object.keys(json(response)), [
    'id', 'name', 'genre', 'synopsis', 'year', 'rating', 'box_office', 'released', 'premiere',
    'director', 'director_readable', 'studio', 'studio_readable', 'tags', 'scores'
  ])
  await expectOk(t, '/movies/4/?__readable=1', { ...MOVIE_ROWS[3], director_readable: null, studio_readable: null })
  await expectOk(t, '/movies/1/?__readable=0', MOVIE_ROWS[0])
  await expectOk(t, '/categories/5/?__readable=true', { ...CATEGORY_ROWS[4], parent_readable: '' })
  await expectOk(t, '/categories/1/?__readable=true', { ...CATEGORY_ROWS[0], parent_readable: null })
  await expectOk(t, '/roles/3/?__readable=1&__visible_fields=character,movie.name', { character: 'Bob Harris', movie: { name: 'Lost in Translation' }, movie_readable: 'Lost in Translation (2003)' })
  await expectOk(t, '/roles/4/?__readable=1&__visible_fields=movie.director.name', { movie: { director: { name: null } }, movie_readable: '100% _x_ (2020)' })
  await expectError(t, '/movies/1/?__readable=maybe', 400, 'TABLECRUD_ERR_QS_INVALID_BOOLEAN', '__readable must be true or false.')
  await expectError(t, '/movies/1/?__readable=1&__readable=0', 400, 'TABLECRUD_ERR_QS_REPEATED', '__readable is given more than once.')
})

t.test('an id that cannot be the primary key is a 400', async (t) => {
  for (const id of ['0', '-1', 'abc', '1.5', '1e3', '0x10', '2147483648', '99999999999999999999', '%201', '1%20', '%00', 'NaN', 'Infinity']) {
    await expectError(t, `/movies/${id}/`, 400, ...INVALID_ID)
    await expectError(t, `/movies/${id}`, 400, ...INVALID_ID)
  }
  await expectError(t, '/movies//', 400, ...INVALID_ID)
})

t.test("an id longer than the router's maxParamLength is answered the same way", async (t) => {
  const long = '1'.repeat(150)
  for (const url of [`/movies/${long}/`, `/movies/${long}`, `/studios/${'A'.repeat(101)}/`, `/movies/${long}/?__visible_fields=name`]) {
    await expectError(t, url, 400, ...INVALID_ID)
    const head = await get(url, 'HEAD')
    t.equal(head.statusCode, 400, `HEAD ${url}`)
    t.equal(head.body, '')
  }
  for (const method of METHODS) {
    const url = `/movies/${long}/`
    const response = await expectError(t, url, 405, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', `${method} is not allowed on ${url}.`, {}, method)
    t.equal(response.headers.allow, 'GET, HEAD')
  }
  const post = await expectError(t, `/movies-rw/${long}`, 405, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', `POST is not allowed on /movies-rw/${long}.`, {}, 'POST')
  t.equal(post.headers.allow, 'GET, HEAD, PUT, PATCH, DELETE')
  await expectError(t, `/movies-rw/${long}/`, 400, ...INVALID_ID, {}, 'DELETE')
  await expectError(t, `/movies/${long}/extra/`, 404, 'TABLECRUD_ERR_ROUTE_NOT_FOUND', `Route GET:/movies/${long}/extra/ not found`)
})

t.test('a missing row is a 404', async (t) => {
  await expectError(t, '/movies/99/', 404, 'TABLECRUD_ERR_ROW_NOT_FOUND', 'No movie row has the id 99.')
  await expectError(t, '/movies/2147483647', 404, 'TABLECRUD_ERR_ROW_NOT_FOUND', 'No movie row has the id 2147483647.')
  await expectError(t, '/movies/6/?__readable=1&__visible_fields=director.name', 404, 'TABLECRUD_ERR_ROW_NOT_FOUND', 'No movie row has the id 6.')
})

t.test('literal paths win over /:id/', async (t) => {
  await expectOk(t, '/studios/new/', { code: null, name: '' })
  await expectOk(t, '/studios/count/', { count: 3, page_size: 15 })
  await expectOk(t, '/studios/references/', { references: [{ tableName: 'movie', columnName: 'studio' }] })
  await expectOk(t, '/studios/ids', { A24: 'A24 Films', LUCAS: 'Lucasfilm', ZOE: 'American Zoetrope' })
  const schema = await get('/studios/schema')
  t.equal(schema.statusCode, 200)
  t.equal(json(schema).title, 'StudioIn')
})

t.test('an unknown path under the prefix is a 404 in the error shape', async (t) => {
  for (const url of ['/movies/1/extra/', '/movies/x/y', '/movies/count/x', '/movies/schema/1/', '/movies/1/2/3']) {
    await expectError(t, url, 404, 'TABLECRUD_ERR_ROUTE_NOT_FOUND', `Route GET:${url} not found`)
  }
  await expectError(t, '/movies/1/extra?x=1', 404, 'TABLECRUD_ERR_ROUTE_NOT_FOUND', 'Route GET:/movies/1/extra not found')
  await expectError(t, '/movies/1/extra', 404, 'TABLECRUD_ERR_ROUTE_NOT_FOUND', 'Route POST:/movies/1/extra not found', {}, 'POST')
})

t.test('read-only mode: every writing method is a 405 with Allow', async (t) => {
  for (const method of METHODS) {
    for (const url of ['/movies/', '/movies', '/movies/1/', '/movies/1', '/movies/abc/', '/movies/99/']) {
      const response = await expectError(t, url, 405, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', `${method} is not allowed on ${url}.`, {}, method)
      t.equal(response.headers.allow, 'GET, HEAD', `${method} ${url}`)
    }
  }
  // The method is refused before the body is read (SPEC §6.14).
  for (const [type, payload] of [['application/json', '{"name": "x"}'], ['text/plain', 'x'], ['application/json', '{']] as const) {
    const response = await app.inject({ method: 'POST', url: '/movies/?x=1', headers: { 'content-type': type }, payload })
    t.equal(response.statusCode, 405, type)
    t.equal(response.headers.allow, 'GET, HEAD')
    t.strictSame(json(response), { statusCode: 405, code: 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', error: 'Method Not Allowed', message: 'POST is not allowed on /movies/.' })
  }
  await expectOk(t, '/movies/count/', { count: 5, page_size: 15 })
})

t.test('a method a path does not have is a 405 with Allow, in any mode', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['PATCH', '/movies-rw/', 'GET, HEAD, POST'],
    ['PUT', '/movies-rw', 'GET, HEAD, POST'],
    ['DELETE', '/movies-rw/', 'GET, HEAD, POST'],
    ['PATCH', '/movies-bulk/', 'GET, HEAD, POST, DELETE'],
    ['PUT', '/movies-bulk/', 'GET, HEAD, POST, DELETE'],
    ['PATCH', '/movies/', 'GET, HEAD']
  ]
  for (const [method, url, allow] of cases) {
    const response = await expectError(t, url, 405, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', `${method} is not allowed on ${url}.`, {}, method as 'PATCH')
    t.equal(response.headers.allow, allow, `${method} ${url}`)
  }
})

t.test('helper paths answer GET and HEAD only', async (t) => {
  for (const prefix of ['/movies', '/movies-rw', '/movies-bulk']) {
    for (const helper of ['schema', 'ids', 'count', 'new', 'references']) {
      for (const url of [`${prefix}/${helper}/`, `${prefix}/${helper}`]) {
        for (const method of METHODS) {
          const response = await expectError(t, url, 405, 'TABLECRUD_ERR_METHOD_NOT_ALLOWED', `${method} is not allowed on ${url}.`, {}, method)
          t.equal(response.headers.allow, 'GET, HEAD', `${method} ${url}`)
        }
        const head = await get(url, 'HEAD')
        const got = await get(url)
        t.equal(head.statusCode, 200, `HEAD ${url}`)
        t.equal(got.statusCode, 200, `GET ${url}`)
        t.equal(head.body, '', `HEAD ${url}`)
        t.equal(head.headers['content-type'], 'application/json; charset=utf-8', `HEAD ${url}`)
      }
    }
  }
})
