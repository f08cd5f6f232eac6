import { Type, type StringOptions, type TSchema } from '@sinclair/typebox'
import { quoteLiteral } from './literal.js'
import {
  DECIMAL_TEXT, formatInterval, formatTime, formatTimestamp, formatTimestamptz, nowTime,
  nowTimestamp, nowTimestamptz, parseBigInt, parseBoolean, parseDate, parseInteger, parseInterval, parseNumeric,
  parseReal, parseSmallInt, parseTime, parseTimestamp, parseTimestamptz, parseUuid, TIMESTAMP_IN, today, UUID_IN, ValueError
} from '../values/index.js'
import { doubleProblem, jsonProblem, realProblem, rectangularProblem, textProblem } from '../values/limits.js'
import type { ColumnSpec, ColumnType } from './column.js'
import type { Filtering } from './operators.js'

/*
 * Everything a column type means, in one place (SPEC §2.2): one descriptor per type, typed
 * `satisfies Record<ColumnType, ColumnTypeDescriptor>` so a type added to `ColumnType` without
 * every part fails to compile. DDL, query-string and body parsing, JSON Schemas, operators,
 * defaults and the words errors and docs use all read from here.
 *
 * The JSON Schemas are TypeBox values: plain JSON Schema objects, no Fastify. They live here,
 * in lib/table, because schemas/ may import lib/table only (STYLE.md).
 */

export type Mode = 'in' | 'out'

/** What a type needs to be a primary key (SPEC §6.11). */
export interface KeyDescriptor {
  /** A path id as this key's value, or undefined when it cannot be one (a 400). */
  readonly parse: (column: ColumnSpec, text: string) => unknown
  /** The `:id` path parameter, for OpenAPI. */
  readonly schema: (column: ColumnSpec, description: string) => TSchema
  /**
   * The JSON type of a key value as pg reads it and a JWT's `user_id` carries it: a number for
   * the 32- and 16-bit integers, a string for the rest (a 64-bit integer comes back as text).
   */
  readonly json: 'number' | 'string'
  /** The SQL type of a ForeignKey pointing at this key (a Serial is referenced as integer). */
  readonly referencedAs: (column: ColumnSpec) => string
  /** The database assigns every key: a client may only send null, and a given value is a 400. */
  readonly assigned: boolean
  /** The DDL default a key of this type gets, when it has none declared (UUID: a random one). */
  readonly sqlDefault: string | null
}

export interface ColumnTypeDescriptor {
  /** The SQL type in DDL. */
  readonly sql: (column: ColumnSpec) => string
  /** A definition problem of this column (a bad varchar length), or null. */
  readonly check: (column: ColumnSpec, inArray: boolean) => string | null
  /** Whether it may be the primary key, and how; null when it may not. */
  readonly key: KeyDescriptor | null
  /** A filter value from a query string, or undefined when it is not one (a 400). */
  readonly parse: (column: ColumnSpec, text: string) => unknown
  /** What a filter value must be, for the 400 refusing one: "The value "x" of year is not a valid 32-bit integer." */
  readonly expected: (column: ColumnSpec) => string
  /** What a filter value is, for OpenAPI parameter descriptions ("an integer"). */
  readonly form: (column: ColumnSpec) => string
  /** A body value (already valid against `schema(column, 'in')`) as pg sends it; throws ValueError with a reason. */
  readonly write: (column: ColumnSpec, value: unknown) => unknown
  /**
   * The JSON Schema of one value, not null: `in` validates bodies, `out` serialises rows. A
   * type whose exact rule no JSON Schema keyword words well (a time, a 64-bit integer) leaves
   * it to `write`, whose ValueError names the form; a standard `format` is given where its
   * meaning is ours (uuid, date, date-time), for clients reading `/schema/`.
   */
  readonly schema: (column: ColumnSpec, mode: Mode) => TSchema
  /** Which family of filter operators it takes (lib/table/operators.ts); `e` is the default one. */
  readonly filtering: (column: ColumnSpec) => Filtering
  /** Text: a filter value is matched as `__match` says (contains, case-insensitive, by default). */
  readonly matches: boolean
  /** Its values have an order: a ForeignKey to a key of this type takes the ordering operators. */
  readonly orders: boolean
  /** The SQL default of a NOT NULL column with none declared (SPEC §6.2), or null for none. */
  readonly sqlBlank: string | null
  /** The wire value of that default, for `/new/` and writes that leave the column out. */
  readonly blank: (column: ColumnSpec) => unknown
  /** A declared default as a SQL literal, or undefined when it does not fit the type. */
  readonly literal: (column: ColumnSpec, value: unknown) => string | undefined
  /** A declared default in wire form, as `/new/` shows it (`"12.50"`, not 12.5). */
  readonly wire: (column: ColumnSpec, value: unknown) => unknown
  /** What the declared default `'now'` means for a write, for types that have a now; else null. */
  readonly now: (() => unknown) | null
  /** The `widget` hint of `/schema/`, or null. */
  readonly widget: string | null
  /** How pg reads this type's text, where its own parser is wrong (a JS Date, a lost digit); null keeps pg's. */
  readonly read: WireParser | null
}

