import t, { type Test } from 'tap'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { tableCrud, type TableCrudOptions } from '../../../plugins/crud/table-crud.js'
import { fieldPaths, MATCH_TYPES, operatorsFor, type FieldPath } from '../../../lib/query/fields.js'
import { embedPaths } from '../../../lib/query/embed.js'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { createTables } from '../../../lib/db/index.js'
import { buildApp } from '../../helpers/app.js'
import { contractProblem } from '../../helpers/contract.js'
import { testDatabase } from '../../helpers/db.js'
import { closeIdleConnections } from '../../fixtures/movies.js'
import { award, film, genre, person, seedRelational } from '../../fixtures/relational.js'
import { film as catalogueFilm, person as staffPerson, seedAggregates } from '../../fixtures/aggregates.js'

/*
 * Property test, the relational sibling of fuzz.test.ts: random and hostile query strings using
 * the features of SPEC §7 and §8 (embeds and their controls, filters across relations, `__or`/
 * `__and` trees, `__order` across relations, keyset cursors, estimated counts, aggregates,
 * full-text search, exports) never get a 5xx (SPEC §1: 500 is reserved for bugs), every answer
 * is JSON in the SPEC shape, a 200 has its endpoint's shape, and nothing a read says changes the
 * tables. Valid pieces are drawn from the mounts' own field paths, so a fair share succeeds.
 */

/** Runs per property; FUZZ_RUNS raises it for a longer hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300)

/** A mount of the app under test and what the generators draw from it. */
interface Mount {
  readonly [fc.toStringMethod]: () => string
  readonly prefix: string
  readonly options: TableCrudOptions
  /** Every field path filters and trees may name: columns, to-one and to-many paths. */
  readonly fields: readonly FieldPath[]
  /** The paths that reach one row: what `__order`, `__group_by` and aggregates may name. */
  readonly toOne: readonly FieldPath[]
  /** Each embed path with its own table's columns (what `<path>.__order` names). */
  readonly embeds: ReadonlyMap<string, readonly string[]>
  /** Every key a row may hold at any depth: path segments and `<fk>_readable`. */
  readonly keys: ReadonlySet<string>
  /** The last segment of each embed path: an array in a row. */
  readonly embedKeys: ReadonlySet<string>
  readonly pageSize: number
  readonly maxPageSize: number
  readonly maxEmbedRows: number
}

function mount (prefix: string, options: TableCrudOptions): Mount {
  const maxJoins = options.maxJoins ?? 0
  const fields = fieldPaths(options.table as Table, maxJoins, true, true)
  const embeds = new Map([...embedPaths(fields).values()].map((path) => [path.name, fields
    .filter((f) => f.joins.length === path.joins.length && f.name.startsWith(`${path.name}.`))
    .map((f) => f.name.slice(path.name.length + 1))]))
  const segments = fields.flatMap((f) => f.name.split('.'))
  const keys = new Set([...segments, ...fields.filter((f) => f.column.type === 'foreignKey').map((f) => `${f.column.name}_readable`)])
  return {
    // fast-check prints a mount by its prefix in a counterexample, not its whole table definition.
    [fc.toStringMethod]: () => prefix,
    prefix,
    options,
    fields,
    toOne: fields.filter((f) => !f.joins.some((j) => j.many)),
    embeds,
    keys,
    embedKeys: new Set([...embeds.keys()].map((name) => name.split('.').at(-1)!)),
    pageSize: options.pageSize ?? 15,
    maxPageSize: options.maxPageSize ?? 1000,
    maxEmbedRows: options.maxEmbedRows ?? 100
  }
}

/**
 * Makers and their parts, whose columns are named like the outputs of paths (`maker_code` and
 * `maker.code`, `maker_founded_year` and `maker.founded:year`): names that one query refuses
 * as a clash, and that two queries must not confuse (SPEC §8.3).
 */
const maker = defineTable('fr_maker', {
  code: column.varchar({ length: 8 }),
  founded: column.date({ null: true })
}, { readable: 'code' })
const part = defineTable('fr_part', {
  maker: column.foreignKey(maker, { related: 'parts' }),
  maker_code: column.integer({ null: true }),
  maker_founded_year: column.integer({ null: true }),
  weight: column.real({ null: true })
})

// People have films (reverse), pupils and a mentor (a self-reference); films have genres
// (many-to-many through a junction) and awards; the catalogue has a search configuration and a
// value of every aggregated type. Each mount allows two hops where its fixture has them.
const PEOPLE = mount('/people', { table: person, maxJoins: 2, maxPageSize: 20, maxEmbedRows: 3, countMode: 'estimated', exactCountLimit: 0 })
const FILMS = mount('/films', { table: film, maxJoins: 2, maxPageSize: 20 })
const GENRES = mount('/genres', { table: genre, maxJoins: 2, maxPageSize: 20, maxEmbedRows: 2 })
const AWARDS = mount('/awards', { table: award, maxJoins: 1, maxPageSize: 20 })
const CATALOGUE = mount('/catalogue', { table: catalogueFilm, maxJoins: 2, maxPageSize: 20, aggregates: true, maxExportRows: 50 })
const STAFF = mount('/staff', { table: staffPerson, maxJoins: 1, maxPageSize: 20, aggregates: true })
const PARTS = mount('/parts', { table: part, maxJoins: 1, maxPageSize: 20, aggregates: true })
const MOUNTS = [PEOPLE, FILMS, GENRES, AWARDS, CATALOGUE, STAFF, PARTS]

