import { errorFacts } from '../errors.js'
import { randomBytes } from 'node:crypto'
import { quoteIdent, quoteLiteral } from '../sql/identifier.js'
import type { Table, TableColumn } from '../table/table.js'
import { columnDefault, sqlType } from './ddl.js'
import { runnerOf, type DatabaseHandle } from './port.js'

/** What `checkTables` can find wrong with a table. */
export type TableProblemKind = 'missing table' | 'missing column' | 'type' | 'nullability' | 'default' | 'extra column'

/**
 * One difference between a table definition and the database: the table, the column (null for
 * a missing table), what the definition expects and what the database has (SQL as PostgreSQL
 * writes it back: `character varying(100)`, `''::character varying`; null for none), and one
 * sentence saying it.
 * @example { table: 'movie', column: 'rating', kind: 'missing column', expected: 'real', actual: null, message: 'Column movie.rating is missing (real).' }
 */
export interface TableProblem {
  table: string
  column: string | null
  kind: TableProblemKind
  expected: string | null
  actual: string | null
  message: string
}

interface ColumnFacts {
  table: number
  side: 'actual' | 'expected'
  name: string
  type: string
  not_null: boolean
  default: string | null
  /** The labels of an enum type, in order; null for other types. */
  labels: string[] | null
}

/** A Serial key's default names its sequence; any `nextval(...)` is the same intent. */
const SEQUENCE_DEFAULT = /^nextval\('.*'::regclass\)$/

const nullity = (notNull: boolean): string => notNull ? 'NOT NULL' : 'nullable'
const show = (value: string | null): string => value ?? 'no default'

/**
 * The script: each definition as a temporary table (its columns' types, NOT NULL and defaults
 * exactly as `createTables` writes them, without keys and constraints), then what PostgreSQL
 * says of both sides. Asking PostgreSQL to write both back (`format_type`, `pg_get_expr`)
 * compares meanings, not spellings (`varchar(5)` and `character varying(5)`). One simple-query
 * batch runs as one implicit transaction on one connection, so the temporary tables exist for
 * the SELECTs and are gone (ON COMMIT DROP) when it ends, on a pool, a client or the embedded server.
 */
function checkScript (tables: readonly Table[]): string {
  const prefix = `tablecrud_check_${randomBytes(6).toString('hex')}_`
  const statements = tables.map((table, i) => {
    const columns = table.columns.map((column) => {
      // A Serial as integer: the sequence would be the temporary table's own.
      const type = column.type === 'serial' ? 'integer' : sqlType(table, column)
      const fallback = column.type === 'serial' ? null : columnDefault(table, column)
      const notNull = column.primaryKey || !column.nullable
      return [quoteIdent(column.name), type, notNull ? 'NOT NULL' : '', fallback === null ? '' : `DEFAULT ${fallback}`].filter(Boolean).join(' ')
    })
    return `CREATE TEMPORARY TABLE ${quoteIdent(prefix + String(i))} (${columns.join(', ')}) ON COMMIT DROP`
  })
  const sides = tables.flatMap((table, i) => [
    `(${i}, 'actual', to_regclass(${quoteLiteral(quoteIdent(table.name))}))`,
    `(${i}, 'expected', to_regclass(${quoteLiteral(quoteIdent(prefix + String(i)))}))`
  ])
  statements.push(
    'SELECT s.i AS "table", s.side, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null, ' +
    'pg_get_expr(d.adbin, d.adrelid) AS "default", CASE WHEN t.typtype = \'e\' THEN ARRAY(SELECT e.enumlabel::text FROM pg_enum e ' +
    `WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) END AS labels FROM (VALUES ${sides.join(', ')}) AS s(i, side, rel) ` +
    'JOIN pg_attribute a ON a.attrelid = s.rel AND a.attnum > 0 AND NOT a.attisdropped JOIN pg_type t ON t.oid = a.atttypid ' +
    'LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum ORDER BY s.i, a.attnum')
  return statements.join(';\n')
}

/**
 * Whether the database's column is an enum whose labels are the definition's choices: the same
 * intent as the definition's text column with choices (what `generate` writes of an enum).
 */
