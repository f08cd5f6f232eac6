import t from 'tap'
import fc from 'fast-check'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { OpenAPIBackend } from 'openapi-backend'
import formats from 'ajv-formats'
import { openApi } from '../../plugins/openapi.js'
import { errorShape } from '../../plugins/error-shape.js'
import { tableCrud, type TableCrudOptions } from '../../plugins/crud/table-crud.js'
import { jwtAuth } from '../../plugins/auth/jwt-auth.js'
import { jwtLogin } from '../../plugins/auth/jwt-login.js'
import { createUser } from '../../lib/auth/users.js'
import { HttpError } from '../../lib/errors.js'
import { fieldPaths, MATCH_TYPES, operatorsFor, type FieldPath } from '../../lib/query/fields.js'
import { column, defineTable, type Table } from '../../lib/table/index.js'
import { createTables } from '../../lib/db/index.js'
import { contractProblem } from '../helpers/contract.js'
import { testDatabase } from '../helpers/db.js'
import { authApp, createAuthTables } from './auth/auth-app.js'
import { closeIdleConnections } from '../fixtures/movies.js'

/*
 * Property test of SPEC §4: the generated OpenAPI document says what the server does. Random
 * requests, valid and invalid (query strings drawn from the mounts' field paths and from the
 * document's own parameters, ids, JSON bodies and other media types, every method on every
 * documented path and on some undocumented ones), to an app whose mounts use the features of
 * SPEC §7 and §8. Every answer: in the SPEC §1 shape (contractProblem); its operation, status
 * and media type documented (a 404 or 405 for what the document leaves out, as
 * docs/openapi.md says); its body valid against the documented schema and its headers
 * declared, as openapi-backend (a kept library, not ours) checks them. A request the
 * document's own request schema accepts is not refused by the server for a reason the
 * document could have said (test/examples/contract.test.ts does the same for the demo's
 * fixed traffic).
 */

/** Runs per property; FUZZ_RUNS raises it for a longer hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 600)

// A maker keyed by text; items with a column of every type, parts (a reverse relation that
// nested writes fill) and tags (many-to-many through a junction).
const maker = defineTable('fo_maker', {
  code: column.varchar({ length: 8, primaryKey: true }),
  name: column.varchar({ length: 40 })
}, { readable: 'name' })
const item = defineTable('fo_item', {
  name: column.varchar({ length: 40, required: true }),
  notes: column.text({ null: true }),
  contact: column.email({ null: true }),
  qty: column.integer({ default: 0 }),
  small: column.smallInt({ null: true }),
  big: column.bigInt({ null: true }),
  ratio: column.real({ null: true }),
  score: column.doublePrecision({ null: true }),
  price: column.numeric({ digits: [8, 2], null: true }),
  active: column.boolean(),
  kind: column.varchar({ length: 10, choices: { a: 'alpha', b: 'beta' }, default: 'alpha' }),
  uid: column.uuid({ null: true }),
  day: column.date({ null: true }),
  at: column.time({ null: true }),
  stamp: column.timestamp({ null: true }),
  stampz: column.timestamptz({ null: true }),
  span: column.interval({ null: true }),
  data: column.jsonb({ null: true }),
  labels: column.array(column.text()),
  maker: column.foreignKey(maker, { related: 'items' }),
  pin: column.text({ null: true, secret: true })
}, { readable: 'name', search: { columns: ['name', 'notes'], config: 'english' } })
const part = defineTable('fo_part', {
  item: column.foreignKey(item, { null: false, related: 'parts', onDelete: 'restrict' }),
  name: column.varchar({ length: 20 }),
  weight: column.real({ null: true })
}, { readable: 'name' })
const tag = defineTable('fo_tag', {
  name: column.varchar({ length: 20, unique: true })
}, { readable: 'name' })
const itemTag = defineTable('fo_item_tag', {
  item: column.foreignKey(item, { null: false }),
  tag: column.foreignKey(tag, { null: false })
}, { junction: { related: ['tags', 'items'] } })
const TABLES: readonly Table[] = [maker, item, part, tag, itemTag]

/**
 * A hook and a validator that refuse one value each: a 400 (a hook's default status, SPEC
 * §2.10) and a 403, which the document lists. A hook may throw any status; one the document
 * cannot know of is a question for SPEC, not tested here.
 */
const refuseName = (name: unknown): void => {
  if (name === 'forbidden') throw new Error('That name is taken by policy.')
}
const secret = 'a-fuzz-openapi-secret-that-is-long-enough-0123456789'

interface Mount { readonly prefix: string, readonly options: TableCrudOptions, readonly fields: readonly FieldPath[], readonly auth: boolean }
const mount = (prefix: string, options: TableCrudOptions, auth = false): Mount =>
  ({ prefix, options, auth, fields: fieldPaths(options.table as Table, options.maxJoins ?? 0, true, true) })