/** A pg text parser for one type's OIDs (lib/db/types.ts installs them per query). */
export interface WireParser {
  readonly oid: number | null
  readonly arrayOid: number | null
  readonly parse: (text: string) => unknown
}

const INT32 = { minimum: -2147483648, maximum: 2147483647 } as const

/** The innermost element of an array column; ForeignKeys resolve through their target's key. */
function element (column: ColumnSpec): ColumnSpec {
  return column.element!
}

/** The key a ForeignKey points at; the target was checked when the table was registered. */
function referenced (column: ColumnSpec): ColumnSpec {
  return column.target!().primaryKey
}

const same = (_column: ColumnSpec, value: unknown): unknown => value

/** Throws the reason a check of lib/values/limits found, if any: PostgreSQL would refuse the value with its own message. */
function refuse (problem: string | null): void {
  if (problem !== null) throw new ValueError(problem)
}

/** A text value as pg sends it; a hook may hand back what the body schema never saw, so only strings are checked. */
const writeText = (_column: ColumnSpec, value: unknown): unknown => {
  if (typeof value === 'string') refuse(textProblem(value))
  return value
}

/** A real is a 4-byte float: a number it cannot hold is refused before PostgreSQL refuses it. */
const parseFloat4 = (text: string): number | undefined => {
  const n = parseReal(text)
  return n !== undefined && realProblem(n) === null ? n : undefined
}

/** How many arrays deep a column's values are. */
function depthOf (column: ColumnSpec): number {
  let depth = 0
  for (let c: ColumnSpec | undefined = column; c?.type === 'array'; c = c.element) depth++
  return depth
}
const noCheck = (): null => null
const noLiteral = (): undefined => undefined
const words = (text: string) => (): string => text
const fixed = (sql: string) => (): string => sql
const ordered = (): Filtering => 'ordered'
const unordered = (): Filtering => 'equality'
const contains = (): Filtering => 'containment'

/** A string that PostgreSQL's text types take: anything without NUL. */
function parseText (_column: ColumnSpec, text: string): string | undefined {
  return text.includes('\0') ? undefined : text
}

function textLiteral (_column: ColumnSpec, value: unknown): string | undefined {
  return typeof value === 'string' ? quoteLiteral(value) : undefined
}

function numberLiteral (_column: ColumnSpec, value: unknown): string | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined
}

/** The text key types: any non-empty string without NUL, within a Varchar's length. */
const textKey = (sql: (c: ColumnSpec) => string): KeyDescriptor => ({
  parse: (column, text) => text === '' || text.includes('\0') || (column.length !== undefined && [...text].length > column.length) ? undefined : text,
  schema: (column, description) => Type.String({ minLength: 1, ...(column.length === undefined ? {} : { maxLength: column.length }), description }),
  json: 'string',
  referencedAs: sql,
  assigned: false,
  sqlDefault: null
})

const integer = {
  parse: (_column: ColumnSpec, text: string) => parseInteger(text),
  expected: words('32-bit integer'),
  form: words('an integer'),
  schema: () => Type.Integer(INT32)
}

