import t, { type Test } from 'tap'
import SwaggerParser from '@apidevtools/swagger-parser'
import type { FastifyInstance } from 'fastify'
import { column, defineTable } from '../../../lib/table/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { openApi } from '../../../plugins/openapi.js'
import { testDatabase } from '../../helpers/db.js'
import { errorOf, freshApp, json } from './write-fixtures.js'

/*
 * The column types of SPEC §2.2's second table through TableCRUD, on the database under test
 * (the real PostgreSQL, or the embedded one with DATABASE_URL unset): POST/GET/PATCH round
 * trips, UUID and BigInt keys, filters and their operators, /schema/, /new/, OpenAPI, bad values.
 */

const db = await testDatabase(t)

const owner = defineTable('ct_owner', {
  id: column.uuid({ primaryKey: true }),
  name: column.varchar({ length: 50 })
}, { readable: 'name' })

const ledger = defineTable('ct_ledger', {
  id: column.bigInt({ primaryKey: true }),
  label: column.text()
})

const thing = defineTable('ct_thing', {
  small: column.smallInt(),
  big: column.bigInt(),
  ratio: column.doublePrecision(),
  token: column.uuid({ null: true }),
  day: column.date(),
  at: column.time(),
  stamp: column.timestamptz(),
  span: column.interval(),
  data: column.jsonb({ null: true }),
  owner: column.foreignKey<string>(owner, { null: true }),
  ledger: column.foreignKey<string>(ledger, { null: true }),
  days: column.array(column.date()),
  bigs: column.array(column.bigInt()),
  stamps: column.array(column.timestamptz()),
  spans: column.array(column.interval()),
  times: column.array(column.time()),
  uuids: column.array(column.uuid())
})

const U1 = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
const O1 = '11111111-2222-4333-8444-555555555555'
const MAX = '9223372036854775807'
const MIN = '-9223372036854775808'

async function app (t: Test): Promise<FastifyInstance> {
  return await freshApp(t, db, async (app) => {
    await app.register(openApi, {})
    await app.register(tableCrud, { table: owner, prefix: '/owners', readOnly: false })
    await app.register(tableCrud, { table: ledger, prefix: '/ledgers', readOnly: false })
    await app.register(tableCrud, { table: thing, prefix: '/things', readOnly: false, maxJoins: 1 })
  }, [owner, ledger, thing])
}

/** Two rows: the first full, in unusual but valid input forms; the second at the edges, its nullable columns null. */
async function seeded (t: Test): Promise<FastifyInstance> {
  const a = await app(t)
  t.equal((await a.inject({ method: 'POST', url: '/owners/', payload: { id: O1.toUpperCase(), name: 'Ann' } })).statusCode, 201)
  t.equal((await a.inject({ method: 'POST', url: '/ledgers/', payload: { id: MAX, label: 'max' } })).statusCode, 201)
  const first = await a.inject({ method: 'POST', url: '/things/', payload: FIRST_IN })
  t.equal(first.statusCode, 201, first.body)
  const second = await a.inject({ method: 'POST', url: '/things/', payload: SECOND_IN })
  t.equal(second.statusCode, 201, second.body)
  return a
}

const FIRST_IN = {
  small: 1,
  big: '9007199254740993',
  ratio: 0.5,
  token: U1.toUpperCase(),
  day: '2024-01-01',
  at: '08:00:00.5',
  stamp: '2024-01-01T05:30:00.000001+05:30',
  span: 'PT1H',
  data: { k: [1, 'two', null], nested: { ok: true } },
  owner: O1,
  ledger: MAX,
  days: ['2024-01-01'],
  bigs: [MAX, 7],
  stamps: ['2024-01-01T01:00:00+01:00'],
  spans: ['PT1H', 'P1W'],
  times: ['08:00:00'],
  uuids: [U1.toUpperCase()]
}

