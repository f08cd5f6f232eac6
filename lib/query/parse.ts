import {
  TABLECRUD_ERR_QS_INVALID_BOOLEAN, TABLECRUD_ERR_QS_INVALID_NUMBER, TABLECRUD_ERR_QS_INVALID_PAGE,
  TABLECRUD_ERR_QS_INVALID_PAGE_SIZE, TABLECRUD_ERR_QS_INVALID_STRING, TABLECRUD_ERR_QS_INVALID_VALUE,
  TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE, TABLECRUD_ERR_QS_MAX_JOIN_DEPTH, TABLECRUD_ERR_QS_MISSING_VALUE,
  TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE, TABLECRUD_ERR_QS_REPEATED, TABLECRUD_ERR_QS_UNKNOWN_FIELD,
  TABLECRUD_ERR_QS_UNKNOWN_MATCH, TABLECRUD_ERR_QS_UNKNOWN_OPERATOR, TABLECRUD_ERR_ID_INVALID, withBody
} from '../errors.js'
import { scalarOf, type ColumnSpec } from '../table/column.js'
import { targetOf, visibleColumns, type Table, type TableColumn } from '../table/table.js'
import { DECIMAL_TEXT, parseBoolean, parseInteger, parseReal, parseTimestamp } from '../values/index.js'
import { fieldPaths, isText, MATCH_TYPES, OPERATORS, operatorsFor, type FieldPath, type MatchType, type Operator } from './fields.js'

/** What Fastify's query-string parser gives: repeated keys become arrays. */
export type RawQuery = Record<string, string | string[] | undefined>

export interface Filter {
  readonly column: TableColumn
  readonly operator: Operator
  readonly match: MatchType
  /** Parsed values: none for is_null/not_null, several only for array columns. */
  readonly values: readonly unknown[]
}

export interface OrderBy {
  readonly field: FieldPath
  readonly descending: boolean
}

export interface ListQuery {
  readonly filters: readonly Filter[]
  readonly order: readonly OrderBy[]
  /** Requested fields, or null for every visible column. */
  readonly fields: readonly FieldPath[] | null
  readonly readable: boolean
  readonly page: number
  readonly pageSize: number
  readonly rangeHeader: boolean
  readonly rangeHeaderName: string
}

export interface SingleQuery {
  readonly fields: readonly FieldPath[] | null
  readonly readable: boolean
}

export interface IdsQuery {
  readonly search: string | null
  readonly limit: number
  readonly offset: number
}

/** What a TableCRUD context knows when it parses; built once per registration by `queryContext`. */
export interface QueryContext {
  readonly table: Table
  readonly pageSize: number
  readonly maxPageSize: number
  readonly maxJoins: number
  /** Filterable columns by name (secret ones left out while excludeSecrets). */
  readonly filterable: ReadonlyMap<string, TableColumn>
  /** `visible_fields_options`, by name. */
  readonly fields: ReadonlyMap<string, FieldPath>
  readonly fieldNames: readonly string[]
}

export function queryContext (table: Table, options: { pageSize: number, maxPageSize: number, maxJoins: number, excludeSecrets: boolean }): QueryContext {
  const fields = fieldPaths(table, options.maxJoins, options.excludeSecrets)
  return {
    table,
    pageSize: options.pageSize,
    maxPageSize: options.maxPageSize,
    maxJoins: options.maxJoins,
    filterable: new Map(visibleColumns(table, options.excludeSecrets).map((c) => [c.name, c])),
    fields: new Map(fields.map((f) => [f.name, f])),
    fieldNames: fields.map((f) => f.name)
  }
}

const CONTROL = new Set(['__order', '__visible_fields', '__page', '__page_size', '__readable', '__range_header', '__range_header_name'])
const OPERATOR_SET = new Set<string>(OPERATORS)
const MATCH_SET = new Set<string>(MATCH_TYPES)

/** A 400 naming the bad input; for field paths the message lists the accepted names too (SPEC §2.3). */
function unknownField (name: string, validFields: readonly string[], listed = false): Error {
  const names = listed ? ` Valid names: ${validFields.join(', ')}.` : ''
  return withBody(new TABLECRUD_ERR_QS_UNKNOWN_FIELD(name, names), { validFields })
}

/** One value of a parameter that may not repeat; a repeat is a 400. */
function single (key: string, value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) {
    if (value.length > 1) throw new TABLECRUD_ERR_QS_REPEATED(key)
    return value[0]
  }
  return value
}

/** A parameter the client sent: an own key only, never one a polluted prototype lends. */
function own (raw: RawQuery, key: string): string | string[] | undefined {
  return Object.hasOwn(raw, key) ? raw[key] : undefined
}

function all (value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}

/** The comma-separated and repeated items of `__order` and `__visible_fields`, blanks dropped. */
function items (value: string | string[] | undefined): string[] {
  return all(value).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')
}

function flag (key: string, value: string | string[] | undefined): boolean {
  const text = single(key, value)
  if (text === undefined) return false
  const parsed = parseBoolean(text)
  if (parsed === undefined) throw new TABLECRUD_ERR_QS_INVALID_BOOLEAN(key)
  return parsed
}

