import t, { type Test } from 'tap'
import fc from 'fast-check'
import Fastify from 'fastify'
import ts from 'typescript'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { checkTables, createTables } from '../../lib/db/index.js'
import type { Table, TableColumn } from '../../lib/table/index.js'
import { typeOf } from '../../lib/table/column-types.js'
import { targetOf } from '../../lib/table/table.js'
import { quoteIdent } from '../../lib/sql/identifier.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { useDatabase } from '../helpers/app.js'
import { cliHarness } from '../helpers/cli.js'
import { contractProblem } from '../helpers/contract.js'
import { testDatabase } from '../helpers/db.js'

/*
 * Property test of `fastify-tablecrud generate` (docs/tables.md, "An existing database"): random
 * small schemas written as plain SQL the way people write them (odd names, every supported and
 * some unsupported types, defaults, CHECK lists, enums and comments with awkward text, keys of
 * several types, foreign keys, tables it does not generate). For each: generate exits 0 and
 * every note is one of the documented ones; the module is valid TypeScript that yields the
 * tables with every label and comment exactly; `checkTables` finds no difference with the
 * source, and `createTables` of it, read again, writes the same module; and the tables mounted
 * on the source database take a valid row and give it back, and answer bad bodies with a
 * contract 4xx that writes nothing.
 */

/** Runs of the property; FUZZ_RUNS raises it for a longer hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 15)

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const db = await testDatabase(t)
const { sql, cli } = cliHarness(db.connectionString)
const schemaName = await sql(async (c) => (await c.query<{ name: string }>('SELECT current_schema() AS name')).rows[0]!.name)

/** Text people put in labels, defaults and comments, and what breaks writers of code and SQL. */
const AWKWARD = [
  // eslint-disable-next-line no-template-curly-in-string -- a label that looks like a template's hole
  "it's", 'say "hi"', 'back\\slash', 'ends\\', 'new\nline', 'tab\there', '*/', '/* x', '`tick`', '${x}', '\\u0041',
  "'); DROP TABLE x; --", 'ünïcödé', '日本語', '😀', 'a\u2028b', '__proto__', 'constructor', 'toString', ' ', 'a, b',
  ']', ')', '1', '10', '01', '-1', 'true', 'null', 'NULL', '{}', 'G', 'PG-13'
]
const text = fc.oneof(fc.constantFrom(...AWKWARD), fc.string({ unit: 'grapheme', maxLength: 6 }).filter((s) => !s.includes('\0')))
const label = text.filter((s) => s !== '' && Buffer.byteLength(s) <= 63)

const sqlString = (s: string): string => `'${s.replaceAll("'", "''")}'`

/** Names people give tables and columns: SQL and JS keywords, JS globals, case, spaces, unicode, 63 bytes. */
const ODD_NAMES = [
  'order', 'user', 'select', 'group', 'class', 'delete', 'new', 'constructor', 'toString', 'hasOwnProperty', 'valueOf',
  'undefined', 'NaN', 'Object', 'Promise', 'require', 'exports', 'module', 'globalThis', 'let', 'await', 'async',
  'type', 'default', 'column', 'tables', 'defineTable', 'Table', '__proto__', 'x__y', '_', 'Mixed', 'mixed', 'MIXED',
  'with space', 'quo"te', "apo's", 'ünï', 'café', '1st', 'a-b', '$d', 'new\nline', 'limit', 'fields',
  'L'.repeat(63), `${'é'.repeat(31)}x`, 'N'.repeat(70), `${'c'.repeat(58)}_one`, `${'c'.repeat(58)}_two`
]
const name = fc.oneof(fc.constantFrom('film', 'name', 'status', 'price'), fc.constantFrom(...ODD_NAMES))

/** A column type: its SQL, constants for its defaults and CHECK lists, and expressions for defaults. */
interface SqlType { sql: string, constant: fc.Arbitrary<string>, expression: readonly string[], list: boolean }

