import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { createServer } from 'node:net'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { tableCrud, type Crud, type TableCrudOptions } from '../../../plugins/crud/table-crud.js'
import { HttpError } from '../../../lib/errors.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { DECIMAL_PATTERN, TIMESTAMP_PATTERN } from '../../../schemas/row.js'
import {
  category, director, errorBody, json, movie, MOVIE_COLUMNS, MOVIE_FIELDS_JOINED, MOVIE_ROWS, requests, role, seededApp,
  studio, ticket, type Row
} from '../../fixtures/movies.js'

/*
 * The helper endpoints of TableCRUD (SPEC §2.8: /count/, /ids/, /new/, /references/,
 * /schema/), its options checked at registration (SPEC §2.1, §6.17) and validators on the
 * read endpoints (SPEC §2.9, §6.14).
 */

/** Explicit defaults of every kind, for `/new/`; never written to. */
const festival = defineTable('festival', {
  name: column.varchar({ length: 50, default: 'Cannes' }),
  founded: column.integer({ default: 1946 }),
  fee: column.numeric({ digits: [6, 2], default: 12.5 }),
  opens: column.timestamp({ default: '2024-05-14T19:00:00' }),
  closes: column.timestamp({ null: true, default: '2024-05-25 20:30:00.25' }),
  started: column.timestamp({ default: 'now' }),
  juried: column.boolean({ default: true }),
  prizes: column.array(column.varchar({ length: 20 }), { default: ['Palme'] }),
  ratio: column.real({ null: true, default: null }),
  contact: column.email({ null: true }),
  host: column.foreignKey(director, { null: false }),
  password: column.varchar({ length: 20, secret: true, default: 'hunter2' })
})

/** Validators that record their calls and refuse as the request's `x-refuse` header says. */
interface Call { name: string, crud: Crud, request: FastifyRequest, extra: Record<string, unknown> }
const calls: Call[] = []
const extraContext = { tenant: 'acme' }
const READ_OPERATIONS = ['getAll', 'getSingle', 'getCount', 'getIds', 'getNew', 'getSchema', 'getReferences'] as const
function recorder (name: string) {
  return async (crud: Crud, request: FastifyRequest, extra: Record<string, unknown>): Promise<void> => {
    calls.push({ name, crud, request, extra })
    if (request.headers['x-refuse-in'] === name) await refuse(request.headers['x-refuse'])
  }
}
async function refuse (how: unknown): Promise<void> {
  switch (how) {
    case '403': throw new HttpError(403, 'Superusers only')
    case '401': throw Object.assign(new Error('Log in first'), { statusCode: 401 })
    case 'async': await new Promise((resolve) => setTimeout(resolve, 5)); throw Object.assign(new Error('Not today'), { statusCode: 403 })
    case 'plain': throw new Error('the secret detail')
    case 'string': throw 'a string' // eslint-disable-line no-throw-literal
    case 'rejected': return await Promise.reject(new TypeError('boom'))
  }
}
const validators = Object.fromEntries([...READ_OPERATIONS, 'every'].map((name) => [name, [recorder(name)]]))

const { app } = await seededApp(t, async (app) => {
  await app.register(tableCrud, { table: movie, prefix: '/movies', maxJoins: 1, schemaExtra: { list_columns: ['name', 'year'], ordering: '-year' } })
  await app.register(tableCrud, { table: director, prefix: '/directors' })
  await app.register(tableCrud, { table: director, prefix: '/directors-open', excludeSecrets: false })
  await app.register(tableCrud, { table: studio, prefix: '/studios' })
  await app.register(tableCrud, { table: category, prefix: '/categories' })
  await app.register(tableCrud, { table: role, prefix: '/roles' })
  await app.register(tableCrud, { table: ticket, prefix: '/tickets', pageSize: 20, maxPageSize: 50 })
  await app.register(tableCrud, { table: festival, prefix: '/festivals' })
  await app.register(tableCrud, { table: movie, prefix: '/guarded', maxJoins: 1, validators: { ...validators, extraContext } })
}, [festival])
const { get, expectOk, expectError } = requests(app)

