import { TABLECRUD_ERR_QS_INVALID_AGGREGATE, TABLECRUD_ERR_QS_INVALID_GROUP_BY, TABLECRUD_ERR_QS_OUTPUT_CLASH } from '../errors.js'
import { column as col } from '../table/column.js'
import { typeOf } from '../table/column-types.js'
import type { Table, TableColumn } from '../table/table.js'
import type { FieldPath } from './fields.js'
import type { Filter, FilterTree } from './filter.js'
import {
  field, flag, items, own, parseFilterQuery, parseRangeHeaderName, positive, unknownField,
  type QueryContext, type RawQuery
} from './parse.js'
import { parseTrees } from './tree.js'
import { toManyPath } from './embed.js'

/*
 * GET `/aggregate/` (SPEC §8.3): `__aggregate`, `__group_by`, `__having`, `__order` and paging
 * over groups. Each output has a name (`count`, `avg_rating`, `release_date_year`), an SQL
 * alias of its own (`a0`, `g0`: a name may pass PostgreSQL's 63 bytes) and a result column
 * that says how a `__having` value is read and how the value goes on the wire.
 */

/** The aggregate functions, each with the fields it takes and what it gives. */
export type AggregateFunction = 'count' | 'count_distinct' | 'avg' | 'sum' | 'min' | 'max'

/**
 * What an output holds, which decides its SQL cast, how `__having` reads a value for it and its
 * wire form (SPEC §2.2): a `count` (an integer), a `float` (a number), an exact `decimal`
 * (a string), or the `same` type as the field it was made of (min, max, group keys).
 */
export type ResultKind = 'count' | 'float' | 'decimal' | 'same'

const NUMBERS = new Set(['serial', 'integer', 'smallInt', 'bigInt', 'bigSerial', 'real', 'doublePrecision', 'numeric'])
const EXACT = new Set(['numeric', 'bigInt', 'bigSerial'])

const isNumber = (column: TableColumn): boolean => NUMBERS.has(column.type)
const isOrdered = (column: TableColumn): boolean => typeOf(column).filtering(column) === 'ordered'

interface FunctionSpec {
  /** Whether it takes this field; null when it takes any. */
  readonly takes: ((column: TableColumn) => boolean) | null
  /** What fields it takes, for the 400 refusing another. */
  readonly wants: string
  readonly result: (column: TableColumn) => ResultKind
}

export const FUNCTIONS = Object.freeze({
  count: { takes: null, wants: 'any field', result: () => 'count' },
  count_distinct: { takes: null, wants: 'any field', result: () => 'count' },
  avg: { takes: isNumber, wants: 'number fields', result: (c) => c.type === 'numeric' ? 'decimal' : 'float' },
  // sum of a bigint is a numeric in PostgreSQL: exact, like the bigint's own wire form.
  sum: { takes: isNumber, wants: 'number fields', result: (c) => EXACT.has(c.type) ? 'decimal' : 'float' },
  min: { takes: isOrdered, wants: 'fields with an order (numbers, dates and times, foreign keys)', result: () => 'same' },
  max: { takes: isOrdered, wants: 'fields with an order (numbers, dates and times, foreign keys)', result: () => 'same' }
} as const satisfies Record<AggregateFunction, FunctionSpec>)

const isFunction = (name: string): name is AggregateFunction => Object.hasOwn(FUNCTIONS, name)

/** Date and time truncation of a group key. */
export type Truncation = 'year' | 'month' | 'day' | 'hour'
const TRUNCATIONS: Record<string, readonly Truncation[]> = {
  timestamp: ['year', 'month', 'day', 'hour'],
  timestamptz: ['year', 'month', 'day', 'hour'],
  date: ['year', 'month', 'day']
}

/** One output column of the answer. */
export interface Output {
  /** Its wire name. */
  readonly name: string
  /** Its SQL alias in the statement. */
  readonly alias: string
  readonly kind: ResultKind
  /** A column of the result's type named by the alias: `__having` reads values by it and compares on it. */
  readonly result: TableColumn
  /** The table and column its wire form comes from (`same`), else null. */
  readonly source: { readonly table: Table, readonly column: TableColumn } | null
}

export interface Aggregate extends Output {
  readonly fn: AggregateFunction
  /** The field aggregated, or null for `count` of rows. */
  readonly field: FieldPath | null
}

export interface GroupKey extends Output {
  readonly field: FieldPath
  readonly truncate: Truncation | null
  /** With `__readable`, the output of a ForeignKey key's readable representation (text), else null. */
  readonly readable: Output | null
}