const MOUNTS: readonly Mount[] = [
  mount('/items', {
    table: item,
    readOnly: false,
    maxJoins: 2,
    maxPageSize: 20,
    maxEmbedRows: 3,
    nestedWrites: ['parts'],
    aggregates: true,
    allowBulkDelete: true,
    allowBulkUpdate: true,
    countMode: 'estimated',
    exactCountLimit: 0,
    maxExportRows: 30,
    hooks: [{ hookType: 'preSave', callable: (row) => { refuseName(row.name); return row } }],
    validators: { postSingle: [(_crud, request) => { if ((request.body as { name?: unknown } | null)?.name === 'nope') throw new HttpError(403, 'Not that name.') }] }
  }),
  mount('/ro/items', { table: item, maxJoins: 1, operationIdPrefix: 'ro.item' }),
  mount('/makers', { table: maker, readOnly: false, maxJoins: 1 }),
  mount('/parts', { table: part, readOnly: false, maxJoins: 1, allowBulkDelete: true }),
  mount('/tags', { table: tag, readOnly: false, maxJoins: 1 }),
  mount('/secure/parts', { table: part, readOnly: false, maxJoins: 1, requireIfMatch: true, operationIdPrefix: 'secure.part' }, true)
]

const db = await testDatabase(t)
if (db.embedded) closeIdleConnections(db.pool)
await createAuthTables(db)
await createTables(db.pool, TABLES)
await db.pool.query("INSERT INTO fo_maker (code, name) VALUES ('acme', 'Acme'), ('zeta', 'Zeta Works'), ('x', '')")
await db.pool.query(`INSERT INTO fo_item (name, notes, contact, qty, big, ratio, price, active, uid, day, at, stamp, stampz, span, data, labels, maker, pin) VALUES
  ('Widget', 'a small widget', 'w@example.com', 3, 9000000000, 1.5, 12.50, true, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-05-17', '12:30:00', '2024-05-17T20:00:00', '2024-05-17T20:00:00Z', 'P1D', '{"a": 1}', '{red,blue}', 'acme', 'secret'),
  ('Gadget', NULL, NULL, 0, NULL, NULL, NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '{}', NULL, NULL),
  ('Gizmo', 'the gizmo of widgets', NULL, -5, -1, 0, 0.01, true, NULL, '1999-12-31', '00:00:00', NULL, NULL, 'PT2H', '[1, "x"]', '{red}', 'zeta', NULL)`)
await db.pool.query("INSERT INTO fo_part (item, name, weight) VALUES (1, 'bolt', 0.1), (1, 'nut', NULL), (3, 'spring', 2)")
await db.pool.query("INSERT INTO fo_tag (name) VALUES ('new'), ('sale')")
await db.pool.query('INSERT INTO fo_item_tag (item, tag) VALUES (1, 1), (1, 2), (3, 2)')
await db.pool.query(`ANALYZE ${TABLES.map((x) => x.name).join(', ')}`)

const app = await authApp(t, db, async (app) => {
  await app.register(errorShape)
  await app.register(openApi, { info: { title: 'Fuzz', version: '1.0.0' } })
  await app.register(jwtLogin, { prefix: '/login', secret })
  for (const m of MOUNTS.filter((x) => !x.auth)) await app.register(tableCrud, { ...m.options, prefix: m.prefix })
  await app.register(async (secure) => {
    await secure.register(jwtAuth, { secret })
    for (const m of MOUNTS.filter((x) => x.auth)) await secure.register(tableCrud, { ...m.options, prefix: m.prefix })
  })
})
if (db.embedded) closeIdleConnections(app.pg.pool)
await createUser(app.pg, { username: 'fuzz', password: 'fuzz-password', active: true })
const token = (await app.inject({ method: 'POST', url: '/login/', payload: { username: 'fuzz', password: 'fuzz-password' } })).json().token as string

type Doc = Record<string, any>
const document = app.swagger() as Doc
// With the formats (date, date-time, uuid, email...), which openapi-backend leaves unchecked unless told.
const api = new OpenAPIBackend({ definition: structuredClone(document) as never, strict: false, quick: true, validate: true, customizeAjv: (ajv) => formats.default(ajv as never) as never })
await api.init()
const PATHS = Object.keys(document.paths as Doc)

/**
 * Literal paths of a mount, which win over `/{id}/` (SPEC §2) whether the mount enables them or
 * not: a disabled one is a 405 with an empty `Allow` (docs/media.md), not in the document.
 */
const LITERALS = ['aggregate', 'media']

