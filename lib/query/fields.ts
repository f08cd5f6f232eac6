import type { ColumnSpec } from '../table/column.js'
import { targetOf, visibleColumns, type Table, type TableColumn } from '../table/table.js'

export const OPERATORS = Object.freeze(['e', 'ne', 'lt', 'lte', 'gt', 'gte', 'is_null', 'not_null'] as const)
export type Operator = typeof OPERATORS[number]

export const MATCH_TYPES = Object.freeze(['contains', 'exact', 'starts', 'ends'] as const)
export type MatchType = typeof MATCH_TYPES[number]

const ORDERED = Object.freeze(['e', 'ne', 'lt', 'lte', 'gt', 'gte', 'is_null', 'not_null'] as const)
const UNORDERED = Object.freeze(['e', 'ne', 'is_null', 'not_null'] as const)
const ORDERED_TYPES = new Set(['serial', 'integer', 'real', 'numeric', 'timestamp', 'foreignKey'])
const TEXT_TYPES = new Set(['varchar', 'text', 'email'])

/** Varchar, Text and Email: filtered by match type. */
export function isText (column: ColumnSpec): boolean {
  return TEXT_TYPES.has(column.type)
}

/** The operators a filter on this column accepts (SPEC §2.3): ordering ones on numbers, dates and keys only. */
export function operatorsFor (column: ColumnSpec): readonly Operator[] {
  return column.type !== 'array' && ORDERED_TYPES.has(column.type) ? ORDERED : UNORDERED
}

/** One name `__visible_fields` and `__order` accept: a path of ForeignKeys, then a column. */
export interface FieldPath {
  /** `director.name` */
  readonly name: string
  /** The ForeignKeys followed, outermost first, with the table each one leaves from. */
  readonly joins: ReadonlyArray<{ readonly from: Table, readonly column: TableColumn }>
  readonly table: Table
  readonly column: TableColumn
}

/**
 * Every field `__visible_fields` accepts, in order: each visible column, each ForeignKey
 * followed by its target's fields, up to `maxJoins` deep. This list is the schema's
 * `visible_fields_options` and the `validFields` of a field error.
 */
export function fieldPaths (table: Table, maxJoins: number, excludeSecrets: boolean): readonly FieldPath[] {
  const out: FieldPath[] = []
  const walk = (current: Table, prefix: string, joins: FieldPath['joins']): void => {
    for (const column of visibleColumns(current, excludeSecrets)) {
      const name = prefix + column.name
      out.push({ name, joins, table: current, column })
      if (column.type === 'foreignKey' && joins.length < maxJoins) {
        walk(targetOf(current, column), `${name}.`, [...joins, { from: current, column }])
      }
    }
  }
  walk(table, '', [])
  return out
}