const FIRST_OUT = {
  id: 1,
  small: 1,
  big: '9007199254740993',
  ratio: 0.5,
  token: U1,
  day: '2024-01-01',
  at: '08:00:00.500000',
  stamp: '2024-01-01T00:00:00.000001Z',
  span: 'PT1H',
  data: { k: [1, 'two', null], nested: { ok: true } },
  owner: O1,
  ledger: MAX,
  days: ['2024-01-01'],
  bigs: [MAX, '7'],
  stamps: ['2024-01-01T00:00:00Z'],
  spans: ['PT1H', 'P7D'],
  times: ['08:00:00'],
  uuids: [U1]
}

const SECOND_IN = {
  small: -32768,
  big: MIN,
  ratio: 2.5,
  token: null,
  day: '2024-06-30',
  at: '23:59:59.999999',
  stamp: '2024-06-30T23:59:59.999999+02:00',
  span: 'P1DT2H',
  data: null,
  owner: null,
  ledger: null,
  days: [],
  bigs: [],
  stamps: [],
  spans: [],
  times: [],
  uuids: []
}

const SECOND_OUT = { ...SECOND_IN, id: 2, stamp: '2024-06-30T21:59:59.999999Z' }

t.test('POST of an array (SPEC §7.4): every type through the one-statement insert, as POST of one row gives it', async (t) => {
  const a = await app(t)
  t.equal((await a.inject({ method: 'POST', url: '/owners/', payload: { id: O1, name: 'Ann' } })).statusCode, 201)
  t.equal((await a.inject({ method: 'POST', url: '/ledgers/', payload: { id: MAX, label: 'max' } })).statusCode, 201)
  const res = await a.inject({ method: 'POST', url: '/things/', payload: [FIRST_IN, SECOND_IN] })
  t.equal(res.statusCode, 201, res.body)
  t.strictSame(json(res), { rows: [FIRST_OUT, SECOND_OUT] })
  const data = await a.inject({ method: 'POST', url: '/things/', payload: [{ ...SECOND_IN, data: 'text' }, { ...SECOND_IN, data: [1, { a: null }] }, { ...SECOND_IN, data: 0 }] })
  t.strictSame(json(data).rows.map((r: Record<string, unknown>) => r.data), ['text', [1, { a: null }], 0], 'JSONB strings, arrays and numbers as themselves')

  // A UUID key given for some rows only: their columns differ, so they go one by one.
  const owners = await a.inject({ method: 'POST', url: '/owners/', payload: [{ name: 'Bo' }, { id: U1.toUpperCase(), name: 'Cy' }] })
  t.equal(owners.statusCode, 201, owners.body)
  const [bo, cy] = json(owners).rows
  t.match(bo, { id: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, name: 'Bo' })
  t.strictSame(cy, { id: U1, name: 'Cy' })
  const keys = await a.inject({ method: 'POST', url: '/ledgers/', payload: [{ id: '1', label: 'a' }, { id: 2, label: 'b' }] })
  t.strictSame(json(keys), { rows: [{ id: '1', label: 'a' }, { id: '2', label: 'b' }] }, 'BigInt keys from digits and from numbers')
})