/** A filter value for a column of this type, or undefined when it is not one. */
function parseScalar (table: Table, column: ColumnSpec & { name?: string }, text: string): unknown {
  switch (column.type) {
    case 'serial': case 'integer': return parseInteger(text)
    case 'real': return parseReal(text)
    case 'numeric': return DECIMAL_TEXT.test(text) ? text : undefined
    case 'boolean': return parseBoolean(text)
    case 'timestamp': return parseTimestamp(text)
    case 'foreignKey': return parseScalar(table, targetOf(table, column as TableColumn).primaryKey, text)
    default: return text.includes('\0') ? undefined : text
  }
}

/** What a filter value must be, in words, for the 400 that refuses one. */
function expected (table: Table, column: ColumnSpec): string {
  switch (column.type) {
    case 'serial': case 'integer': return '32-bit integer'
    case 'real': return 'number'
    case 'numeric': return 'decimal number'
    case 'boolean': return 'boolean (true, false, 1, 0, t, f, yes, no)'
    case 'timestamp': return 'ISO 8601 date or date-time'
    case 'foreignKey': return expected(table, targetOf(table, column as TableColumn).primaryKey)
    default: return 'string without NUL characters'
  }
}

function parseValue (ctx: QueryContext, column: TableColumn, text: string): unknown {
  const value = parseScalar(ctx.table, scalarOf(column), text)
  if (value === undefined) throw new TABLECRUD_ERR_QS_INVALID_VALUE(JSON.stringify(text), column.name, expected(ctx.table, scalarOf(column)))
  return value
}

/** Resolves `__visible_fields`/`__order` names: unknown is a 400 with the valid names, too deep a join another. */
function field (ctx: QueryContext, name: string): FieldPath {
  const found = ctx.fields.get(name)
  if (found !== undefined) return found
  // A path through a ForeignKey that is valid as far as maxJoins allows only goes too deep.
  const parts = name.split('.')
  if (parts.length > ctx.maxJoins + 1 && ctx.fields.get(parts.slice(0, ctx.maxJoins + 1).join('.'))?.column.type === 'foreignKey') {
    throw new TABLECRUD_ERR_QS_MAX_JOIN_DEPTH()
  }
  throw unknownField(name, ctx.fieldNames, true)
}

function parseFields (ctx: QueryContext, value: string | string[] | undefined): FieldPath[] | null {
  const names = items(value)
  if (names.length === 0) return null
  return [...new Set(names)].map((name) => field(ctx, name))
}

function parseOrder (ctx: QueryContext, value: string | string[] | undefined): OrderBy[] {
  const order: OrderBy[] = []
  for (const item of items(value)) {
    const descending = item.startsWith('-')
    order.push({ field: field(ctx, descending ? item.slice(1) : item), descending })
  }
  const pk = ctx.table.primaryKey.name
  // A secret key is no field a client may name, but the rows are still ordered by it.
  const key = ctx.fields.get(pk) ?? { name: pk, joins: [], table: ctx.table, column: ctx.table.primaryKey }
  if (order.length === 0) order.push({ field: key, descending: true })
  // The primary key is always the last sort key, so pages are stable (SPEC §6.6).
  if (!order.some((o) => o.field.joins.length === 0 && o.field.column.name === pk)) {
    order.push({ field: key, descending: false })
  }
  return order
}

function positive (key: string, value: string | string[] | undefined, fallback: number, max: number): number {
  const text = single(key, value)
  if (text === undefined) return fallback
  const n = parseInteger(text)
  if (n === undefined || n < 1 || n > max) throw key === '__page' ? new TABLECRUD_ERR_QS_INVALID_PAGE() : new TABLECRUD_ERR_QS_INVALID_PAGE_SIZE(max)
  return n
}

/**
 * The filters of GET `/`, `/count/` and bulk DELETE (SPEC §2.3, §6.7). Control parameters are
 * passed over here: GET `/` parses them, `/count/` ignores them.
 */