/** What BigInt and BigSerial values are: digit strings out, exact past 2^53. */
const bigInt = {
  parse: (_column: ColumnSpec, text: string) => parseBigInt(text),
  expected: words('64-bit integer'),
  form: words('an integer'),
  write: (_column: ColumnSpec, value: unknown) => {
    const digits = parseBigInt(value)
    if (digits === undefined) throw new ValueError('must be a 64-bit integer (a string of digits past 2^53)')
    return digits
  },
  // A JSON number is taken while it is exact; past 2^53 a client sends the digits as a string.
  schema: (_column: ColumnSpec, mode: Mode) => mode === 'out'
    ? Type.String()
    : Type.Union([Type.Integer(), Type.String()]),
  wire: (_column: ColumnSpec, value: unknown) => parseBigInt(value) ?? value
}

/** What the types whose values are JSON numbers share (but serial): ordered, 0 when blank. */
const number = {
  write: same,
  filtering: ordered,
  matches: false,
  orders: true,
  sqlBlank: '0',
  blank: () => 0,
  literal: numberLiteral,
  wire: same,
  now: null,
  widget: null,
  read: null
} as const

const text = {
  check: noCheck,
  parse: parseText,
  expected: words('string without NUL characters'),
  form: words('text'),
  write: writeText,
  filtering: unordered,
  matches: true,
  orders: true,
  sqlBlank: "''",
  blank: () => '',
  literal: textLiteral,
  wire: same,
  now: null
} as const

/** The `now` default of a timestamp, in UTC like every timestamp this library writes. */
const NOW = "(now() AT TIME ZONE 'utc')"
/** Today and the time of day, in UTC likewise. */
const TODAY = "((now() AT TIME ZONE 'utc')::date)"
const CLOCK = "((now() AT TIME ZONE 'utc')::time)"
const INT16 = { minimum: -32768, maximum: 32767 } as const

/**
 * The parts of a type whose values are strings that `parse` checks and makes canonical: a filter
 * value, a body value (refused as "must be <form>") and a declared default (a quoted literal).
 */
function canonical (parse: (value: unknown) => string | undefined, form: string): Pick<ColumnTypeDescriptor, 'parse' | 'form' | 'write' | 'literal'> {
  return {
    parse: (_column, text) => parse(text),
    form: words(form),
    write: (_column, value) => {
      const text = parse(value)
      if (text === undefined) throw new ValueError(`must be ${form}`)
      return text
    },
    literal: (_column, value) => {
      const text = parse(value)
      return text === undefined ? undefined : quoteLiteral(text)
    }
  }
}

/** What sets one clock type (a date, a time, a timestamp) apart from the others. */
interface Clock {
  readonly sql: string
  /** The canonical text of a value, or undefined when it is not one. */
  readonly parse: (value: unknown) => string | undefined
  readonly expected: string
  /** What a value is, as OpenAPI and a write's refusal ("must be ...") word it. */
  readonly form: string
  /** The JSON Schema of a value in a body (out, any string: the database wrote it). */
  readonly schemaIn: StringOptions
  /** `now`, in SQL and as a wire value: a declared default `'now'` and the blank of a NOT NULL column. */
  readonly sqlNow: string
  readonly now: () => string
  /** A declared default other than `'now'`, in wire form. */
  readonly wire: (value: unknown) => unknown
  readonly read: WireParser
}

/** The descriptor of a clock type: ordered, a value `now` wherever a default is declared. */
function clock ({ sql, parse, expected, form, schemaIn, sqlNow, now, wire, read }: Clock): ColumnTypeDescriptor {
  const values = canonical(parse, form)
  return {
    sql: fixed(sql),
    check: noCheck,
    key: null,
    ...values,
    expected: words(expected),
    schema: (_column, mode) => mode === 'out' ? Type.String() : Type.String(schemaIn),
    filtering: ordered,
    matches: false,
    orders: true,
    sqlBlank: sqlNow,
    blank: now,
    literal: (column, value) => value === 'now' ? sqlNow : values.literal(column, value),
    wire: (_column, value) => value === 'now' ? now() : wire(value),
    now,
    widget: null,
    read
  }
}
export const BIGINT_PATTERN = '^[+-]?\\d+$'
/** A BigSerial path id: a positive integer (SPEC §6.11), at most 2^63 - 1 (checked in code). */
const POSITIVE_PATTERN = '^\\+?0*[1-9]\\d*$'
const INT64_MAX = 9223372036854775807n