t.test('/count/: the rows matching the filters, and the pageSize option', async (t) => {
  await expectOk(t, '/movies/count/', { count: 5, page_size: 15 })
  await expectOk(t, '/movies/count', { count: 5, page_size: 15 })
  await expectOk(t, '/movies/count/?genre=sci', { count: 2, page_size: 15 })
  await expectOk(t, '/movies/count/?tags=classic&tags=space', { count: 1, page_size: 15 })
  await expectOk(t, '/movies/count/?rating__operator=is_null', { count: 1, page_size: 15 })
  await expectOk(t, '/movies/count/?year__operator=gt&year=3000', { count: 0, page_size: 15 })
  await expectOk(t, '/tickets/count/', { count: 100, page_size: 20 })
  await expectOk(t, '/tickets/count/?row_letter=B&seat__operator=lte&seat=50', { count: 10, page_size: 20 })
  await expectOk(t, '/directors/count/', { count: 3, page_size: 15 })
})

t.test('/count/ ignores control parameters, even malformed or repeated ones', async (t) => {
  await expectOk(t, '/movies/count/?genre=sci&__page=abc&__page=x&__page_size=0&__order=nope&__visible_fields=zz&__visible_fields=director.email' +
    '&__readable=maybe&__range_header=2&__range_header_name=a&__range_header_name=b', { count: 2, page_size: 15 })
  const response = await get('/movies/count/?__range_header=1')
  t.equal(response.headers['content-range'], undefined)
})

t.test('/count/ refuses bad filters like GET /', async (t) => {
  await expectError(t, '/movies/count/?foo=1', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "foo isn't a valid field name.", { validFields: MOVIE_COLUMNS })
  await expectError(t, '/movies/count/?__foo=1', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "__foo isn't a valid field name.", { validFields: MOVIE_COLUMNS })
  await expectError(t, '/movies/count/?year=abc', 400, 'TABLECRUD_ERR_QS_INVALID_VALUE', 'The value "abc" of year is not a valid 32-bit integer.')
  await expectError(t, '/movies/count/?name=a&name=b', 400, 'TABLECRUD_ERR_QS_REPEATED', 'name is given more than once.')
  await expectError(t, '/movies/count/?name__operator=lt&name=a', 400, 'TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE', 'The operator lt does not apply to name (type varchar).')
  await expectError(t, '/directors/count/?email=x', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "email isn't a valid field name.", { validFields: ['id', 'name'] })
  await expectOk(t, '/directors-open/count/?email=example', { count: 2, page_size: 15 })
})

t.test('/ids/: readable representations in primary key order', async (t) => {
  const all = { 1: 'Star Wars (1977)', 2: 'THX 1138 (1971)', 3: 'Lost in Translation (2003)', 4: '100% _x_ (2020)', 5: '100 x (2021)' }
  await expectOk(t, '/movies/ids/', all)
  await expectOk(t, '/movies/ids', all)
  await expectOk(t, '/movies/ids/?search=', all)
  await expectOk(t, '/movies/ids/?search=STAR', { 1: 'Star Wars (1977)' })
  // The search looks at the whole representation, template included, with % and _ literal.
  await expectOk(t, '/movies/ids/?search=(20', { 3: 'Lost in Translation (2003)', 4: '100% _x_ (2020)', 5: '100 x (2021)' })
  await expectOk(t, '/movies/ids/?search=1)', { 2: 'THX 1138 (1971)', 5: '100 x (2021)' })
  await expectOk(t, '/movies/ids/?search=%25', { 4: '100% _x_ (2020)' })
  await expectOk(t, '/movies/ids/?search=_', { 4: '100% _x_ (2020)' })
  await expectOk(t, '/movies/ids/?search=0_', {})
  await expectOk(t, '/movies/ids/?limit=2', { 1: 'Star Wars (1977)', 2: 'THX 1138 (1971)' })
  await expectOk(t, '/movies/ids/?limit=2&offset=1', { 2: 'THX 1138 (1971)', 3: 'Lost in Translation (2003)' })
  await expectOk(t, '/movies/ids/?offset=4', { 5: '100 x (2021)' })
  await expectOk(t, '/movies/ids/?offset=5', {})
  await expectOk(t, '/movies/ids/?limit=0', {})
  await expectOk(t, '/movies/ids/?search=t&limit=1&offset=1', { 2: 'THX 1138 (1971)' })
  await expectOk(t, '/directors/ids/?search=coppola', { 2: 'Sofia Coppola' })
  // A NULL in the readable template renders as "".
  await expectOk(t, '/categories/ids/', { 1: 'Fiction', 2: 'Science fiction', 3: 'Space opera', 4: '', 5: 'Orphans' })
  await expectOk(t, '/roles/ids/?search=O', { 2: 'Han Solo', 3: 'Bob Harris' })
})

