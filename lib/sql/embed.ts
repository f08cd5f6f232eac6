import type { EmbedControls } from '../query/embed.js'
import type { FieldPath } from '../query/fields.js'
import type { Filter } from '../query/filter.js'
import { typeOf } from '../table/column-types.js'
import { scalarOf, type ColumnSpec, type ColumnType } from '../table/column.js'
import { forwardOf, type Relation } from '../table/relations.js'
import { targetOf, type Table, type TableColumn } from '../table/table.js'
import type { EmbedSource, Shape, ShapeSource } from '../table/statement.js'
import { quoteIdent, quoteLiteral } from './identifier.js'
import { Joins, readableSql } from './joins.js'
import type { Params } from './params.js'
import { relatedRows } from './related.js'
import type { ScopedRows } from './scope.js'
import { pathConditions } from './where.js'

/*
 * Embeds (SPEC §8.1) in the one statement of a request: each embed is a correlated subquery
 * in the select list that reads at most `<path>.__page_size` related rows in `<path>.__order`
 * (an index seek on the referencing ForeignKey, when it has an index) and folds them into one
 * JSON array with json_agg. Rows come through `relatedRows`, the seam row scopes hook into.
 */

/** One value of a response row: its SQL, where it goes, and what it holds. */
export interface Item {
  readonly sql: string
  readonly path: readonly string[]
  readonly source: ShapeSource
}

/** What the embeds of one statement share: where values are bound and fetched from, and alias numbering. */
export class EmbedScope<I> {
  private count = 0

  constructor (
    readonly params: Params<I>,
    readonly rows: ScopedRows,
    readonly filters: readonly Filter[],
    readonly filtersOf: (input: I) => readonly Filter[],
    readonly controls: EmbedControls,
    readonly controlsOf: (input: I) => EmbedControls,
    readonly maxRows: number
  ) {}

  alias (): string {
    return `e${++this.count}`
  }
}

export function isEmbed (source: ShapeSource): source is EmbedSource {
  return source?.embed !== undefined
}

/** Identifies a shape by its paths and, for embeds, their inner shapes: the key its serialiser is kept by. */
export function shapeKey (items: readonly Item[]): string {
  return items.map((i) => i.path.join('.') + (isEmbed(i.source) ? `[${i.source.embed.key}]` : '')).join(',')
}

/** The fields through to-many relations, by embed: the relations up to the first to-many one, and the fields past it. */
function embedGroups (wanted: readonly FieldPath[]): Map<string, { joins: readonly Relation[], fields: FieldPath[] }> {
  const groups = new Map<string, { joins: readonly Relation[], fields: FieldPath[] }>()
  for (const field of wanted) {
    const many = field.joins.findIndex((j) => j.many)
    if (many < 0) continue
    const joins = field.joins.slice(0, many + 1)
    const key = joins.map((j) => j.name).join('.')
    const group = groups.get(key) ?? { joins, fields: [] }
    group.fields.push({ name: field.name.slice(key.length + 1), joins: field.joins.slice(many + 1), table: field.table, column: field.column })
    groups.set(key, group)
  }
  return groups
}

/**
 * The values of a response row of `table` (aliased by `joins`' root) for `wanted`. A ForeignKey
 * asked for with its joined fields becomes one nested object that also holds the key;
 * `__readable` adds `<fk>_readable` after each top-level ForeignKey; fields through a to-many
 * relation become one embed each, holding their own items.
 */
export function selectItems<I> (scope: EmbedScope<I>, table: Table, wanted: readonly FieldPath[], readable: boolean, joins: Joins, prefix: readonly Relation[] = []): Item[] {
  const plain = wanted.filter((f) => !f.joins.some((j) => j.many))
  const groups = embedGroups(wanted)
  // Every ForeignKey some wanted field is joined through (`director`, `director.mentor`): the
  // object of its joined fields, not its bare value, goes at its name.
  const through = [...plain.map((f) => f.joins), ...[...groups.values()].map((g) => g.joins.slice(0, -1))]
  const nested = new Set(through.flatMap((js) => js.map((_, i) => js.slice(0, i + 1).map((j) => j.column.name).join('.'))))
  const items: Item[] = []
  const readables = new Set<string>()
  const addReadable = (fk: TableColumn): void => {
    if (!readable || readables.has(fk.name)) return
    readables.add(fk.name)
    const alias = joins.alias([forwardOf(table, fk)])
    const target = targetOf(table, fk)
    items.push({ sql: `CASE WHEN ${alias}.${quoteIdent(target.primaryKey.name)} IS NULL THEN NULL ELSE ${readableSql(target.readable, alias)} END`, path: [`${fk.name}_readable`], source: null })
  }
  for (const field of plain) {
    const sql = `${joins.alias(field.joins)}.${quoteIdent(field.column.name)}`
    if (nested.has(field.name)) {
      // Asked for both `director` and `director.name`: the key goes inside the object.
      const target = targetOf(field.table, field.column)
      items.push({ sql, path: [...field.name.split('.'), target.primaryKey.name], source: { table: target, column: target.primaryKey } })
    } else {
      items.push({ sql, path: field.name.split('.'), source: { table: field.table, column: field.column } })
    }
    const top = field.joins[0]?.column ?? field.column
    if (top.type === 'foreignKey') addReadable(top)
  }
  for (const [key, group] of groups) {
    if (group.joins.length > 1) addReadable(group.joins[0]!.column)
    const outer = joins.alias(group.joins.slice(0, -1))
    items.push({ ...embedItem(scope, group.joins[group.joins.length - 1]!, outer, group.fields, readable, [...prefix, ...group.joins]), path: key.split('.') })
  }
  return items
}