function enumOfChoices (column: TableColumn, have: ColumnFacts | undefined): boolean {
  if (have?.labels == null || column.choices === null) return false
  const values = [...column.choices.values()].map((choice) => String(choice.value))
  return values.length === have.labels.length && values.every((value, i) => value === have.labels![i])
}

/**
 * A default without its cast: an enum's `'G'::mpaa_rating` is the definition's `'G'::text`, and
 * so is `'G'::"Rating"`, a name that needs quotes (as Prisma writes enums).
 */
const uncast = (text: string | null): string | null => text?.replace(/::(?:[a-z_][\w ]*|"(?:[^"]|"")+")$/i, '') ?? null

/** A numeric constant (`12.5`, `'-3.10'::numeric`) as its value's text, trailing zeros dropped; null when it is none. */
function decimal (text: string | null): string | null {
  const m = /^'?(-?\d+)(?:\.(\d*?)0*)?'?(?:::(?:numeric|bigint|integer))?$/.exec(text ?? '')
  return m === null ? null : `${m[1]!}.${m[2] ?? ''}`
}

/**
 * Whether two defaults are one: PostgreSQL keeps a numeric's as written (`DEFAULT 12.5` on a
 * numeric(6,2)), not at the column's scale as a definition's is written (12.50), and a float's
 * large whole number with the type it read it as (`1e10` is `'10000000000'::numeric`, the
 * definition's 10000000000 `'10000000000'::bigint`).
 */
const sameDecimal = (want: string | null, have: string | null): boolean => decimal(want) !== null && decimal(want) === decimal(have)

function compareColumn (table: string, name: string, want: ColumnFacts, have: ColumnFacts | undefined): TableProblem[] {
  const where = `Column ${table}.${name}`
  if (have === undefined) {
    return [{ table, column: name, kind: 'missing column', expected: want.type, actual: null, message: `${where} is missing (${want.type}).` }]
  }
  const problems: TableProblem[] = []
  const problem = (kind: TableProblemKind, expected: string | null, actual: string | null, message: string): void => {
    problems.push({ table, column: name, kind, expected, actual, message })
  }
  if (want.type !== have.type) problem('type', want.type, have.type, `${where} is ${have.type} in the database; the definition says ${want.type}.`)
  if (want.not_null !== have.not_null) {
    problem('nullability', nullity(want.not_null), nullity(have.not_null), `${where} is ${nullity(have.not_null)} in the database; the definition says ${nullity(want.not_null)}.`)
  }
  const sameDefault = want.default === have.default || (want.default === 'serial' && SEQUENCE_DEFAULT.test(have.default ?? '')) ||
    (/^(numeric|real|double precision)/.test(want.type) && sameDecimal(want.default, have.default))
  if (!sameDefault) {
    problem('default', want.default, have.default, `${where} has ${show(have.default)} in the database; the definition says ${show(want.default)}.`)
  }
  return problems
}

/**
 * Compares table definitions with the database the pool is connected to (the tables found by
 * its search path): missing tables and columns, and columns whose type, nullability or
 * default differ from what `createTables` would write; also columns the definition lacks that
 * are NOT NULL without a default (every insert would fail). Resolves to the problems, `[]`
 * when the database matches. Keys, indexes and constraints are not compared.
 * @example
 * const problems = await checkTables(app.pg, [director, movie])
 * for (const p of problems) app.log.warn(p.message)
 */