t.test('/ids/ with a Varchar primary key: the keys in order', async (t) => {
  const response = await expectOk(t, '/studios/ids/', { A24: 'A24 Films', LUCAS: 'Lucasfilm', ZOE: 'American Zoetrope' })
  t.equal(response.body, '{"A24":"A24 Films","LUCAS":"Lucasfilm","ZOE":"American Zoetrope"}', 'in primary key order, not insertion order')
  const searched = await expectOk(t, '/studios/ids/?search=FILM', { A24: 'A24 Films', LUCAS: 'Lucasfilm' })
  t.equal(searched.body, '{"A24":"A24 Films","LUCAS":"Lucasfilm"}')
  await expectOk(t, '/studios/ids/?offset=1&limit=1', { LUCAS: 'Lucasfilm' })
})

t.test('/ids/: limit defaults to maxPageSize', async (t) => {
  const expected = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [String(i + 1), String(i + 1)]))
  await expectOk(t, '/tickets/ids/', expected)
  await expectOk(t, '/tickets/ids/?limit=50&offset=98', { 99: '99', 100: '100' })
  await expectError(t, '/tickets/ids/?limit=51', 400, 'TABLECRUD_ERR_QS_INVALID_NUMBER', 'limit (at most 50) must be a non-negative integer.')
})

t.test('/ids/ refuses other parameters and bad numbers', async (t) => {
  const IDS_FIELDS = { validFields: ['search', 'limit', 'offset'] }
  await expectError(t, '/movies/ids/?foo=1', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "foo isn't a valid field name.", IDS_FIELDS)
  await expectError(t, '/movies/ids/?name=Star', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "name isn't a valid field name.", IDS_FIELDS)
  await expectError(t, '/movies/ids/?__page=1', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "__page isn't a valid field name.", IDS_FIELDS)
  for (const value of ['-1', 'abc', '1.5', '', '1001', '99999999999']) {
    await expectError(t, `/movies/ids/?limit=${value}`, 400, 'TABLECRUD_ERR_QS_INVALID_NUMBER', 'limit (at most 1000) must be a non-negative integer.')
  }
  for (const value of ['-1', 'abc', '1.5', '']) {
    await expectError(t, `/movies/ids/?offset=${value}`, 400, 'TABLECRUD_ERR_QS_INVALID_NUMBER', 'offset must be a non-negative integer.')
  }
  await expectError(t, '/movies/ids/?search=a&search=b', 400, 'TABLECRUD_ERR_QS_REPEATED', 'search is given more than once.')
  await expectError(t, '/movies/ids/?limit=1&limit=2', 400, 'TABLECRUD_ERR_QS_REPEATED', 'limit is given more than once.')
})

/** A `/new/` timestamp: the wire form, within a minute of now. */
function checkNow (t: Test, value: unknown): void {
  t.match(value, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/, 'the wire form, whole seconds')
  t.ok(Math.abs(new Date(`${String(value)}Z`).getTime() - Date.now()) < 60000, `${String(value)} is now, in UTC`)
}

t.test('/new/: the defaults of a new row, saving nothing', async (t) => {
  const response = await get('/movies/new/')
  t.equal(response.statusCode, 200)
  const body = json(response)
  checkNow(t, body.premiere)
  t.strictSame(body, {
    id: null,
    name: '',
    genre: null,
    synopsis: '',
    year: 0,
    rating: 0,
    box_office: '0.00',
    released: false,
    premiere: body.premiere,
    director: null,
    studio: null,
    tags: [],
    scores: []
  })
  t.strictSame(Object.keys(body), ['id', ...MOVIE_COLUMNS.slice(1)], 'every column')
  await expectOk(t, '/directors/new/', { id: null, name: '' })
  await expectOk(t, '/directors-open/new', { id: null, name: '', email: null })
  await expectOk(t, '/studios/new/', { code: null, name: '' })
  await expectOk(t, '/categories/new/', { id: null, name: '', parent: null })
  await expectOk(t, '/roles/new/', { id: null, movie: null, character: '' })
  await expectOk(t, '/movies/count/', { count: 5, page_size: 15 })
})