export interface AggregateQuery {
  readonly filters: readonly Filter[]
  readonly aggregates: readonly Aggregate[]
  readonly groups: readonly GroupKey[]
  /** `__having`: every tree holds, over the outputs. */
  readonly having: readonly FilterTree[]
  readonly order: ReadonlyArray<{ readonly output: Output, readonly descending: boolean }>
  readonly readable: boolean
  /**
   * Every output of the rows, in order: each group key (and its readable), then each aggregate.
   * One array per shape of the query (its outputs are kept per context), so a cache may be keyed by it.
   */
  readonly outputs: readonly Output[]
  readonly page: number
  readonly pageSize: number
  readonly rangeHeader: boolean
  readonly rangeHeaderName: string
}

/** The control parameters of `/aggregate/`; `__or`, `__and` and `__search` filter rows as on GET `/`. */
export const AGGREGATE_CONTROL: ReadonlySet<string> = new Set([
  '__aggregate', '__group_by', '__having', '__order', '__page', '__page_size', '__readable', '__range_header', '__range_header_name'
])

const outputName = (path: string): string => path.replaceAll('.', '_')

/** A result column: its type reads `__having` values (a count as a 64-bit integer, a float as a double). */
function resultColumn (kind: ResultKind, alias: string, source: TableColumn | null): TableColumn {
  const spec = kind === 'count'
    ? col.bigInt()
    : kind === 'float' ? col.doublePrecision() : kind === 'decimal' ? col.numeric({ digits: [1000, 0] }) : source!
  return Object.freeze({ ...spec, nullable: true, name: alias })
}

/**
 * The field of an aggregate or a group key: a column or a to-one path. A to-many path would
 * count each row once per related row, so it is refused, naming the relation.
 */
function toOneField (ctx: QueryContext, path: string, refuse: (why: string) => Error): FieldPath {
  const found = field(ctx, path)
  const many = toManyPath(found)
  if (many !== null) throw refuse(`${many.path} is a to-many relation; aggregate on its own table's /aggregate/ instead`)
  return found
}

const ITEM = /^([a-z_]+)(?:\(([^()]*)\))?$/

function parseAggregate (ctx: QueryContext, item: string, index: number): Aggregate {
  const match = ITEM.exec(item)
  const fn = match?.[1] ?? ''
  if (match === null || !isFunction(fn)) {
    throw new TABLECRUD_ERR_QS_INVALID_AGGREGATE(JSON.stringify(item), 'not an aggregate (use count, count(<field>), count_distinct(<field>), avg(<field>), sum(<field>), min(<field>) or max(<field>))')
  }
  const arg = match[2]?.trim()
  const alias = `a${index}`
  if (arg === undefined || arg === '') {
    if (fn !== 'count') throw new TABLECRUD_ERR_QS_INVALID_AGGREGATE(JSON.stringify(item), `needs a field: ${fn}(<field>)`)
    return { fn, field: null, name: 'count', alias, kind: 'count', result: resultColumn('count', alias, null), source: null }
  }
  const found = toOneField(ctx, arg, (why) => new TABLECRUD_ERR_QS_INVALID_AGGREGATE(JSON.stringify(item), why))
  const spec: FunctionSpec = FUNCTIONS[fn]
  if (spec.takes !== null && !spec.takes(found.column)) {
    throw new TABLECRUD_ERR_QS_INVALID_AGGREGATE(JSON.stringify(item), `${fn} applies to ${spec.wants}, not ${found.name} (type ${found.column.type})`)
  }
  const kind = spec.result(found.column)
  const source = kind === 'same' ? { table: found.table, column: found.column } : null
  return { fn, field: found, name: `${fn}_${outputName(found.name)}`, alias, kind, result: resultColumn(kind, alias, found.column), source }
}

function parseGroupKey (ctx: QueryContext, item: string, index: number, readable: boolean): GroupKey {
  const [path = '', unit, ...rest] = item.split(':')
  const found = toOneField(ctx, path, (why) => new TABLECRUD_ERR_QS_INVALID_GROUP_BY(JSON.stringify(item), why))
  const alias = `g${index}`
  let truncate: Truncation | null = null
  if (unit !== undefined) {
    const units = TRUNCATIONS[found.column.type]
    if (units === undefined) throw new TABLECRUD_ERR_QS_INVALID_GROUP_BY(JSON.stringify(item), `only date and timestamp fields are truncated, and ${found.name} is a ${found.column.type}`)
    if (rest.length > 0 || !(units as readonly string[]).includes(unit)) throw new TABLECRUD_ERR_QS_INVALID_GROUP_BY(JSON.stringify(item), `truncate ${found.name} by ${units.join(', ')}`)
    truncate = unit as Truncation
  }
  const name = outputName(found.name) + (truncate === null ? '' : `_${truncate}`)
  const readableOf = readable && found.column.type === 'foreignKey' && truncate === null
    ? { name: `${name}_readable`, alias: `r${index}`, kind: 'same' as const, result: Object.freeze({ ...col.text({ null: true }), name: `r${index}` }), source: null }
    : null
  return { field: found, truncate, name, alias, kind: 'same', result: resultColumn('same', alias, found.column), source: { table: found.table, column: found.column }, readable: readableOf }
}

