import t from 'tap'
import Fastify from 'fastify'
import { Ajv } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { Type } from '@sinclair/typebox'
import { byStatus, CountResponse, ErrorResponse, IdsResponse, listResponse, ReferencesResponse } from '../../schemas/responses.js'

const plain = (schema: unknown): any => JSON.parse(JSON.stringify(schema))
const STRING = { type: 'string' }

/** SPEC §7.1: optional, so a page without `__cursor` is as before. */
const NEXT_CURSOR = { description: 'With `__cursor` only: the `__cursor` of the next page, null on the last (SPEC §7.1).', anyOf: [{ type: 'string' }, { type: 'null' }] }

t.test('the response schemas, exactly', async (t) => {
  t.strictSame(plain(ErrorResponse), {
    title: 'ErrorResponse',
    additionalProperties: true,
    type: 'object',
    required: ['statusCode', 'code', 'error', 'message'],
    properties: {
      statusCode: { type: 'integer' },
      code: STRING,
      error: STRING,
      message: STRING,
      validFields: { type: 'array', items: STRING },
      details: { additionalProperties: true, type: 'object', properties: {} },
      errors: {
        type: 'array',
        // SPEC §7.4: an array body's failures say which element.
        items: {
          type: 'object',
          required: ['field', 'message'],
          properties: { field: STRING, message: STRING, index: { type: 'integer', description: 'In an array body, the failing element (from 0).' } }
        }
      }
    }
  })
  t.strictSame(plain(CountResponse), {
    title: 'CountResponse',
    type: 'object',
    required: ['count', 'page_size'],
    properties: {
      count: { type: 'integer' },
      page_size: { type: 'integer' },
      // SPEC §7.2, optional: exact-mode bodies are unchanged.
      estimated: { type: 'boolean', description: "With countMode 'estimated' only: whether count is the planner's estimate (SPEC §7.2)." }
    }
  })
  t.strictSame(plain(IdsResponse), { title: 'IdsResponse', additionalProperties: STRING, type: 'object', properties: {} })
  t.strictSame(plain(ReferencesResponse), {
    title: 'ReferencesResponse',
    type: 'object',
    required: ['references'],
    properties: {
      references: {
        type: 'array',
        items: { type: 'object', required: ['tableName', 'columnName'], properties: { tableName: STRING, columnName: STRING } }
      }
    }
  })
  const row = Type.Object({ id: Type.Integer() }, { title: 'MovieRow' })
  t.strictSame(plain(listResponse(row)), {
    title: 'MovieList',
    type: 'object',
    required: ['rows'],
    properties: { rows: { type: 'array', items: { title: 'MovieRow', type: 'object', required: ['id'], properties: { id: { type: 'integer' } } } }, next_cursor: NEXT_CURSOR }
  })
  t.strictSame(plain(listResponse(Type.Object({}))), {
    type: 'object', required: ['rows'], properties: { rows: { type: 'array', items: { type: 'object', properties: {} } }, next_cursor: NEXT_CURSOR }
  }, 'no title without a row title')
})

t.test('the response schemas accept the bodies of SPEC §1 and §2.8', async (t) => {
  const strict = new Ajv2020({ strict: true })
  for (const schema of [ErrorResponse, CountResponse, IdsResponse, ReferencesResponse, listResponse(Type.Object({}))]) {
    t.equal(typeof strict.compile(schema), 'function', `${String(schema.title)} is valid JSON Schema 2020-12`)
  }
  const ajv = new Ajv({ strict: false })
  const error = ajv.compile(ErrorResponse)
  t.ok(error({
    statusCode: 400,
    code: 'TABLECRUD_ERR_QS_UNKNOWN_FIELD',
    error: 'Bad Request',
    message: "foo isn't a valid field name.",
    validFields: ['id', 'name']
  }))
  t.ok(error({
    statusCode: 422,
    code: 'TABLECRUD_ERR_DB_UNIQUE',
    error: 'Unprocessable Entity',
    message: 'duplicate key',
    details: { constraint: 'movie_name_key', columns: ['name'] },
    errors: [{ field: 'name', message: 'is required' }],
    anything: 'else'
  }))
  t.notOk(error({ statusCode: 400, error: 'Bad Request', message: 'x' }), 'code is required')
  t.ok(ajv.compile(IdsResponse)({ 1: 'Star Wars', 2: '' }))
  t.notOk(ajv.compile(IdsResponse)({ 1: 2 }))
  t.ok(ajv.compile(ReferencesResponse)({ references: [{ tableName: 'movie', columnName: 'director' }] }))
  t.ok(ajv.compile(CountResponse)({ count: 3, page_size: 15 }))
})

t.test('the error schema serialises the extra members of an error', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const body = {
    statusCode: 422,
    code: 'TABLECRUD_ERR_DB_UNIQUE',
    error: 'Unprocessable Entity',
    message: 'duplicate key',
    details: { constraint: 'movie_name_key', columns: ['name'] },
    Retry: 'kept'
  }
  app.get('/', { schema: { response: { 422: ErrorResponse } } }, async (request, reply) => reply.code(422).send(body))
  const response = await app.inject('/')
  t.equal(response.statusCode, 422)
  t.strictSame(response.json(), body)
})

t.test('byStatus: the responses as an ordinary object, kept in a dictionary only by V8', async (t) => {
  const responses = { 200: { type: 'object' }, 404: ErrorResponse, 503: ErrorResponse }
  const byCode = byStatus(responses)
  t.strictSame(byCode, responses)
  t.same(Object.keys(byCode), ['200', '404', '503'])
  t.equal(Object.getPrototypeOf(byCode), Object.prototype)
  // Plain data properties, as an integrator's onRoute hook may change them; the seed key is gone.
  t.strictSame(Object.getOwnPropertyDescriptor(byCode, 404), { value: ErrorResponse, writable: true, enumerable: true, configurable: true })
  t.notOk(Object.hasOwn(byCode, 0))
  byCode[201] = STRING
  t.same(Object.keys(byCode), ['200', '201', '404', '503'])
})