t.test('/new/: declared defaults as declared, on the wire', async (t) => {
  const response = await get('/festivals/new/')
  t.equal(response.statusCode, 200)
  const body = json(response)
  checkNow(t, body.started)
  t.strictSame(body, {
    id: null,
    name: 'Cannes',
    founded: 1946,
    fee: '12.50',
    opens: '2024-05-14T19:00:00',
    closes: '2024-05-25T20:30:00.250000',
    started: body.started,
    juried: true,
    prizes: ['Palme'],
    ratio: null,
    contact: null,
    host: null
  })
})

t.test('/references/: every ForeignKey pointing at the table, from every defined table', async (t) => {
  await expectOk(t, '/movies/references/', { references: [{ tableName: 'role', columnName: 'movie' }] })
  // festival is defined in this process but not served: it counts (SPEC §6.16).
  await expectOk(t, '/directors/references/', { references: [{ tableName: 'movie', columnName: 'director' }, { tableName: 'festival', columnName: 'host' }] })
  await expectOk(t, '/studios/references', { references: [{ tableName: 'movie', columnName: 'studio' }] })
  await expectOk(t, '/categories/references/', { references: [{ tableName: 'category', columnName: 'parent' }] })
  await expectOk(t, '/tickets/references/', { references: [] })
})

const INT = { minimum: -2147483648, maximum: 2147483647, type: 'integer' }
const NULL = { type: 'null' }
const extra = (members: Row = {}): Row => ({ help_text: null, choices: null, secret: false, nullable: false, unique: false, ...members })

t.test('/schema/: the JSON Schema of SPEC §2.8, schemaExtra merged', async (t) => {
  const response = await expectOk(t, '/movies/schema/', {
    title: 'MovieIn',
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 100, title: 'Name', extra: extra() },
      genre: {
        type: 'string',
        maxLength: 20,
        enum: ['sci-fi', 'drama', 'comedy'],
        title: 'Genre',
        extra: extra({
          choices: {
            sci_fi: { display_name: 'Sci Fi', value: 'sci-fi' },
            drama: { display_name: 'Drama', value: 'drama' },
            comedy: { display_name: 'Funny', value: 'comedy' }
          }
        })
      },
      synopsis: { type: 'string', title: 'Synopsis', extra: extra({ help_text: 'What happens', widget: 'text-area' }) },
      year: { ...INT, title: 'Year', extra: extra() },
      rating: { anyOf: [{ type: 'number' }, NULL], title: 'Rating', extra: extra({ nullable: true }) },
      box_office: { anyOf: [{ type: 'number' }, { type: 'string', pattern: DECIMAL_PATTERN }], title: 'Box Office', extra: extra() },
      released: { type: 'boolean', title: 'Released', extra: extra() },
      premiere: { type: 'string', pattern: TIMESTAMP_PATTERN, title: 'Premiere', extra: extra() },
      director: { anyOf: [INT, NULL], title: 'Director', extra: extra({ nullable: true, foreign_key: { to: 'director', target_column: 'id' } }) },
      studio: { anyOf: [{ type: 'string', maxLength: 8 }, NULL], title: 'Studio', extra: extra({ nullable: true, foreign_key: { to: 'studio', target_column: 'code' } }) },
      tags: { type: 'array', items: { type: 'string', maxLength: 20 }, title: 'Tags', extra: extra({ dimensions: 1 }) },
      scores: { type: 'array', items: { type: 'array', items: INT }, title: 'Scores', extra: extra({ dimensions: 2 }) }
    },
    required: ['name'],
    extra: {
      help_text: 'Feature films',
      primary_key_name: 'id',
      visible_fields_options: MOVIE_FIELDS_JOINED,
      list_columns: ['name', 'year'],
      ordering: '-year'
    }
  })
  t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
  // Draft 2020-12: it compiles, and takes the rows the API gives, less their key.
  const ajv = new Ajv2020({ strict: true })
  ajv.addKeyword({ keyword: 'extra', schemaType: 'object' })
  const validate = ajv.compile(json(response))
  for (const row of MOVIE_ROWS) {
    const { id, ...values } = row
    t.ok(validate(values), `movie ${String(id)} validates`)
  }
  t.notOk(validate({ name: 'x', genre: 'horror' }), 'a value outside the choices does not')
})

