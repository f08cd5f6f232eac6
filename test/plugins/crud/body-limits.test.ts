import t from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { buildApp } from '../../helpers/app.js'
import { testDatabase } from '../../helpers/db.js'
import { countOf, create, errorOf, freshApp, json, movie, moviesApp, person, rowsOf, studio } from './write-fixtures.js'

/**
 * Issue 18, point 4: values the body's JSON Schema lets through but PostgreSQL refuses (a NUL
 * character in text, a real out of range, a ragged nested array) are caught by body
 * validation: a 400 naming the field, with none of the database's text, and nothing written.
 */

const db = await testDatabase(t)

const invalid = (errors: Array<[string, string]>): Record<string, unknown> => errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request',
  `The body is invalid: ${errors.map(([field, message]) => `${field} ${message}`).join('; ')}`,
  { errors: errors.map(([field, message]) => ({ field, message })) })

const NUL = 'must be a string without NUL characters'
const REAL = 'must be a number a real can hold: at most 3.4028235e38 in magnitude and, unless 0, at least 1.4e-45'
const UNICODE = 'must be well-formed Unicode: no lone surrogate such as \\ud800'
const RAGGED = 'must be a rectangular array: the inner arrays at each depth all of one length, none empty or null'

const CASES: Array<[string, Record<string, unknown>, Array<[string, string]>]> = [
  ['a NUL in a varchar', { name: 'Star\u0000Wars' }, [['name', NUL]]],
  ['a NUL in a text', { synopsis: 'a\u0000b' }, [['synopsis', NUL]]],
  ['a NUL in an array element', { tags: ['ok', 'b\u0000'] }, [['tags', NUL]]],
  ['a lone surrogate in a varchar', { name: 'Star\ud800Wars' }, [['name', UNICODE]]],
  ['a lone surrogate in a text', { synopsis: '\udfff' }, [['synopsis', UNICODE]]],
  ['a lone surrogate in an array element', { tags: ['ok', 'b\ud83d'] }, [['tags', UNICODE]]],
  ['a real over the top', { rating: 1e39 }, [['rating', REAL]]],
  ['a real under the bottom', { rating: -3.5e38 }, [['rating', REAL]]],
  ['a real too close to zero', { rating: 1e-50 }, [['rating', REAL]]],
  ['a ragged nested array', { grid: [[1, 2], [3]] }, [['grid', RAGGED]]],
  ['an empty inner array', { grid: [[], []] }, [['grid', RAGGED]]],
  ['three at once', { name: 'x\u0000', rating: 1e39, grid: [[1], [2, 3]] }, [['name', NUL], ['rating', REAL], ['grid', RAGGED]]]
]

t.test('POST, PUT and PATCH: a 400 naming each field, no database text, nothing written', async (t) => {
  const app = await moviesApp(t, db)
  const seeded = await create(app, '/movies', { name: 'Alien', rating: 8.5, grid: [[1, 2], [3, 4]] })
  for (const [what, values, errors] of CASES) {
    const expected = invalid(errors)
    const post = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'New', ...values } })
    t.equal(post.statusCode, 400, `POST ${what}`)
    t.strictSame(json(post), expected, `POST ${what}`)
    t.notMatch(post.body, /out of range|malformed|byte sequence|UTF8|0x00/, `POST ${what}: none of the database's words`)
    const put = await app.inject({ method: 'PUT', url: `/movies/${seeded.id}/`, payload: { name: 'Alien', ...values } })
    t.strictSame([put.statusCode, json(put)], [400, expected], `PUT ${what}`)
    const patch = await app.inject({ method: 'PATCH', url: `/movies/${seeded.id}/`, payload: values })
    t.strictSame([patch.statusCode, json(patch)], [400, expected], `PATCH ${what}`)
  }
  t.equal(await countOf(app, movie), 1, 'nothing created')
  t.match((await rowsOf(app, movie))[0], { name: 'Alien', rating: 8.5, grid: [[1, 2], [3, 4]] }, 'nothing changed')
})