/** The document's path template that answers `path` (a literal path wins over `{id}`), with and without its trailing slash. */
function templateOf (path: string): string | undefined {
  const slashed = path.endsWith('/') ? path : `${path}/`
  const literal = PATHS.find((p) => p === slashed)
  if (literal !== undefined || LITERALS.some((word) => slashed.endsWith(`/${word}/`))) return literal
  return PATHS.find((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(slashed))
}

// ---------------------------------------------------------------------------------------------
// Values

/** Values each type takes (as query text), some matching the seed. */
const VALID: Record<string, readonly string[]> = {
  integer: ['1', '2', '3', '0', '-1', '-5', '2147483647'],
  bigInt: ['1', '9000000000', '-1', '9223372036854775807'],
  real: ['1.5', '0', '-2', '0.01', '12.5', '1e3'],
  text: ['Widget', 'gizmo', 'a', 'x,y', 'é', '"q"', ''],
  boolean: ['true', 'false', '1', '0', 'yes', 'T'],
  uuid: ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 'urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
  date: ['2024-05-17', '1999-12-31', '2000-02-29', '0000-01-01', '9999-12-31'],
  time: ['12:30:00', '00:00:00', '23:59:59.5'],
  timestamp: ['2024-05-17T20:00:00', '2024-05-17', '1999-12-31T23:59:59.123'],
  timestamptz: ['2024-05-17T20:00:00Z', '2024-05-17T22:00:00+02:00', '2016-12-31T23:59:60Z', '2024-05-17t20:00:00z', '0000-01-01T00:00:00Z', '2024-05-17T20:00:00.123456789Z'],
  interval: ['P1D', 'PT2H', 'P1Y2M'],
  choice: ['alpha', 'beta'],
  key: ['acme', 'zeta', 'x', 'none']
}
function kindOf (f: FieldPath): string {
  const type = f.column.type === 'foreignKey' || f.column.type === 'serial' ? 'integer' : f.column.type === 'array' ? 'text' : f.column.type
  if (f.column.choices !== null && f.column.choices !== undefined) return 'choice'
  if (f.column.primaryKey && type === 'varchar') return 'key'
  if (['smallInt', 'integer'].includes(type)) return 'integer'
  if (['doublePrecision', 'numeric'].includes(type)) return 'real'
  if (['varchar', 'email', 'text', 'jsonb'].includes(type)) return 'text'
  return type
}
const HOSTILE = ['', ' ', 'abc', '\u0000', '1e309', 'NaN', '-0', '99999999999999999999', '2024-02-30', '25:00:00', 'P', '(', ')', ',', '"', '\\', 'null', 'true', '__proto__', 'a'.repeat(300), '%', 'ß', '𝄞']
const hostile = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...HOSTILE) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) })
const valueOf = (f: FieldPath): fc.Arbitrary<string> => fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...VALID[kindOf(f)] ?? VALID.text!) }, { weight: 1, arbitrary: hostile })

type Pair = readonly [string, string]

// ---------------------------------------------------------------------------------------------
// Query strings, from the mount's field paths

