import t, { type Test } from 'tap'
import SwaggerParser from '@apidevtools/swagger-parser'
import type { FastifyInstance } from 'fastify'
import { column, defineTable } from '../../../lib/table/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { openApi } from '../../../plugins/openapi.js'
import { testDatabase } from '../../helpers/db.js'
import { errorOf, freshApp, json, rowsOf } from './write-fixtures.js'

/*
 * Keys the database assigns other than a serial, as Rails (bigserial) and Django (identity)
 * make them: a BigSerial is a BigInt on the wire and a Serial as a key; an identity key,
 * ALWAYS or BY DEFAULT, is never written by any route, so ALWAYS refuses nothing TableCRUD
 * sends.
 */

const db = await testDatabase(t)

const ledger = defineTable('hkeys_ledger', {
  id: column.bigSerial({ primaryKey: true }),
  label: column.varchar({ length: 20, unique: true }),
  amount: column.integer({ default: 0 })
}, { readable: 'label' })
const vault = defineTable('hkeys_vault', {
  id: column.bigSerial({ primaryKey: true, identity: 'always' }),
  name: column.varchar({ length: 20, unique: true }),
  n: column.integer({ default: 0 })
}, { readable: 'name' })
const entry = defineTable('hkeys_entry', {
  id: column.serial({ primaryKey: true, identity: 'always' }),
  code: column.varchar({ length: 20, unique: true }),
  n: column.integer({ default: 0 }),
  vault: column.foreignKey<string>(vault, { null: true, related: 'entries' }),
  ledger: column.foreignKey<string>(ledger, { null: true, related: 'entries' })
})
const tally = defineTable('hkeys_tally', {
  id: column.bigSerial({ primaryKey: true, identity: 'by default' }),
  note: column.text(),
  // Not the key: a sequence default for others' rows; a POST through the API gives it (docs/tables.md).
  seq: column.bigSerial()
})
const TABLES = [ledger, vault, entry, tally]

/** 2^53 + 1: a JS number cannot hold it. */
const BIG = '9007199254740993'
const INVALID_ID = errorOf(400, 'TABLECRUD_ERR_ID_INVALID', 'Bad Request', 'The ID is invalid')
const invalid = (errors: Array<[string, string]>): Record<string, unknown> => errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request',
  `The body is invalid: ${errors.map(([field, message]) => `${field} ${message}`).join('; ')}`, { errors: errors.map(([field, message]) => ({ field, message })) })

async function app (t: Test): Promise<FastifyInstance> {
  return await freshApp(t, db, async (app) => {
    await app.register(openApi, {})
    await app.register(tableCrud, { table: ledger, prefix: '/ledgers', readOnly: false, maxJoins: 1, aggregates: true })
    await app.register(tableCrud, { table: vault, prefix: '/vaults', readOnly: false, maxJoins: 1, nestedWrites: ['entries'], allowBulkUpdate: true })
    await app.register(tableCrud, { table: entry, prefix: '/entries', readOnly: false, maxJoins: 1, allowBulkUpdate: true })
    await app.register(tableCrud, { table: tally, prefix: '/tallies', readOnly: false })
  }, TABLES)
}

