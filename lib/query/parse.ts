import {
  TABLECRUD_ERR_QS_INVALID_BOOLEAN, TABLECRUD_ERR_QS_INVALID_NUMBER, TABLECRUD_ERR_QS_INVALID_PAGE,
  TABLECRUD_ERR_QS_INVALID_PAGE_SIZE, TABLECRUD_ERR_QS_INVALID_STRING, TABLECRUD_ERR_QS_INVALID_VALUE,
  TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE, TABLECRUD_ERR_QS_MAX_JOIN_DEPTH, TABLECRUD_ERR_QS_MISSING_VALUE,
  TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE, TABLECRUD_ERR_QS_REPEATED, TABLECRUD_ERR_QS_TOO_MANY_VALUES, TABLECRUD_ERR_QS_UNKNOWN_FIELD,
  TABLECRUD_ERR_QS_UNKNOWN_MATCH, TABLECRUD_ERR_QS_UNKNOWN_OPERATOR, TABLECRUD_ERR_ID_INVALID, withBody,
  TABLECRUD_ERR_QS_CURSOR_WITH_PAGE, TABLECRUD_ERR_QS_INVALID_CURSOR, TABLECRUD_ERR_QS_INVALID_FORMAT, TABLECRUD_ERR_QS_ORDER_TO_MANY
} from '../errors.js'
import { embedPaths, isEmbedControl, parseEmbedControls, pathPastMaxJoins, toManyPath, type EmbedControls, type EmbedPath } from './embed.js'
import { cursorKey, openCursor, type CursorValues } from './cursor.js'
import { typeOf } from '../table/column-types.js'
import { isMatchType, isOperator, OPERATORS } from '../table/operators.js'
import { filterKind, filtersBinding, parseValue, type Filter } from './filter.js'
import { parseTrees } from './tree.js'
import { NO_SCOPES, type Scopes } from './scope.js'
import { isSearch, parseSearch, searchFields } from './search.js'
import { visibleColumns, type Table } from '../table/table.js'
import { INT32_MAX, parseBoolean, parseInteger } from '../values/index.js'
import { fieldPaths, isText, OPERATOR_NAMES, operatorsFor, type FieldPath, type MatchType, type Operator } from './fields.js'

/** What Fastify's query-string parser gives: repeated keys become arrays. */
export type RawQuery = Record<string, string | string[] | undefined>

export { filterKind, type Condition, type Filter, type FilterKind, type FilterTree } from './filter.js'

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
  /**
   * Keyset paging (SPEC §7.1): null without `__cursor`; `after` null for the first page, else
   * the sort-key values of the last row of the previous one.
   */
  readonly cursor: { readonly after: CursorValues | null } | null
  /** `__format` (SPEC §7.5), or null when absent (the Accept header decides). */
  readonly format: ExportFormat | 'json' | null
  /** `<path>.__order` and `<path>.__page_size` of the embeds (SPEC §8.1). */
  readonly embeds: EmbedControls
}

export type ExportFormat = 'ndjson' | 'csv'
const FORMATS = new Set(['json', 'ndjson', 'csv'])

export interface SingleQuery {
  readonly fields: readonly FieldPath[] | null
  readonly readable: boolean
  readonly embeds?: EmbedControls
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
  /**
   * What filters may name (secret columns left out while excludeSecrets): the table's columns
   * and, within maxJoins, paths through every relation (SPEC §8.2).
   */
  readonly filterable: ReadonlyMap<string, FieldPath>
  /** The `validFields` of a filter error: the table's own filterable columns (SPEC §6.10). */
  readonly filterNames: readonly string[]
  /** `visible_fields_options`, by name: columns, ForeignKey paths and embed paths (SPEC §8.1). */
  readonly fields: ReadonlyMap<string, FieldPath>
  readonly fieldNames: readonly string[]
  /** The paths fields may be embedded through, by name (`films`, `films.genres`). */
  readonly embeds: ReadonlyMap<string, EmbedPath>
  /** Default and largest `<path>.__page_size`. */
  readonly maxEmbedRows: number
  readonly excludeSecrets: boolean
  /** The AES key that seals keyset cursors (lib/query/cursor.ts). */
  readonly cursorKey: Buffer
  /**
   * The row scopes statements are compiled under (SPEC §8.6): none, unresolved for a mount
   * that has scopes (`withScopes` gives a request's), or a request's.
   */
  readonly scopes: Scopes
  /** What compiled texts are cached by: one per registration, shared by its requests' contexts. */
  readonly shapes: object
}