const db = await testDatabase(t)
if (db.embedded) closeIdleConnections(db.pool)
await seedRelational(db.pool)
await seedAggregates(db.pool)
await createTables(db.pool, [maker, part])
await db.pool.query("INSERT INTO fr_maker (code, founded) VALUES ('7', '1990-05-01'), ('acme', NULL), ('', '2001-01-01')")
await db.pool.query('INSERT INTO fr_part (maker, maker_code, maker_founded_year, weight) VALUES (1, 7, 1990, 1.5), (2, 7, NULL, NULL), (2, 8, 2001, 0.25), (NULL, NULL, 1990, 3)')
const TABLES = ['rel_person', 'rel_film', 'rel_genre', 'rel_film_genre', 'rel_award', 'agg_studio', 'agg_person', 'agg_film', 'agg_long', 'fr_maker', 'fr_part']
// Statistics, so the estimated counts of /people are estimates rather than exact counts.
await db.pool.query(`ANALYZE ${TABLES.join(', ')}`)
const app = await buildApp(t, db, [], async (app) => {
  for (const m of MOUNTS) await app.register(tableCrud, { ...m.options, prefix: m.prefix })
})
if (db.embedded) closeIdleConnections(app.pg.pool)

/** Row count and a checksum of every table, read through the app's own pool. */
async function snapshot (): Promise<unknown> {
  const out: Record<string, unknown> = {}
  for (const table of TABLES) {
    const { rows } = await app.pg.query(`SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS sum FROM "${table}" AS t`)
    out[table] = rows[0]
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Values and their encodings

/** Values of the seeded data by column type: these make filters that parse, and some that match. */
const VALID: Record<string, readonly string[]> = {
  integer: ['1', '2', '3', '0', '-1', '1944', '1971', '1977', '2003', '2030'],
  real: ['8', '7.5', '8.6', '9.25', '0', '-1.5', '6.4'],
  text: ['Star', 'coppola', 'the', 'Oscar', 'sci-fi', 'drama', 'Lucas', 'a b', 'x,y', '"q"', 'ß', 'wars'],
  array: ['space', 'classic', 'tokyo', 'crime'],
  date: ['1977-05-25', '2003-09-12', '1971-03-11'],
  timestamp: ['1977-05-25T19:30:00', '1980-05-17', '2003-08-29T19:00:00.5'],
  timestamptz: ['1977-05-26T01:00:00Z', '2003-09-12T15:00:00+02:00'],
  bigInt: ['12', '9000000000', '-5']
}
const KIND: Record<string, keyof typeof VALID> = {
  serial: 'integer',
  integer: 'integer',
  smallInt: 'integer',
  foreignKey: 'integer',
  bigInt: 'bigInt',
  real: 'real',
  doublePrecision: 'real',
  numeric: 'real',
  varchar: 'text',
  text: 'text',
  email: 'text',
  array: 'array',
  date: 'date',
  timestamp: 'timestamp',
  timestamptz: 'timestamptz'
}
/** Values each type takes at the edges of its range or its text, where PostgreSQL may think otherwise. */
const EDGES: Record<keyof typeof VALID, readonly string[]> = {
  integer: ['2147483647', '-2147483648', '+5', '007'],
  real: ['3.4028234e38', '-3.4e38', '1e-45', '1e-300', '1.7976931348623157e308', '5e-324', '-0', '12345678901234.56'],
  text: ['a'.repeat(60), 'İ', 'ẞ', '%_\\', '\t', ' ', 'NULL', '\u00a0'],
  array: ['a'.repeat(60), '{', '}', 'NULL', '"', ','],
  date: ['0001-01-01', '9999-12-31', '5874897-12-31', '2000-02-29'],
  timestamp: ['0001-01-01T00:00:00', '294276-12-31T23:59:59.999999', '1977-05-25T19:30:00.9999995', '1977-05-25T24:00:00'],
  timestamptz: ['0001-01-01T00:00:00+14:00', '294276-12-31T23:59:59Z', '1977-05-25T19:30:00.123456-15:59', '1977-05-25T19:30:00+00:00'],
  bigInt: ['9223372036854775807', '-9223372036854775808', '9007199254740993']
}
const validValue = (f: FieldPath): fc.Arbitrary<string> => {
  const kind = KIND[f.column.type] ?? 'text'
  return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...VALID[kind]!) }, { weight: 1, arbitrary: fc.constantFrom(...EDGES[kind]!) })
}

/** Values no column takes, or takes at its edges: wrong types, huge numbers, NUL, lone surrogates, syntax of the grammars. */
const HOSTILE = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udc00y', '\ud83d', '𝄞', '\u202e', '\uFEFF', 'é',
  '1e309', '-1e309', 'NaN', 'Infinity', '-Infinity', '99999999999999999999999999999', '2147483648', '-2147483649',
  '9223372036854775808', '1e-400', '0x10', '1.', '.5', '-0', '9'.repeat(400),
  'true', 'null', 'NULL', '[]', '{}', '{1,2}', '(', ')', '((', '))', ',', ',,', '.', '..', '"', '\\', '\\"', "'", '`', ';', '%', '_', '*', ':*', '!', '&', '|', '<->',
  "'; DROP TABLE rel_film; --", '"; DELETE FROM agg_film; --', "') OR 1=1 --", '$1', '$$x$$', '/* */', 'E\'\\x00\'',
  '2020-02-30', '0000-01-01', '294277-01-01', 'infinity', '-infinity', 'epoch', 'now', '1977-05-25T25:00:00', '2003-09-12T15:00:00+99:00',
  '__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty',
  'films', 'director.name', 'films.title', '-year', 'id,-id', 'count', 'count()', 'sum(*)', 'released:year',
  'a'.repeat(5000), '('.repeat(2000), `${'a,'.repeat(1500)}a`
]
const hostile = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) }
)