t.test('POST, GET and PATCH: every value in its wire form, exact past what JS numbers and Dates hold', async (t) => {
  const a = await app(t)
  t.equal((await a.inject({ method: 'POST', url: '/owners/', payload: { id: O1, name: 'Ann' } })).statusCode, 201)
  t.equal((await a.inject({ method: 'POST', url: '/ledgers/', payload: { id: MAX, label: 'max' } })).statusCode, 201)
  const created = await a.inject({ method: 'POST', url: '/things/', payload: FIRST_IN })
  t.equal(created.statusCode, 201)
  t.equal(created.headers.location, '/things/1/')
  t.strictSame(json(created), FIRST_OUT)
  const got = await a.inject({ method: 'GET', url: '/things/1/' })
  t.strictSame(json(got), FIRST_OUT, 'GET returns what POST answered')

  const patch = {
    small: 32767,
    big: 12,
    ratio: -1e-300,
    token: null,
    day: '2000-02-29',
    at: '00:00:00.000000',
    stamp: '2024-03-10T02:30:00-08:00',
    span: 'P1Y2M-3DT4H5M6.789S',
    data: 'just a string',
    owner: null,
    ledger: null,
    bigs: [],
    uuids: [O1]
  }
  const patched = await a.inject({ method: 'PATCH', url: '/things/1/', payload: patch })
  t.equal(patched.statusCode, 200, patched.body)
  const after = {
    ...FIRST_OUT,
    ...patch,
    big: '12',
    at: '00:00:00',
    stamp: '2024-03-10T10:30:00Z'
  }
  t.strictSame(json(patched), after)
  t.strictSame(json(await a.inject({ method: 'GET', url: '/things/1/' })), after)

  for (const data of [0, false, [], {}, [1, [2]], 'null']) {
    const res = await a.inject({ method: 'PATCH', url: '/things/1/', payload: { data } })
    t.strictSame(json(res).data, data, `the JSON value ${JSON.stringify(data)} round-trips`)
  }
  const cleared = await a.inject({ method: 'PATCH', url: '/things/1/', payload: { data: null } })
  t.equal(json(cleared).data, null, 'JSON null is SQL NULL')
  const isNull = await a.inject({ method: 'GET', url: '/things/?data__operator=is_null' })
  t.strictSame(json(isNull).rows.map((r: { id: number }) => r.id), [1])
})

t.test('a UUID primary key: made by the database when left out, any case in the path', async (t) => {
  const a = await app(t)
  const made = await a.inject({ method: 'POST', url: '/owners/', payload: { name: 'Ann' } })
  t.equal(made.statusCode, 201)
  const id = json(made).id as string
  t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  t.equal(made.headers.location, `/owners/${id}/`)
  const upper = await a.inject({ method: 'GET', url: `/owners/${id.toUpperCase()}/` })
  t.strictSame(json(upper), { id, name: 'Ann' })
  const given = await a.inject({ method: 'POST', url: '/owners/', payload: { id: O1.toUpperCase(), name: 'Bob' } })
  t.strictSame([given.statusCode, json(given)], [201, { id: O1, name: 'Bob' }])
  const again = await a.inject({ method: 'POST', url: '/owners/', payload: { id: O1, name: 'Eve' } })
  t.equal(again.statusCode, 422, 'a taken key is a unique violation')
  for (const bad of ['nope', `${O1}0`, O1.replaceAll('-', '')]) {
    const res = await a.inject({ method: 'GET', url: `/owners/${bad}/` })
    t.strictSame([res.statusCode, json(res)], [400, errorOf(400, 'TABLECRUD_ERR_ID_INVALID', 'Bad Request', 'The ID is invalid')], bad)
  }
  const missing = await a.inject({ method: 'GET', url: `/owners/${U1}/` })
  t.equal(missing.statusCode, 404)
  const ids = await a.inject({ method: 'GET', url: '/owners/ids/' })
  t.strictSame(json(ids), { [O1]: 'Bob', [id]: 'Ann' }, '/ids/ in key order')
  const put = await a.inject({ method: 'PUT', url: `/owners/${O1.toUpperCase()}/`, payload: { id: O1, name: 'Bo' } })
  t.strictSame([put.statusCode, json(put)], [200, { id: O1, name: 'Bo' }])
  const deleted = await a.inject({ method: 'DELETE', url: `/owners/${O1}/` })
  t.equal(deleted.statusCode, 204)
})