const treeValue = (text: string): string => /[,()"\\]/.test(text) || text === '' ? `"${text.replace(/[\\"]/g, '\\$&')}"` : text
const operatorOf = (f: FieldPath): fc.Arbitrary<string> => fc.constantFrom(...operatorsFor(f.column), ...(operatorsFor(f.column).includes('search') ? MATCH_TYPES : []))

function plainFilter (m: Mount): fc.Arbitrary<Pair[]> {
  return fc.constantFrom(...m.fields).chain((f) => operatorOf(f).chain((op) => {
    if (op === 'is_null' || op === 'not_null') return fc.constant<Pair[]>([[`${f.name}__operator`, op]])
    if ((MATCH_TYPES as readonly string[]).includes(op)) return valueOf(f).map((v): Pair[] => [[f.name, v], [`${f.name}__match`, op]])
    if (op === 'in' || op === 'not_in') return fc.array(valueOf(f), { minLength: 1, maxLength: 3 }).map((vs): Pair[] => [[`${f.name}__operator`, op], ...vs.map((v): Pair => [f.name, v])])
    return valueOf(f).map((v): Pair[] => op === 'e' ? [[f.name, v]] : [[f.name, v], [`${f.name}__operator`, op]])
  }))
}

function leaf (m: Mount): fc.Arbitrary<string> {
  return fc.constantFrom(...m.fields).chain((f) => operatorOf(f).chain((op) => {
    if (op === 'is_null' || op === 'not_null') return fc.constant(`${f.name}.${op}`)
    if (op === 'in' || op === 'not_in') return fc.array(valueOf(f), { minLength: 1, maxLength: 2 }).map((vs) => `${f.name}.${op}.(${vs.map(treeValue).join(',')})`)
    return valueOf(f).map((v) => `${f.name}.${op}.${treeValue(v)}`)
  }))
}

function tree (m: Mount): fc.Arbitrary<Pair[]> {
  const node = fc.tuple(fc.boolean(), fc.oneof(leaf(m), fc.tuple(fc.constantFrom('and', 'or'), fc.array(leaf(m), { minLength: 1, maxLength: 2 })).map(([l, cs]) => `${l}(${cs.join(',')})`)))
    .map(([not, cond]) => (not ? 'not.' : '') + cond)
  return fc.tuple(fc.constantFrom('__or', '__and'), fc.array(node, { minLength: 1, maxLength: 3 })).map(([key, cs]): Pair[] => [[key, `(${cs.join(',')})`]])
}

const commaList = (items: fc.Arbitrary<string>, max: number): fc.Arbitrary<string> => fc.array(items, { minLength: 1, maxLength: max }).map((xs) => xs.join(','))

function controls (m: Mount): fc.Arbitrary<Pair[]> {
  const names = m.fields.map((f) => f.name)
  const toOne = m.fields.filter((f) => !f.joins.some((j) => j.many)).map((f) => f.name)
  const embeds = [...new Set(m.fields.filter((f) => f.joins.some((j) => j.many)).map((f) => f.name.split('.').slice(0, f.joins.findIndex((j) => j.many) + 1).join('.')))]
  const parts: Array<fc.Arbitrary<Pair[]>> = [
    fc.oneof(commaList(fc.constantFrom(...names), 4), fc.constantFrom(...names)).map((v): Pair[] => [['__visible_fields', v]]),
    fc.array(fc.constantFrom(...names), { minLength: 2, maxLength: 3 }).map((vs): Pair[] => vs.map((v): Pair => ['__visible_fields', v])),
    commaList(fc.tuple(fc.boolean(), fc.constantFrom(...toOne)).map(([d, n]) => (d ? '-' : '') + n), 2).map((v): Pair[] => [['__order', v]]),
    fc.oneof(fc.integer({ min: 1, max: 3 }).map(String), hostile).map((v): Pair[] => [['__page', v]]),
    fc.oneof(fc.integer({ min: 1, max: (m.options.maxPageSize ?? 1000) + 1 }).map(String), hostile).map((v): Pair[] => [['__page_size', v]]),
    fc.constantFrom('true', 'false', '1', '0', 'TRUE', 'yes', 'maybe').map((v): Pair[] => [['__readable', v]]),
    fc.constantFrom('true', '0', 'no').map((v): Pair[] => [['__range_header', v]]),
    fc.constantFrom('things', '', 'a b', 'a\u0000').map((v): Pair[] => [['__range_header', 'true'], ['__range_header_name', v]]),
    fc.constantFrom('', 'garbage', 'eyJ4IjoxfQ').map((v): Pair[] => [['__cursor', v]]),
    fc.constantFrom('json', 'ndjson', 'csv', 'xml').map((v): Pair[] => [['__format', v]]),
    fc.constantFrom('widget', '"a small"', '-gizmo', 'or', '', '\u0000').map((v): Pair[] => [['__search', v]])
  ]
  if (embeds.length > 0) {
    parts.push(
      fc.tuple(fc.constantFrom(...embeds), fc.oneof(fc.integer({ min: 0, max: 4 }).map(String), hostile)).map(([e, v]): Pair[] => [[`${e}.__page_size`, v]]),
      fc.tuple(fc.constantFrom(...embeds), fc.constantFrom('name', '-id', 'nope')).map(([e, v]): Pair[] => [[`${e}.__order`, v]])
    )
  }
  return fc.array(fc.oneof(...parts), { maxLength: 3 }).map((groups) => groups.flat())
}

function aggregateQuery (m: Mount): fc.Arbitrary<Pair[]> {
  const toOne = m.fields.filter((f) => !f.joins.some((j) => j.many))
  const fn = fc.tuple(fc.constantFrom('count', 'count_distinct', 'avg', 'sum', 'min', 'max'), fc.constantFrom(...toOne)).map(([f, c]) => `${f}(${c.name})`)
  const group = fc.tuple(fc.constantFrom(...toOne), fc.constantFrom('', '', ':year', ':month')).map(([c, u]) => c.name + u)
  const parts: Array<fc.Arbitrary<Pair[]>> = [
    commaList(fc.oneof(fc.constant('count'), fn), 3).map((v): Pair[] => [['__aggregate', v]]),
    commaList(group, 2).map((v): Pair[] => [['__group_by', v]]),
    fc.constantFrom('(count.gte.1)', '(count.lt.5,not.count.e.2)', '(or(count.e.1,count.e.2))', '(nope.e.1)', '(count.gte.x)').map((v): Pair[] => [['__having', v]]),
    fc.constantFrom('-count', 'count', 'nope').map((v): Pair[] => [['__order', v]]),
    fc.constantFrom('true', '1').map((v): Pair[] => [['__readable', v]])
  ]
  return fc.array(fc.oneof(...parts), { maxLength: 4 }).map((groups) => groups.flat())
}

// ---------------------------------------------------------------------------------------------
// Query strings, from the document's parameters of the operation

/** A value a parameter's schema allows (the first enum members, an integer in range...), or a hostile one. */
function fromSchema (schema: Doc | undefined): fc.Arbitrary<string> {
  if (schema === undefined) return hostile
  const one = schema.type === 'array' ? schema.items ?? {} : schema
  const branch = Array.isArray(one.anyOf) ? one.anyOf.find((b: Doc) => b.type !== 'null') ?? {} : one
  if (Array.isArray(branch.enum)) return fc.constantFrom(...branch.enum.map(String))
  if (branch.type === 'integer') return fc.integer({ min: Math.max(branch.minimum ?? -1000, -1000), max: Math.min(branch.maximum ?? 1000, 1000) }).map(String)
  if (branch.type === 'number') return fc.constantFrom('1.5', '0', '-3')
  if (branch.type === 'boolean') return fc.constantFrom('true', 'false')
  const formats: Record<string, string> = { date: '2024-05-17', 'date-time': '2024-05-17T20:00:00Z', uuid: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', time: '12:30:00', duration: 'P1D', email: 'a@example.com' }
  if (typeof branch.format === 'string' && formats[branch.format] !== undefined) return fc.constant(formats[branch.format]!)
  if (branch.type === 'string' && typeof branch.pattern === 'string') return fc.constantFrom('1', '12.5', '0', 'a')
  return fc.constantFrom('a', 'Widget', '1')
}

function documented (template: string, method: string): fc.Arbitrary<Pair[]> {
  const parameters = ((document.paths[template]?.[method.toLowerCase()]?.parameters ?? []) as Doc[]).filter((p) => p.in === 'query')
  if (parameters.length === 0) return fc.constant([])
  const pair = fc.constantFrom(...parameters).chain((p) => fc.oneof(
    { weight: 5, arbitrary: fromSchema(p.schema).map((v): Pair[] => [[p.name, v]]) },
    { weight: 1, arbitrary: fc.array(fromSchema(p.schema), { minLength: 2, maxLength: 3 }).map((vs): Pair[] => vs.map((v): Pair => [p.name, v])) }
  ))
  return fc.array(pair, { maxLength: 3 }).map((groups) => groups.flat())
}

const HOSTILE_KEYS = ['nope', '__proto__', 'pin', 'name__operator', 'name__match', '__page', '__cursor', '__aggregate', '__on_conflict', 'parts.__order', 'maker.name', 'a[b]', '']

function queryFor (m: Mount | undefined, template: string, method: string): fc.Arbitrary<Pair[]> {
  const tail = template.slice((m?.prefix ?? '').length)
  const hostilePairs = fc.array(fc.tuple(fc.constantFrom(...HOSTILE_KEYS), hostile), { maxLength: 1 }).map((ps) => ps as Pair[])
  const fromDoc = documented(template, method)
  if (m === undefined) return fc.oneof(fromDoc, hostilePairs)
  const filters = fc.array(fc.oneof({ weight: 3, arbitrary: plainFilter(m) }, { weight: 1, arbitrary: tree(m) }), { maxLength: 2 }).map((gs) => gs.flat())
  const mine = tail === '/aggregate/'
    ? fc.tuple(filters, aggregateQuery(m)).map(([a, b]) => [...a, ...b])
    : tail === '/' || tail === '/count/'
      ? fc.tuple(filters, controls(m)).map(([a, b]) => [...a, ...b])
      : tail === '/{id}/'
        ? controls(m)
        : tail === '/ids/'
          ? fc.array(fc.tuple(fc.constantFrom('search', 'limit', 'offset'), fc.oneof(fc.constantFrom('wid', '0', '5', '20', '21', 'a\u0000'), hostile)), { maxLength: 3 }).map((ps) => ps as Pair[])
          : method === 'POST' ? fc.constantFrom<Pair[]>([], [['__on_conflict', 'name']], [['__on_conflict', 'id']], [['__on_conflict', 'code']]) : fc.constant([])
  return fc.tuple(fc.oneof({ weight: 3, arbitrary: mine }, { weight: 2, arbitrary: fromDoc }), hostilePairs).map(([a, b]) => [...a, ...b])
}

// ---------------------------------------------------------------------------------------------
// Bodies

/** A JSON value a column takes, or with `bad` also values it refuses (out of range, of another type, no such row). */
function jsonValue (name: string, type: string, bad: boolean): fc.Arbitrary<unknown> {
  const valid: Record<string, readonly unknown[]> = {
    integer: [-3, 0, 7],
    smallInt: [1, -32768, 32767],
    bigInt: ['9000000000', 5, '-1'],
    real: [1.5, 0, -2.25],
    doublePrecision: [1e300, 0.1, -5],
    numeric: ['12.50', 3, '999999.99', 0.5],
    boolean: [true, false],
    varchar: ['Thing', 'Other', 'acme', 'zeta', 'sale', 'nope', 'forbidden'],
    text: ['text', '', null],
    email: ['a@example.com', null, 'a+b@example.com', 'a@b', '"x y"@example.com', 'a@[127.0.0.1]', 'ü@example.com'],
    uuid: ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', null, 'urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '00000000-0000-0000-0000-000000000000'],
    date: ['2024-05-17', null, '0000-01-01', '9999-12-31'],
    time: ['12:30:00', '23:59:59.5', null],
    timestamp: ['2024-05-17T20:00:00', '2024-05-17'],
    timestamptz: ['2024-05-17T20:00:00Z', '2024-05-17T20:00:00+02:00', null, '2016-12-31T23:59:60Z', '2024-05-17t20:00:00z', '0000-01-01T00:00:00Z'],
    interval: ['P1D', 'PT2H', null],
    array: [[], ['a', 'b']],
    foreignKey: name === 'maker' ? ['acme', 'zeta', null] : [1, 3],
    serial: [null]
  }
  const refused: Record<string, readonly unknown[]> = {
    integer: [2147483648, 1.5],
    smallInt: [40000],
    bigInt: ['1e3', 1.5],
    real: [3.5e38],
    numeric: ['1234567.1', 0.001, '1e3'],
    varchar: ['forbidden', 'nope', 'a'.repeat(50)],
    text: ['a\u0000b'],
    email: ['nope'],
    uuid: ['x'],
    date: ['2023-02-30'],
    time: ['24:00:01', 'x'],
    timestamp: ['x', '2023-02-30'],
    timestamptz: ['2024-05-17T20:00:00'],
    interval: ['x', 'P'],
    array: [[1], 'a'],
    foreignKey: name === 'maker' ? ['nope'] : [999, null],
    serial: [1, 999]
  }
  const good = type === 'jsonb' ? fc.jsonValue({ maxDepth: 2 }) : fc.constantFrom(...valid[type] ?? ['x'])
  if (!bad) return good
  return fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: fc.constantFrom(null, 'x', 1, true, [], {}, ...refused[type] ?? []) })
}

function rowBody (table: Table, nested: boolean): fc.Arbitrary<Record<string, unknown>> {
  const required = table.columns.filter((c) => c.required || c.name === 'name' || c.name === 'item').map((c) => c.name)
  const record = (bad: boolean): fc.Arbitrary<Record<string, unknown>> =>
    fc.record(Object.fromEntries(table.columns.map((c) => [c.name, jsonValue(c.name, c.type, bad)])), { requiredKeys: required })
  const row = fc.oneof({ weight: 3, arbitrary: record(false) }, { weight: 2, arbitrary: record(true) })
  const extra = fc.oneof(
    { weight: 6, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.constantFrom({ nope: 1 }, { pin: 'x' }, { parts: 'x' }) },
    ...(nested ? [{ weight: 2, arbitrary: fc.array(rowBody(part, false).map(({ item: _item, ...rest }) => rest), { maxLength: 2 }).map((parts) => ({ parts })) }] : [])
  )
  return fc.tuple(row, extra).map(([a, b]) => ({ ...a, ...b }))
}

interface Body { readonly payload?: string, readonly type?: string }
function bodyFor (table: Table | undefined, nested: boolean): fc.Arbitrary<Body> {
  const row = table === undefined ? fc.constant({ name: 'x' }) : rowBody(table, nested)
  return fc.oneof(
    { weight: 6, arbitrary: row.map((r): Body => ({ payload: JSON.stringify(r), type: 'application/json' })) },
    { weight: 2, arbitrary: fc.array(row, { maxLength: 3 }).map((rs): Body => ({ payload: JSON.stringify(rs), type: 'application/json' })) },
    { weight: 1, arbitrary: fc.constantFrom<Body>({}, { payload: '{"name": ', type: 'application/json' }, { payload: 'name=x', type: 'application/x-www-form-urlencoded' }, { payload: 'x', type: 'text/plain' }, { payload: 'null', type: 'application/json' }, { payload: '"x"', type: 'application/json; charset=utf-8' }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v): Body => ({ payload: JSON.stringify(v), type: 'application/json' })) }
  )
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Request { readonly method: string, readonly path: string, readonly pairs: readonly Pair[], readonly body: Body, readonly headers: Record<string, string> }

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
const ids = (m: Mount | undefined): fc.Arbitrary<string> => fc.oneof(
  { weight: 4, arbitrary: m?.options.table === maker ? fc.constantFrom('acme', 'zeta', 'x', 'nope') : fc.constantFrom('1', '2', '3', '4', '999') },
  { weight: 1, arbitrary: fc.constantFrom('abc', '0', '-1', '1.5', '99999999999999999999', 'waytoolongcode', '%00', '%ZZ', 'a%20b', '__proto__') }
)

const mountOf = (template: string): Mount | undefined => [...MOUNTS].sort((a, b) => b.prefix.length - a.prefix.length).find((m) => template.startsWith(`${m.prefix}/`))
/** Paths of the document and some it does not have. */
const UNDOCUMENTED = ['/nope/', '/items/1/2/', '/items/count/x/', '/items/aggregate/1/', '/ro/items/aggregate/', '/parts/aggregate/', '/items', '/items/1', '/']

const requests: fc.Arbitrary<Request> = fc.tuple(
  fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...PATHS.filter((p) => !p.startsWith('/docs') && !p.startsWith('/login'))) }, { weight: 1, arbitrary: fc.constantFrom(...UNDOCUMENTED, '/login/') }),
  fc.oneof({ weight: 3, arbitrary: fc.constant('documented') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) })
).chain(([template, drawn]) => {
  const documentedMethods = Object.keys(document.paths[template] ?? {}).map((x) => x.toUpperCase())
  const method = drawn === 'documented' && documentedMethods.length > 0 ? fc.constantFrom(...documentedMethods) : fc.constantFrom(...METHODS)
  const m = mountOf(template)
  return method.chain((method) => fc.record({
    method: fc.constant(method),
    path: template.includes('{id}') ? ids(m).map((id) => template.replace('{id}', id)) : fc.constant(template),
    pairs: queryFor(m, template, method),
    body: ['POST', 'PUT', 'PATCH'].includes(method) ? bodyFor(m?.options.table as Table | undefined, m?.options.nestedWrites !== undefined) : fc.constant({}),
    headers: fc.record({
      authorization: fc.constantFrom(`Bearer ${token}`, `Bearer ${token}`, 'Bearer x', 'Basic x'),
      accept: fc.constantFrom('application/json', 'text/csv', 'application/x-ndjson', '*/*', 'text/html'),
      'if-match': fc.constantFrom('"x"', '*', 'W/"x"'),
      'if-none-match': fc.constantFrom('"x"', '*')
    }, { requiredKeys: [] })
  }))
})

// ---------------------------------------------------------------------------------------------
// What the document says of an answer

/** Headers the server sends that the document must declare where it sends them. */
const DECLARED = ['content-range', 'link', 'location', 'etag', 'x-deleted-count', 'retry-after', 'www-authenticate', 'allow']

function violations (r: Request, url: string, response: LightMyRequestResponse): string[] {
  const where = `${r.method} ${url.slice(0, 300)} ${JSON.stringify(r.headers)} ${r.body.type ?? ''} ${(r.body.payload ?? '').slice(0, 200)} → ${response.statusCode}`
  const status = response.statusCode
  const type = String(response.headers['content-type'] ?? '')
  const media = type.split(';')[0]!.trim()
  const problems: string[] = []
  // SPEC §1 for every JSON answer (the exports and pages are not JSON; 204 and 304 have no body).
  if (r.method !== 'HEAD' && (status >= 400 || media === 'application/json')) {
    const found = contractProblem(response, [status], () => null)
    if (found !== null) problems.push(found)
  }
  const template = templateOf(r.path.replace(/%[0-9A-Fa-f]{2}/g, 'x'))
  const operation = template === undefined ? undefined : document.paths[template][(r.method === 'HEAD' ? 'get' : r.method).toLowerCase()]
  if (operation === undefined) {
    // Not in the document: a 404 (no such route), a 405 for a method the mount does not have, a
    // 204 to OPTIONS (SPEC §6.13; docs/openapi.md), or what a hook guarding every operation of
    // the path answers first (a 401 of jwtAuth).
    const guards = template === undefined ? [] : Object.values(document.paths[template] as Doc).map((op) => Object.keys(op.responses))
    const guarded = guards.length > 0 && guards.every((statuses) => statuses.includes(String(status))) && status >= 400
    const allowed = status === 404 || status === 405 || (status === 204 && r.method === 'OPTIONS') || guarded || (status === 400 && response.body.includes('FST_ERR_BAD_URL'))
    if (!allowed) problems.push(`undocumented ${template ?? 'path'}, answered ${status}`)
    return problems.map((p) => `${where}: ${p}`)
  }
  const documentedResponse = operation.responses[String(status)]
  if (documentedResponse === undefined) return [`${where}: status not documented (${Object.keys(operation.responses).join(' ')}) ${response.body.slice(0, 300)}`]
  const declared = new Set(Object.keys(documentedResponse.headers ?? {}).map((h) => h.toLowerCase()))
  for (const header of DECLARED) {
    if (response.headers[header] !== undefined && !declared.has(header)) problems.push(`header ${header} not declared for ${status}`)
  }
  const headerCheck = api.validator.validateResponseHeaders(response.headers, operation.operationId, { statusCode: status })
  if (!headerCheck.valid) problems.push(`headers: ${JSON.stringify(headerCheck.errors)}`)
  if (response.body !== '' && r.method !== 'HEAD') {
    const content = documentedResponse.content?.[media]
    if (content === undefined) {
      problems.push(`${media} not documented (${Object.keys(documentedResponse.content ?? {}).join(' ')})`)
    } else if (media === 'application/json') {
      const result = api.validator.validateResponse(JSON.parse(response.body), operation.operationId, status)
      if (!result.valid) problems.push(`${JSON.stringify(result.errors)} ${response.body.slice(0, 300)}`)
    } else if (content.schema?.type !== 'string') {
      problems.push(`${media} is not a string`)
    }
  }
  return problems.map((p) => `${where}: ${p}`)
}

/**
 * Codes of refusals a request schema could have said: the query's or the body's shape. Not a
 * repeated filter (QS_REPEATED): whether it may repeat depends on its `__operator`, which the
 * parameter's description says and JSON Schema cannot.
 */
const SCHEMA_CODES = new Set([
  'TABLECRUD_ERR_QS_UNKNOWN_FIELD', 'TABLECRUD_ERR_QS_UNKNOWN_OPERATOR', 'TABLECRUD_ERR_QS_UNKNOWN_MATCH', 'TABLECRUD_ERR_QS_INVALID_BOOLEAN',
  'TABLECRUD_ERR_QS_INVALID_NUMBER', 'TABLECRUD_ERR_QS_INVALID_PAGE', 'TABLECRUD_ERR_QS_INVALID_PAGE_SIZE', 'TABLECRUD_ERR_QS_INVALID_FORMAT',
  'TABLECRUD_ERR_QS_INVALID_EMBED_PAGE_SIZE', 'TABLECRUD_ERR_QS_INVALID_VALUE', 'TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE',
  'TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE', 'TABLECRUD_ERR_QS_INVALID_STRING', 'TABLECRUD_ERR_BODY_INVALID', 'TABLECRUD_ERR_ID_INVALID', 'TABLECRUD_ERR_BODY_MEDIA_TYPE'
])

/** Parameters whose value is a text of a grammar: comma lists of names, trees, outputs, cursors. */
const GRAMMAR = /(^|\.)__(order|or|and|having|aggregate|group_by|cursor|visible_fields)$/

/**
 * Why a 400 refuses a request the document accepts, or null: the request matches its
 * operation's parameters and body schema (openapi-backend), names only documented parameters,
 * and the server still says its query, id or body is malformed in a way a schema could say.
 */
function refusedButDocumented (r: Request, response: LightMyRequestResponse): string | null {
  if (response.statusCode !== 400 || r.method === 'HEAD') return null
  const template = templateOf(r.path)
  const operation = template === undefined ? undefined : document.paths[template][r.method.toLowerCase()]
  if (operation === undefined || r.path.includes('%')) return null
  const names = new Set(((operation.parameters ?? []) as Doc[]).filter((p) => p.in === 'query').map((p) => p.name as string))
  if (!r.pairs.every(([k]) => names.has(k))) return null
  // Their strings have a grammar of their own (names, trees, cursors) that the document describes in words.
  if (r.pairs.some(([k]) => GRAMMAR.test(k))) return null
  // Ajv's type coercion reads blank text as the number 0: the checker's leniency, not the document's.
  if (r.pairs.some(([, v]) => v.trim() !== v || v === '')) return null
  const query: Record<string, string | string[]> = {}
  for (const [k, v] of r.pairs) query[k] = k in query ? [query[k]!].flat().concat(v) : v
  const headers = r.body.type === undefined ? r.headers : { ...r.headers, 'content-type': r.body.type }
  const result = api.validator.validateRequest({ method: r.method, path: r.path, query, headers, body: r.body.payload }, operation.operationId)
  const body = JSON.parse(response.body) as { code: string, message: string }
  if (!result.valid || !SCHEMA_CODES.has(body.code)) return null
  // Rules between the elements of an array body, which JSON Schema cannot state: the
  // description of __on_conflict says this one.
  if (/repeats the __on_conflict value/.test(body.message)) return null
  // A Numeric filter is typed `number` or a decimal string, and a number in exponent form (1e3)
  // is a 400: a question for SPEC §2.2, reported, not decided here.
  if (/not a valid decimal number/.test(body.message) && r.pairs.some(([, v]) => /e/i.test(v))) return null
  return `${r.method} ${r.path}?${urlOf(r).split('?')[1] ?? ''} ${(r.body.payload ?? '').slice(0, 200)}: the document accepts it, the server answers ${response.body.slice(0, 300)}`
}

const urlOf = (r: Request): string => r.pairs.length === 0 ? r.path : `${r.path}?${r.pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`

t.test('what a validator and a hook refuse is documented too', async (t) => {
  const answers: number[] = []
  const requests = [
    ['POST', '/items/', { name: 'nope', active: true, labels: [] }],
    ['POST', '/items/', { name: 'forbidden', active: true, labels: [] }],
    ['PUT', '/items/2/', { name: 'forbidden', active: true, labels: [] }],
    ['POST', '/items/', { name: 'fine', active: true, labels: [], parts: [{ name: 'cog' }] }]
  ] as const
  for (const [method, path, body] of requests) {
    const r: Request = { method, path, pairs: [], body: { payload: JSON.stringify(body), type: 'application/json' }, headers: {} }
    const response = await app.inject({ method, url: path, payload: r.body.payload, headers: { 'content-type': 'application/json' } })
    t.strictSame(violations(r, path, response), [], `${method} ${path} ${body.name}`)
    answers.push(response.statusCode)
  }
  t.strictSame(answers, [403, 400, 400, 201])
})

t.test('every answer to random requests is what the document says', async (t) => {
  const statuses = new Map<number, number>()
  const refused: string[] = []
  await fc.assert(fc.asyncProperty(requests, async (r) => {
    const url = urlOf(r)
    const options: InjectOptions = { method: r.method as InjectOptions['method'], url, headers: { ...r.headers, ...(r.body.type === undefined ? {} : { 'content-type': r.body.type }) }, ...(r.body.payload === undefined ? {} : { payload: r.body.payload }) }
    const response = await app.inject(options)
    statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
    const problems = violations(r, url, response)
    if (problems.length > 0) throw new Error(problems.join('\n'))
    const found = refusedButDocumented(r, response)
    if (found !== null) refused.push(found)
  }), { numRuns: RUNS })
  t.comment(`statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`)
  t.strictSame(refused, [], 'no request the document accepts is refused for its shape')
  for (const status of [200, 204, 400, 404, 405]) t.ok((statuses.get(status) ?? 0) > 0, `some ${status}s`)
})