const int = (min: number, max: number): fc.Arbitrary<string> => fc.integer({ min, max }).map(String)
const TYPES: Readonly<Record<string, SqlType>> = {
  integer: { sql: 'integer', constant: int(-1000, 1000), expression: ['1 + 1', '(random() * 10)::int'], list: true },
  smallint: { sql: 'smallint', constant: int(-100, 100), expression: [], list: true },
  bigint: { sql: 'bigint', constant: fc.constantFrom('0', '-5', '9007199254740993'), expression: [], list: true },
  real: { sql: 'real', constant: fc.constantFrom('0.5', '-1.25', '0.2', '3'), expression: [], list: false },
  double: { sql: 'double precision', constant: fc.constantFrom('0.25', '-2', '1e10'), expression: ['pi()'], list: false },
  boolean: { sql: 'boolean', constant: fc.constantFrom('true', 'false'), expression: [], list: false },
  text: { sql: 'text', constant: text.map(sqlString), expression: ["'a' || 'b'", "lower('X')", 'current_user'], list: true },
  varchar: { sql: 'varchar(40)', constant: text.map(sqlString), expression: ['current_user'], list: true },
  short: { sql: 'character varying(3)', constant: fc.constantFrom("'ab'", "''", "'x''y'"), expression: [], list: true },
  numeric: { sql: 'numeric(6,2)', constant: fc.constantFrom('12.50', '-3.1', '0', '4.99'), expression: [], list: true },
  timestamp: { sql: 'timestamp', constant: fc.constantFrom("'2024-01-02 03:04:05'", "'2024-02-29 23:59:59.5'"), expression: ['now()', 'CURRENT_TIMESTAMP', "(now() AT TIME ZONE 'utc')"], list: false },
  timestamptz: { sql: 'timestamptz', constant: fc.constantFrom("'2024-01-02 03:04:05+00'"), expression: ['now()', 'CURRENT_TIMESTAMP'], list: false },
  date: { sql: 'date', constant: fc.constantFrom("'2024-02-29'", "'1999-12-31'"), expression: ['CURRENT_DATE'], list: false },
  time: { sql: 'time', constant: fc.constantFrom("'09:00'", "'23:59:59.25'"), expression: ['LOCALTIME'], list: false },
  interval: { sql: 'interval', constant: fc.constantFrom("'1 day'", "'01:30:00'", "'-2 hours'"), expression: [], list: false },
  jsonb: { sql: 'jsonb', constant: fc.constantFrom('\'{"a": 1}\'', '\'[1, "x\'\'y"]\'', '\'"str"\'', "'null'", '\'{"__proto__": 1}\''), expression: [], list: false },
  uuid: { sql: 'uuid', constant: fc.constantFrom("'0b0e7a5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b'"), expression: ['gen_random_uuid()'], list: false },
  texts: { sql: 'text[]', constant: fc.constantFrom("'{}'", "ARRAY['a', 'b''c']", "'{x,y}'"), expression: [], list: false },
  integers: { sql: 'integer[]', constant: fc.constantFrom("'{}'", 'ARRAY[1, 2]'), expression: [], list: false },
  // The documented unsupported ones, and some more.
  point: { sql: 'point', constant: fc.constant("'(1,2)'"), expression: [], list: false },
  tsvector: { sql: 'tsvector', constant: fc.constant("''"), expression: [], list: false },
  json: { sql: 'json', constant: fc.constant("'{}'"), expression: [], list: false },
  bareVarchar: { sql: 'varchar', constant: fc.constant("'x'"), expression: [], list: false },
  char: { sql: 'char(3)', constant: fc.constant("'abc'"), expression: [], list: false },
  bareNumeric: { sql: 'numeric', constant: fc.constant('1.5'), expression: [], list: false },
  timestamp3: { sql: 'timestamp(3)', constant: fc.constant("'2024-01-02'"), expression: [], list: false },
  bytea: { sql: 'bytea', constant: fc.constant("'\\x00'"), expression: [], list: false },
  inet: { sql: 'inet', constant: fc.constant("'127.0.0.1'"), expression: [], list: false }
}

/** Key types: SQL, the type a foreign key to it takes, whether a definition takes it as a key. */
const KEYS: ReadonlyArray<[string, string, boolean]> = [
  ['serial', 'integer', true], ['bigserial', 'bigint', true], ['integer', 'integer', true], ['bigint', 'bigint', true],
  ['smallint', 'smallint', true], ['text', 'text', true], ['varchar(20)', 'character varying(20)', true],
  ['uuid DEFAULT gen_random_uuid()', 'uuid', true], ['uuid', 'uuid', true],
  // Identity keys as Django and others make them; a smallint one is no column type's.
  ['integer GENERATED ALWAYS AS IDENTITY', 'integer', true], ['integer GENERATED BY DEFAULT AS IDENTITY', 'integer', true],
  ['bigint GENERATED ALWAYS AS IDENTITY', 'bigint', true], ['bigint GENERATED BY DEFAULT AS IDENTITY', 'bigint', true],
  ['smallint GENERATED ALWAYS AS IDENTITY', 'smallint', false],
  ['numeric(10,0)', 'numeric(10,0)', false], ['date', 'date', false]
]
const ON_DELETE = ['', ' ON DELETE CASCADE', ' ON DELETE SET NULL', ' ON DELETE RESTRICT', ' ON DELETE NO ACTION']