/** Every output by name; two outputs of one name are a 400 naming it. */
function outputsByName (all: readonly Output[]): Map<string, Output> {
  const byName = new Map<string, Output>()
  for (const output of all) {
    if (byName.has(output.name)) throw new TABLECRUD_ERR_QS_OUTPUT_CLASH(output.name)
    byName.set(output.name, output)
  }
  return byName
}

function parseOrder (raw: RawQuery, groups: readonly GroupKey[], outputs: ReadonlyMap<string, Output>): AggregateQuery['order'] {
  const order: Array<{ output: Output, descending: boolean }> = []
  for (const item of items(own(raw, '__order'))) {
    const descending = item.startsWith('-')
    const output = outputs.get(descending ? item.slice(1) : item)
    if (output === undefined) throw unknownField(item, [...outputs.keys()], true)
    order.push({ output, descending })
  }
  // The group keys break ties, in their order: one group per combination, so pages are stable.
  for (const group of groups) if (!order.some((o) => o.output === group)) order.push({ output: group, descending: false })
  return order
}

/** A having condition's field: an output, compared by its alias on the grouped rows. */
function havingFields (ctx: QueryContext, outputs: ReadonlyMap<string, Output>): Map<string, FieldPath> {
  return new Map([...outputs.values()].map((o) => [o.name, { name: o.name, joins: [], table: ctx.table, column: o.result }]))
}

interface Outputs {
  readonly aggregates: readonly Aggregate[]
  readonly groups: readonly GroupKey[]
  readonly all: readonly Output[]
  readonly byName: ReadonlyMap<string, Output>
  readonly having: ReadonlyMap<string, FieldPath>
}

const MAX_SHAPES = 1000
const shapes = new WeakMap<QueryContext, Map<string, Outputs>>()

/**
 * The outputs `__aggregate`, `__group_by` and `__readable` ask for. Kept per context by their
 * text, as the compilers keep statements: a dashboard asks the same few shapes again and again,
 * and a profile showed building them anew as a third of the route's own CPU.
 */
function outputsOf (ctx: QueryContext, raw: RawQuery, readable: boolean): Outputs {
  const wanted = items(own(raw, '__aggregate'))
  const keys = items(own(raw, '__group_by'))
  const key = `${readable}\0${wanted.join(',')}\0${keys.join(',')}`
  let byKey = shapes.get(ctx)
  if (byKey === undefined) shapes.set(ctx, byKey = new Map())
  let found = byKey.get(key)
  if (found === undefined) {
    // Without __aggregate, groups are counted.
    const aggregates = [...new Set(wanted.length === 0 ? ['count'] : wanted)].map((item, i) => parseAggregate(ctx, item, i))
    const groups = [...new Set(keys)].map((item, i) => parseGroupKey(ctx, item, i, readable))
    const all = Object.freeze([...groups.flatMap((g) => g.readable === null ? [g] : [g, g.readable]), ...aggregates])
    const byName = outputsByName(all)
    found = { aggregates, groups, all, byName, having: havingFields(ctx, byName) }
    if (byKey.size < MAX_SHAPES) byKey.set(key, found)
  }
  return found
}

/** Parses the query string of GET `/aggregate/`, or throws a 400 naming the bad part. */
export function parseAggregateQuery (ctx: QueryContext, raw: RawQuery): AggregateQuery {
  const filters = parseFilterQuery(ctx, raw, AGGREGATE_CONTROL)
  const readable = flag('__readable', own(raw, '__readable'))
  const { aggregates, groups, all, byName, having: fields } = outputsOf(ctx, raw, readable)
  const trees = [own(raw, '__having')].flat().filter((text): text is string => text !== undefined)
  const having = trees.length === 0 ? [] : parseTrees({ filterable: fields, maxPageSize: ctx.maxPageSize }, trees.map((text) => ({ key: '__having', text })))
  return {
    filters,
    aggregates,
    groups,
    having,
    order: parseOrder(raw, groups, byName),
    readable,
    outputs: all,
    page: positive('__page', own(raw, '__page'), 1, 2147483647),
    pageSize: positive('__page_size', own(raw, '__page_size'), ctx.pageSize, ctx.maxPageSize),
    rangeHeader: flag('__range_header', own(raw, '__range_header')),
    rangeHeaderName: parseRangeHeaderName(ctx, raw)
  }
}