/** Keys a client may send by mistake or malice: prototype names, mangled paths, secrets, other endpoints' parameters. */
const HOSTILE_KEYS = [
  '__proto__', 'constructor', 'prototype', 'toString', '__proto__.name', 'constructor.prototype', 'films.__proto__', '__proto__.__order',
  'constructor.__page_size', '__proto__[name]', 'a[b]', 'id[]', '.', '..', '.name', 'name.', 'films..title', 'director..name', 'films.__page',
  'films.__order.__order', '.__order', '__order.__order', 'x.__page_size', 'films.title.__order', 'director.__order', 'mentor.__page_size',
  'pupils.pupils.pupils.name', 'films.genres.films.title', 'pin', 'mentor.pin', 'budget_note', 'films.budget_note', 'secret_film', 'hidden_awards.name',
  'secret_note', 'director.pin', '__search', '__having', '__group_by', '__aggregate', '__cursor', '__format', '__max_affected', '__on_conflict',
  '__unknown', '__', '', ' ', 'name__operator__operator', 'name__match__operator', '__operator', '__match', 'NAME', 'Films.title', 'films.TITLE',
  'films.title__operator', 'films.title__match', 'films.rating__operator', 'director.born__operator', '%', '&', '=', '\u0000', '\ud800'
]

/** The URL form of a text: percent-encoded, a lone surrogate as the three bytes CESU-8 would give (no valid UTF-8). */
function enc (text: string): string {
  let out = ''
  for (const ch of text) {
    const code = ch.codePointAt(0)!
    out += code >= 0xd800 && code <= 0xdfff
      ? [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
      : encodeURIComponent(ch)
  }
  return out
}

/** Percent-encodings a well-formed URL would not hold, or characters it would encode, sent raw. */
const MANGLED = fc.constantFrom('%', '%zz', '%2', '%%', '%C0%AF', '%FF', '%00', '%E2%82', '%ED%A0%80', '+', '%2B', '%26', '%3D', '%2C', '%28', '%29', '%22', '%5C', '(', ')', ',', '"', '[', ']', '\\', '|', '^', '#')

type Pair = readonly [string, string]

/**
 * Pairs shuffled, each key and value encoded, joined; one query in four with mangled
 * percent-encodings or raw characters spliced in anywhere (a key, a value, a separator).
 */
function queryOf (parts: fc.Arbitrary<readonly Pair[]>): fc.Arbitrary<string> {
  const clean = parts
    .chain((pairs) => fc.tuple(fc.shuffledSubarray([...pairs], { minLength: pairs.length }), fc.constantFrom('&', '&', '&', '&&')))
    .map(([pairs, sep]) => pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join(sep))
  const splice = (text: string, [piece, at]: readonly [string, number]): string => text.slice(0, at % (text.length + 1)) + piece + text.slice(at % (text.length + 1))
  return fc.oneof(
    { weight: 3, arbitrary: clean },
    { weight: 1, arbitrary: fc.tuple(clean, fc.array(fc.tuple(MANGLED, fc.nat()), { minLength: 1, maxLength: 2 })).map(([text, pieces]) => pieces.reduce(splice, text)) }
  )
}

/** Hostile pairs: hostile keys with any value, real keys with hostile values. */
function hostilePair (m: Mount): fc.Arbitrary<Pair> {
  const real = fc.constantFrom(...m.fields.map((f) => f.name), '__order', '__visible_fields', '__page', '__page_size', '__readable', '__range_header', '__or', '__and', '__search', '__cursor', '__format')
  return fc.oneof(
    fc.tuple(fc.constantFrom(...HOSTILE_KEYS), fc.oneof(hostile, validValue(m.fields[0]!))),
    fc.tuple(real, hostile),
    fc.tuple(fc.constantFrom(...m.fields.map((f) => f.name)).map((name) => `${name}__operator`), fc.oneof(hostile, fc.constantFrom('e', 'lt', 'in', 'not_in', 'search', 'is_null', 'contains', 'E', 'eq')))
  )
}

// ---------------------------------------------------------------------------------------------
// Filters and trees

const field = (fields: readonly FieldPath[]): fc.Arbitrary<FieldPath> => fc.constantFrom(...fields)
const operatorOf = (f: FieldPath): fc.Arbitrary<string> => fc.constantFrom(...operatorsFor(f.column), ...(operatorsFor(f.column).includes('search') ? MATCH_TYPES : []))

/** A plain filter: `path=value`, with its `__operator` or `__match`, a list for `in`/`not_in`. */
function plainFilter (m: Mount): fc.Arbitrary<Pair[]> {
  return field(m.fields).chain((f) => operatorOf(f).chain((op) => {
    if (op === 'is_null' || op === 'not_null') return fc.constant<Pair[]>([[`${f.name}__operator`, op]])
    if ((MATCH_TYPES as readonly string[]).includes(op)) return validValue(f).map((v): Pair[] => [[f.name, v], [`${f.name}__match`, op]])
    if (op === 'in' || op === 'not_in') return fc.array(validValue(f), { minLength: 1, maxLength: 3 }).map((vs): Pair[] => [[`${f.name}__operator`, op], ...vs.map((v): Pair => [f.name, v])])
    return validValue(f).map((v): Pair[] => op === 'e' ? [[f.name, v]] : [[f.name, v], [`${f.name}__operator`, op]])
  }))
}

/** A tree value: bare when the grammar allows, else quoted with `\"` and `\\`. */
const treeValue = (text: string): string => /[,()"\\]/.test(text) || text === '' ? `"${text.replace(/[\\"]/g, '\\$&')}"` : text

/** A condition of a tree: `path.op.value`, mostly well-typed, sometimes hostile in any part. */
function leaf (fields: readonly FieldPath[]): fc.Arbitrary<string> {
  const valid = field(fields).chain((f) => operatorOf(f).chain((op) => {
    if (op === 'is_null' || op === 'not_null') return fc.constant(`${f.name}.${op}`)
    if (op === 'in' || op === 'not_in') return fc.array(validValue(f), { minLength: 1, maxLength: 3 }).map((vs) => `${f.name}.${op}.(${vs.map(treeValue).join(',')})`)
    return validValue(f).map((v) => `${f.name}.${op}.${treeValue(v)}`)
  }))
  const names = fields.map((f) => f.name)
  const bad = fc.oneof(
    fc.tuple(fc.constantFrom(...names, ...HOSTILE_KEYS), fc.constantFrom('e', 'gte', 'in', 'not_in', 'search', 'starts', 'is_null', 'eq', ''), hostile)
      .map(([name, op, v]) => `${name}.${op}.${v}`),
    fc.tuple(fc.constantFrom(...names), fc.constantFrom('e', 'lt', 'exact', 'search', 'in'), hostile).map(([name, op, v]) => `${name}.${op}.${treeValue(v)}`),
    hostile
  )
  return fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: bad })
}

/** A tree's text: `(cond,...)`, conditions nested in `and(...)`/`or(...)`, any of them negated. */
function tree (fields: readonly FieldPath[]): fc.Arbitrary<string> {
  const { node } = fc.letrec<{ node: string, group: string }>((tie) => ({
    node: fc.tuple(fc.boolean(), fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf(fields), tie('group')))
      .map(([not, cond]) => (not ? 'not.' : '') + cond),
    group: fc.tuple(fc.constantFrom('and', 'or'), fc.array(tie('node'), { minLength: 1, maxLength: 3 })).map(([logic, children]) => `${logic}(${children.join(',')})`)
  }))
  const wellFormed = fc.array(node, { minLength: 1, maxLength: 4 }).map((children) => `(${children.join(',')})`)
  return fc.oneof(
    { weight: 10, arbitrary: wellFormed },
    // Malformed: a character dropped, inserted or the text cut short.
    { weight: 2, arbitrary: fc.tuple(wellFormed, fc.nat(200), fc.constantFrom('', '(', ')', ',', '.', '"', '\\', 'not.', 'and(', '))')).map(([text, at, piece]) => text.slice(0, at % (text.length + 1)) + piece + text.slice(at % (text.length + 1) + (piece === '' ? 1 : 0))) },
    // Very deep, past and around the depth limit, balanced or not.
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 300 }), leaf(fields), fc.constantFrom('and(', 'or(', 'not.and('), fc.integer({ min: -2, max: 1 })).map(([depth, cond, open, extra]) => `(${open.repeat(depth)}${cond}${')'.repeat(Math.max(0, depth + 1 + extra))}`) },
    // Very long, past and around the condition limit.
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 10, max: 400 }), leaf(fields)).map(([n, cond]) => `(${Array.from({ length: n }, () => cond).join(',')})`) }
  )
}

/** `__or`/`__and`, once or repeated. */
function trees (fields: readonly FieldPath[]): fc.Arbitrary<Pair[]> {
  return fc.array(fc.tuple(fc.constantFrom('__or', '__and'), tree(fields)), { minLength: 1, maxLength: 2 }).map((pairs) => pairs as Pair[])
}

/** Filters of every kind a list, count, export or aggregate takes; `search` adds `__search`. */
function filters (m: Mount, search: boolean): fc.Arbitrary<Pair[]> {
  const parts: Array<fc.Arbitrary<Pair[]>> = [plainFilter(m), trees(m.fields), hostilePair(m).map((p) => [p])]
  if (search) parts.push(fc.constantFrom('star', 'stars -empire', '"star destroyer"', 'rebels or tokyo', 'the', 'crime family', '-', '"', 'or', '!:*', '&|', '\u0000', '\ud800', ' ').map((s): Pair[] => [['__search', s]]))
  return fc.array(fc.oneof({ weight: 3, arbitrary: parts[0]! }, { weight: 2, arbitrary: parts[1]! }, { weight: 1, arbitrary: parts[2]! }, ...(search ? [{ weight: 2, arbitrary: parts[3]! }] : [])), { maxLength: 3 })
    .map((groups) => groups.flat())
}

// ---------------------------------------------------------------------------------------------
// List controls: fields, embeds, order, pages

const commaList = (items: fc.Arbitrary<string>, max: number): fc.Arbitrary<string> => fc.array(items, { minLength: 1, maxLength: max }).map((xs) => xs.join(','))

function listControls (m: Mount): fc.Arbitrary<Pair[]> {
  const names = m.fields.map((f) => f.name)
  const orderItem = fc.tuple(fc.boolean(), fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...m.toOne.map((f) => f.name)) }, { weight: 1, arbitrary: fc.constantFrom(...names, ...HOSTILE_KEYS) }))
    .map(([desc, name]) => (desc ? '-' : '') + name)
  const embedNames = [...m.embeds.keys()]
  const controls: Array<fc.Arbitrary<Pair[]>> = [
    commaList(fc.constantFrom(...names), 4).map((v): Pair[] => [['__visible_fields', v]]),
    commaList(orderItem, 2).map((v): Pair[] => [['__order', v]]),
    fc.oneof(fc.integer({ min: 1, max: 3 }).map(String), hostile).map((v): Pair[] => [['__page', v]]),
    fc.oneof(fc.integer({ min: 1, max: m.maxPageSize + 1 }).map(String), hostile).map((v): Pair[] => [['__page_size', v]]),
    fc.constantFrom('true', 'false', '1', 'yes', 'maybe').map((v): Pair[] => [['__readable', v]]),
    fc.constantFrom('true', '0').map((v): Pair[] => [['__range_header', v]])
  ]
  if (embedNames.length > 0) {
    const embed = fc.constantFrom(...embedNames)
    controls.push(
      embed.chain((path) => fc.tuple(
        fc.constantFrom(...m.embeds.get(path)!, 'films', '__proto__', 'director.name', ''),
        fc.boolean()
      ).map(([col, desc]): Pair[] => [[`${path}.__order`, (desc ? '-' : '') + col]])),
      embed.chain((path) => fc.oneof(fc.integer({ min: 0, max: m.maxEmbedRows + 1 }).map(String), hostile).map((v): Pair[] => [[`${path}.__page_size`, v]])),
      // Fields of an embed, so its controls matter.
      embed.chain((path) => fc.subarray([...m.embeds.get(path)!], { minLength: 1 }).map((cols): Pair[] => [['__visible_fields', cols.map((c) => `${path}.${c}`).join(',')]]))
    )
  }
  return fc.array(fc.oneof(...controls), { maxLength: 4 }).map((groups) => groups.flat())
}

/**
 * Short queries of a few shapes, without values: statements are cached by the shape of their
 * query, and only shapes that come back (one field, one sort key, one filter) reach a cached one
 * with another query.
 */
function sparseListQuery (m: Mount): fc.Arbitrary<string> {
  const names = m.toOne.map((f) => f.name)
  const embeds = [...m.embeds.keys()]
  // An embed's page size or order, and a field through it, so that they count.
  const embed = embeds.length === 0
    ? fc.constant([])
    : fc.constantFrom(...embeds).chain((path) => fc.tuple(fc.constantFrom(...m.embeds.get(path)!), fc.constantFrom('__page_size=1', `__order=-${m.embeds.get(path)![1]!}`))
      .map(([own, control]) => [`__visible_fields=${path}.${own}`, `${path}.${control}`]))
  return fc.tuple(fc.constantFrom(...m.fields.map((f) => f.name)), fc.constantFrom(...names), fc.boolean(), fc.constantFrom(...names), fc.constantFrom('is_null', 'not_null'), embed)
    .chain(([shown, sorted, desc, filtered, op, embedded]) => fc.subarray([
      `__visible_fields=${shown}`, `__order=${desc ? '-' : ''}${sorted}`, `${filtered}__operator=${op}`, ...embedded
    ]).map((pairs) => pairs.join('&')))
}

function listQuery (m: Mount, search = false): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: queryOf(fc.tuple(filters(m, search), listControls(m)).map(([a, b]) => [...a, ...b])) },
    { weight: 1, arbitrary: sparseListQuery(m) }
  )
}

// ---------------------------------------------------------------------------------------------
// Shapes of the answers

const SECRETS = new Set(['pin', 'budget_note', 'secret_film', 'hidden_awards', 'secret_note'])
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Why a served row (at any depth) is not one of the mount's, or null. */
function rowProblem (m: Mount, row: unknown): string | null {
  if (!isObject(row)) return 'a row that is not an object'
  for (const [key, value] of Object.entries(row)) {
    if (SECRETS.has(key)) return `a secret ${key}`
    if (!m.keys.has(key)) return `a stray key ${key}`
    if (m.embedKeys.has(key) && Array.isArray(value) && value.length > m.maxEmbedRows) return `${value.length} rows embedded in ${key}`
    const inner = Array.isArray(value) ? value.filter(isObject) : isObject(value) ? [value] : []
    for (const nested of inner) {
      const found = rowProblem(m, nested)
      if (found !== null) return `${key}: ${found}`
    }
  }
  return null
}

/** `{rows}`, or with `keyset` `{rows, next_cursor}`; null: either (a hostile query may ask for a keyset page). */
function listShape (m: Mount, keyset: boolean | null) {
  return (body: any): string | null => {
    if (!isObject(body) || !Array.isArray(body.rows)) return 'not {rows: [...]}'
    const keys = Object.keys(body).sort().join()
    const paged = keys === 'next_cursor,rows'
    if (keyset === null ? !paged && keys !== 'rows' : keys !== (keyset ? 'next_cursor,rows' : 'rows')) return `keys ${keys}`
    if (paged && body.next_cursor !== null && typeof body.next_cursor !== 'string') return `next_cursor ${String(body.next_cursor)}`
    if (body.rows.length > m.maxPageSize) return `${body.rows.length} rows`
    for (const row of body.rows) {
      const found = rowProblem(m, row)
      if (found !== null) return found
    }
    return null
  }
}

function countShape (m: Mount) {
  const estimated = m.options.countMode === 'estimated'
  return (body: any): string | null => {
    if (!isObject(body) || Object.keys(body).sort().join() !== (estimated ? 'count,estimated,page_size' : 'count,page_size')) return `keys ${JSON.stringify(body)}`
    if (!Number.isInteger(body.count) || (body.count as number) < 0 || (body.count as number) > 10_000) return `count ${String(body.count)}`
    if (estimated && typeof body.estimated !== 'boolean') return `estimated ${String(body.estimated)}`
    return body.page_size === m.pageSize ? null : `page_size ${String(body.page_size)}`
  }
}

function aggregateShape (m: Mount) {
  return (body: any): string | null => {
    if (!isObject(body) || Object.keys(body).join() !== 'rows' || !Array.isArray(body.rows)) return 'not {rows: [...]}'
    if (body.rows.length > m.maxPageSize) return `${body.rows.length} groups`
    for (const row of body.rows) {
      if (!isObject(row) || Object.keys(row).length === 0) return 'a group that is not an object of outputs'
      for (const [key, value] of Object.entries(row)) {
        if (!/^[a-z_][a-z0-9_]*$/.test(key) || [...SECRETS].some((s) => key.includes(s))) return `an output ${key}`
        if (value !== null && !['number', 'string', 'boolean'].includes(typeof value)) return `${key}: ${JSON.stringify(value)}`
        if ((key === 'count' || key.startsWith('count_')) && (!Number.isInteger(value) || (value as number) < 0)) return `${key}: ${String(value)}`
      }
    }
    return null
  }
}

/** An export's body, or a JSON page when the format asked for is `json` or none: either must be whole and well-formed. */
function exportProblem (m: Mount, response: LightMyRequestResponse): string | null {
  const type = String(response.headers['content-type'])
  if (response.statusCode !== 200 || type.startsWith('application/json')) return contractProblem(response, [200, 400], listShape(m, null))
  if (type === 'application/x-ndjson; charset=utf-8') {
    const lines = response.body.split('\n')
    if (lines.pop() !== '') return 'NDJSON not ending with a line break'
    if (lines.length > 50) return `${lines.length} rows past maxExportRows`
    for (const line of lines) {
      let row: unknown
      try {
        row = JSON.parse(line)
      } catch {
        return `a line that is not JSON: ${line.slice(0, 200)}`
      }
      const found = rowProblem(m, row)
      if (found !== null) return found
    }
    return null
  }
  if (type === 'text/csv; charset=utf-8') {
    if (!response.body.endsWith('\r\n')) return 'CSV not ending with CRLF'
    const header = response.body.slice(0, response.body.indexOf('\r\n')).split(',')
    const stray = header.find((name) => name.split('.').some((segment) => !m.keys.has(segment)))
    return stray === undefined ? null : `a CSV column ${stray}`
  }
  return `content type ${type}`
}

// ---------------------------------------------------------------------------------------------
// The check

interface Tally { runs: number, readonly statuses: Map<number, number> }

function tally (): Tally {
  return { runs: 0, statuses: new Map() }
}

function count (into: Tally, response: LightMyRequestResponse): void {
  into.statuses.set(response.statusCode, (into.statuses.get(response.statusCode) ?? 0) + 1)
}

/** Runs `property` RUNS times, then asserts that some requests succeeded and that no table changed. */
async function check (t: Test, name: string, property: (into: Tally) => fc.IAsyncPropertyWithHooks<any>): Promise<void> {
  const before = await snapshot()
  const into = tally()
  await fc.assert(property(into), { numRuns: RUNS })
  t.ok(into.runs >= RUNS, `${name}: ${into.runs} requests, statuses ${JSON.stringify(Object.fromEntries(into.statuses))}`)
  // The arbitraries reach valid queries too: not everything is a 400.
  t.ok((into.statuses.get(200) ?? 0) >= into.runs / 20, `${name}: some requests succeed`)
  t.strictSame(await snapshot(), before, `${name}: every table unchanged`)
}

/** One GET, held to the contract; the error names the URL. */
async function get (into: Tally, url: string, allowed: readonly number[], ok: (body: any) => string | null, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  into.runs++
  const response = await app.inject({ method: 'GET', url, headers })
  count(into, response)
  const found = contractProblem(response, allowed, ok)
  if (found !== null) throw new Error(`GET ${url.slice(0, 400)}: ${found.slice(0, 600)}`)
  return response
}

const RELATIONAL = [PEOPLE, FILMS, GENRES, AWARDS, PARTS]
const someMount = (mounts: readonly Mount[]): fc.Arbitrary<Mount> => fc.constantFrom(...mounts)

t.test('GET / with embeds, paths, trees and order across relations never fails', async (t) => {
  const requests = someMount([...RELATIONAL, CATALOGUE]).chain((m) => fc.tuple(fc.constant(m), listQuery(m, m === CATALOGUE), fc.constantFrom('/', '/', '/', '/1/', '/2/')))
  await check(t, 'GET /', (into) => fc.asyncProperty(requests, async ([m, q, path]) => {
    // `/:id/` ignores filters and takes the embed controls (SPEC §2.4, §8.1); 404 for a missing row.
    const one = path !== '/'
    await get(into, `${m.prefix}${path}?${q}`, one ? [200, 400, 404] : [200, 400], one ? (body) => rowProblem(m, body) : listShape(m, null))
  }))
})

t.test('GET /count/ with paths and trees never fails; estimated counts keep their shape', async (t) => {
  const requests = someMount([...RELATIONAL, CATALOGUE]).chain((m) => fc.tuple(fc.constant(m), fc.oneof(
    { weight: 4, arbitrary: queryOf(filters(m, m === CATALOGUE)) },
    // /count/ takes them too, and ignores the controls (SPEC §6.12).
    { weight: 1, arbitrary: sparseListQuery(m) }
  )))
  await check(t, 'GET /count/', (into) => fc.asyncProperty(requests, async ([m, q]) => {
    await get(into, `${m.prefix}/count/?${q}`, [200, 400], countShape(m))
  }))
})

/** Ways to change a cursor: each gives another string, never the one issued (SPEC §7.1: another spelling is no cursor). */
const TAMPERINGS = [
  (cursor: string, at: number) => cursor.slice(0, at % cursor.length) + (cursor[at % cursor.length] === 'A' ? 'B' : 'A') + cursor.slice(at % cursor.length + 1),
  // Cut short, never to nothing (`__cursor=` asks for the first page).
  (cursor: string, at: number) => cursor.slice(0, 1 + at % (cursor.length - 1)),
  (cursor: string, at: number) => cursor + ['=', '==', 'A', '.', '%', ' ', '\u0000', '\ud800', cursor][at % 9],
  (cursor: string) => cursor.toUpperCase(),
  (cursor: string) => cursor.toLowerCase(),
  (cursor: string) => cursor.replace(/[-_]/g, (c) => c === '-' ? '+' : '/'),
  (cursor: string) => [...cursor].reverse().join('')
] as const

function tamper (cursor: string, how: number, at: number): string {
  const changed = TAMPERINGS[how % TAMPERINGS.length]!(cursor, at)
  return changed === cursor ? `${cursor}A` : changed
}

t.test('keyset pages: issued cursors work, tampered and foreign ones are a 400', async (t) => {
  const mounts = [PEOPLE, FILMS, GENRES, CATALOGUE]
  // A query of the mount without __page (which __cursor refuses), a __page_size or __cursor of
  // its own (the flow sets them), or a `#` (the rest of the URL, the cursor included, would be
  // a fragment).
  const keysetQuery = (m: Mount): fc.Arbitrary<string> => listQuery(m, m === CATALOGUE).filter((q) => !/(^|&)(__page|__page_size|__cursor)=/.test(q) && !q.includes('#'))
  const flows = someMount(mounts).chain((m) => fc.record({
    m: fc.constant(m),
    q: keysetQuery(m),
    size: fc.integer({ min: 1, max: 3 }),
    other: someMount(mounts).chain((o) => fc.tuple(fc.constant(o), keysetQuery(o))),
    how: fc.nat(),
    at: fc.nat()
  }))
  let followed = 0
  let refused = 0
  await check(t, 'keyset', (into) => fc.asyncProperty(flows, async ({ m, q, size, other: [o, oq], how, at }) => {
    const base = `${m.prefix}/?${q}&__page_size=${size}`
    const first = await get(into, `${base}&__cursor=`, [200, 400], listShape(m, true))
    if (first.statusCode !== 200) return
    const cursor = JSON.parse(first.body).next_cursor as string | null
    if (cursor === null) return
    // The issued cursor, on the same query: the next page (a page size may change between pages).
    const next = await get(into, `${base}&__cursor=${enc(cursor)}`, [200], listShape(m, true))
    const link = String(next.headers.link ?? '')
    if (link !== '' && !link.endsWith('>; rel="next"')) throw new Error(`${base}: Link ${link}`)
    followed++
    // A changed cursor is no cursor (SPEC §7.1), whatever the change.
    const response = await get(into, `${base}&__cursor=${enc(tamper(cursor, how, at))}`, [400], listShape(m, true))
    if (JSON.parse(response.body).code !== 'TABLECRUD_ERR_QS_INVALID_CURSOR') throw new Error(`${base}: a tampered cursor answered ${response.body}`)
    refused++
    // Another query (another mount's, or this mount's with other parameters): a 400 unless it
    // is the same query in another spelling. Another table's never opens.
    await get(into, `${o.prefix}/?${oq}&__cursor=${enc(cursor)}`, o === m ? [200, 400] : [400], listShape(o, true))
  }))
  t.ok(followed > 0 && refused > 0, `${followed} cursors followed, ${refused} tampered ones refused`)
})

// ---------------------------------------------------------------------------------------------
// Aggregates

const FUNCTIONS = ['count', 'count_distinct', 'avg', 'sum', 'min', 'max'] as const
const NUMBER_TYPES = new Set(['serial', 'integer', 'smallInt', 'bigInt', 'real', 'doublePrecision', 'numeric'])
const TRUNCATED = new Set(['date', 'timestamp', 'timestamptz'])
const outputOf = (name: string): string => name.replaceAll('.', '_')

/** An item of `__aggregate` or `__group_by`, with its output's name and what values it holds (null: a refused item). */
interface Item { readonly item: string, readonly output: { readonly name: string, readonly kind: string, readonly fk: boolean } | null }

const COUNT: Item = { item: 'count', output: { name: 'count', kind: 'integer', fk: false } }

/** An aggregate item the field takes, or a hostile one. */
function aggregateItem (m: Mount): fc.Arbitrary<Item> {
  const valid = fc.tuple(fc.constantFrom(...FUNCTIONS), field(m.toOne)).map(([fn, f]): Item => {
    const takes = fn.startsWith('count') || (['avg', 'sum'].includes(fn) ? NUMBER_TYPES.has(f.column.type) : operatorsFor(f.column).includes('lt'))
    const kind = fn.startsWith('count') ? 'integer' : ['avg', 'sum'].includes(fn) ? 'real' : KIND[f.column.type] ?? 'text'
    return takes ? { item: `${fn}(${f.name})`, output: { name: `${fn}_${outputOf(f.name)}`, kind, fk: false } } : COUNT
  })
  const bad = fc.oneof(
    fc.tuple(fc.constantFrom(...FUNCTIONS, 'median', 'COUNT', 'sum ', 'array_agg', '__proto__', 'constructor', ''), fc.constantFrom(...m.fields.map((f) => f.name), ...HOSTILE_KEYS, '*', '', 'count(year)'))
      .map(([fn, name]) => `${fn}(${name})`),
    fc.constantFrom('count(', 'count()', 'avg()', 'sum(year))', 'max(year', '(year)', 'count_distinct', 'min', 'avg(title)', 'sum(released)', 'max(tags)', 'min(title)'),
    hostile
  ).map((item): Item => ({ item, output: null }))
  return fc.oneof({ weight: 5, arbitrary: fc.constant(COUNT) }, { weight: 10, arbitrary: valid }, { weight: 2, arbitrary: bad })
}

function groupKey (m: Mount): fc.Arbitrary<Item> {
  const valid = field(m.toOne).chain((f) => {
    const kind = KIND[f.column.type] ?? 'text'
    const units = f.column.type === 'date' ? ['year', 'month', 'day'] : TRUNCATED.has(f.column.type) ? ['year', 'month', 'day', 'hour'] : []
    return fc.constantFrom(null, ...units).map((unit): Item => unit === null
      ? { item: f.name, output: { name: outputOf(f.name), kind, fk: f.column.type === 'foreignKey' } }
      : { item: `${f.name}:${unit}`, output: { name: `${outputOf(f.name)}_${unit}`, kind, fk: false } })
  })
  const bad = fc.oneof(
    fc.tuple(fc.constantFrom(...m.fields.map((f) => f.name), ...HOSTILE_KEYS), fc.constantFrom(':year', ':week', ':hour', ':year:month', ':', '::', ':YEAR', '')).map(([name, unit]) => name + unit),
    hostile
  ).map((item): Item => ({ item, output: null }))
  return fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: bad })
}

/** A `__having` tree over the outputs asked for, each compared with values of its kind, sometimes hostile. */
function having (outputs: ReadonlyArray<NonNullable<Item['output']>>): fc.Arbitrary<string> {
  const byKind = fc.constantFrom(...outputs).chain((o) => fc.tuple(
    fc.constant(o.name),
    fc.constantFrom(...(o.kind === 'text' ? ['e', 'ne', 'in', 'starts', 'exact', 'search', 'is_null'] : ['e', 'ne', 'gte', 'lt', 'in', 'not_in', 'not_null'])),
    fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...VALID[o.kind]!) }, { weight: 1, arbitrary: fc.constantFrom(...EDGES[o.kind]!) }).map(treeValue)
  ))
  const any = fc.tuple(
    fc.constantFrom(...outputs.map((o) => o.name), 'count', 'avg_rating', 'title', '__proto__'),
    fc.constantFrom('e', 'gte', 'is_null', 'in', 'starts', 'search'),
    hostile.map(treeValue)
  )
  const cond = fc.tuple(fc.oneof({ weight: 4, arbitrary: byKind }, { weight: 1, arbitrary: any }), fc.boolean()).map(([[name, op, value], not]) =>
    (not ? 'not.' : '') + (op.endsWith('null') ? `${name}.${op}` : op.endsWith('in') ? `${name}.${op}.(${value})` : `${name}.${op}.${value}`))
  return fc.oneof(
    { weight: 5, arbitrary: fc.array(cond, { minLength: 1, maxLength: 3 }).map((cs) => `(${cs.join(',')})`) },
    { weight: 1, arbitrary: fc.array(cond, { minLength: 1, maxLength: 3 }).map((cs) => `(or(${cs.join(',')})`) },
    { weight: 1, arbitrary: hostile }
  )
}