/** A sort key of an embed's rows: the related table's own column. */
interface Sort { readonly column: TableColumn, readonly descending: boolean }

/** `<path>.__order`, else the related table's primary key descending; the key breaks ties, ascending. */
function embedOrder (table: Table, order: ReadonlyArray<{ readonly field: FieldPath, readonly descending: boolean }> | null): Sort[] {
  const key = table.primaryKey
  const sorts: Sort[] = order === null ? [{ column: key, descending: true }] : order.map((o) => ({ column: o.field.column, descending: o.descending }))
  if (!sorts.some((s) => s.column === key)) sorts.push({ column: key, descending: false })
  return sorts
}

/**
 * One embed: `(SELECT coalesce(json_agg(j ORDER BY <keys>), '[]') FROM (SELECT <object> AS j,
 * <keys> FROM <related rows> WHERE <tie to the parent> AND <the path's filters> ORDER BY <keys>
 * LIMIT $n))`. The inner ORDER BY picks which rows the LIMIT keeps; json_agg's own ORDER BY
 * is what guarantees their order in the array.
 */
function embedItem<I> (scope: EmbedScope<I>, relation: Relation, outer: string, fields: readonly FieldPath[], readable: boolean, path: readonly Relation[]): { sql: string, source: EmbedSource } {
  const alias = scope.alias()
  const { from, on } = relatedRows(relation, outer, alias, scope.rows)
  const joins = new Joins(scope.rows, alias, `${alias}_`)
  const items = selectItems(scope, relation.to, fields, readable, joins, path)
  const names = path.map((r) => r.name)
  const key = names.join('.')
  const sorts = embedOrder(relation.to, scope.controls.get(key)?.order ?? null)
  const conditions = pathConditions(scope.params, scope.rows, scope.filters, scope.filtersOf, names, alias)
  const limit = scope.params.add((input) => scope.controlsOf(input).get(key)?.pageSize ?? scope.maxRows)
  const direction = (s: Sort): string => s.descending ? 'DESC' : 'ASC'
  const keys = sorts.map((s, i) => `, ${alias}.${quoteIdent(s.column.name)} AS o${i}`).join('')
  const rows = `SELECT ${jsonObject(items)} AS j${keys} FROM ${from}${joins} WHERE ${[on, ...conditions].join(' AND ')}` +
    ` ORDER BY ${sorts.map((s) => `${alias}.${quoteIdent(s.column.name)} ${direction(s)}`).join(', ')} LIMIT ${limit}`
  const aggregate = `json_agg(${alias}r.j ORDER BY ${sorts.map((s, i) => `${alias}r.o${i} ${direction(s)}`).join(', ')})`
  const shape: Shape = { paths: items.map((i) => i.path), aliases: [], sources: items.map((i) => i.source), flat: false, key: shapeKey(items) }
  return { sql: `(SELECT coalesce(${aggregate}, '[]'::json) FROM (${rows}) AS ${alias}r)`, source: { table: relation.to, column: relation.column, embed: shape, convert: arrayConverter(items) } }
}

/** json_build_object takes at most 100 arguments: wider objects are jsonb pieces joined (their keys then in jsonb's order). */
const MAX_PAIRS = 50

/** The JSON object of items, nested by their paths. Values JSON does not write in wire form go as text (`valueSql`). */
function jsonObject (items: ReadonlyArray<{ readonly sql: string, readonly path: readonly string[], readonly source: ShapeSource }>): string {
  const members = new Map<string, Array<{ sql: string, path: readonly string[], source: ShapeSource }>>()
  for (const item of items) {
    const [head, ...rest] = item.path
    members.set(head!, [...members.get(head!) ?? [], { ...item, path: rest }])
  }
  const pairs = [...members].map(([name, inner]) => `${quoteLiteral(name)}, ${inner[0]!.path.length === 0 ? valueSql(inner[0]!) : jsonObject(inner)}`)
  if (pairs.length <= MAX_PAIRS) return `json_build_object(${pairs.join(', ')})`
  const pieces: string[] = []
  for (let i = 0; i < pairs.length; i += MAX_PAIRS) pieces.push(`jsonb_build_object(${pairs.slice(i, i + MAX_PAIRS).join(', ')})`)
  return `(${pieces.join(' || ')})::json`
}

function valueSql (item: { readonly sql: string, readonly source: ShapeSource }): string {
  const source = item.source
  if (source === null || isEmbed(source)) return item.sql
  return readerOf(source.table, source.column)?.sql(item.sql) ?? item.sql
}