function parseFilters (ctx: QueryContext, raw: RawQuery): Filter[] {
  const operators = new Map<string, Operator>()
  const matches = new Map<string, MatchType>()
  const values = new Map<string, string[]>()
  const validFields = [...ctx.filterable.keys()]
  const columnOf = (name: string): TableColumn => {
    const column = ctx.filterable.get(name)
    if (column === undefined) throw unknownField(name, validFields)
    return column
  }
  for (const key of Object.keys(raw)) {
    const value = raw[key]
    if (key.startsWith('__')) {
      if (!CONTROL.has(key)) throw unknownField(key, validFields)
    } else if (key.endsWith('__operator')) {
      const name = key.slice(0, -'__operator'.length)
      const column = columnOf(name)
      const op = single(key, value) ?? ''
      if (!OPERATOR_SET.has(op)) throw new TABLECRUD_ERR_QS_UNKNOWN_OPERATOR(JSON.stringify(op), OPERATORS.join(', '))
      if (!operatorsFor(column).includes(op as Operator)) throw new TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE(op, name, column.type)
      operators.set(name, op as Operator)
    } else if (key.endsWith('__match')) {
      const name = key.slice(0, -'__match'.length)
      const column = columnOf(name)
      if (!isText(column)) throw new TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE(name)
      const match = single(key, value) ?? ''
      if (!MATCH_SET.has(match)) throw new TABLECRUD_ERR_QS_UNKNOWN_MATCH(JSON.stringify(match))
      matches.set(name, match as MatchType)
    } else {
      const column = columnOf(key)
      // An empty value is no filter: an HTML form sends its empty fields.
      const given = all(value).filter((v) => v !== '')
      if (column.type !== 'array' && given.length > 1) throw new TABLECRUD_ERR_QS_REPEATED(key)
      if (given.length > 0) values.set(key, given)
    }
  }
  const filters: Filter[] = []
  for (const name of new Set([...values.keys(), ...operators.keys()])) {
    const column = ctx.filterable.get(name)!
    const operator = operators.get(name) ?? 'e'
    const texts = values.get(name) ?? []
    const nullCheck = operator === 'is_null' || operator === 'not_null'
    if (!nullCheck && texts.length === 0) throw new TABLECRUD_ERR_QS_MISSING_VALUE(name, operator, name)
    filters.push({
      column,
      operator,
      match: matches.get(name) ?? 'contains',
      values: nullCheck ? [] : texts.map((text) => parseValue(ctx, column, text))
    })
  }
  return filters
}

/** What Node lets a header value hold; anything else (CR, LF, past Latin-1) makes it throw while replying, a 500. */
const HEADER_TEXT = /^[\t\x20-\x7e\x80-\xff]*$/

/** GET `/` (and bulk DELETE, which ignores the control part). */
export function parseListQuery (ctx: QueryContext, raw: RawQuery): ListQuery {
  const filters = parseFilters(ctx, raw)
  const name = single('__range_header_name', own(raw, '__range_header_name'))
  if (name?.includes('\0')) throw new TABLECRUD_ERR_QS_INVALID_STRING('__range_header_name')
  if (name !== undefined && !HEADER_TEXT.test(name)) throw new TABLECRUD_ERR_QS_INVALID_VALUE(JSON.stringify(name), '__range_header_name', 'header value')
  return {
    filters,
    order: parseOrder(ctx, own(raw, '__order')),
    fields: parseFields(ctx, own(raw, '__visible_fields')),
    readable: flag('__readable', own(raw, '__readable')),
    page: positive('__page', own(raw, '__page'), 1, 2147483647),
    pageSize: positive('__page_size', own(raw, '__page_size'), ctx.pageSize, ctx.maxPageSize),
    rangeHeader: flag('__range_header', own(raw, '__range_header')),
    rangeHeaderName: name === undefined || name === '' ? ctx.table.name : name
  }
}

/** GET `/count/` and bulk DELETE: the filters only; control parameters are not validated (SPEC §6.12). */
export function parseFilterQuery (ctx: QueryContext, raw: RawQuery): Filter[] {
  return parseFilters(ctx, raw)
}

/** GET `/:id/`: `__visible_fields` and `__readable`; filter parameters are ignored (SPEC §2.4). */
export function parseSingleQuery (ctx: QueryContext, raw: RawQuery): SingleQuery {
  return { fields: parseFields(ctx, own(raw, '__visible_fields')), readable: flag('__readable', own(raw, '__readable')) }
}

const IDS_KEYS = new Set(['search', 'limit', 'offset'])

/** GET `/ids/`: `search`, `limit` and `offset` only (SPEC §2.8, §6.12). */
export function parseIdsQuery (ctx: QueryContext, raw: RawQuery): IdsQuery {
  for (const key of Object.keys(raw)) {
    if (!IDS_KEYS.has(key)) throw unknownField(key, [...IDS_KEYS])
  }
  const count = (key: string, fallback: number, max: number): number => {
    const text = single(key, own(raw, key))
    if (text === undefined) return fallback
    const n = parseInteger(text)
    if (n === undefined || n < 0 || n > max) throw new TABLECRUD_ERR_QS_INVALID_NUMBER(max === ctx.maxPageSize ? `${key} (at most ${max})` : key)
    return n
  }
  const search = single('search', own(raw, 'search'))
  if (search?.includes('\0')) throw new TABLECRUD_ERR_QS_INVALID_STRING('search')
  return {
    search: search === undefined || search === '' ? null : search,
    limit: count('limit', ctx.maxPageSize, ctx.maxPageSize),
    offset: count('offset', 0, 2147483647)
  }
}

/** A path id as the primary key's type (SPEC §6.11), or a 400 `The ID is invalid`. */
export function parseId (table: Table, text: string): number | string {
  const key = table.primaryKey
  if (key.type === 'serial' || key.type === 'integer') {
    const n = parseInteger(text)
    if (n === undefined || (key.type === 'serial' && n <= 0)) throw new TABLECRUD_ERR_ID_INVALID()
    return n
  }
  if (text === '' || text.includes('\0') || (key.type === 'varchar' && [...text].length > key.length!)) throw new TABLECRUD_ERR_ID_INVALID()
  return text
}
