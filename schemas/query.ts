import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import { typeOf } from '../lib/table/column-types.js'
import { allTables, type Table, type TableColumn } from '../lib/table/table.js'
import { perTable } from '../lib/table/per-table.js'
import { embedPaths } from '../lib/query/embed.js'
import { fieldPaths, isText, MATCH_TYPES, operatorsFor, type FieldPath } from '../lib/query/fields.js'
import { OPERATORS } from '../lib/table/operators.js'
import { BOOLEAN_SPELLINGS, INT32_MAX } from '../lib/values/index.js'
import { filterValueSchema, NO_NUL } from './row.js'

/*
 * Documentation only: the plugin parses query strings itself (unknown keys, repeats, case-free
 * booleans), so these schemas describe the parameters for OpenAPI without validating them.
 * A text the parser refuses NUL in says so (`NO_NUL`).
 */

export { BOOLEAN_SPELLINGS }

function stringEnum (values: readonly string[], description: string): TSchema {
  return Type.Unsafe<string>({ type: 'string', enum: [...values], description })
}

function valueForm (column: TableColumn): string {
  return typeOf(column).form(column)
}

function filterDescription (name: string, column: TableColumn): string {
  const form = valueForm(column)
  if (column.type === 'array') return `Rows whose ${name} holds this element (${form}); repeat to require several.`
  const once = ` Repeated only with ${name}__operator in or not_in, one value each.`
  if (isText(column)) return `Filter on ${name} (${form}), compared as ${name}__match says.${once}`
  return `Filter on ${name}: ${form}.${once}`
}

/** The parameters filtering on one field: the table's own column, or a path through relations (SPEC §8.2). */
function filterProperties ({ name, table, column, joins }: FieldPath): TProperties {
  const through = joins.length === 0 ? '' : ` Through ${joins.map((j) => j.name).join('.')}: rows with ${joins.some((j) => j.many) ? 'at least one' : 'a'} related row that matches.`
  const description = filterDescription(name, column) + through
  const operators = operatorsFor(column)
  const lists = operators.filter((op) => OPERATORS[op].arity === 'many')
  const properties: TProperties = {}
  // A column no value filters (JSONB: null checks only) has no value parameter to document.
  if (operators.includes('e')) {
    // Each value typed as its column's, the parameter repeatable (rating=3&rating=4, QUERY_STYLE):
    // arrays take every repeat, other columns with in/not_in only (SPEC §7.6).
    properties[name] = Type.Optional(Type.Array(filterValueSchema(table, column), { description }))
  }
  const repeated = lists.length > 0 ? ` ${lists.join(' and ')} take the ${name} parameter repeated, one value each.` : ''
  Object.assign(properties, {
    [`${name}__operator`]: Type.Optional(stringEnum(operators,
      `Comparison for ${name}; default e. is_null and not_null need no value.${repeated}`))
  })
  if (isText(column)) {
    properties[`${name}__match`] = Type.Optional(stringEnum(MATCH_TYPES,
      `How ${name} matches its value; default contains, case-insensitive (exact is case-sensitive).`))
  }
  return properties
}

/** `<path>.__order` and `<path>.__page_size` of each embed path (SPEC §8.1). */
function embedControlProperties (fields: readonly FieldPath[], maxEmbedRows = 100): TProperties {
  const properties: TProperties = {}
  for (const { name, joins } of embedPaths(fields).values()) {
    const columns = fields.filter((f) => f.joins.length === joins.length && f.name.startsWith(`${name}.`)).map((f) => f.name.slice(name.length + 1))
    const key = joins[joins.length - 1]!.to.primaryKey.name
    properties[`${name}.__order`] = Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], {
      description: `Sorts the embedded ${name} rows: comma-separated columns of theirs (${columns.join(', ')}), or the parameter repeated; a - prefix sorts descending. Default: -${key}.`
    }))
    properties[`${name}.__page_size`] = Type.Optional(Type.Integer({
      minimum: 1, maximum: maxEmbedRows, description: `Most embedded ${name} rows per row, 1 to ${maxEmbedRows}; default ${maxEmbedRows}.`
    }))
  }
  return properties
}

/**
 * How the parameters of a query string are written, for OpenAPI: a list as the parameter
 * repeated (`explode`, OpenAPI's default for a query, said so generators that comma-join lists
 * unless told, orval among them, send what the server reads). @fastify/swagger reads it on the
 * query string's schema, for every parameter.
 */
const QUERY_STYLE = { additionalProperties: false, style: 'form', explode: true } as const

/** `__visible_fields`: a comma-separated string, or the parameter repeated (one name each, listed as an enum). */
function visibleFields (names: readonly string[]): TSchema {
  const description = `Comma-separated fields to return, or the parameter repeated. Fields: ${names.join(', ')}.`
  return Type.Optional(Type.Union([
    Type.String(),
    Type.Array(stringEnum(names, 'A field name.'))
  ], { description }))
}

function readable (): TSchema {
  return Type.Optional(stringEnum(BOOLEAN_SPELLINGS,
    'Add `<fk>_readable` beside each ForeignKey: the referenced row as text. Any case.'))
}

export interface ListQueryOptions {
  excludeSecrets: boolean
  maxJoins: number
  maxPageSize: number
  /** For the description of `<path>.__page_size` only. Default 100. */
  maxEmbedRows?: number
  /** For the description of `__page_size` only. */
  pageSize?: number
}

const listSchemas = perTable<string, TObject>()