/**
 * What a key the database assigns is in DDL: its sequence type (`serial`), or with `identity`
 * the plain integer type, `createTables` adding `GENERATED ... AS IDENTITY` (lib/db/ddl.ts).
 */
const assignedSql = (sequence: string, plain: string) => (column: ColumnSpec): string => column.identity === undefined ? sequence : plain

/** A definition problem of a Serial or BigSerial: in an array, or an `identity` that is no identity or not on the key. */
const assignedCheck = (plural: string) => (column: ColumnSpec, inArray: boolean): string | null => {
  if (inArray) return `an array cannot hold ${plural}`
  if (column.identity === undefined) return null
  if (column.identity !== 'always' && column.identity !== 'by default') return "identity must be 'always' or 'by default'"
  // Elsewhere the database would refuse every write: a body leaving it out sends NULL (SPEC §6.2).
  return column.primaryKey ? null : 'identity is for the primary key only'
}

/** What Serial and BigSerial share as values: ordered, no type default, no declared default. */
const assignedValues = {
  filtering: ordered,
  matches: false,
  orders: true,
  sqlBlank: null,
  blank: () => null,
  literal: noLiteral,
  now: null,
  widget: null,
  read: null
} as const

export const COLUMN_TYPES = {
  serial: {
    ...integer,
    ...assignedValues,
    sql: assignedSql('serial', 'integer'),
    check: assignedCheck('serials'),
    key: {
      parse: (_column, text) => { const n = parseInteger(text); return n !== undefined && n > 0 ? n : undefined },
      schema: (_column, description) => Type.Integer({ minimum: 1, maximum: INT32.maximum, description }),
      json: 'number',
      referencedAs: fixed('integer'),
      assigned: true,
      sqlDefault: null
    },
    write: same,
    wire: same
  },
  integer: {
    ...integer,
    ...number,
    sql: fixed('integer'),
    check: noCheck,
    key: {
      parse: (_column, text) => parseInteger(text),
      schema: (_column, description) => Type.Integer({ ...INT32, description }),
      json: 'number',
      referencedAs: fixed('integer'),
      assigned: false,
      sqlDefault: null
    }
  },
  real: {
    ...number,
    sql: fixed('real'),
    check: noCheck,
    key: null,
    parse: (_column, text) => parseFloat4(text),
    expected: words('number'),
    form: words('a number'),
    write: (_column, value) => {
      if (typeof value === 'number') refuse(realProblem(value))
      return value
    },
    schema: () => Type.Number()
  },
  numeric: {
    sql: (column) => `numeric(${column.digits![0]}, ${column.digits![1]})`,
    check: (column) => {
      const [precision, scale] = column.digits ?? [NaN, NaN]
      return !Number.isInteger(precision) || !Number.isInteger(scale) || precision < 1 || precision > 1000 || scale < 0 || scale > precision
        ? 'numeric digits must be [precision, scale] with 1 <= precision <= 1000 and 0 <= scale <= precision'
        : null
    },
    key: null,
    parse: (_column, text) => DECIMAL_TEXT.test(text) ? text : undefined,
    expected: words('decimal number'),
    form: words('a decimal number'),
    write: (column, value) => {
      const [precision, scale] = column.digits!
      const text = parseNumeric(value, precision, scale)
      if (text === undefined) throw new ValueError(`must be a decimal with at most ${precision - scale} digits before the point and ${scale} after it`)
      return text
    },
    // Precision and scale are checked by parseNumeric in code, with a message naming them.
    schema: (_column, mode) => mode === 'out' ? Type.String() : Type.Union([Type.Number(), Type.String({ pattern: DECIMAL_TEXT.source })]),
    filtering: ordered,
    matches: false,
    orders: true,
    sqlBlank: '0',
    blank: () => 0,
    literal: (column, value) => parseNumeric(value, column.digits![0], column.digits![1]),
    wire: (column, value) => parseNumeric(value, column.digits![0], column.digits![1]) ?? value,
    now: null,
    widget: null,
    // pg keeps a numeric as text, but reads a numeric[] as floats.
    read: { oid: null, arrayOid: 1231, parse: (text) => text }
  },
  boolean: {
    sql: fixed('boolean'),
    check: noCheck,
    key: null,
    parse: (_column, text) => parseBoolean(text),
    expected: words('boolean (true, false, 1, 0, t, f, yes, no)'),
    form: words('true, false, 1, 0, t, f, yes or no'),
    write: same,
    schema: () => Type.Boolean(),
    filtering: unordered,
    matches: false,
    orders: false,
    sqlBlank: 'false',
    blank: () => false,
    literal: (_column, value) => typeof value === 'boolean' ? String(value) : undefined,
    wire: same,
    now: null,
    widget: null,
    read: null
  },
  varchar: {
    ...text,
    sql: (column) => `varchar(${column.length})`,
    check: (column) => !Number.isInteger(column.length) || column.length! < 1 || column.length! > 10485760
      ? 'a varchar needs a length between 1 and 10485760'
      : null,
    key: textKey((column) => `varchar(${column.length})`),
    schema: (column) => Type.String({ maxLength: column.length! }),
    widget: null,
    read: null
  },
  text: {
    ...text,
    sql: fixed('text'),
    key: textKey(fixed('text')),
    schema: () => Type.String(),
    widget: 'text-area',
    read: null
  },
  email: {
    ...text,
    sql: fixed('text'),
    key: null,
    schema: (_column, mode) => mode === 'out' ? Type.String() : Type.String({ format: 'email' }),
    sqlBlank: null,
    blank: () => null,
    widget: null,
    read: null
  },
  timestamp: clock({
    sql: 'timestamp',
    parse: (value) => typeof value === 'string' ? parseTimestamp(value) : undefined,
    expected: 'ISO 8601 date or date-time',
    form: 'an ISO 8601 date or date-time',
    // No pattern out: fast-json-stringify tests anyOf branches, and `infinity` must still serialise.
    schemaIn: { pattern: TIMESTAMP_IN.source },
    sqlNow: NOW,
    now: nowTimestamp,
    wire: (value) => {
      const text = typeof value === 'string' ? parseTimestamp(value) : undefined
      // parseTimestamp always writes six fraction digits; the wire form drops a zero fraction.
      return text === undefined ? value : formatTimestamp(text.replace(/\.0{6}$/, ''))
    },
    // Never a JS Date, which drops microseconds and applies the local zone.
    read: { oid: 1114, arrayOid: 1115, parse: formatTimestamp }
  }),
  smallInt: {
    ...number,
    sql: fixed('smallint'),
    check: noCheck,
    key: {
      parse: (_column, text) => parseSmallInt(text),
      schema: (_column, description) => Type.Integer({ ...INT16, description }),
      json: 'number',
      referencedAs: fixed('smallint'),
      assigned: false,
      sqlDefault: null
    },
    parse: (_column, text) => parseSmallInt(text),
    expected: words('16-bit integer'),
    form: words('an integer'),
    schema: () => Type.Integer(INT16)
  },
  bigInt: {
    ...bigInt,
    sql: fixed('bigint'),
    check: noCheck,
    key: {
      parse: (_column, text) => parseBigInt(text),
      schema: (_column, description) => Type.String({ pattern: BIGINT_PATTERN, description }),
      json: 'string',
      referencedAs: fixed('bigint'),
      assigned: false,
      sqlDefault: null
    },
    filtering: ordered,
    matches: false,
    orders: true,
    sqlBlank: '0',
    blank: () => '0',
    literal: (_column, value) => parseBigInt(value),
    now: null,
    widget: null,
    // pg's own reader keeps int8 and int8[] as digit strings already.
    read: null
  },
  bigSerial: {
    // A BigInt on the wire and in filters; a Serial as a key.
    ...bigInt,
    ...assignedValues,
    sql: assignedSql('bigserial', 'bigint'),
    check: assignedCheck('bigserials'),
    key: {
      parse: (_column, text) => { const digits = parseBigInt(text); return digits !== undefined && BigInt(digits) > 0n ? digits : undefined },
      schema: (_column, description) => Type.String({ pattern: POSITIVE_PATTERN, description: `${description} From 1 to ${INT64_MAX}.` }),
      json: 'string',
      referencedAs: fixed('bigint'),
      assigned: true,
      sqlDefault: null
    }
  },
  doublePrecision: {
    ...number,
    sql: fixed('double precision'),
    check: noCheck,
    key: null,
    parse: (_column, text) => parseReal(text),
    expected: words('number'),
    form: words('a number'),
    write: (_column, value) => {
      if (typeof value === 'number') refuse(doubleProblem(value))
      return value
    },
    schema: () => Type.Number()
  },
  uuid: {
    sql: fixed('uuid'),
    check: noCheck,
    key: {
      parse: (_column, text) => parseUuid(text),
      schema: (_column, description) => Type.String({ pattern: UUID_IN.source, description }),
      json: 'string',
      referencedAs: fixed('uuid'),
      assigned: false,
      // A client may name the key; left out, the database makes a random one.
      sqlDefault: 'gen_random_uuid()'
    },
    ...canonical(parseUuid, 'a UUID'),
    expected: words('UUID'),
    schema: (_column, mode) => mode === 'out' ? Type.String() : Type.String({ format: 'uuid' }),
    filtering: unordered,
    matches: false,
    orders: false,
    sqlBlank: null,
    blank: () => null,
    wire: (_column, value) => parseUuid(value) ?? value,
    now: null,
    widget: null,
    read: null
  },
  date: clock({
    sql: 'date',
    parse: parseDate,
    expected: 'date (YYYY-MM-DD)',
    form: 'a date, YYYY-MM-DD',
    schemaIn: { format: 'date' },
    sqlNow: TODAY,
    now: today,
    wire: (value) => value,
    // pg's own reader makes a JS Date at local midnight: the day can move.
    read: { oid: 1082, arrayOid: 1182, parse: (text) => text }
  }),
  time: clock({
    sql: 'time',
    parse: parseTime,
    expected: 'time (HH:MM:SS[.ffffff])',
    form: 'a time, HH:MM:SS[.ffffff]',
    schemaIn: { description: 'HH:MM:SS[.ffffff]' },
    sqlNow: CLOCK,
    now: nowTime,
    wire: (value) => parseTime(value) ?? value,
    read: { oid: 1083, arrayOid: 1183, parse: formatTime }
  }),
  timestamptz: clock({
    sql: 'timestamptz',
    parse: parseTimestamptz,
    expected: 'ISO 8601 date-time with Z or an offset',
    form: 'an ISO 8601 date-time with Z or an offset',
    schemaIn: { format: 'date-time' },
    sqlNow: 'now()',
    now: nowTimestamptz,
    wire: (value) => {
      const text = parseTimestamptz(value)
      return text === undefined ? value : formatTimestamptz(text)
    },
    // Never a JS Date: microseconds stay, and the session's zone is turned into UTC.
    read: { oid: 1184, arrayOid: 1185, parse: formatTimestamptz }
  }),
  interval: {
    sql: fixed('interval'),
    check: noCheck,
    key: null,
    ...canonical(parseInterval, 'an ISO 8601 duration such as P1DT2H'),
    expected: words('ISO 8601 duration (P1DT2H)'),
    schema: (_column, mode) => mode === 'out' ? Type.String() : Type.String({ description: 'ISO 8601 duration, such as P1DT2H' }),
    filtering: ordered,
    matches: false,
    orders: true,
    sqlBlank: "'PT0S'",
    blank: () => 'PT0S',
    wire: same,
    now: null,
    widget: null,
    // pg's own reader makes an object; the wire form is an ISO 8601 duration.
    read: { oid: 1186, arrayOid: 1187, parse: formatInterval }
  },
  jsonb: {
    sql: fixed('jsonb'),
    check: (_column, inArray) => inArray ? 'an array cannot hold jsonb (a JSON array is one jsonb value)' : null,
    key: null,
    // No filter takes a value: only is_null and not_null apply.
    parse: () => undefined,
    expected: words('JSON value'),
    form: words('no value (is_null and not_null only)'),
    // pg would send a JS array as a PostgreSQL array and a string as raw JSON text: send JSON.
    write: (_column, value) => {
      refuse(jsonProblem(value))
      return JSON.stringify(value)
    },
    // Any JSON value; null is the SQL NULL of a nullable column.
    schema: (_column, mode) => mode === 'out' ? Type.Unknown() : Type.Unsafe({ type: ['boolean', 'number', 'string', 'array', 'object'] }),
    filtering: () => 'presence',
    matches: false,
    orders: false,
    sqlBlank: null,
    blank: () => null,
    literal: (_column, value) => { const json = JSON.stringify(value) as string | undefined; return json === undefined ? undefined : quoteLiteral(json) },
    wire: same,
    now: null,
    widget: null,
    read: null
  },
  foreignKey: {
    // A ForeignKey is its target key's type on the wire and in SQL.
    sql: (column) => { const key = referenced(column); return typeOf(key).key!.referencedAs(key) },
    check: (_column, inArray) => inArray ? 'an array cannot hold foreign keys' : null,
    key: null,
    parse: (column, text) => { const key = referenced(column); return typeOf(key).parse(key, text) },
    expected: (column) => { const key = referenced(column); return typeOf(key).expected(key) },
    form: (column) => { const key = referenced(column); return typeOf(key).form(key) },
    write: (column, value) => { const key = referenced(column); return typeOf(key).write(key, value) },
    schema: (column, mode) => { const key = referenced(column); return typeOf(key).schema(key, mode) },
    filtering: (column) => typeOf(referenced(column)).orders ? 'ordered' : 'equality',
    matches: false,
    orders: true,
    sqlBlank: null,
    blank: () => null,
    literal: noLiteral,
    wire: (column, value) => { const key = referenced(column); return typeOf(key).wire(key, value) },
    now: null,
    widget: null,
    read: null
  },
  array: {
    sql: (column) => typeOf(element(column)).sql(element(column)) + '[]',
    check: () => null,
    key: null,
    parse: (column, text) => typeOf(element(column)).parse(element(column), text),
    expected: (column) => typeOf(element(column)).expected(element(column)),
    form: (column) => typeOf(element(column)).form(element(column)),
    write: (column, value) => {
      // A hook may hand back what the body schema never saw.
      if (!Array.isArray(value)) throw new ValueError('must be an array')
      refuse(rectangularProblem(value, depthOf(column)))
      return value.map((v) => toDatabase(element(column), v))
    },
    schema: (column, mode) => Type.Array(typeOf(element(column)).schema(element(column), mode)),
    filtering: contains,
    matches: false,
    orders: false,
    sqlBlank: "'{}'",
    blank: () => [],
    literal: (column, value) => {
      if (!Array.isArray(value)) return undefined
      const items = value.map((v) => sqlLiteral(element(column), v))
      return items.includes(undefined) ? undefined : `ARRAY[${items.join(', ')}]`
    },
    wire: (column, value) => Array.isArray(value) ? value.map((v) => v === null ? null : typeOf(element(column)).wire(element(column), v)) : value,
    now: null,
    widget: null,
    read: null
  }
} as const satisfies Record<ColumnType, ColumnTypeDescriptor>