t.test('a BigInt primary key: exact in the path and the Location, required on POST', async (t) => {
  const a = await app(t)
  const made = await a.inject({ method: 'POST', url: '/ledgers/', payload: { id: MAX, label: 'max' } })
  t.strictSame([made.statusCode, made.headers.location, json(made)], [201, `/ledgers/${MAX}/`, { id: MAX, label: 'max' }])
  const small = await a.inject({ method: 'POST', url: '/ledgers/', payload: { id: 5, label: 'five' } })
  t.strictSame(json(small), { id: '5', label: 'five' })
  t.strictSame(json(await a.inject({ method: 'GET', url: `/ledgers/${MAX}/` })), { id: MAX, label: 'max' })
  t.strictSame(json(await a.inject({ method: 'GET', url: '/ledgers/+5/' })), { id: '5', label: 'five' })
  for (const bad of ['9223372036854775808', '1.5', 'x']) {
    const res = await a.inject({ method: 'GET', url: `/ledgers/${bad}/` })
    t.equal(res.statusCode, 400, bad)
    t.equal(json(res).code, 'TABLECRUD_ERR_ID_INVALID')
  }
  const keyless = await a.inject({ method: 'POST', url: '/ledgers/', payload: { label: 'none' } })
  t.strictSame(json(keyless).errors, [{ field: 'id', message: 'is required' }])
  const ordered = await a.inject({ method: 'GET', url: '/ledgers/?__order=id' })
  t.strictSame(json(ordered).rows.map((r: { id: string }) => r.id), ['5', MAX], 'ordered as numbers, not as text')
})

t.test('filters: each type with its operators, arrays by element', async (t) => {
  const a = await seeded(t)
  const cases: Array<[string, number[]]> = [
    ['small=1', [1]],
    ['small__operator=lt&small=0', [2]],
    ['big=9007199254740993', [1]],
    ['big=9007199254740992', []],
    ['big__operator=lte&big=-9223372036854775808', [2]],
    ['ratio__operator=gte&ratio=1', [2]],
    [`token=${U1.toUpperCase()}`, [1]],
    [`token__operator=ne&token=${U1}`, []],
    ['token__operator=is_null', [2]],
    ['day__operator=gt&day=2024-03-01', [2]],
    ['day=2024-01-01', [1]],
    ['at__operator=gte&at=23:59:59.999999', [2]],
    ['at=08:00:00.500', [1]],
    ['stamp=2024-06-30T21:59:59.999999Z', [2]],
    ['stamp__operator=lt&stamp=2024-01-01T01:00:00.000001%2B01:00', []],
    ['stamp__operator=lte&stamp=2024-01-01T01:00:00.000001%2B01:00', [1]],
    ['span__operator=gt&span=PT2H', [2]],
    ['span=PT60M', [1]],
    ['data__operator=is_null', [2]],
    ['data__operator=not_null', [1]],
    [`owner=${O1}`, [1]],
    ['owner__operator=is_null', [2]],
    [`ledger=${MAX}`, [1]],
    ['ledger__operator=lt&ledger=0', []],
    ['days=2024-01-01', [1]],
    [`bigs=${MAX}&bigs=7`, [1]],
    ['stamps=2024-01-01T00:00:00Z', [1]],
    ['spans=P7D', [1]],
    ['times=08:00:00', [1]],
    [`uuids=${U1.toUpperCase()}`, [1]],
    [`uuids__operator=ne&uuids=${U1}`, [2]],
    // in and not_in (SPEC §7.6): one array parameter of the column's type, exact past 2^53.
    ['small__operator=in&small=1&small=5', [1]],
    ['small__operator=not_in&small=1', [2]],
    ['big__operator=in&big=9007199254740993&big=5', [1]],
    ['big__operator=in&big=9007199254740992', []],
    [`token__operator=in&token=${U1.toUpperCase()}`, [1]],
    [`token__operator=not_in&token=${U1}`, []],
    ['day__operator=in&day=2024-01-01&day=1999-01-01', [1]],
    ['at__operator=in&at=08:00:00.500', [1]],
    ['stamp__operator=in&stamp=2024-06-30T21:59:59.999999Z&stamp=2024-06-30T23:59:59.999999%2B02:00', [2]],
    ['span__operator=in&span=PT60M&span=P99D', [1]],
    [`owner__operator=in&owner=${O1}`, [1]],
    [`ledger__operator=in&ledger=${MAX}&ledger=5`, [1]],
    ['__order=stamp', [1, 2]],
    ['__order=-span', [2, 1]],
    ['__order=token', [1, 2]]
  ]
  for (const [query, ids] of cases) {
    // Filtered rows come in the default order, key descending; one at most here, or both by __order.
    const res = await a.inject({ method: 'GET', url: `/things/?${query}` })
    t.equal(res.statusCode, 200, query)
    t.strictSame(json(res).rows.map((r: { id: number }) => r.id), ids, query)
  }
  const count = await a.inject({ method: 'GET', url: '/things/count/?stamp__operator=gt&stamp=2024-01-01T00:00:00Z' })
  t.strictSame(json(count), { count: 2, page_size: 15 })
  const joined = await a.inject({ method: 'GET', url: '/things/?__visible_fields=owner.name,owner.id,stamp&__readable=true&__order=id' })
  t.strictSame(json(joined).rows, [
    { owner: { name: 'Ann', id: O1 }, owner_readable: 'Ann', stamp: FIRST_OUT.stamp },
    { owner: { name: null, id: null }, owner_readable: null, stamp: SECOND_OUT.stamp }
  ])
  const both = await a.inject({ method: 'GET', url: '/things/?__order=id' })
  t.strictSame(json(both).rows, [FIRST_OUT, SECOND_OUT], 'the second row read back as written')
})