t.test('the values at the edges PostgreSQL takes are taken', async (t) => {
  const app = await moviesApp(t, db)
  const row = await create(app, '/movies', { name: 'Edges', rating: 3.4028234663852886e38, grid: [[1, 2], [3, 4]], tags: ['\u0001', 'ü'] })
  // PostgreSQL answers a real in its shortest decimal form.
  t.match(row, { rating: 3.4028235e38, grid: [[1, 2], [3, 4]], tags: ['\u0001', 'ü'] })
  const tiny = await app.inject({ method: 'PATCH', url: `/movies/${row.id}/`, payload: { rating: 1.4e-45, grid: [] } })
  t.equal(tiny.statusCode, 200)
  t.match(json(tiny), { rating: 1e-45, grid: [] })
})

t.test('what a hook hands back is checked the same way', async (t) => {
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: person, prefix: '/persons', readOnly: false })
    await app.register(tableCrud, { table: studio, prefix: '/studios', readOnly: false })
    await app.register(tableCrud, {
      table: movie,
      prefix: '/movies',
      readOnly: false,
      hooks: [
        { hookType: 'preSave', callable: (row) => ({ ...row, tags: ['a', 'b\u0000'] }) },
        { hookType: 'prePatch', callable: (_id, values) => ({ ...values, rating: 1e39 }) }
      ]
    })
  })
  const post = await app.inject({ method: 'POST', url: '/movies/', payload: { name: 'Hooked' } })
  t.strictSame([post.statusCode, json(post)], [400, invalid([['tags', NUL]])])
  await app.pg.query("INSERT INTO movie (name) VALUES ('Direct')")
  const patch = await app.inject({ method: 'PATCH', url: '/movies/1/', payload: { rating: 1 } })
  t.strictSame([patch.statusCode, json(patch)], [400, invalid([['rating', REAL]])])
  t.equal(await countOf(app, movie), 1)
})

t.test('a real out of range in a filter is the usual 400 naming the field, not the database\'s message', async (t) => {
  const app = await moviesApp(t, db)
  for (const value of ['1e39', '-1e39', '1e-50']) {
    const res = await app.inject(`/movies/?rating=${value}`)
    t.equal(res.statusCode, 400, value)
    t.strictSame(json(res), errorOf(400, 'TABLECRUD_ERR_QS_INVALID_VALUE', 'Bad Request', `The value "${value}" of rating is not a valid number.`), value)
  }
  t.equal((await app.inject('/movies/?rating=3.4e38')).statusCode, 200, 'the largest reals are fine')
})

t.test('jsonb: arrays and objects nested over 128 deep are a 400 naming the field (some 4,000 deep, a 500 with the row written; 1,000 broke the embedded server)', async (t) => {
  const doc = defineTable('limits_deep', { body: column.jsonb({ null: true }) })
  const app = await buildApp(t, db, [doc], async (app) => {
    await app.register(tableCrud, { table: doc, prefix: '/docs', readOnly: false })
  })
  const nested = (depth: number, open: string, close: string): string => `{"body": ${open.repeat(depth)}1${close.repeat(depth)}}`
  for (const depth of [129, 1000, 4120, 100_000]) {
    for (const [open, close] of [['[', ']'], ['{"a":', '}']] as const) {
      const res = await app.inject({ method: 'POST', url: '/docs/', headers: { 'content-type': 'application/json' }, payload: nested(depth, open, close) })
      t.strictSame([res.statusCode, json(res)], [400, invalid([['body', 'must nest its arrays and objects at most 128 deep']])], `${depth} ${open}`)
    }
  }
  t.equal(await countOf(app, doc), 0, 'nothing written')
  const deepest = await app.inject({ method: 'POST', url: '/docs/', headers: { 'content-type': 'application/json' }, payload: nested(128, '[', ']') })
  t.equal(deepest.statusCode, 201, '128 deep is taken')
  t.equal((await app.inject({ method: 'GET', url: '/docs/1/' })).body, deepest.body, 'and served as written')
})

