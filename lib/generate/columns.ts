import { SEQUENCE_DEFAULT, type DbColumn } from '../db/introspect.js'
import { COLUMN_TYPES, sqlLiteral, typeOf } from '../table/column-types.js'
import { column, type ColumnSpec, type ColumnType, type Identity } from '../table/column.js'

/*
 * One database column -> one column builder call, for `fastify-tablecrud generate`. Every
 * decision reads the column type descriptors (lib/table/column-types.ts): a default is kept
 * only when the type's own `literal` takes it, so that `createTables` writes it back as the
 * database has it, and `checkTables` then finds no difference.
 */

/** What `column.<type>(...)` is called with: the type, its element (arrays) and its options in writing order. */
export interface MappedColumn {
  type: ColumnType
  element?: MappedColumn
  options: Map<string, unknown>
}

export type Outcome<T> = { ok: T } | { reason: string }

/** SQL types written back by `format_type` that are one column type each. */
const SCALARS: ReadonlyMap<string, ColumnType> = new Map<string, ColumnType>([
  ['integer', 'integer'], ['smallint', 'smallInt'], ['bigint', 'bigInt'], ['real', 'real'], ['double precision', 'doublePrecision'],
  ['boolean', 'boolean'], ['text', 'text'], ['timestamp without time zone', 'timestamp'], ['timestamp with time zone', 'timestamptz'],
  ['date', 'date'], ['time without time zone', 'time'], ['interval', 'interval'], ['jsonb', 'jsonb'], ['uuid', 'uuid']
])

/** Why a type close to one of ours is not it. */
const NEAR: ReadonlyArray<[RegExp, string]> = [
  [/^character varying$/, 'a varchar without a length (column.varchar needs one)'],
  [/^numeric$/, 'a numeric without precision and scale (column.numeric needs digits)'],
  [/^character\(\d+\)$|^"char"$/, 'a blank-padded character type: no column type keeps the padding (varchar or text do not)'],
  [/^json$/, 'json: the column type is jsonb'],
  [/^(timestamp|time)\(\d\)/, 'a time type with a precision: the column types keep microseconds']
]

/** The type of a column as `format_type` writes it, or why no column type is it. */
export function mapType (sql: string, enumLabels: string[] | null): Outcome<MappedColumn> {
  if (enumLabels !== null) return { ok: { type: 'text', options: new Map([['choices', enumLabels]]) } }
  const scalar = SCALARS.get(sql)
  if (scalar !== undefined) return { ok: { type: scalar, options: new Map() } }
  const varchar = /^character varying\((\d+)\)$/.exec(sql)
  if (varchar !== null) return { ok: { type: 'varchar', options: new Map([['length', Number(varchar[1])]]) } }
  const numeric = /^numeric\((\d+),(\d+)\)$/.exec(sql)
  if (numeric !== null) return { ok: { type: 'numeric', options: new Map([['digits', [Number(numeric[1]), Number(numeric[2])]]]) } }
  if (sql.endsWith('[]')) {
    const element = mapType(sql.slice(0, -2), null)
    if ('reason' in element) return { reason: `an array of ${sql.slice(0, -2)}: ${element.reason}` }
    if (typeOf(spec(element.ok)).check(spec(element.ok), true) !== null) return { reason: `no column type is an array of ${sql.slice(0, -2)}` }
    return { ok: { type: 'array', element: element.ok, options: new Map() } }
  }
  const near = NEAR.find(([pattern]) => pattern.test(sql))
  return { reason: near?.[1] ?? `no column type is ${sql}` }
}

/** The ColumnSpec the builder makes of a mapping, for the descriptors' questions. */
export function spec (mapped: MappedColumn): ColumnSpec {
  const options = Object.fromEntries([...mapped.options].filter(([key]) => key !== 'choices'))
  if (mapped.type === 'array') return column.array(spec(mapped.element!) as never, options)
  return (column[mapped.type] as (o: object) => ColumnSpec)(options)
}

/** The default `createTables` writes for 'now', as PostgreSQL writes it back. */
const NOW_AS_READ: Partial<Record<ColumnType, string>> = {
  timestamp: "(now() AT TIME ZONE 'utc'::text)",
  timestamptz: 'now()',
  date: "((now() AT TIME ZONE 'utc'::text))::date",
  time: "((now() AT TIME ZONE 'utc'::text))::time without time zone"
}

const QUOTED = /^'((?:[^']|'')*)'::[\w" ]+(\[\])?$/
const NUMBER = /^-?\d+(\.\d+)?$/
/** One item of an `ARRAY[...]` or of a CHECK's list, as PostgreSQL writes it back. */
const ITEM = /\s*('(?:[^']|'')*'(?:::[\w" ]+)?|-?\d+(?:\.\d+)?|true|false)\s*(?:,|$)/y