/** The context of one request: the registration's, under the request's row scopes. */
export function withScopes (ctx: QueryContext, scopes: Scopes): QueryContext {
  return Object.freeze({ ...ctx, scopes })
}

export function queryContext (table: Table, options: { pageSize: number, maxPageSize: number, maxJoins: number, excludeSecrets: boolean, cursorSecret?: string, maxEmbedRows?: number, scopes?: Scopes }): QueryContext {
  const fields = fieldPaths(table, options.maxJoins, options.excludeSecrets, true)
  return {
    table,
    pageSize: options.pageSize,
    maxPageSize: options.maxPageSize,
    maxJoins: options.maxJoins,
    filterable: new Map(fields.map((f) => [f.name, f])),
    filterNames: visibleColumns(table, options.excludeSecrets).map((c) => c.name),
    fields: new Map(fields.map((f) => [f.name, f])),
    fieldNames: fields.map((f) => f.name),
    embeds: embedPaths(fields),
    maxEmbedRows: options.maxEmbedRows ?? 100,
    excludeSecrets: options.excludeSecrets,
    cursorKey: cursorKey(options.cursorSecret),
    scopes: options.scopes ?? NO_SCOPES,
    shapes: {}
  }
}

const CONTROL = new Set(['__order', '__visible_fields', '__page', '__page_size', '__readable', '__range_header', '__range_header_name', '__cursor', '__format'])

/** A 400 naming the bad input; for field paths the message lists the accepted names too (SPEC §2.3). */
export function unknownField (name: string, validFields: readonly string[], listed = false): Error {
  const names = listed ? ` Valid names: ${validFields.join(', ')}.` : ''
  return withBody(new TABLECRUD_ERR_QS_UNKNOWN_FIELD(name, names), { validFields })
}

/** One value of a parameter that may not repeat; a repeat is a 400. */
export function single (key: string, value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) {
    if (value.length > 1) throw new TABLECRUD_ERR_QS_REPEATED(key)
    return value[0]
  }
  return value
}

/** A parameter the client sent: an own key only, never one a polluted prototype lends. */
export function own (raw: RawQuery, key: string): string | string[] | undefined {
  return Object.hasOwn(raw, key) ? raw[key] : undefined
}

function all (value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}

/** The comma-separated and repeated items of `__order` and `__visible_fields`, blanks dropped. */
export function items (value: string | string[] | undefined): string[] {
  return all(value).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')
}

export function flag (key: string, value: string | string[] | undefined): boolean {
  const text = single(key, value)
  if (text === undefined) return false
  const parsed = parseBoolean(text)
  if (parsed === undefined) throw new TABLECRUD_ERR_QS_INVALID_BOOLEAN(key)
  return parsed
}

/** Resolves `__visible_fields`/`__order` names: unknown is a 400 with the valid names, too deep a join another. */
export function field (ctx: QueryContext, name: string): FieldPath {
  const found = ctx.fields.get(name)
  if (found !== undefined) return found
  // A path through a ForeignKey that is valid as far as maxJoins allows only goes too deep.
  const parts = name.split('.')
  if (parts.length > ctx.maxJoins + 1 && (ctx.fields.get(parts.slice(0, ctx.maxJoins + 1).join('.'))?.column.type === 'foreignKey' || pathPastMaxJoins(ctx.table, name, ctx.excludeSecrets))) {
    throw new TABLECRUD_ERR_QS_MAX_JOIN_DEPTH()
  }
  throw unknownField(name, ctx.fieldNames, true)
}

function parseFields (ctx: QueryContext, value: string | string[] | undefined): FieldPath[] | null {
  const names = items(value)
  if (names.length === 0) return null
  return [...new Set(names)].map((name) => field(ctx, name))
}

function parseOrder (ctx: QueryContext, value: string | string[] | undefined, searching = false): OrderBy[] {
  const order: OrderBy[] = []
  for (const item of items(value)) {
    const descending = item.startsWith('-')
    const found = field(ctx, descending ? item.slice(1) : item)
    const many = toManyPath(found)
    if (many !== null) throw withBody(new TABLECRUD_ERR_QS_ORDER_TO_MANY(found.name, many.relation, many.path), { validFields: ctx.fieldNames })
    order.push({ field: found, descending })
  }
  const pk = ctx.table.primaryKey.name
  // A secret key is no field a client may name, but the rows are still ordered by it.
  const key = ctx.fields.get(pk) ?? { name: pk, joins: [], table: ctx.table, column: ctx.table.primaryKey }
  // A search without __order lists the most relevant first (SPEC §8.4), the key breaking ties.
  if (order.length === 0) order.push(searching ? { field: searchFields(ctx.table).rank, descending: true } : { field: key, descending: true })
  // The primary key is always the last sort key, so pages are stable (SPEC §6.6).
  if (!order.some((o) => o.field.joins.length === 0 && o.field.column.name === pk)) {
    order.push({ field: key, descending: false })
  }
  return order
}