interface ColumnModel {
  name: string
  type: string
  enumLabels: string[] | null
  notNull: boolean
  default: string | null
  unique: boolean
  index: boolean
  /** SQL constants of a CHECK (c IN (...)), or another CHECK's text. */
  check: string[] | string | null
  comment: string | null
  /** A foreign key: the table's index among the drawn ones and its ON DELETE clause. */
  references: [number, string] | null
}

interface TableModel {
  name: string
  kind: 'table' | 'view' | 'no key' | 'two-column key'
  key: { name: string, type: number }
  columns: ColumnModel[]
  comment: string | null
  /** A multi-column unique, a partial index, an expression index. */
  extra: Array<'unique2' | 'partial' | 'expression'>
}

const columnModel: fc.Arbitrary<ColumnModel> = fc.record({
  name,
  // Enums and the types of CHECK lists more often than the rest.
  type: fc.oneof(fc.constantFrom(...Object.keys(TYPES)), fc.constantFrom('enum', 'text', 'integer', 'varchar', 'jsonb')),
  enumLabels: fc.uniqueArray(label, { minLength: 1, maxLength: 4 }),
  notNull: fc.boolean(),
  defaultKind: fc.constantFrom('none', 'none', 'constant', 'expression'),
  defaultPick: fc.nat(),
  defaultConstant: fc.nat(),
  unique: fc.boolean(),
  index: fc.boolean(),
  checkKind: fc.constantFrom('none', 'none', 'list', 'other'),
  checkItems: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
  // COMMENT ON ... IS '' drops the comment: an empty one is none.
  comment: fc.option(text.filter((s) => s !== ''), { freq: 2 }),
  references: fc.option(fc.tuple(fc.nat(3), fc.constantFrom(...ON_DELETE)), { freq: 3 })
}).chain((c) => {
  const type = TYPES[c.type]
  const constants = type === undefined ? fc.constantFrom(...c.enumLabels.map(sqlString)) : type.constant
  return fc.tuple(constants, fc.array(constants, { minLength: 1, maxLength: 4 })).map(([constant, items]): ColumnModel => {
    const expressions = type?.expression ?? []
    const fallback = c.defaultKind === 'constant' ? constant : c.defaultKind === 'expression' && expressions.length > 0 ? expressions[c.defaultPick % expressions.length]! : null
    const listable = (type === undefined || type.list) && c.references === null
    // A foreign key's type is its target key's: a default of the drawn type would not fit it.
    const fit = c.references === null
    // No btree on these: no unique, no index.
    const ordered = !['point', 'json', 'tsvector', 'inet'].includes(c.type)
    return {
      name: c.name,
      type: c.type,
      enumLabels: c.type === 'enum' ? c.enumLabels : null,
      notNull: c.notNull,
      default: fit ? fallback : null,
      unique: c.unique && ordered,
      index: c.index && ordered,
      check: c.checkKind === 'list' && listable ? items : c.checkKind === 'other' && fit && ['integer', 'smallint', 'numeric'].includes(c.type) ? 'other' : null,
      comment: c.comment,
      references: c.references
    }
  })
})

const tableModel: fc.Arbitrary<TableModel> = fc.record({
  name,
  kind: fc.constantFrom<TableModel['kind']>('table', 'table', 'table', 'table', 'table', 'view', 'no key', 'two-column key'),
  key: fc.record({ name: fc.oneof(fc.constantFrom('id', 'id', 'code', 'ID'), name), type: fc.nat(KEYS.length - 1) }),
  columns: fc.uniqueArray(columnModel, { minLength: 0, maxLength: 4, selector: (c) => c.name }),
  comment: fc.option(text.filter((s) => s !== ''), { freq: 3 }),
  extra: fc.subarray(['unique2', 'partial', 'expression'] as const, { maxLength: 1 })
})