/** The items of a list such as `'a'::text, 'b'::text`, each as a constant's text; undefined when one is not a constant. */
export function listItems (text: string): Array<string | boolean> | undefined {
  const items: Array<string | boolean> = []
  ITEM.lastIndex = 0
  while (ITEM.lastIndex < text.length) {
    const m = ITEM.exec(text)
    if (m === null) return undefined
    items.push(constantText(m[1]!)!)
  }
  return items
}

/** A constant's text (`'x''y'::text` is `x'y`, `12.50` is `12.50`), a boolean, or undefined when it is no constant. */
function constantText (expr: string): string | boolean | undefined {
  const quoted = QUOTED.exec(expr)
  if (quoted !== null) return quoted[1]!.replaceAll("''", "'")
  if (NUMBER.test(expr)) return expr
  if (expr === 'true' || expr === 'false') return expr === 'true'
  return undefined
}

/** A constant's text as a value of the column: a number, a JSON value, the wire form of a date. */
export function valueOf (mapped: MappedColumn, text: string | boolean): unknown {
  const descriptor = COLUMN_TYPES[mapped.type]
  if (typeof text === 'boolean') return text
  const kind = descriptor.schema(spec(mapped), 'in').type as unknown
  if (kind === 'integer' || kind === 'number') return Number(text)
  if (mapped.type === 'jsonb') {
    try { return JSON.parse(text) as unknown } catch { return undefined }
  }
  // A Numeric's value is its text at the column's scale (`-3.10`), as createTables writes it back.
  if (mapped.type === 'numeric') return descriptor.wire(spec(mapped), text)
  return descriptor.read === null ? text : descriptor.read.parse(text)
}

/** A default as the definition's `default` (a value, 'now', an array), or why it cannot be one. */
export function mapDefault (mapped: MappedColumn, expr: string): Outcome<unknown> {
  if (NOW_AS_READ[mapped.type] === expr) return { ok: 'now' }
  const unfit = { reason: `the default ${expr} is not a constant of its type (a definition's default is a value, or 'now' for the clock types)` }
  let value: unknown
  if (mapped.type === 'array') {
    const list = /^ARRAY\[(.*)\]$/.exec(expr)
    const items = list === null ? (constantText(expr) === '{}' ? [] : undefined) : listItems(list[1]!)
    value = items?.map((item) => valueOf(mapped.element!, item))
  } else {
    const text = constantText(expr)
    value = text === undefined ? undefined : valueOf(mapped, text)
  }
  if (value === undefined || sqlLiteral(spec(mapped), value) === undefined) return unfit
  // JSON's null (`'null'::jsonb`): a definition's `default: null` means no default at all.
  if (value === null) return { reason: `the default ${expr} is JSON's null, and a definition's default null means none` }
  return { ok: value }
}

/** Whether the column's type writes a default of its own on a NOT NULL column (SPEC §6.2): '' for text, 0, false. */
export const hasBlank = (mapped: MappedColumn): boolean => COLUMN_TYPES[mapped.type].sqlBlank !== null

/** What the column itself rules out, before its type: the ones `defineTable` refuses and the database computes. */
export function columnProblem (db: DbColumn): string | null {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(db.name) || db.name.includes('__')) return 'its name is not an identifier a definition takes (letters, digits and _, no __)'
  if (db.generated) return 'a generated column: a definition has no computed columns'
  return null
}

/** The column types the database assigns, by the type of their values. */
const ASSIGNED: ReadonlyMap<ColumnType, ColumnType> = new Map<ColumnType, ColumnType>([['integer', 'serial'], ['bigInt', 'bigSerial']])

/** A column the database assigns: the column type that says so, and its identity (null: a sequence default). */
export interface Assigned { type: ColumnType, identity: Identity | null }

/**
 * How the database assigns a column, as a column type: an integer or bigint with a sequence
 * default is a Serial or BigSerial (`serial`, `bigserial`), an identity key one with `identity`;
 * null for a column it does not assign. An identity no column type holds (a smallint's, or one
 * that is not the key: a definition's identity is its key's) is a reason.
 */
export function assignedOf (db: DbColumn, mapped: MappedColumn, isKey: boolean): Outcome<Assigned | null> {
  const type = ASSIGNED.get(mapped.type)
  if (db.identity === null) return { ok: type !== undefined && db.default !== null && SEQUENCE_DEFAULT.test(db.default) ? { type, identity: null } : null }
  if (type === undefined) return { reason: `a ${db.type} identity column: the column types the database assigns are serial (integer) and bigSerial (bigint)` }
  if (!isKey) return { reason: 'an identity column that is not the key: a definition\'s identity is its key\'s. The database still assigns it when a write leaves it out' }
  return { ok: { type, identity: db.identity } }
}