export function positive (key: string, value: string | string[] | undefined, fallback: number, max: number): number {
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
function parseFilters (ctx: QueryContext, raw: RawQuery, control: ReadonlySet<string> = CONTROL): Filter[] {
  const operators = new Map<string, Operator>()
  const matches = new Map<string, MatchType>()
  const values = new Map<string, string[]>()
  const validFields = ctx.filterNames
  const fieldOf = (name: string): FieldPath => {
    const field = ctx.filterable.get(name)
    if (field === undefined) throw unknownField(name, validFields)
    return field
  }
  const trees: Array<{ key: '__or' | '__and', text: string }> = []
  const search = parseSearch(ctx.table, own(raw, '__search'))
  for (const key of Object.keys(raw)) {
    const value = raw[key]
    if (key === '__search') continue
    if (key === '__or' || key === '__and') {
      for (const text of all(value)) trees.push({ key, text })
    } else if (key.startsWith('__')) {
      if (!control.has(key)) throw unknownField(key, validFields)
    } else if (isEmbedControl(key)) {
      // An embed's `<path>.__order`/`__page_size`: a control parameter, parsed with the others.
    } else if (key.endsWith('__operator')) {
      const name = key.slice(0, -'__operator'.length)
      const { column } = fieldOf(name)
      const op = single(key, value) ?? ''
      if (!isOperator(op)) throw new TABLECRUD_ERR_QS_UNKNOWN_OPERATOR(JSON.stringify(op), OPERATOR_NAMES.join(', '))
      if (!operatorsFor(column).includes(op)) throw new TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE(op, name, column.type)
      operators.set(name, op)
    } else if (key.endsWith('__match')) {
      const name = key.slice(0, -'__match'.length)
      const { column } = fieldOf(name)
      if (!isText(column)) throw new TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE(name)
      const match = single(key, value) ?? ''
      if (!isMatchType(match)) throw new TABLECRUD_ERR_QS_UNKNOWN_MATCH(JSON.stringify(match))
      matches.set(name, match)
    } else {
      const { column } = fieldOf(key)
      // Repeated, empty values included (`name=&name=x`, SPEC §6.8), unless the operator takes a list (§7.6).
      if (column.type !== 'array' && all(value).length > 1 && !listed(raw, key)) throw new TABLECRUD_ERR_QS_REPEATED(key)
      // An empty value is no filter: an HTML form sends its empty fields.
      const given = all(value).filter((v) => v !== '')
      if (given.length > ctx.maxPageSize) throw new TABLECRUD_ERR_QS_TOO_MANY_VALUES(key, ctx.maxPageSize)
      if (given.length > 0) values.set(key, given)
    }
  }
  const filters: Filter[] = []
  for (const name of new Set([...values.keys(), ...operators.keys()])) {
    const field = fieldOf(name)
    const column = field.column
    const operator = operators.get(name) ?? 'e'
    const texts = values.get(name) ?? []
    const match = matches.get(name) ?? 'contains'
    const kind = filterKind(column, operator, match)
    const nullCheck = kind === 'null'
    if (!nullCheck && texts.length === 0) throw new TABLECRUD_ERR_QS_MISSING_VALUE(name, operator, name)
    // The default `e` too: a JSONB column takes no value at all.
    if (!operatorsFor(column).includes(operator)) throw new TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE(operator, name, column.type)
    const parsed = nullCheck ? [] : texts.map((text) => parseValue(field, text))
    filters.push({ kind, field, column, operator, match, values: parsed, negated: false })
  }
  return [...(search === null ? [] : [search]), ...filters, ...parseTrees(ctx, trees)]
}

/**
 * Whether a filter's operator is `in` or `not_in`, the only ones whose value may repeat
 * (SPEC §7.6). Read from the raw query, since the value may come before its operator; an
 * operator that is itself repeated or unknown is refused by the operator's own check.
 */
function listed (raw: RawQuery, name: string): boolean {
  const op = own(raw, `${name}__operator`)
  return typeof op === 'string' && isOperator(op) && OPERATORS[op].arity === 'many'
}

/** What Node lets a header value hold; anything else (CR, LF, past Latin-1) makes it throw while replying, a 500. */
const HEADER_TEXT = /^[\t\x20-\x7e\x80-\xff]*$/

/** GET `/` (and bulk DELETE, which ignores the control part). */
export function parseListQuery (ctx: QueryContext, raw: RawQuery): ListQuery {
  const filters = parseFilters(ctx, raw)
  const rangeHeaderName = parseRangeHeaderName(ctx, raw)
  const order = parseOrder(ctx, own(raw, '__order'), filters.some(isSearch))
  const format = single('__format', own(raw, '__format'))
  if (format !== undefined && !FORMATS.has(format)) throw new TABLECRUD_ERR_QS_INVALID_FORMAT()
  return {
    filters,
    order,
    cursor: parseCursor(ctx, raw, filters, order),
    format: (format ?? null) as ListQuery['format'],
    embeds: parseEmbedControls(ctx, raw),
    fields: parseFields(ctx, own(raw, '__visible_fields')),
    readable: flag('__readable', own(raw, '__readable')),
    page: positive('__page', own(raw, '__page'), 1, INT32_MAX),
    pageSize: positive('__page_size', own(raw, '__page_size'), ctx.pageSize, ctx.maxPageSize),
    rangeHeader: flag('__range_header', own(raw, '__range_header')),
    rangeHeaderName
  }
}

/** `__range_header_name`: header text, default the table's name. */
export function parseRangeHeaderName (ctx: QueryContext, raw: RawQuery): string {
  const name = single('__range_header_name', own(raw, '__range_header_name'))
  if (name?.includes('\0')) throw new TABLECRUD_ERR_QS_INVALID_STRING('__range_header_name')
  if (name !== undefined && !HEADER_TEXT.test(name)) throw new TABLECRUD_ERR_QS_INVALID_VALUE(JSON.stringify(name), '__range_header_name', 'header value')
  return name === undefined || name === '' ? ctx.table.name : name
}

/**
 * What a cursor is made for: the table, the sort keys and the filters with their values. A
 * cursor opened with another binding fails its authentication (lib/query/cursor.ts). Made only
 * for a keyset page, not by every list: its JSON of the filters cost each list some 3 µs
 * (issue 31's profiles).
 */
export function listBinding (ctx: QueryContext, { filters, order }: Pick<ListQuery, 'filters' | 'order'>): string {
  const sorted = order.map((o) => (o.descending ? '-' : '') + o.field.name).join(',')
  // Values as the parser made them.
  /* c8 ignore next: no column type parses to a bigint (int8 keeps digit strings); the replacer keeps one from making JSON.stringify throw */
  const filtered = JSON.stringify(filtersBinding(filters), (_k, v: unknown) => typeof v === 'bigint' ? v.toString() : v)
  return `${ctx.table.name}\0${sorted}\0${filtered}`
}

function parseCursor (ctx: QueryContext, raw: RawQuery, filters: readonly Filter[], order: readonly OrderBy[]): ListQuery['cursor'] {
  const text = single('__cursor', own(raw, '__cursor'))
  if (text === undefined) return null
  if (own(raw, '__page') !== undefined) throw new TABLECRUD_ERR_QS_CURSOR_WITH_PAGE()
  if (text === '') return { after: null }
  const after = openCursor(ctx.cursorKey, listBinding(ctx, { filters, order }), text, order.length)
  if (after === undefined) throw new TABLECRUD_ERR_QS_INVALID_CURSOR()
  return { after }
}

/** GET `/count/` and bulk DELETE: the filters only; control parameters are not validated (SPEC §6.12). */
export function parseFilterQuery (ctx: QueryContext, raw: RawQuery, control?: ReadonlySet<string>): Filter[] {
  return parseFilters(ctx, raw, control)
}

/** GET `/:id/`: `__visible_fields` and `__readable`; filter parameters are ignored (SPEC §2.4). */
export function parseSingleQuery (ctx: QueryContext, raw: RawQuery): SingleQuery {
  return { fields: parseFields(ctx, own(raw, '__visible_fields')), readable: flag('__readable', own(raw, '__readable')), embeds: parseEmbedControls(ctx, raw) }
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
    offset: count('offset', 0, INT32_MAX)
  }
}

/** A path id as the primary key's type (SPEC §6.11), or a 400 `The ID is invalid`. */
export function parseId (table: Table, text: string): number | string {
  const key = table.primaryKey
  const id = typeOf(key).key!.parse(key, text)
  if (id === undefined) throw new TABLECRUD_ERR_ID_INVALID()
  return id as number | string
}