/** 1 to 3 tables, their names and each table's column names distinct (as PostgreSQL truncates them). */
const schemaModel = fc.uniqueArray(tableModel, { minLength: 1, maxLength: 3, selector: (m) => truncate(m.name) })
  .map((tables) => tables.map((m) => ({ ...m, columns: m.columns.filter((c, i) => truncate(c.name) !== truncate(m.key.name) && m.columns.findIndex((o) => truncate(o.name) === truncate(c.name)) === i) })))

/** A name as PostgreSQL keeps it: at most 63 bytes, whole characters. */
function truncate (identifier: string): string {
  let out = ''
  for (const ch of identifier) {
    if (Buffer.byteLength(out + ch) > 63) break
    out += ch
  }
  return out
}

/** The SQL a person would write for the model. */
function schemaSql (tables: readonly TableModel[]): string {
  const statements: string[] = []
  const fks: string[] = []
  tables.forEach((m, ti) => {
    const q = quoteIdent
    const [keySql] = KEYS[m.key.type]!
    if (m.kind === 'view') {
      statements.push(`CREATE VIEW ${q(m.name)} AS SELECT 1 AS ${q(m.key.name)}`)
      return
    }
    const after: string[] = []
    const defs = [m.kind === 'table' ? `${q(m.key.name)} ${keySql} PRIMARY KEY` : `${q(m.key.name)} ${keySql.replace(/ (DEFAULT|GENERATED).*/, '')} NOT NULL`]
    m.columns.forEach((c, ci) => {
      let type = c.type === 'enum' ? q(`${m.name.slice(0, 20)}_${ti}_${ci}`) : TYPES[c.type]!.sql
      if (c.type === 'enum') statements.push(`CREATE TYPE ${type} AS ENUM (${c.enumLabels!.map(sqlString).join(', ')})`)
      const target = c.references === null ? undefined : tables[c.references[0] % tables.length]!
      if (target !== undefined) type = KEYS[target.key.type]![1]
      const parts = [q(c.name), type]
      if (c.notNull) parts.push('NOT NULL')
      if (c.default !== null) parts.push(`DEFAULT ${c.default}`)
      if (c.unique) parts.push('UNIQUE')
      if (Array.isArray(c.check) && target === undefined) parts.push(`CHECK (${q(c.name)} IN (${c.check.join(', ')}))`)
      if (c.check === 'other' && target === undefined) parts.push(`CHECK (${q(c.name)} > 0)`)
      defs.push(parts.join(' '))
      if (c.index) after.push(`CREATE INDEX ON ${q(m.name)} (${q(c.name)})`)
      if (target !== undefined && target.kind === 'table') fks.push(`ALTER TABLE ${q(m.name)} ADD FOREIGN KEY (${q(c.name)}) REFERENCES ${q(target.name)}${c.references![1]}`)
      if (c.comment !== null) after.push(`COMMENT ON COLUMN ${q(m.name)}.${q(c.name)} IS ${sqlString(c.comment)}`)
    })
    const first = m.columns[0]
    if (m.kind === 'two-column key' && first !== undefined) defs.push(`PRIMARY KEY (${q(m.key.name)}${first === undefined ? '' : `, ${q(first.name)}`})`)
    if (m.extra.includes('unique2') && first !== undefined) defs.push(`UNIQUE (${q(m.key.name)}, ${q(first.name)})`)
    statements.push(`CREATE TABLE ${q(m.name)} (\n  ${defs.join(',\n  ')}\n)`, ...after)
    if (m.extra.includes('partial') && first !== undefined) statements.push(`CREATE INDEX ON ${q(m.name)} (${q(first.name)}) WHERE ${q(first.name)} IS NOT NULL`)
    if (m.extra.includes('expression')) statements.push(`CREATE INDEX ON ${q(m.name)} ((${q(m.key.name)} IS NULL))`)
    if (m.comment !== null) statements.push(`COMMENT ON TABLE ${q(m.name)} IS ${sqlString(m.comment)}`)
  })
  return [...statements, ...fks].join(';\n') + ';'
}