t.test('operators a type does not take are a 400', async (t) => {
  const a = await app(t)
  const cases: Array<[string, string, string]> = [
    [`token__operator=lt&token=${U1}`, 'lt', 'token (type uuid)'],
    [`token__operator=gte&token=${U1}`, 'gte', 'token (type uuid)'],
    [`owner__operator=gt&owner=${O1}`, 'gt', 'owner (type foreignKey)'],
    [`uuids__operator=lt&uuids=${U1}`, 'lt', 'uuids (type array)'],
    ['data=1', 'e', 'data (type jsonb)'],
    ['data=%7B%7D&data__operator=e', 'e', 'data (type jsonb)'],
    ['data__operator=ne&data=1', 'ne', 'data (type jsonb)'],
    ['data__operator=in&data=1', 'in', 'data (type jsonb)'],
    [`uuids__operator=in&uuids=${U1}`, 'in', 'uuids (type array)'],
    [`uuids__operator=not_in&uuids=${U1}&uuids=${U1}`, 'not_in', 'uuids (type array)']
  ]
  for (const [query, op, where] of cases) {
    const res = await a.inject({ method: 'GET', url: `/things/?${query}` })
    t.strictSame([res.statusCode, json(res)], [400, errorOf(400, 'TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE', 'Bad Request', `The operator ${op} does not apply to ${where}.`)], query)
  }
  const match = await a.inject({ method: 'GET', url: `/things/?token__match=exact&token=${U1}` })
  t.strictSame(json(match), errorOf(400, 'TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE', 'Bad Request', 'token__match applies to text columns only.'))
})

