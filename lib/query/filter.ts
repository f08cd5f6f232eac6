import { TABLECRUD_ERR_QS_INVALID_VALUE } from '../errors.js'
import { typeOf } from '../table/column-types.js'
import { OPERATORS, type MatchType, type Operator, type OperatorKind } from '../table/operators.js'
import type { TableColumn } from '../table/table.js'
import { isText, type FieldPath } from './fields.js'

/**
 * What a condition does, decided once here so the compiler only writes it: `compare` a value
 * with an operator, `like` a text column by its match type (`e` on text, match other than
 * exact), `contains` every value of an array column (or not, with `ne`), `null` checks,
 * `list` one of several values (`in`) or none of them (`not_in`).
 */
export type FilterKind = OperatorKind | 'like' | 'contains'

/** One test of a column, reached through `field.joins` (none for the table's own columns). */
export interface Condition {
  readonly kind: FilterKind
  readonly field: FieldPath
  readonly column: TableColumn
  readonly operator: Operator
  readonly match: MatchType
  /** Parsed values: none for is_null/not_null, several only for array columns and `in`/`not_in`. */
  readonly values: readonly unknown[]
  /** `not.` in a tree (SPEC §8.2); plain filters are never negated. */
  readonly negated: boolean
}

/** `__or=(...)`/`__and=(...)`: conditions and nested trees joined by one logic, maybe negated. */
export interface FilterTree {
  readonly kind: 'tree'
  readonly logic: 'and' | 'or'
  readonly negated: boolean
  readonly children: readonly Filter[]
}

/** What the WHERE of a statement is made of: every filter holds (AND). */
export type Filter = Condition | FilterTree

export function filterKind (column: TableColumn, operator: Operator, match: MatchType): FilterKind {
  // The operator's kind first: an array column refuses a list operator later, by its filtering.
  const kind = OPERATORS[operator].kind
  if (kind !== 'compare') return kind
  if (column.type === 'array') return 'contains'
  return operator === 'e' && match !== 'exact' && isText(column) ? 'like' : 'compare'
}

/** A filter value as its column's type reads it (an array's: one element), or undefined. */
export function readValue (column: TableColumn, text: string): unknown {
  return typeOf(column).parse(column, text)
}

/** A filter value as its column's type reads it, or a 400 naming the form wanted. */
export function parseValue (field: FieldPath, text: string): unknown {
  const value = readValue(field.column, text)
  if (value === undefined) throw new TABLECRUD_ERR_QS_INVALID_VALUE(JSON.stringify(text), field.name, typeOf(field.column).expected(field.column))
  return value
}

/**
 * What of the filters makes a statement's text: a WHERE written for one query serves another
 * with the same key (paths, operators, kinds and the trees' structure; never values).
 */
export function filtersKey (filters: readonly Filter[]): string {
  return filters.map((f) => f.kind === 'tree'
    ? `${f.negated ? '!' : ''}${f.logic}(${filtersKey(f.children)})`
    : `${f.negated ? '!' : ''}${f.field.name}:${f.operator}:${f.kind}`).join('&')
}

/** The filters with their values, as a cursor binds them (SPEC §7.1, §8.2). */
export function filtersBinding (filters: readonly Filter[]): unknown[] {
  return filters.map((f) => f.kind === 'tree'
    ? [f.logic, f.negated, filtersBinding(f.children)]
    : [f.field.name, f.operator, f.match, f.values, f.negated])
}