t.test('/schema/: secret columns are properties, never visible fields', async (t) => {
  const name = { type: 'string', maxLength: 100, title: 'Name', extra: extra({ unique: true }) }
  const email = { anyOf: [{ type: 'string', format: 'email' }, NULL], title: 'Email', extra: extra({ secret: true, nullable: true }) }
  await expectOk(t, '/directors/schema/', {
    title: 'DirectorIn',
    type: 'object',
    properties: { name, email },
    extra: { help_text: null, primary_key_name: 'id', visible_fields_options: ['id', 'name'] }
  })
  await expectOk(t, '/directors-open/schema', {
    title: 'DirectorIn',
    type: 'object',
    properties: { name, email },
    extra: { help_text: null, primary_key_name: 'id', visible_fields_options: ['id', 'name', 'email'] }
  })
})

t.test('/schema/: a Varchar primary key is a required property', async (t) => {
  await expectOk(t, '/studios/schema/', {
    title: 'StudioIn',
    type: 'object',
    properties: {
      code: { type: 'string', maxLength: 8, title: 'Code', extra: extra({ unique: true }) },
      name: { type: 'string', maxLength: 100, title: 'Name', extra: extra() }
    },
    required: ['code'],
    extra: { help_text: null, primary_key_name: 'code', visible_fields_options: ['code', 'name'] }
  })
})

t.test('HEAD on each helper path', async (t) => {
  for (const url of ['/movies/count/?genre=sci', '/movies/ids/?search=star', '/movies/new/', '/movies/references/', '/movies/schema/', '/studios/ids']) {
    const got = await get(url)
    const head = await get(url, 'HEAD')
    t.equal(head.statusCode, 200, url)
    t.equal(head.body, '', url)
    t.equal(head.headers['content-type'], 'application/json; charset=utf-8', url)
    if (!url.includes('new')) t.equal(head.headers['content-length'], got.headers['content-length'], url)
  }
  const bad = await get('/movies/ids/?foo=1', 'HEAD')
  t.equal(bad.statusCode, 400)
  t.equal(bad.body, '')
})

// Validators (SPEC §2.9)

const READ_URLS: ReadonlyArray<[typeof READ_OPERATIONS[number], string]> = [
  ['getAll', '/guarded/?genre=sci'],
  ['getSingle', '/guarded/1/'],
  ['getCount', '/guarded/count/'],
  ['getIds', '/guarded/ids/'],
  ['getNew', '/guarded/new/'],
  ['getSchema', '/guarded/schema/'],
  ['getReferences', '/guarded/references/']
]

async function guarded (url: string, refuseIn?: string, how?: string): Promise<Awaited<ReturnType<typeof get>>> {
  calls.length = 0
  const headers: Record<string, string> = refuseIn === undefined ? {} : { 'x-refuse-in': refuseIn, 'x-refuse': how ?? '' }
  return await app.inject({ method: 'GET', url, headers })
}

t.test("validators: the operation's list, then every, with (crud, request, extraContext)", async (t) => {
  for (const [operation, url] of READ_URLS) {
    const response = await guarded(url)
    t.equal(response.statusCode, 200, url)
    t.strictSame(calls.map((c) => c.name), [operation, 'every'], url)
    for (const call of calls) {
      t.equal(call.crud.table, movie)
      t.strictSame({ ...call.crud }, { table: movie, readOnly: true, allowBulkDelete: false, pageSize: 15, maxPageSize: 1000, excludeSecrets: true, maxJoins: 1 })
      t.equal(call.request.url, url)
      t.equal(call.extra, extraContext, 'the extraContext object itself')
    }
  }
})

