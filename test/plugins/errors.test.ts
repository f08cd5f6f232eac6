import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { column, defineTable } from '../../lib/table/index.js'
import { createTables } from '../../lib/db/index.js'
import { HttpError, TABLECRUD_ERR_DB_UNAVAILABLE, TABLECRUD_ERR_ID_INVALID } from '../../lib/errors.js'
import { errorBody, errorHandler, sendError, toClientError } from '../../plugins/errors.js'
import { testDatabase } from '../helpers/db.js'

const db = await testDatabase(t)

const director = defineTable('err_director', {
  name: column.varchar({ length: 10, unique: true })
})
const film = defineTable('err_film', {
  name: column.varchar({ length: 5 }),
  director: column.foreignKey(director, { null: false, onDelete: 'restrict' }),
  rating: column.integer({ null: true })
})
await createTables(db.pool, [director, film])
await db.pool.query('ALTER TABLE err_film ADD CONSTRAINT err_film_rating_check CHECK (rating BETWEEN 0 AND 10)')
await db.pool.query("INSERT INTO err_director (name) VALUES ('Scott')")
await db.pool.query("INSERT INTO err_film (name, director) VALUES ('Alien', 1)")

/** Statements that fail in the database, each in its own way. */
const FAILING = new Map<string, string>([
  ['unique', "INSERT INTO err_director (name) VALUES ('Scott')"],
  ['foreign-key', "INSERT INTO err_film (name, director) VALUES ('Heat', 99)"],
  ['restrict', 'DELETE FROM err_director WHERE id = 1'],
  ['not-null', "INSERT INTO err_film (name) VALUES ('Heat')"],
  ['check', "INSERT INTO err_film (name, director, rating) VALUES ('Heat', 1, 11)"],
  ['syntax', "SELECT 'x'::integer"],
  ['range', 'SELECT 2147483648::integer'],
  ['too-long', "INSERT INTO err_film (name, director) VALUES ('Too long', 1)"],
  ['no-table', 'SELECT * FROM err_no_such_table']
])

const BODY_SCHEMA = {
  type: 'object',
  required: ['name', 'director'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', maxLength: 5 },
    director: { type: 'integer' },
    rating: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    tags: { type: 'array', items: { type: 'string' } }
  }
}

/** A fresh app per test, its log kept in `logs`, closed at the end of the test. */
async function build (t: Test, level = 'error'): Promise<{ app: FastifyInstance, logs: Array<Record<string, any>> }> {
  const logs: Array<Record<string, any>> = []
  const app = Fastify({
    logger: { level, stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } },
    // As the plugins configure bodies: every error reported, nothing coerced or removed.
    ajv: { customOptions: { allErrors: true, coerceTypes: false, removeAdditional: false, useDefaults: false } }
  })
  app.setErrorHandler(errorHandler)
  app.post('/films', { schema: { body: BODY_SCHEMA } }, async (request, reply) => reply.code(201).send(request.body))
  app.post('/small', { bodyLimit: 10 }, async () => ({ ok: true }))
  app.get('/sql/:case', async (request) => {
    await db.pool.query(FAILING.get((request.params as { case: string }).case)!)
    return { ok: true }
  })
  app.get('/down', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 2000 })
    try {
      return await pool.query('SELECT 1')
    } finally {
      await pool.end()
    }
  })
  app.get('/boom', async () => { throw new Error('SELECT password FROM auth_user failed at /srv/app/db.ts:12') })
  app.get('/refused', async () => { throw new HttpError(403, 'Superusers only') })
  app.get('/conflict', async () => { throw Object.assign(new Error('Not today'), { statusCode: 409 }) })
  app.get('/bad-gateway', async () => { throw Object.assign(new Error('upstream said no'), { statusCode: 502 }) })
  app.get('/unavailable', async () => { throw new TABLECRUD_ERR_DB_UNAVAILABLE() })
  app.get('/early', { onRequest: async (request, reply) => sendError(reply, new TABLECRUD_ERR_ID_INVALID()) }, async () => ({ ok: true }))
  t.teardown(() => app.close())
  await app.ready()
  return { app, logs }
}

const post = (app: FastifyInstance, url: string, payload: string, contentType?: string) =>
  app.inject({ method: 'POST', url, payload, headers: contentType === undefined ? {} : { 'content-type': contentType } })