t.test('filter values that are not of the type: a 400 naming the form wanted', async (t) => {
  const a = await app(t)
  const cases: Array<[string, string, string]> = [
    ['small', '40000', '16-bit integer'],
    ['big', '9223372036854775808', '64-bit integer'],
    ['big', '1e3', '64-bit integer'],
    ['ratio', 'x', 'number'],
    ['token', 'nope', 'UUID'],
    ['day', '2024-02-30', 'date (YYYY-MM-DD)'],
    ['at', '25:00:00', 'time (HH:MM:SS[.ffffff])'],
    ['stamp', '2024-01-01T00:00:00', 'ISO 8601 date-time with Z or an offset'],
    ['span', '1 day', 'ISO 8601 duration (P1DT2H)'],
    ['owner', 'x', 'UUID'],
    ['ledger', '1.5', '64-bit integer'],
    ['days', '2024-13-01', 'date (YYYY-MM-DD)'],
    ['uuids', 'x', 'UUID']
  ]
  for (const [name, value, form] of cases) {
    const res = await a.inject({ method: 'GET', url: `/things/?${name}=${encodeURIComponent(value)}` })
    t.strictSame([res.statusCode, json(res)], [400, errorOf(400, 'TABLECRUD_ERR_QS_INVALID_VALUE', 'Bad Request',
      `The value ${JSON.stringify(value)} of ${name} is not a valid ${form}.`)], `${name}=${value}`)
  }
})

t.test('body values that are not of the type: a 400 naming each field and the form wanted', async (t) => {
  const a = await app(t)
  const cases: Array<[Record<string, unknown>, Array<[string, string]>]> = [
    [{ small: 40000 }, [['small', 'must be <= 32767']]],
    [{ small: 1.5 }, [['small', 'must be integer']]],
    [{ big: 'x' }, [['big', 'must be a 64-bit integer (a string of digits past 2^53)']]],
    [{ big: 9007199254740994 }, [['big', 'must be a 64-bit integer (a string of digits past 2^53)']]],
    [{ big: '-9223372036854775809' }, [['big', 'must be a 64-bit integer (a string of digits past 2^53)']]],
    [{ big: true }, [['big', 'must be integer or string']]],
    [{ ratio: 'a' }, [['ratio', 'must be number']]],
    [{ token: 'nope' }, [['token', 'must match format "uuid"'], ['token', 'must be null']]],
    [{ day: '2024-02-30' }, [['day', 'must match format "date"']]],
    [{ day: '0000-01-01' }, [['day', 'must be a date, YYYY-MM-DD']]],
    [{ at: '25:00:00' }, [['at', 'must be a time, HH:MM:SS[.ffffff]']]],
    [{ at: 8 }, [['at', 'must be string']]],
    [{ stamp: '2024-01-01T00:00:00' }, [['stamp', 'must match format "date-time"']]],
    [{ span: '1 day' }, [['span', 'must be an ISO 8601 duration such as P1DT2H']]],
    [{ owner: 'x' }, [['owner', 'must match format "uuid"'], ['owner', 'must be null']]],
    [{ days: ['2024-1-1'] }, [['days.0', 'must match format "date"']]],
    [{ bigs: ['1.5'] }, [['bigs', 'must be a 64-bit integer (a string of digits past 2^53)']]],
    // Named in the table's order (big before at), not the body's.
    [{ span: 'P1D', at: '7', big: 'y' }, [['big', 'must be a 64-bit integer (a string of digits past 2^53)'], ['at', 'must be a time, HH:MM:SS[.ffffff]']]]
  ]
  for (const [payload, errors] of cases) {
    const res = await a.inject({ method: 'POST', url: '/things/', payload })
    t.strictSame([res.statusCode, json(res)], [400, errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request',
      `The body is invalid: ${errors.map(([f, m]) => `${f} ${m}`).join('; ')}`,
      { errors: errors.map(([field, message]) => ({ field, message })) })], JSON.stringify(payload))
  }
  const count = await a.inject({ method: 'GET', url: '/things/count/' })
  t.equal(json(count).count, 0, 'nothing was written')
})