/** Makes the next key of a table's sequence or identity `next`. */
async function nextKey (a: FastifyInstance, table: string, next: string): Promise<void> {
  await a.pg.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), ${next} - 1)`)
}

const ids = (res: Parameters<typeof json>[0]): string[] => json(res).rows.map((r: { id: string }) => r.id)

t.test('a BigSerial key: assigned, a string of digits on the wire, exact past 2^53; a client value is a 400', async (t) => {
  const a = await app(t)
  const first = await a.inject({ method: 'POST', url: '/ledgers/', payload: { label: 'a' } })
  t.strictSame([first.statusCode, first.headers.location, json(first)], [201, '/ledgers/1/', { id: '1', label: 'a', amount: 0 }])
  const nulled = await a.inject({ method: 'POST', url: '/ledgers/', payload: { id: null, label: 'b' } })
  t.strictSame([nulled.statusCode, json(nulled)], [201, { id: '2', label: 'b', amount: 0 }])
  for (const id of [5, '5']) {
    const given = await a.inject({ method: 'POST', url: '/ledgers/', payload: { id, label: 'c' } })
    t.strictSame([given.statusCode, json(given)], [400, invalid([['id', 'must be null']])], `id ${JSON.stringify(id)}`)
  }
  await nextKey(a, 'hkeys_ledger', BIG)
  const big = await a.inject({ method: 'POST', url: '/ledgers/', payload: { label: 'big' } })
  t.strictSame([big.statusCode, big.headers.location, json(big)], [201, `/ledgers/${BIG}/`, { id: BIG, label: 'big', amount: 0 }])
  t.strictSame(json(await a.inject(`/ledgers/${BIG}/`)), { id: BIG, label: 'big', amount: 0 })
  t.strictSame(json(await a.inject(`/ledgers/+0${BIG}/`)), { id: BIG, label: 'big', amount: 0 }, 'a sign and leading zeros, as for a BigInt key')
  for (const bad of ['0', '-1', '9223372036854775808', '1.5', '1e3', 'x']) {
    const res = await a.inject(`/ledgers/${bad}/`)
    t.strictSame([res.statusCode, json(res)], [400, INVALID_ID], bad)
  }
  t.equal((await a.inject('/ledgers/9223372036854775807/')).statusCode, 404, 'the largest key is a key: no row')

  const put = await a.inject({ method: 'PUT', url: '/ledgers/1/', payload: { id: '1', label: 'a2' } })
  t.strictSame([put.statusCode, json(put)], [200, { id: '1', label: 'a2', amount: 0 }])
  const patch = await a.inject({ method: 'PATCH', url: `/ledgers/${BIG}/`, payload: { id: Number(2), amount: 3 } })
  t.equal(patch.statusCode, 400, 'a key in the body must be the path id')
  const patched = await a.inject({ method: 'PATCH', url: `/ledgers/${BIG}/`, payload: { id: BIG, amount: 3 } })
  t.strictSame(json(patched), { id: BIG, label: 'big', amount: 3 })

  t.strictSame(ids(await a.inject(`/ledgers/?id=${BIG}`)), [BIG])
  t.strictSame(ids(await a.inject('/ledgers/?id__operator=gt&id=1&__order=id')), ['2', BIG], 'ordered as numbers')
  t.strictSame(ids(await a.inject('/ledgers/')), [BIG, '2', '1'], 'the key descending by default')
  t.strictSame(ids(await a.inject(`/ledgers/?id__operator=in&id=1&id=${BIG}&__order=id`)), ['1', BIG], 'a list filter, cast to bigint[]')
  const notDigits = await a.inject('/ledgers/?id=x')
  t.strictSame([notDigits.statusCode, json(notDigits).message], [400, 'The value "x" of id is not a valid 64-bit integer.'])
  t.strictSame(json(await a.inject('/ledgers/ids/')), { 1: 'a2', 2: 'b', [BIG]: 'big' })
  t.strictSame(json(await a.inject('/ledgers/new/')), { id: null, label: '', amount: 0 })
  const schema = json(await a.inject('/ledgers/schema/'))
  t.strictSame([Object.keys(schema.properties), schema.extra.primary_key_name], [['label', 'amount'], 'id'], 'the key is left out of /schema/, as a Serial is')

  const page = json(await a.inject('/ledgers/?__order=id&__page_size=2&__cursor='))
  t.strictSame(page.rows.map((r: { id: string }) => r.id), ['1', '2'])
  const last = json(await a.inject(`/ledgers/?__order=id&__page_size=2&__cursor=${String(page.next_cursor)}`))
  t.strictSame([last.rows.map((r: { id: string }) => r.id), last.next_cursor], [[BIG], null], 'keyset pages past 2^53')

  const aggregate = await a.inject('/ledgers/aggregate/?__aggregate=count,sum(id),min(id),max(id),avg(id)')
  t.strictSame(json(aggregate).rows, [{ count: 3, sum_id: '9007199254740996', min_id: '1', max_id: BIG, avg_id: 3002399751580332 }],
    'a sum exact as a decimal string, min and max as keys are, avg a number (as of a BigInt)')
})

t.test('a ForeignKey to a BigSerial is a bigint; joins, embeds and __readable carry its values exact', async (t) => {
  const a = await app(t)
  const { rows } = await a.pg.query("SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'hkeys_entry'::regclass AND attname IN ('vault', 'ledger') ORDER BY attname")
  t.strictSame(rows, [{ type: 'bigint' }, { type: 'bigint' }])
  await nextKey(a, 'hkeys_ledger', BIG)
  t.equal((await a.inject({ method: 'POST', url: '/ledgers/', payload: { label: 'big' } })).statusCode, 201)
  const made = await a.inject({ method: 'POST', url: '/entries/', payload: { code: 'e1', ledger: BIG } })
  t.strictSame([made.statusCode, json(made)], [201, { id: 1, code: 'e1', n: 0, vault: null, ledger: BIG }])
  const number = await a.inject({ method: 'POST', url: '/entries/', payload: { code: 'e2', ledger: 9007199254740992 } })
  t.strictSame([number.statusCode, json(number).errors], [400, [{ field: 'ledger', message: 'must be a 64-bit integer (a string of digits past 2^53)' }]], 'past 2^53 the digits, as for a BigInt')
  t.strictSame(json(await a.inject(`/entries/?ledger=${BIG}&__readable=true`)).rows, [{ id: 1, code: 'e1', n: 0, vault: null, vault_readable: null, ledger: BIG, ledger_readable: 'big' }])
  t.strictSame(json(await a.inject('/entries/?__visible_fields=code,ledger.id,ledger.label')).rows, [{ code: 'e1', ledger: { id: BIG, label: 'big' } }])
  t.strictSame(json(await a.inject('/ledgers/?__visible_fields=id,entries.code,entries.ledger')).rows, [{ id: BIG, entries: [{ code: 'e1', ledger: BIG }] }])
})

t.test('identity keys, ALWAYS: POST, bulk POST, PUT, PATCH, upsert, nested insert and bulk PATCH never write them', async (t) => {
  const a = await app(t)
  const { rows } = await a.pg.query("SELECT attrelid::regclass::text AS table, attidentity AS identity FROM pg_attribute WHERE attrelid IN ('hkeys_vault'::regclass, 'hkeys_entry'::regclass, 'hkeys_tally'::regclass) AND attname = 'id' ORDER BY 1")
  t.strictSame(rows, [{ table: 'hkeys_entry', identity: 'a' }, { table: 'hkeys_tally', identity: 'd' }, { table: 'hkeys_vault', identity: 'a' }])

  const one = await a.inject({ method: 'POST', url: '/vaults/', payload: { name: 'v1' } })
  t.strictSame([one.statusCode, one.headers.location, json(one)], [201, '/vaults/1/', { id: '1', name: 'v1', n: 0 }])
  const given = await a.inject({ method: 'POST', url: '/vaults/', payload: { id: '7', name: 'v7' } })
  t.strictSame([given.statusCode, json(given)], [400, invalid([['id', 'must be null']])])
  const bulk = await a.inject({ method: 'POST', url: '/vaults/', payload: [{ name: 'v2' }, { id: null, name: 'v3' }] })
  t.strictSame([bulk.statusCode, json(bulk)], [201, { rows: [{ id: '2', name: 'v2', n: 0 }, { id: '3', name: 'v3', n: 0 }] }])
  const put = await a.inject({ method: 'PUT', url: '/vaults/1/', payload: { id: '1', name: 'v1b', n: 4 } })
  t.strictSame([put.statusCode, json(put)], [200, { id: '1', name: 'v1b', n: 4 }])
  const putBare = await a.inject({ method: 'PUT', url: '/vaults/1/', payload: { name: 'v1c' } })
  t.strictSame([putBare.statusCode, json(putBare)], [200, { id: '1', name: 'v1c', n: 0 }])
  const patch = await a.inject({ method: 'PATCH', url: '/vaults/2/', payload: { id: 2, n: 5 } })
  t.strictSame([patch.statusCode, json(patch)], [200, { id: '2', name: 'v2', n: 5 }], 'the key as a JSON number is the path id')
  const other = await a.inject({ method: 'PATCH', url: '/vaults/2/', payload: { id: '3', n: 5 } })
  t.strictSame([other.statusCode, json(other)], [400, errorOf(400, 'TABLECRUD_ERR_BODY_ID_MISMATCH', 'Bad Request', 'The body id differs from the id in the path.')])

  const updated = await a.inject({ method: 'POST', url: '/vaults/?__on_conflict=name', payload: { name: 'v3', n: 9 } })
  t.strictSame([updated.statusCode, json(updated)], [200, { id: '3', name: 'v3', n: 9 }], 'an upsert on another unique column: updated')
  // A conflicting row draws a key too, as sequences do: 4 went to the update above.
  const inserted = await a.inject({ method: 'POST', url: '/vaults/?__on_conflict=name', payload: [{ name: 'v4' }, { name: 'v2', n: 6 }] })
  t.strictSame([inserted.statusCode, json(inserted).rows], [200, [{ id: '5', name: 'v4', n: 0 }, { id: '2', name: 'v2', n: 6 }]], 'and inserted')

  const nested = await a.inject({ method: 'POST', url: '/vaults/', payload: { name: 'v5', entries: [{ code: 'c1' }, { code: 'c2', n: 1 }] } })
  t.strictSame([nested.statusCode, json(nested)], [201, {
    id: '7',
    name: 'v5',
    n: 0,
    entries: [{ id: 1, code: 'c1', n: 0, vault: '7', ledger: null }, { id: 2, code: 'c2', n: 1, vault: '7', ledger: null }]
  }])
  const children = await a.inject({ method: 'PATCH', url: '/entries/?vault=7', payload: { n: 2 } })
  t.strictSame([children.statusCode, json(children)], [200, { count: 2 }])
  const all = await a.inject({ method: 'PATCH', url: '/vaults/?id__operator=not_null', payload: { n: 1 } })
  t.strictSame([all.statusCode, json(all)], [200, { count: 5 }])
  const keyed = await a.inject({ method: 'PATCH', url: '/vaults/?id=1', payload: { id: '1', n: 1 } })
  t.equal(keyed.statusCode, 400, 'a bulk PATCH does not set the key')
  t.strictSame((await rowsOf(a, vault)).map((r) => [r.id, r.name, r.n]), [['1', 'v1c', 1], ['2', 'v2', 1], ['3', 'v3', 1], ['5', 'v4', 1], ['7', 'v5', 1]])
  t.strictSame((await rowsOf(a, entry)).map((r) => [r.id, r.n, r.vault]), [[1, 2, '7'], [2, 2, '7']])
  t.equal((await a.inject({ method: 'DELETE', url: '/vaults/7/' })).statusCode, 204)
  t.strictSame(await rowsOf(a, entry), [], 'its children went with it')

  const tallied = await a.inject({ method: 'POST', url: '/tallies/', payload: [{ note: 'x', seq: 5 }, { note: 'y', seq: BIG }] })
  t.strictSame(json(tallied), { rows: [{ id: '1', note: 'x', seq: '5' }, { id: '2', note: 'y', seq: BIG }] }, 'BY DEFAULT alike')
  const unsequenced = await a.inject({ method: 'POST', url: '/tallies/', payload: { note: 'z' } })
  t.strictSame([unsequenced.statusCode, json(unsequenced).code], [422, 'TABLECRUD_ERR_DB_NOT_NULL'], 'a BigSerial that is not the key, left out, is written NULL')
})

t.test('OpenAPI: a BigSerial path id is a positive digit string; POST takes its key as null only', async (t) => {
  const a = await app(t)
  const doc = JSON.parse(JSON.stringify(a.swagger()))
  await SwaggerParser.validate(structuredClone(doc))
  const param = doc.paths['/ledgers/{id}/'].get.parameters.find((p: { name: string }) => p.name === 'id')
  t.strictSame([param.schema, param.description], [{ type: 'string', pattern: '^\\+?0*[1-9]\\d*$' }, 'The id of a hkeys_ledger row. From 1 to 9223372036854775807.'])
  const vaultIn = doc.components.schemas.HkeysVaultIn
  t.strictSame(vaultIn.properties.id.type, 'null')
  const entryIn = doc.components.schemas.HkeysEntryIn
  t.strictSame(entryIn.properties.ledger.anyOf.map((b: { type: string }) => b.type), ['integer', 'string', 'null'], 'a ForeignKey to it takes a BigInt')
})