export async function checkTables (db: DatabaseHandle, tables: readonly Table[]): Promise<TableProblem[]> {
  if (tables.length === 0) return []
  // A script of several statements: pg answers with one result per statement.
  const results = await runnerOf(db).run({ text: checkScript(tables), values: [] }) as unknown as Array<{ rows: ColumnFacts[] }>
  const facts = results[results.length - 1]!.rows
  const problems: TableProblem[] = []
  for (const [i, table] of tables.entries()) {
    const side = (which: ColumnFacts['side']): Map<string, ColumnFacts> =>
      new Map(facts.filter((f) => f.table === i && f.side === which).map((f) => [f.name, f]))
    const actual = side('actual')
    if (actual.size === 0) {
      problems.push({ table: table.name, column: null, kind: 'missing table', expected: null, actual: null, message: `Table ${table.name} is missing.` })
      continue
    }
    const expected = side('expected')
    for (const column of table.columns) {
      const want = expected.get(column.name)!
      let have = actual.get(column.name)
      let expect = column.type === 'serial' ? { ...want, default: 'serial' } : want
      if (enumOfChoices(column, have)) {
        expect = { ...want, type: have!.type, default: uncast(want.default) }
        have = { ...have!, default: uncast(have!.default) }
      }
      problems.push(...compareColumn(table.name, column.name, expect, have))
    }
    for (const [name, have] of actual) {
      if (expected.has(name) || !have.not_null || have.default !== null) continue
      problems.push({
        table: table.name,
        column: name,
        kind: 'extra column',
        expected: null,
        actual: have.type,
        message: `Column ${table.name}.${name} is not in the definition, and NOT NULL without a default: every insert fails.`
      })
    }
  }
  return problems
}

const CHECK_HINT = 'the table definitions and the database differ; run `npx fastify-tablecrud check <module>` to list the differences.'

/**
 * A row a write returned that its table definition's schema cannot answer: the column's type was
 * changed in the database by hand (a `real` became an `interval`). Thrown inside the write's
 * transaction, before COMMIT, so the write is rolled back (issue 27); the client sees a generic
 * 500 and the log line of `schemaDriftHint`. `column` is null when no one column is to blame.
 */
export class SchemaDriftError extends Error {
  /** Set when the write ran alone, outside a transaction (the port's `single`): it was committed before its answer failed. */
  committed = false

  constructor (readonly table: string, readonly column: string | null, readonly expected: string | null, cause: unknown) {
    super(`A returned row of ${table} does not fit its definition`, { cause })
    this.name = 'SchemaDriftError'
  }
}

/** The log line of a SchemaDriftError. */
function driftHint (error: SchemaDriftError): string {
  const what = error.column === null ? `A row of the table ${error.table}` : `The column ${error.column} of the table ${error.table}`
  const reason = error.cause instanceof Error ? error.cause.message : String(error.cause)
  return `${what} holds a value its definition (${error.expected ?? 'the row schema'}) cannot answer (${reason}): ${error.committed ? 'the write was committed (it ran alone, outside a transaction)' : 'the write was rolled back'}; ${CHECK_HINT}`
}

/** Names of the table or column a 42P01 or 42703 message is about. */
const MISSING = [
  /^relation "(?<table>[^"]+)" does not exist$/,
  /^column "(?<column>[^"]+)" of relation "(?<table>[^"]+)" does not exist$/,
  /^column (?<table>[^.\s]+)\.(?<column>[^\s]+) does not exist$/,
  /^column "(?<column>[^"]+)" does not exist$/
]

/**
 * One log line for a query that failed because the database lacks a table (42P01) or a column
 * (42703) the definitions name, or for a SchemaDriftError, or undefined for any other error. `table` names the table the
 * request was about, for messages that only give a query alias (`t0`).
 * @example request.log.error({ err }, schemaDriftHint(err, 'movie'))
 */
export function schemaDriftHint (error: unknown, table?: string): string | undefined {
  if (error instanceof SchemaDriftError) return driftHint(error)
  const { code, message } = errorFacts(error)
  // Only the database's own errors, which carry its message, get a hint.
  if ((code !== '42P01' && code !== '42703') || !(error instanceof Error)) return undefined
  const groups = MISSING.map((pattern) => pattern.exec(message)?.groups).find((g) => g !== undefined) ?? {}
  const alias = groups.table !== undefined && /^t\d+$/.test(groups.table)
  const named = alias || groups.table === undefined ? table : groups.table
  const what = code === '42P01'
    ? `The table ${named ?? '(unknown)'}`
    : `The column ${groups.column ?? '(unknown)'} of the table ${named ?? '(unknown)'}`
  return `${what} is missing in the database (${message}): ${CHECK_HINT}`
}