t.test('/new/: the type defaults in wire form, taken per call', async (t) => {
  const a = await app(t)
  const res = await a.inject({ method: 'GET', url: '/things/new/' })
  t.equal(res.statusCode, 200)
  const body = json(res)
  const now = new Date().toISOString()
  t.ok(body.day === now.slice(0, 10) || Math.abs(Date.parse(body.day) - Date.now()) < 86_400_000, `today in UTC: ${body.day as string}`)
  t.match(body.at, /^\d\d:\d\d:\d\d$/)
  t.ok(Math.abs(Date.parse(body.stamp) - Date.now()) < 60_000, `now, in UTC: ${body.stamp as string}`)
  t.match(body.stamp, /Z$/)
  t.strictSame(body, {
    id: null,
    small: 0,
    big: '0',
    ratio: 0,
    token: null,
    day: body.day,
    at: body.at,
    stamp: body.stamp,
    span: 'PT0S',
    data: null,
    owner: null,
    ledger: null,
    days: [],
    bigs: [],
    stamps: [],
    spans: [],
    times: [],
    uuids: []
  })
  t.strictSame(json(await a.inject({ method: 'GET', url: '/owners/new/' })), { id: null, name: '' })
  const created = await a.inject({ method: 'POST', url: '/things/', payload: {} })
  t.equal(created.statusCode, 201, 'a row of type defaults is written')
  t.match(json(created), { small: 0, big: '0', span: 'PT0S', stamp: /Z$/, at: /^\d\d:\d\d:\d\d(\.\d{6})?$/ })
})

t.test('/schema/: each type as the POST body takes it', async (t) => {
  const a = await app(t)
  const doc = json(await a.inject({ method: 'GET', url: '/things/schema/' }))
  const props = Object.fromEntries(Object.entries(doc.properties as Record<string, Record<string, unknown>>).map(([name, p]) => {
    const { title, extra, ...rest } = p
    return [name, rest]
  }))
  t.strictSame(props, {
    small: { minimum: -32768, maximum: 32767, type: 'integer' },
    big: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
    ratio: { type: 'number' },
    token: { anyOf: [{ format: 'uuid', type: 'string' }, { type: 'null' }] },
    day: { format: 'date', type: 'string' },
    at: { description: 'HH:MM:SS[.ffffff]', type: 'string' },
    stamp: { format: 'date-time', type: 'string' },
    span: { description: 'ISO 8601 duration, such as P1DT2H', type: 'string' },
    data: { anyOf: [{ type: ['boolean', 'number', 'string', 'array', 'object'] }, { type: 'null' }] },
    owner: { anyOf: [{ format: 'uuid', type: 'string' }, { type: 'null' }] },
    ledger: { anyOf: [{ type: 'integer' }, { type: 'string' }, { type: 'null' }] },
    days: { type: 'array', items: { format: 'date', type: 'string' } },
    bigs: { type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'string' }] } },
    stamps: { type: 'array', items: { format: 'date-time', type: 'string' } },
    spans: { type: 'array', items: { description: 'ISO 8601 duration, such as P1DT2H', type: 'string' } },
    times: { type: 'array', items: { description: 'HH:MM:SS[.ffffff]', type: 'string' } },
    uuids: { type: 'array', items: { format: 'uuid', type: 'string' } }
  })
  t.strictSame(doc.properties.owner.extra.foreign_key, { to: 'ct_owner', target_column: 'id' })
  t.equal(doc.required, undefined)
  const owners = json(await a.inject({ method: 'GET', url: '/owners/schema/' }))
  t.strictSame(Object.keys(owners.properties), ['id', 'name'], 'a UUID key is a property, as any key the database does not assign')
  t.equal(owners.required, undefined, 'and not required: the database makes one')
  const ledgers = json(await a.inject({ method: 'GET', url: '/ledgers/schema/' }))
  t.strictSame(ledgers.required, ['id'], 'a BigInt key is required')
})