t.test('validators: a statusCode is answered with its message; anything else is a 400', async (t) => {
  for (const [operation, url] of READ_URLS) {
    for (const where of [operation, 'every']) {
      let response = await guarded(url, where, '403')
      t.equal(response.statusCode, 403, `${url} ${where}`)
      t.strictSame(json(response), errorBody(403, 'TABLECRUD_ERR_REFUSED', 'Superusers only'))
      t.strictSame(calls.map((c) => c.name), where === 'every' ? [operation, 'every'] : [operation], 'a refusal stops the list')
      response = await guarded(url, where, 'async')
      t.equal(response.statusCode, 403)
      t.strictSame(json(response), errorBody(403, 'TABLECRUD_ERR_REFUSED', 'Not today'))
      response = await guarded(url, where, '401')
      t.equal(response.statusCode, 401)
      t.strictSame(json(response), { statusCode: 401, code: 'TABLECRUD_ERR_REFUSED', error: 'Unauthorized', message: 'Log in first' })
      for (const how of ['plain', 'string', 'rejected']) {
        response = await guarded(url, where, how)
        t.equal(response.statusCode, 400, `${url} ${where} ${how}`)
        t.strictSame(json(response), errorBody(400, 'TABLECRUD_ERR_VALIDATION', 'Validation error'), 'the error itself is not shown')
      }
    }
  }
})

t.test('validators run after the query is parsed, before the id is looked at', async (t) => {
  let response = await guarded('/guarded/?foo=1', 'getAll', '403')
  t.equal(response.statusCode, 400, 'a malformed query is refused first')
  t.strictSame(calls, [])
  response = await guarded('/guarded/1/?__visible_fields=nope', 'getSingle', '403')
  t.equal(response.statusCode, 400)
  t.strictSame(calls, [])
  response = await guarded('/guarded/ids/?foo=1', 'getIds', '403')
  t.equal(response.statusCode, 400)
  t.strictSame(calls, [])
  for (const url of ['/guarded/abc/', '/guarded/99/']) {
    response = await guarded(url, 'getSingle', '403')
    t.equal(response.statusCode, 403, `${url}: the validators come before the id`)
    t.strictSame(json(response), errorBody(403, 'TABLECRUD_ERR_REFUSED', 'Superusers only'))
  }
  response = await guarded('/guarded/abc/')
  t.equal(response.statusCode, 400)
  t.strictSame(calls.map((c) => c.name), ['getSingle', 'every'])
})

// Options (SPEC §2.1) and registration (SPEC §6.17)

/** A TCP port nothing listens on. */
async function closedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
const unreachable = `postgres://postgres@127.0.0.1:${await closedPort()}/nothing`

/** An app on an unreachable database, with TableCRUD registered but not yet loaded (a Fastify instance is a thenable, hence the wrapper). */
async function unreachableApp (t: Test, options: unknown): Promise<{ app: FastifyInstance }> {
  const app = Fastify()
  t.teardown(async () => await app.close().catch(() => undefined))
  await app.register(fastifyPostgres, { connectionString: unreachable, connectionTimeoutMillis: 2000 })
  app.register(tableCrud, options as TableCrudOptions)
  return { app }
}