t.test('an Ajv validation error names each failing field', async (t) => {
  const { app } = await build(t)
  const res = await post(app, '/films', JSON.stringify({ name: 'Too long', rating: '5', tags: ['a', 2], extra: 1 }), 'application/json')
  t.equal(res.statusCode, 400)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  const errors = [
    { field: 'director', message: 'is required' },
    { field: 'extra', message: 'is not a writable column' },
    { field: 'name', message: 'must NOT have more than 5 characters' },
    { field: 'rating', message: 'must be integer or null' },
    { field: 'tags.1', message: 'must be string' }
  ]
  t.strictSame(res.json(), {
    statusCode: 400,
    code: 'TABLECRUD_ERR_BODY_INVALID',
    error: 'Bad Request',
    message: `The body is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
    errors
  })
  const notObject = await post(app, '/films', '[1]', 'application/json')
  t.strictSame(notObject.json().errors, [{ field: '(body)', message: 'must be object' }])
  const ok = await post(app, '/films', JSON.stringify({ name: 'Alien', director: 1, rating: null }), 'application/json')
  t.equal(ok.statusCode, 201)
})

t.test('a body that is not JSON is a 400', async (t) => {
  const { app } = await build(t)
  const expected = { statusCode: 400, code: 'TABLECRUD_ERR_BODY_NOT_JSON', error: 'Bad Request', message: 'The body is not valid JSON.' }
  for (const payload of ['{"name": ', '', 'nul', '{"__proto__": {"x": 1}}']) {
    const res = await post(app, '/films', payload, 'application/json')
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.strictSame(res.json(), expected, JSON.stringify(payload))
  }
})

t.test('a body of another media type is a 415 naming it', async (t) => {
  const { app } = await build(t)
  const xml = await post(app, '/films', '<film/>', 'application/xml')
  t.equal(xml.statusCode, 415)
  t.strictSame(xml.json(), {
    statusCode: 415,
    code: 'TABLECRUD_ERR_BODY_MEDIA_TYPE',
    error: 'Unsupported Media Type',
    message: 'The body must be application/json, not "application/xml".'
  })
  const none = await post(app, '/films', '{}')
  t.equal(none.statusCode, 415)
  t.equal(none.json().message, 'The body must be application/json, not none.')
  const invalid = await post(app, '/films', '{}', 'nonsense')
  t.equal(invalid.statusCode, 415)
  t.equal(invalid.json().message, 'The body must be application/json, not "nonsense".')
})

t.test('a body over the limit is a 413', async (t) => {
  const { app } = await build(t)
  const res = await post(app, '/small', JSON.stringify({ name: 'far too long for ten bytes' }), 'application/json')
  t.equal(res.statusCode, 413)
  t.strictSame(res.json(), { statusCode: 413, code: 'TABLECRUD_ERR_BODY_TOO_LARGE', error: 'Payload Too Large', message: 'The body is too large.' })
})

t.test('constraint violations from the database are 422s with details', async (t) => {
  const { app } = await build(t)
  const unique = await app.inject('/sql/unique')
  t.equal(unique.statusCode, 422)
  t.strictSame(unique.json(), {
    statusCode: 422,
    code: 'TABLECRUD_ERR_DB_UNIQUE',
    error: 'Unprocessable Entity',
    message: 'duplicate key value violates unique constraint "err_director_name_key"',
    details: { constraint: 'err_director_name_key', columns: ['name'], detail: 'Key (name)=(Scott) already exists.' }
  })
  const fk = await app.inject('/sql/foreign-key')
  t.equal(fk.statusCode, 422)
  t.strictSame(fk.json(), {
    statusCode: 422,
    code: 'TABLECRUD_ERR_DB_FOREIGN_KEY',
    error: 'Unprocessable Entity',
    message: 'insert or update on table "err_film" violates foreign key constraint "err_film_director_fkey"',
    details: { constraint: 'err_film_director_fkey', columns: ['director'], detail: 'Key (director)=(99) is not present in table "err_director".' }
  })
  const restrict = await app.inject('/sql/restrict')
  t.equal(restrict.statusCode, 422)
  t.match(restrict.json(), {
    code: 'TABLECRUD_ERR_DB_FOREIGN_KEY',
    details: { constraint: 'err_film_director_fkey', columns: ['id'], detail: 'Key (id)=(1) is still referenced from table "err_film".' }
  })
  const notNull = await app.inject('/sql/not-null')
  t.equal(notNull.statusCode, 422)
  t.strictSame(notNull.json(), {
    statusCode: 422,
    code: 'TABLECRUD_ERR_DB_NOT_NULL',
    error: 'Unprocessable Entity',
    message: 'null value in column "director" of relation "err_film" violates not-null constraint',
    details: { constraint: null, columns: ['director'], detail: null }
  })
  const check = await app.inject('/sql/check')
  t.equal(check.statusCode, 422)
  t.strictSame(check.json(), {
    statusCode: 422,
    code: 'TABLECRUD_ERR_DB_CHECK',
    error: 'Unprocessable Entity',
    message: 'new row for relation "err_film" violates check constraint "err_film_rating_check"',
    details: { constraint: 'err_film_rating_check', columns: [], detail: null }
  })
})

t.test('values the database refuses are 400s', async (t) => {
  const { app } = await build(t)
  const cases: Array<[string, string]> = [
    ['syntax', 'invalid input syntax for type integer: "x"'],
    ['range', 'integer out of range'],
    ['too-long', 'value too long for type character varying(5)']
  ]
  for (const [name, message] of cases) {
    const res = await app.inject(`/sql/${name}`)
    t.equal(res.statusCode, 400, name)
    t.strictSame(res.json(), { statusCode: 400, code: 'TABLECRUD_ERR_DB_DATA', error: 'Bad Request', message }, name)
  }
})

t.test('an unreachable database is a 503 with Retry-After', async (t) => {
  const { app, logs } = await build(t, 'warn')
  for (const url of ['/down', '/unavailable']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 503, url)
    t.equal(res.headers['retry-after'], '5', url)
    t.strictSame(res.json(), {
      statusCode: 503, code: 'TABLECRUD_ERR_DB_UNAVAILABLE', error: 'Service Unavailable', message: 'The database is unavailable; try again shortly.'
    }, url)
  }
  // Issue 18: an expected 503 is no error with a stack; the outage's first one is a warning with its cause, the rest are counted.
  t.equal(logs.length, 1, 'the first 503 is logged, the second counted')
  t.equal(logs[0]!.level, 40, 'at warn')
  t.equal(logs[0]!.cause.code, 'ECONNREFUSED', 'with the cause')
  t.equal(logs[0]!.err, undefined, 'no stack trace')
})

t.test('a bug is a 500 without internals; the log has them', async (t) => {
  const { app, logs } = await build(t)
  const generic = { statusCode: 500, code: 'TABLECRUD_ERR_INTERNAL', error: 'Internal Server Error', message: 'Internal Server Error' }
  for (const url of ['/boom', '/sql/no-table', '/bad-gateway']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 500, url)
    t.strictSame(res.json(), generic, url)
    t.notMatch(res.body, /password|err_no_such_table|upstream/, url)
  }
  t.strictSame(logs.map((l) => [l.msg, l.err.message]), [
    ['request failed', 'SELECT password FROM auth_user failed at /srv/app/db.ts:12'],
    // A table missing in the database is named, with the command that lists the differences (issue 10).
    ['The table err_no_such_table is missing in the database (relation "err_no_such_table" does not exist): the table definitions and the database differ; run `npx fastify-tablecrud check <module>` to list the differences.', 'relation "err_no_such_table" does not exist'],
    ['request failed', 'upstream said no']
  ])
})

t.test('errors with a 4xx status pass with their message', async (t) => {
  const { app, logs } = await build(t)
  const refused = await app.inject('/refused')
  t.equal(refused.statusCode, 403)
  t.strictSame(refused.json(), { statusCode: 403, code: 'TABLECRUD_ERR_REFUSED', error: 'Forbidden', message: 'Superusers only' })
  const conflict = await app.inject('/conflict')
  t.equal(conflict.statusCode, 409)
  t.strictSame(conflict.json(), { statusCode: 409, code: 'TABLECRUD_ERR_HTTP_409', error: 'Conflict', message: 'Not today' })
  const early = await app.inject('/early')
  t.equal(early.statusCode, 400)
  t.strictSame(early.json(), { statusCode: 400, code: 'TABLECRUD_ERR_ID_INVALID', error: 'Bad Request', message: 'The ID is invalid' })
  t.equal(logs.length, 0, 'client errors are not logged as errors')
})

t.test('toClientError and errorBody without a server', async (t) => {
  const refused = toClientError(new HttpError(451, 'Not here'))
  t.strictSame(errorBody(refused), { statusCode: 451, code: 'TABLECRUD_ERR_REFUSED', error: 'Unavailable For Legal Reasons', message: 'Not here' })
  const odd = toClientError(Object.assign(new Error('Odd'), { statusCode: 499, code: 'APP_ODD' }))
  t.strictSame(errorBody(odd), { statusCode: 499, code: 'APP_ODD', error: 'Error', message: 'Odd' }, 'a status without a name')
  t.equal(toClientError('a string').code, 'TABLECRUD_ERR_INTERNAL')
  t.equal(toClientError(null).code, 'TABLECRUD_ERR_INTERNAL')
  t.equal(toClientError(Object.assign(new Error('x'), { statusCode: 503, code: 'OTHER' })).code, 'TABLECRUD_ERR_INTERNAL',
    'only our own 503 passes')
})