/** The notes docs/tables.md promises (lib/generate/index.ts writes them), one line each. */
const NOTE_FORMS = [
  /^(Table|View) .+: not generated, .+\.$/,
  /^Column .+ \(.+\): not generated, .+\.( It is NOT NULL without a default: inserts through the API fail\.)?$/,
  /^Column .+: its default (.+ )?is not kept: .+\.$/,
  /^Column .+: its foreign key to .+ is not kept \(.+\); written as a plain column\.$/,
  /^Table .+: unique \(.+\) is not kept: a definition's unique is one column's\. The database keeps enforcing it\.$/,
  /^Table .+: CREATE (UNIQUE )?INDEX .+ is not kept: a definition's index is one plain column's\.$/,
  /^Table .+: the check .+, CHECK .+, is not kept: a definition turns only a column's list of values into choices\.$/
]

/** Labels in the order an object's keys take: integers (`'1'`, `'10'`) first, ascending. */
const keyOrder = (labels: readonly string[]): string[] => Object.keys(Object.fromEntries(labels.map((l) => [l, l])))

/** A name as a note writes it: a control character as JSON escapes it. */
const escaped = (s: string): string => s.replaceAll(/\p{Cc}/gu, (c) => JSON.stringify(c).slice(1, -1))

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Whether generate must write the table: what docs/tables.md says it takes. */
const generated = (m: TableModel): boolean => m.kind === 'table' && IDENTIFIER.test(truncate(m.name)) && IDENTIFIER.test(truncate(m.key.name)) && !m.key.name.includes('__') && KEYS[m.key.type]![2]