/** Short aggregate queries of a few shapes (see sparseListQuery): one group key, one aggregate, both valid. */
function sparseAggregateQuery (m: Mount): fc.Arbitrary<string> {
  const valid = (arbitrary: fc.Arbitrary<Item>): fc.Arbitrary<string> => arbitrary.filter((x) => x.output !== null).map((x) => x.item)
  return fc.tuple(valid(groupKey(m)), valid(aggregateItem(m)), fc.boolean())
    .map(([group, aggregate, both]) => both ? `__group_by=${group}&__aggregate=${aggregate}` : `__group_by=${group}`)
}

function aggregateQuery (m: Mount): fc.Arbitrary<string> {
  return fc.oneof({ weight: 3, arbitrary: fullAggregateQuery(m) }, { weight: 1, arbitrary: sparseAggregateQuery(m) })
}

function fullAggregateQuery (m: Mount): fc.Arbitrary<string> {
  const shape = fc.tuple(fc.array(aggregateItem(m), { maxLength: 4 }), fc.array(groupKey(m), { maxLength: 2 }), fc.boolean())
  return queryOf(shape.chain(([aggregates, groups, readable]) => {
    const asked = [...groups, ...aggregates].flatMap((x) => x.output === null ? [] : [x.output])
    // Without __aggregate, count; with __readable, a ForeignKey key's readable representation.
    const outputs = [...asked, ...(readable ? asked.filter((o) => o.fk).map((o) => ({ name: `${o.name}_readable`, kind: 'text', fk: false })) : [])]
    if (aggregates.length === 0 || outputs.length === 0) outputs.push(COUNT.output!)
    const names = outputs.map((o) => o.name)
    const pairs: Pair[] = [
      ...(aggregates.length > 0 ? [['__aggregate', aggregates.map((a) => a.item).join(',')] as const] : []),
      ...(groups.length > 0 ? [['__group_by', groups.map((g) => g.item).join(',')] as const] : []),
      ...(readable ? [['__readable', 'true'] as const] : [])
    ]
    const extras: Array<fc.WeightedArbitrary<Pair[]>> = [
      having(outputs).map((h): Pair[] => [['__having', h]]),
      commaList(fc.tuple(fc.boolean(), fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_KEYS, 'year', 'director.name') })).map(([d, n]) => (d ? '-' : '') + n), 2).map((v): Pair[] => [['__order', v]]),
      fc.oneof(fc.integer({ min: 1, max: 3 }).map(String), hostile).map((v): Pair[] => [['__page', v]]),
      fc.oneof(fc.integer({ min: 1, max: m.maxPageSize + 1 }).map(String), hostile).map((v): Pair[] => [['__page_size', v]]),
      fc.constant<Pair[]>([['__range_header', 'true']]),
      // Parameters of GET `/` that make no sense here: a 400 each.
      fc.constantFrom<Pair>(['__visible_fields', 'id'], ['__cursor', ''], ['__format', 'csv'], ['films.__order', 'id']).map((p) => [p])
    ].map((arbitrary, i, all) => ({ arbitrary, weight: i === all.length - 1 ? 1 : 4 }))
    return fc.tuple(filters(m, m === CATALOGUE), fc.array(fc.oneof(...extras), { maxLength: 3 })).map(([f, e]) => [...pairs, ...f, ...e.flat()])
  }))
}