t.test('OpenAPI: a valid document, each type its parameters and schemas', async (t) => {
  const a = await app(t)
  const doc = JSON.parse(JSON.stringify(a.swagger()))
  await SwaggerParser.validate(structuredClone(doc))
  const params = new Map<string, any>((doc.paths['/things/'].get.parameters as any[]).map((p) => [p.name, p]))
  const ALL = ['e', 'ne', 'lt', 'lte', 'gt', 'gte', 'is_null', 'not_null', 'in', 'not_in']
  const EQUALITY = ['e', 'ne', 'is_null', 'not_null', 'in', 'not_in']
  const CONTAINS = ['e', 'ne', 'is_null', 'not_null']
  const operators: Record<string, string[]> = {
    small: ALL,
    big: ALL,
    ratio: ALL,
    token: EQUALITY,
    day: ALL,
    at: ALL,
    stamp: ALL,
    span: ALL,
    data: ['is_null', 'not_null'],
    owner: EQUALITY,
    ledger: ALL,
    days: CONTAINS,
    uuids: CONTAINS
  }
  for (const [name, ops] of Object.entries(operators)) t.strictSame(params.get(`${name}__operator`).schema.enum, ops, name)
  t.notOk(params.has('data'), 'JSONB takes no filter value, so none is documented')
  const once = (name: string): string => ` Repeated only with ${name}__operator in or not_in, one value each.`
  t.equal(params.get('stamp').description, `Filter on stamp: an ISO 8601 date-time with Z or an offset.${once('stamp')}`)
  t.equal(params.get('big').description, `Filter on big: an integer.${once('big')}`)
  t.equal(params.get('span').description, `Filter on span: an ISO 8601 duration such as P1DT2H.${once('span')}`)
  t.equal(params.get('days').description, 'Rows whose days holds this element (a date, YYYY-MM-DD); repeat to require several.')
  t.equal(params.get('token').description, `Filter on token: a UUID.${once('token')}`)
  t.equal(params.get('at').description, `Filter on at: a time, HH:MM:SS[.ffffff].${once('at')}`)
  // Each filter typed as its column's values, repeatable (issue 30): a list, written exploded.
  // Beside the format, no year 0 nor leap second, which RFC 3339 has and the server refuses.
  t.strictSame(params.get('stamp').schema, { type: 'array', items: { format: 'date-time', type: 'string', pattern: '^(?!0000-)(?!.{11}\\d{2}:\\d{2}:60)' } })
  t.strictSame(params.get('days').schema, { type: 'array', items: { format: 'date', type: 'string', pattern: '^(?!0000-)' } })
  t.strictSame(params.get('token').schema, { type: 'array', items: { format: 'uuid', type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' } }, 'the hex form only: no urn:uuid: prefix')
  t.equal(params.get('token').explode, true)
  // A time and an interval: the pattern the server reads them by, on the filter as on the body.
  t.match(params.get('at').schema, { type: 'array', items: { type: 'string', pattern: /^\^/ } })
  t.match(params.get('span').schema, { type: 'array', items: { type: 'string', pattern: /^\^P/ } })
  t.match(doc.components.schemas.CtThingIn.properties.spans, { type: 'array', items: { type: 'string', pattern: /^\^P/ } })
  // A BigInt: an exact integer or a string of digits, on the filter as on the body.
  t.match(params.get('big').schema, { items: { anyOf: [{ type: 'integer', maximum: Number.MAX_SAFE_INTEGER }, { type: 'string', pattern: '^[+-]?\\d+$' }] } })
  t.match(doc.components.schemas.CtThingIn.properties.big, { anyOf: [{ type: 'integer', maximum: Number.MAX_SAFE_INTEGER }, { type: 'string', pattern: '^[+-]?\\d+$' }] })
  const row = doc.components.schemas.CtThingRow.properties
  t.strictSame(row.big, { type: 'string' }, 'BigInt out is a string')
  t.strictSame(row.data, { anyOf: [{}, { type: 'null' }] }, 'JSONB out is any JSON value')
  t.strictSame(doc.paths['/owners/{id}/'].get.parameters.find((p: { in: string }) => p.in === 'path').schema,
    { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' })
  t.strictSame(doc.paths['/ledgers/{id}/'].get.parameters.find((p: { in: string }) => p.in === 'path').schema,
    { type: 'string', pattern: '^[+-]?\\d+$' })
})