let modules = 0
const dir = mkdtempSync(join(ROOT, '.generated-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

/** The module saved where it imports this checkout (its package name is index.ts). */
function save (source: string): string {
  const path = join(dir, `tables_${modules++}.ts`)
  writeFileSync(path, source.replace("from 'fastify-tablecrud'", "from '../index.js'"))
  return path
}

async function resetSchema (): Promise<void> {
  await sql(async (c) => await c.query(`DROP SCHEMA ${quoteIdent(schemaName)} CASCADE; CREATE SCHEMA ${quoteIdent(schemaName)}`))
}

/** A value the column takes, drawn from `seed`; undefined when there is none to give. */
function validValue (table: Table, c: TableColumn, seed: string, keys: ReadonlyMap<Table, unknown>): unknown {
  if (c.choices !== null) return [...c.choices.values()][0]!.value
  switch (c.type) {
    case 'text': return seed
    case 'varchar': return [...seed].slice(0, c.length).join('')
    case 'integer': case 'smallInt': case 'bigInt': return 7
    case 'real': return 0.5
    case 'doublePrecision': return 0.25
    case 'numeric': return '1'
    case 'boolean': return true
    case 'timestamp': return '2024-01-02T03:04:05'
    case 'timestamptz': return '2024-01-02T03:04:05Z'
    case 'date': return '2024-02-29'
    case 'time': return '09:30:00'
    case 'interval': return '1 day'
    case 'jsonb': return { a: [1, seed] }
    case 'uuid': return 'f3a1c2d4-5b6e-4f70-8a9b-c0d1e2f3a4b5'
    case 'array': return [validValue(table, c.element as TableColumn, seed, keys)]
    case 'foreignKey': return keys.has(targetOf(table, c)) ? keys.get(targetOf(table, c)) : c.nullable ? null : undefined
    default: return undefined
  }
}

/** The types whose wire value is the one written (the others are compared with the POST's answer). */
const SAME_ON_WIRE = new Set(['text', 'varchar', 'integer', 'smallInt', 'boolean', 'jsonb', 'uuid', 'real', 'doublePrecision'])

/** Mounts the tables on the source database: a valid row of each goes in and comes back; bad bodies are refused, writing nothing. */
async function serves (t: Test, tables: readonly Table[], seed: string): Promise<string | null> {
  const app = Fastify()
  try {
    await useDatabase(app, db)
    for (const [i, table] of tables.entries()) await app.register(tableCrud, { table, prefix: `/t${i}`, readOnly: false })
    await app.ready()
    const keys = new Map<Table, unknown>()
    for (const [i, table] of tables.entries()) {
      const row: Record<string, unknown> = {}
      let possible = true
      for (const c of table.columns) {
        // A key the database assigns (a Serial, a BigSerial, identity or not) or makes (a UUID's default) is left out.
        if (c.primaryKey && (typeOf(c).key!.assigned || c.hasDefault)) continue
        const value = c.primaryKey && (c.type === 'text' || c.type === 'varchar') ? `k${seed}` : validValue(table, c, seed, keys)
        if (value === undefined) possible = false
        else row[c.name] = c.primaryKey && c.type === 'varchar' ? [...String(value)].slice(0, c.length).join('') : value
      }
      if (!possible) continue
      const count = async (): Promise<number> => (await app.pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${quoteIdent(table.name)}`)).rows[0]!.n
      const before = await count()
      const bad: Array<[string, unknown]> = [['an unknown key', { ...row, 'no such column': 1 }], ['not an object', [[1]]], ['null', null]]
      const plain = table.columns.find((c) => !c.primaryKey && c.type !== 'jsonb' && c.type !== 'foreignKey')
      if (plain !== undefined) bad.push([`an object for ${plain.name}`, { ...row, [plain.name]: { x: 1 } }])
      const short = table.columns.find((c) => c.type === 'varchar' && !c.primaryKey && c.choices === null)
      if (short !== undefined) bad.push([`too long for ${short.name}`, { ...row, [short.name]: 'x'.repeat(short.length! + 1) }])
      const chosen = table.columns.find((c) => c.choices !== null && c.type === 'text')
      if (chosen !== undefined) bad.push([`not a choice of ${chosen.name}`, { ...row, [chosen.name]: 'not one of them \u{1F600}' }])
      const required = table.columns.find((c) => c.required && !c.primaryKey)
      if (required !== undefined) bad.push([`without ${required.name}`, Object.fromEntries(Object.entries(row).filter(([k]) => k !== required.name))])
      for (const [what, body] of bad) {
        const res = await app.inject({ method: 'POST', url: `/t${i}/`, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
        const problem = contractProblem(res, [400, 409, 422], () => 'a 2xx for a bad body')
        if (problem !== null) return `POST ${table.name} ${what}: ${problem}`
        if (await count() !== before) return `POST ${table.name} ${what}: refused, yet a row was written`
      }
      const created = await app.inject({ method: 'POST', url: `/t${i}/`, payload: row })
      if (created.statusCode !== 201) {
        // A row the database refuses (a CHECK that is not a list, a NOT NULL column not generated) is a contract 4xx.
        const problem = contractProblem(created, [400, 409, 422], () => null)
        if (problem !== null) return `POST ${table.name} ${JSON.stringify(row)}: ${problem}`
        refusedRows.push(JSON.parse(created.body).message as string)
        continue
      }
      posted++
      const body = JSON.parse(created.body) as Record<string, unknown>
      const id = body[table.primaryKey.name]
      keys.set(table, id)
      const got = await app.inject({ method: 'GET', url: `/t${i}/${encodeURIComponent(String(id))}/` })
      if (got.statusCode !== 200) return `GET ${table.name} ${String(id)}: ${got.statusCode} ${got.body}`
      t.same(JSON.parse(got.body), body, `${table.name}: GET answers the row POST answered`)
      for (const c of table.columns) {
        if (c.name in row && SAME_ON_WIRE.has(c.type)) t.same(body[c.name], row[c.name], `${table.name}.${c.name} round-trips`)
      }
    }
    return null
  } finally {
    await app.close()
  }
}

/** Type-checks the written modules against the library, all in one program. */
function typeErrors (paths: readonly string[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!
  const program = ts.createProgram(paths, { ...config.options, noEmit: true, noUnusedLocals: true })
  return ts.getPreEmitDiagnostics(program).filter((d) => paths.includes(d.file?.fileName ?? ''))
    .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
}

const written: string[] = []
let posted = 0
const refusedRows: string[] = []
const refused: string[] = []

t.test('generate reads random schemas, says what it leaves out, writes valid modules that round-trip and serve', async (t) => {
  await fc.assert(fc.asyncProperty(schemaModel, text, async (models, seed) => {
    await resetSchema()
    const source = schemaSql(models)
    try {
      await sql(async (c) => await c.query(source))
    } catch (error) {
      // A schema PostgreSQL itself refuses (a unique point, a btree index on json): nothing to read.
      refused.push((error as Error).message)
      return
    }
    const first = await cli(['generate'])
    if (first.code !== 0) throw new Error(`generate failed: ${first.stderr}\n${source}`)
    const notes = first.stderr === '' ? [] : first.stderr.trimEnd().split('\n')
    for (const note of notes) {
      if (!NOTE_FORMS.some((form) => form.test(note))) throw new Error(`a note not in the documented forms: ${note}\n${source}`)
    }
    const path = save(first.stdout)
    written.push(path)
    const { tables } = await import(pathToFileURL(path).href) as { tables: Table[] }
    const byName = new Map(tables.map((table) => [table.name, table]))
    for (const m of models) {
      const table = byName.get(truncate(m.name))
      if (generated(m) !== (table !== undefined)) throw new Error(`${m.name}: ${table === undefined ? 'not generated' : 'generated'}\n${first.stderr}\n${source}`)
      if (table === undefined) continue
      if (table.helpText !== m.comment) throw new Error(`${m.name}: help text ${JSON.stringify(table.helpText)}, not ${JSON.stringify(m.comment)}`)
      for (const c of m.columns) {
        const col = table.columns.find((o) => o.name === truncate(c.name))
        if (col === undefined) {
          if (!notes.some((note) => note.startsWith(`Column ${truncate(m.name)}.${escaped(truncate(c.name))} (`))) throw new Error(`${m.name}.${c.name}: left out without a note\n${first.stderr}\n${source}`)
          continue
        }
        if (col.helpText !== c.comment) throw new Error(`${m.name}.${c.name}: help text ${JSON.stringify(col.helpText)}, not ${JSON.stringify(c.comment)}`)
        if (c.enumLabels !== null && c.references === null) {
          const labels = col.choices === null ? null : [...col.choices.values()].map((choice) => choice.value)
          if (JSON.stringify(labels) !== JSON.stringify(keyOrder(c.enumLabels))) throw new Error(`${m.name}.${c.name}: choices ${JSON.stringify(labels)}, not ${JSON.stringify(keyOrder(c.enumLabels))}\n${first.stdout}`)
        }
      }
    }

    // A column left out that is NOT NULL without a default stays a difference: check says inserts fail, as the note did.
    // So does a default the note says is not kept (an expression, a UUID key's none).
    // And an enum whose labels the choices hold in another order (docs/tables.md): its type or default differs.
    const reordered = new Set(models.flatMap((m) => m.columns.filter((c) => c.enumLabels !== null && c.references === null && keyOrder(c.enumLabels).join() !== c.enumLabels.join())
      .map((c) => `${truncate(m.name)}.${truncate(c.name)}`)))
    const noted = (d: { kind: string, table: string, column?: string | null }): boolean => reordered.has(`${d.table}.${d.column ?? ''}`) || notes.some((note) => note.startsWith(`Column ${d.table}.${escaped(d.column ?? '')}`) &&
      (d.kind === 'extra column' ? note.endsWith('It is NOT NULL without a default: inserts through the API fail.') : d.kind === 'default' && /: its default .*is not kept/.test(note)))
    const differences = (await sql(async (c) => await checkTables(c, tables))).filter((d) => !noted(d))
    if (differences.length > 0) throw new Error(`check finds differences: ${JSON.stringify(differences)}\n${source}\n${first.stdout}`)
    const served = await serves(t, tables, seed)
    if (served !== null) throw new Error(`${served}\n${source}\n${first.stdout}`)

    // Created and read again, the same module; where notes said something was not kept (an
    // expression default), the module of the created schema is the one that round-trips.
    let module = first.stdout
    for (const round of notes.length === 0 ? [1] : [1, 2]) {
      const { tables: created } = round === 1 ? { tables } : await import(pathToFileURL(save(module)).href) as { tables: Table[] }
      await resetSchema()
      await sql(async (c) => await createTables(c, created))
      const again = await cli(['generate'])
      if (again.stderr !== '') throw new Error(`created and read again, notes: ${again.stderr}\n${module}`)
      if (again.stdout !== module && (round === 2 || notes.length === 0)) throw new Error(`created and read again, another module:\n${module}\n---\n${again.stdout}\n${source}`)
      module = again.stdout
    }
  }), { numRuns: RUNS, includeErrorInReport: true })
  t.comment(`${posted} rows posted and read back; ${refusedRows.length} valid rows refused: ${[...new Set(refusedRows)].join('; ')}`)
  t.comment(`${refused.length} schemas PostgreSQL refused: ${[...new Set(refused)].join('; ')}`)
  const errors = typeErrors(written)
  t.same(errors, [], `the ${written.length} modules written type-check`)
})