/** The descriptor of a column's type. */
export function typeOf (column: ColumnSpec): ColumnTypeDescriptor {
  return COLUMN_TYPES[column.type]
}

/** Whether `type` names a column type: a JavaScript caller may pass anything. */
export function isColumnType (type: unknown): type is ColumnType {
  return typeof type === 'string' && Object.hasOwn(COLUMN_TYPES, type)
}

/**
 * A validated JSON body value as pg should send it (Numeric checked against precision and
 * scale, timestamps as UTC text, arrays element by element); null stays null. Throws
 * ValueError with a reason, and nothing else.
 */
export function toDatabase (column: ColumnSpec, value: unknown): unknown {
  if (value === null || value === undefined) return null
  return typeOf(column).write(column, value)
}

/**
 * `toDatabase` of one column, its type found once: for a walk over many values of the column
 * (a write body's, plugins/crud/body.ts).
 */
export function databaseWriter (column: ColumnSpec): (value: unknown) => unknown {
  const { write } = typeOf(column)
  return (value) => value === null || value === undefined ? null : write(column, value)
}

/** A declared default as a SQL literal, or undefined when it does not fit the column's type. */
export function sqlLiteral (column: ColumnSpec, value: unknown): string | undefined {
  if (value === null) return 'NULL'
  return typeOf(column).literal(column, value)
}