t.test('GET /aggregate/ with groups, functions, having, order and pages never fails', async (t) => {
  const requests = someMount([CATALOGUE, CATALOGUE, STAFF, PARTS, PARTS]).chain((m) => fc.tuple(fc.constant(m), aggregateQuery(m)))
  await check(t, 'GET /aggregate/', (into) => fc.asyncProperty(requests, async ([m, q]) => {
    await get(into, `${m.prefix}/aggregate/?${q}`, [200, 400], aggregateShape(m))
  }))
})

t.test('exports (NDJSON and CSV) with filters, trees, search and embeds never fail', async (t) => {
  const requests = someMount([PEOPLE, FILMS, CATALOGUE]).chain((m) => fc.tuple(
    fc.constant(m),
    listQuery(m, m === CATALOGUE),
    fc.oneof(
      fc.constantFrom('ndjson', 'csv', 'json', 'CSV', 'xml', '').map((format): [string, Record<string, string>] => [`&__format=${format}`, {}]),
      fc.constantFrom('application/x-ndjson', 'text/csv', 'text/csv;q=0.1, application/json', '*/*', 'text/csv\u0000').map((accept): [string, Record<string, string>] => ['', { accept }])
    )
  ))
  let exported = 0
  await check(t, 'export', (into) => fc.asyncProperty(requests, async ([m, q, [format, headers]]) => {
    into.runs++
    const url = `${m.prefix}/?${q}${format}`
    const response = await app.inject({ method: 'GET', url, headers })
    count(into, response)
    const found = exportProblem(m, response)
    if (found !== null) throw new Error(`GET ${url.slice(0, 400)} ${JSON.stringify(headers)}: ${found.slice(0, 600)}`)
    if (response.statusCode === 200 && !String(response.headers['content-type']).startsWith('application/json')) exported++
  }))
  t.ok(exported > 0, `${exported} exports streamed`)
})