t.test('double precision: 1e309 (Infinity to JSON.parse) is a 400 naming the field, not Infinity stored and null answered', async (t) => {
  const score = defineTable('limits_double', { value: column.doublePrecision({ null: true }), values: column.array(column.doublePrecision()) })
  const app = await buildApp(t, db, [score], async (app) => {
    await app.register(tableCrud, { table: score, prefix: '/scores', readOnly: false })
  })
  const DOUBLE = 'must be a number a double can hold: 1e309 is beyond its range'
  for (const [text, field] of [['{"value": 1e309}', 'value'], ['{"value": -1e309}', 'value'], ['{"values": [1, 1e309]}', 'values']] as const) {
    const res = await app.inject({ method: 'POST', url: '/scores/', headers: { 'content-type': 'application/json' }, payload: text })
    t.strictSame([res.statusCode, json(res)], [400, invalid([[field, DOUBLE]])], text)
  }
  t.equal(await countOf(app, score), 0, 'nothing written')
  const edge = await app.inject({ method: 'POST', url: '/scores/', payload: { value: -1.7976931348623157e308, values: [5e-324] } })
  t.strictSame([edge.statusCode, json(edge)], [201, { id: 1, value: -1.7976931348623157e308, values: [5e-324] }], 'the largest and smallest doubles are taken')
})

t.test('jsonb: a NUL in any string or key of the value is a 400 naming the field', async (t) => {
  const doc = defineTable('limits_doc', { body: column.jsonb({ null: true }), weights: column.array(column.real()) })
  const app = await buildApp(t, db, [doc], async (app) => {
    await app.register(tableCrud, { table: doc, prefix: '/docs', readOnly: false })
  })
  const JSONB = 'must not hold NUL characters in its strings or keys'
  for (const body of [{ a: 'x\u0000' }, ['ok', ['\u0000']], { 'k\u0000': 1 }, 'a\u0000b']) {
    const res = await app.inject({ method: 'POST', url: '/docs/', payload: { body } })
    t.strictSame([res.statusCode, json(res)], [400, invalid([['body', JSONB]])], JSON.stringify(body))
  }
  const UNICODE_JSON = 'must be well-formed Unicode in its strings and keys: no lone surrogate such as \\ud800'
  for (const body of [{ a: 'x\ud800' }, ['ok', ['\udc00']], { 'k\ud800': 1 }]) {
    const res = await app.inject({ method: 'POST', url: '/docs/', payload: { body } })
    t.strictSame([res.statusCode, json(res)], [400, invalid([['body', UNICODE_JSON]])], JSON.stringify(body))
  }
  // JSON.parse reads 1e400 as Infinity, which JSON.stringify would have stored as null.
  for (const text of ['{"a": 1e400}', '[1, -1e400]', '{"a": {"b": [2e308]}}']) {
    const res = await app.inject({ method: 'POST', url: '/docs/', headers: { 'content-type': 'application/json' }, payload: `{"body": ${text}}` })
    t.strictSame([res.statusCode, json(res)], [400, invalid([['body', 'must hold only numbers a double can: 1e400 is beyond its range']])], text)
  }
  const real = await app.inject({ method: 'POST', url: '/docs/', payload: { weights: [1, 1e39] } })
  t.strictSame([real.statusCode, json(real)], [400, invalid([['weights', REAL]])], 'an array of reals names the element')
  const ok = await app.inject({ method: 'POST', url: '/docs/', payload: { body: { a: ['\u0001', 1] }, weights: [1.5] } })
  t.equal(ok.statusCode, 201)
  t.strictSame(json(ok).body, { a: ['\u0001', 1] })
  t.equal(await countOf(app, doc), 1, 'only the valid row was written')
  const filter = await app.inject('/docs/?weights=1e39')
  t.equal(filter.statusCode, 400, 'an array of reals filtered by an out-of-range element')
  t.equal(json(filter).code, 'TABLECRUD_ERR_QS_INVALID_VALUE')
})
