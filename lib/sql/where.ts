import type { Filter, FilterKind } from '../query/parse.js'
import { typeOf } from '../table/column-types.js'
import { MATCHES, OPERATORS } from '../table/operators.js'
import type { TableColumn } from '../table/table.js'
import type { Statement } from '../table/statement.js'
import { quoteIdent } from './identifier.js'
import { Params } from './params.js'

/** `%`, `_` and `\` are literal in a match value (SPEC §2.3). */
export function likeEscape (value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/** The ILIKE pattern of a `like` filter's value; the parser makes `like` only of a match with a pattern. */
function likePattern (filter: Filter): string {
  const pattern = MATCHES[filter.match].pattern
  /* c8 ignore next: unreached, `exact` makes a compare filter (lib/query/parse.ts filterKind) */
  if (pattern === null) throw new TypeError('an exact match has no pattern')
  return pattern(likeEscape(filter.values[0] as string))
}

/** Writes `$<n>` for a filter's one parameter, with how to fetch it from a filter of the same shape. */
type Placeholder = (fetch: (filter: Filter) => unknown) => string

/** How each kind of filter is written; the parser decided the kind. */
const FILTER_SQL = {
  compare: (column, filter, value) => `${column} ${OPERATORS[filter.operator].sql} ${value((f) => f.values[0])}`,
  like: (column, _filter, value) => `${column} ILIKE ${value(likePattern)}`,
  // Containment looks at every element, whatever the depth, and wants each value present.
  contains: (column, filter, value) => {
    const contains = `${column} @> ${value((f) => f.values)}`
    return filter.operator === 'ne' ? `NOT (${contains})` : contains
  },
  null: (column, filter) => `${column} ${OPERATORS[filter.operator].sql}`,
  // One array parameter whatever the count: the text, and its prepared statement, never depend on it.
  list: (column, filter, value, type) => `${column} ${OPERATORS[filter.operator].sql}(${value((f) => f.values)}::${type})`
} as const satisfies Record<FilterKind, (column: string, filter: Filter, value: Placeholder, arrayType: string) => string>

/**
 * The array type a list filter's parameter is cast to: the column's type without a modifier,
 * since a cast to varchar(3)[] would cut longer values and one to numeric(5, 2)[] round them,
 * making values equal that the column never holds. A serial is an integer.
 */
export function arrayType (column: TableColumn): string {
  const type = typeOf(column)
  return `${(type.key?.referencedAs(column) ?? type.sql(column)).replace(/\(.*\)$/, '')}[]`
}

/**
 * The WHERE clause of filters on the table aliased `t0`. Each parameter's value is fetched
 * from the filters of the input (`filtersOf`) at the same position: what makes a text cached
 * for one query serve every query of its shape.
 */
export function where<I> (params: Params<I>, filters: readonly Filter[], filtersOf: (input: I) => readonly Filter[]): string {
  if (filters.length === 0) return ''
  const conditions = filters.map((filter, i) => FILTER_SQL[filter.kind](
    `t0.${quoteIdent(filter.column.name)}`, filter, (fetch) => params.add((input) => fetch(filtersOf(input)[i]!)), arrayType(filter.column)))
  return ` WHERE ${conditions.join(' AND ')}`
}

/** What of the filters makes the text: a WHERE written for one query serves another with the same key. */
export function filtersKey (filters: readonly Filter[]): string {
  return filters.map((f) => `${f.column.name}:${f.operator}:${f.kind}`).join('&')
}

/** The WHERE clause of filters on the table aliased `t0`, with its parameters from $1. */
export function whereClause (filters: readonly Filter[]): Statement {
  const params = new Params<readonly Filter[]>()
  const text = where(params, filters, (f) => f)
  return { text, values: params.values(filters) }
}