t.test('every option is checked at registration, the message naming it, with the options code', async (t) => {
  const fn = (): void => undefined
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['no table', { table: undefined }, 'tableCrud: the option table must be a table made by defineTable'],
    ['a look-alike table', { table: { ...movie } }, 'tableCrud: the option table must be a table made by defineTable'],
    ['readOnly not a boolean', { readOnly: 'yes' }, 'tableCrud: the option readOnly must be a boolean'],
    ['allowBulkDelete not a boolean', { allowBulkDelete: 1 }, 'tableCrud: the option allowBulkDelete must be a boolean'],
    ['excludeSecrets not a boolean', { excludeSecrets: 'false' }, 'tableCrud: the option excludeSecrets must be a boolean'],
    ['requireIfMatch not a boolean', { requireIfMatch: 'true' }, 'tableCrud: the option requireIfMatch must be a boolean'],
    ['pageSize 0', { pageSize: 0 }, 'tableCrud: the option pageSize must be an integer of 1 or more'],
    ['pageSize not an integer', { pageSize: 1.5 }, 'tableCrud: the option pageSize must be an integer of 1 or more'],
    ['pageSize over maxPageSize', { pageSize: 2000 }, 'tableCrud: the option pageSize must not exceed maxPageSize'],
    ['pageSize over a given maxPageSize', { pageSize: 20, maxPageSize: 10 }, 'tableCrud: the option pageSize must not exceed maxPageSize'],
    ['maxPageSize 0', { maxPageSize: 0 }, 'tableCrud: the option maxPageSize must be an integer of 1 or more'],
    ['negative maxJoins', { maxJoins: -1 }, 'tableCrud: the option maxJoins must be an integer of 0 or more'],
    ['maxJoins a string', { maxJoins: '1' }, 'tableCrud: the option maxJoins must be an integer of 0 or more'],
    ['maxEmbedRows 0', { maxEmbedRows: 0 }, 'tableCrud: the option maxEmbedRows must be an integer of 1 or more'],
    ['maxEmbedRows not an integer', { maxEmbedRows: 2.5 }, 'tableCrud: the option maxEmbedRows must be an integer of 1 or more'],
    ['validators not an object', { validators: 'strict' }, 'tableCrud: the option validators must be an object'],
    ['an unknown validator list', { validators: { getEverything: [fn] } }, 'tableCrud: the option validators.getEverything is not a validator list: use every, getSingle, putSingle, patchSingle, deleteSingle, postSingle, getAll, deleteAll, patchAll, getReferences, getIds, getNew, getSchema, getCount, storeFile, getFileUrl, getAggregate'],
    ['a validator that is not a function', { validators: { getAll: [fn, 'admin'] } }, 'tableCrud: the option validators.getAll must be an array of functions'],
    ['a validator list that is not an array', { validators: { every: fn } }, 'tableCrud: the option validators.every must be an array of functions'],
    ['extraContext not an object', { validators: { extraContext: 'x' } }, 'tableCrud: the option validators.extraContext must be an object'],
    ['hooks not an array', { hooks: fn }, 'tableCrud: the option hooks must be an array'],
    ['a bad hook type', { hooks: [{ hookType: 'postSave', callable: fn }] }, 'tableCrud: the option hooks must hold only { hookType: preSave | prePatch | preDelete, callable: function }'],
    ['a hook without a function', { hooks: [{ hookType: 'preSave', callable: 'x' }] }, 'tableCrud: the option hooks must hold only { hookType: preSave | prePatch | preDelete, callable: function }'],
    ['schemaExtra a string', { schemaExtra: 'x' }, 'tableCrud: the option schemaExtra must be an object'],
    ['schemaExtra an array', { schemaExtra: ['x'] }, 'tableCrud: the option schemaExtra must be an object'],
    ['schemaExtra null', { schemaExtra: null }, 'tableCrud: the option schemaExtra must be an object']
  ]
  for (const [name, options, message] of cases) {
    await t.test(name, async (t) => {
      const { app } = await unreachableApp(t, { table: movie, prefix: '/movies', ...options })
      await t.rejects(async () => { await app.ready() }, { message, code: 'TABLECRUD_ERR_OPTIONS' }, name)
    })
  }
})

t.test('@fastify/postgres must be registered first', async (t) => {
  const app = Fastify()
  t.teardown(async () => await app.close().catch(() => undefined))
  app.register(tableCrud, { table: movie, prefix: '/movies' })
  await t.rejects(async () => { await app.ready() }, { message: 'tableCrud: register @fastify/postgres before this plugin (it uses fastify.pg)' })
})

t.test('registration does not query the database; requests then get 503s with Retry-After', async (t) => {
  const { app } = await unreachableApp(t, { table: movie, prefix: '/movies', maxJoins: 1, validators: { getAll: [recorder('getAll')] } })
  await t.resolves(async () => { await app.ready() })
  const unavailable = errorBody(503, 'TABLECRUD_ERR_DB_UNAVAILABLE', 'The database is unavailable; try again shortly.')
  for (const url of ['/movies/', '/movies/?__range_header=1&__readable=1', '/movies/1/', '/movies/count/', '/movies/ids/']) {
    const response = await app.inject({ url })
    t.equal(response.statusCode, 503, url)
    t.equal(response.headers['retry-after'], '5', url)
    t.strictSame(json(response), unavailable, url)
  }
  // What needs no database still answers; a refusing validator answers before any query.
  for (const url of ['/movies/new/', '/movies/schema/', '/movies/references/']) {
    t.equal((await app.inject({ url })).statusCode, 200, url)
  }
  const refused = await app.inject({ url: '/movies/', headers: { 'x-refuse-in': 'getAll', 'x-refuse': '403' } })
  t.equal(refused.statusCode, 403)
  t.strictSame(json(refused), errorBody(403, 'TABLECRUD_ERR_REFUSED', 'Superusers only'))
  // A bad query is still a 400, not a 503.
  const bad = await app.inject({ url: '/movies/?year=abc' })
  t.equal(bad.statusCode, 400)
})