/**
 * The query string of GET `/`, `/count/` and DELETE `/` (SPEC §2.3): filters and control parameters.
 * One object for the routes of a table with the same options (GET `/` spreads it, `/count/`,
 * the bulk writes and `/aggregate/` take it): each copy held every filter's schema and
 * description, some 170 kB for a table with a join, kept by its route for the process's life.
 * Read only, by Fastify and @fastify/swagger. Built again once another table is defined, whose
 * relations may add paths, as `relationsOf` is.
 */
export function listQuerySchema (table: Table, options: ListQueryOptions): TObject {
  const key = `${allTables().length} ${options.excludeSecrets} ${options.maxJoins} ${options.maxPageSize} ${options.maxEmbedRows} ${options.pageSize}`
  return listSchemas(table, key, () => buildListQuerySchema(table, options))
}

function buildListQuerySchema (table: Table, options: ListQueryOptions): TObject {
  const fields = fieldPaths(table, options.maxJoins, options.excludeSecrets, true)
  const names = fields.map((f) => f.name)
  const properties: TProperties = {}
  for (const field of fields) Object.assign(properties, filterProperties(field))
  const pageSize = options.pageSize === undefined ? '' : `; default ${options.pageSize}`
  Object.assign(properties, {
    __order: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], {
      description: `Comma-separated fields to sort by, or the parameter repeated; a - prefix sorts descending. Default: -${table.primaryKey.name}.`
    })),
    __visible_fields: visibleFields(names),
    __page: Type.Optional(Type.Integer({ minimum: 1, maximum: INT32_MAX, description: 'Page number, from 1; default 1.' })),
    __page_size: Type.Optional(Type.Integer({
      minimum: 1, maximum: options.maxPageSize, description: `Rows per page, 1 to ${options.maxPageSize}${pageSize}.`
    })),
    __readable: readable(),
    __range_header: Type.Optional(stringEnum(BOOLEAN_SPELLINGS,
      'Send `Content-Range: <name> <first>-<last>/<total>`. Any case.')),
    __range_header_name: Type.Optional(Type.String({ ...NO_NUL, description: `The \`<name>\` of Content-Range; default ${table.name}.` })),
    ...embedControlProperties(fields, options.maxEmbedRows)
  })
  if (table.search !== null) {
    properties.__search = Type.Optional(Type.String({
      ...NO_NUL,
      description: `Full-text search of ${table.search.columns.join(', ')} (PostgreSQL websearch syntax: words, "phrases", -excluded, or); without __order, the most relevant rows first.`
    }))
  }
  return Type.Object(properties, QUERY_STYLE)
}

/** GET `/`: the list query, with keyset paging (SPEC §7.1) and the export format (SPEC §7.5). */
export function pageQuerySchema (table: Table, options: ListQueryOptions): TObject {
  const list = listQuerySchema(table, options)
  return Type.Object({
    ...list.properties,
    __cursor: Type.Optional(Type.String({ description: 'Keyset paging: empty for the first page, then the `next_cursor` of the previous answer. Not with `__page`.' })),
    __format: Type.Optional(stringEnum(['json', 'ndjson', 'csv'], 'Stream every matching row as NDJSON or CSV instead of a JSON page; default: the Accept header, else json.'))
  }, QUERY_STYLE)
}

export interface SingleQueryOptions {
  excludeSecrets: boolean
  maxJoins: number
  /** For the description of `<path>.__page_size` only. Default 100. */
  maxEmbedRows?: number
}

/** The query string of GET `/:id/` (SPEC §2.4). Other parameters are ignored, so they are not refused here. */
export function singleQuerySchema (table: Table, options: SingleQueryOptions): TObject {
  const fields = fieldPaths(table, options.maxJoins, options.excludeSecrets, true)
  return Type.Object({ __visible_fields: visibleFields(fields.map((f) => f.name)), __readable: readable(), ...embedControlProperties(fields, options.maxEmbedRows) })
}

/**
 * The query string of GET `/ids/` (SPEC §2.8, §6.12), with the bounds the parser holds `limit`
 * and `offset` to (a 400 past them): the mount's `maxPageSize`, and a 32-bit offset.
 */
export function idsQuerySchema (maxPageSize: number): TObject {
  return Type.Object({
    search: Type.Optional(Type.String({ ...NO_NUL, description: 'Case-insensitive substring of the readable representation.' })),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: maxPageSize, description: `At most this many ids, 0 to ${maxPageSize}; default ${maxPageSize}.` })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: INT32_MAX, description: 'Skip this many ids; default 0.' }))
  }, { additionalProperties: false })
}

/** `a movie row`, `an author row`: the article a table's name takes, by its first letter. */
export function aRow (table: string): string {
  return `${/^[aeiou]/i.test(table) ? 'an' : 'a'} ${table} row`
}

/** An id of each key type, to show in the documentation. */
const EXAMPLE_IDS: Partial<Record<string, number | string>> = { serial: 1, integer: 1, smallInt: 1, bigInt: '1', bigSerial: '1', uuid: '3fa85f64-5717-4562-b3fc-2c963f66afa6' }

/** The `:id` of `/:id/`, as the primary key's type (SPEC §6.11), with an example id. */
export function idParamsSchema (table: Table): TObject {
  const key = table.primaryKey
  const id = typeOf(key).key!.schema(key, `The ${key.name} of ${aRow(table.name)}.`)
  // Text keys: a short code, as long as the key allows.
  const example = EXAMPLE_IDS[key.type] ?? 'WB'.slice(0, key.length ?? 2)
  return Type.Object({ id: { ...id, examples: [example] } })
}