/** Types whose JSON (json_build_object's) is their wire form (SPEC §2.2), elements of arrays included. */
const JSON_WIRE: ReadonlySet<ColumnType> = new Set<ColumnType>(['serial', 'integer', 'smallInt', 'real', 'doublePrecision', 'boolean', 'varchar', 'text', 'email', 'uuid', 'date', 'jsonb'])

/** What a ForeignKey holds on the wire: its target's key, followed to a column that is no ForeignKey. */
function keyColumn (table: Table, column: TableColumn): ColumnSpec {
  let owner = table
  let current = column
  while (current.type === 'foreignKey') {
    owner = targetOf(owner, current)
    current = owner.primaryKey
  }
  return current
}

export type Convert = (value: unknown) => unknown

/**
 * A timestamp in its wire form (SPEC §2.2), written by PostgreSQL as the bench's hand-written
 * route does: that spares a string per value in JS, and an embed holds many. Outside years 1 to
 * 9999 (infinity, BC) the text as `formatTimestamp` leaves it.
 */
function timestampSql (sql: string): string {
  const format = `CASE WHEN ${sql} = date_trunc('second', ${sql}) THEN 'YYYY-MM-DD"T"HH24:MI:SS' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US' END`
  return `CASE WHEN ${sql} >= '0001-01-01' AND ${sql} < '10000-01-01' THEN to_char(${sql}, ${format}) ELSE ${sql}::text END`
}

/**
 * For a column whose JSON is not its wire form (Numeric and BigInt as exact text, timestamps,
 * times and intervals as SPEC §2.2 writes them): the SQL that makes PostgreSQL send its text,
 * and the reader that makes the wire value of it, the one the type's pg parser uses (none when
 * the text is the wire value).
 */
function readerOf (table: Table, column: TableColumn): { sql: (sql: string) => string, read: Convert | null } | null {
  const value = keyColumn(table, column)
  const scalar = scalarOf(value)
  if (JSON_WIRE.has(scalar.type)) return null
  if (value.type === 'timestamp') return { sql: timestampSql, read: null }
  // A type whose scalar pg reads with its own parser (oid set) needs it; the others' text is their wire value.
  const read = typeOf(scalar).read
  const parse = read === null || read.oid === null ? null : read.parse
  if (value === scalar) return { sql: (sql) => `${sql}::text`, read: parse === null ? null : (v) => parse(v as string) }
  const deep: Convert = (v) => Array.isArray(v) ? v.map(deep) : v === null ? null : parse!(v as string)
  return { sql: (sql) => `${sql}::text[]`, read: parse === null ? null : deep }
}

function notJson (value: unknown): never {
  throw new Error(`The value "${String(value)}" cannot be written as a JSON number.`)
}

/**
 * A real or double JSON cannot write: NaN or an infinity, a number as pg reads a column, or the
 * string PostgreSQL's JSON writes for it in an embed (where a float is never a string otherwise).
 */
const unwritable = (v: unknown): boolean => typeof v === 'string' || (typeof v === 'number' && !Number.isFinite(v))
/** A real or double's value, as GET `/` answers it: an infinity is null, NaN fails the answer. */
const finite: Convert = (v) => !unwritable(v) ? v : v === 'NaN' || Number.isNaN(v) ? notJson(v) : null
/** An array of them, as GET `/` answers it: an element JSON cannot write fails the answer. */
const finiteElements: Convert = (v) => {
  for (const element of v as unknown[]) {
    if (Array.isArray(element)) finiteElements(element)
    else if (unwritable(element)) notJson(element)
  }
  return v
}

/**
 * The check that gives a real or double column's value the answer GET `/` gives for it, where a
 * serialiser other than the page's writes it (an embed's `JSON.stringify`, an export); null when
 * the column holds no floating point.
 */
export function floatCheck (table: Table, column: TableColumn): Convert | null {
  const value = keyColumn(table, column)
  const scalar = scalarOf(value)
  if (scalar.type !== 'real' && scalar.type !== 'doublePrecision') return null
  return value === scalar ? finite : finiteElements
}

/** Puts the values of an embed's rows that came as text into wire form, in place; null when none did. */
function arrayConverter (items: readonly Item[]): Convert | null {
  // The objects down to each value and its key, split once: this runs for every embedded row.
  const steps: Array<{ parents: readonly string[], last: string, convert: Convert }> = []
  for (const { path, source } of items) {
    const convert = source === null ? null : isEmbed(source) ? source.convert : readerOf(source.table, source.column)?.read ?? floatCheck(source.table, source.column)
    if (convert !== null) steps.push({ parents: path.slice(0, -1), last: path[path.length - 1]!, convert })
  }
  if (steps.length === 0) return null
  return (rows) => {
    for (const row of rows as Array<Record<string, unknown>>) {
      for (const { parents, last, convert } of steps) {
        let target = row
        for (const key of parents) target = target[key] as Record<string, unknown>
        if (target[last] !== null) target[last] = convert(target[last])
      }
    }
    return rows
  }
}
