import type { ColumnSpec } from '../table/column.js'
import { typeOf } from '../table/column-types.js'
import { operatorsOf, type Operator } from '../table/operators.js'
import { targetOf, visibleColumns, type Table, type TableColumn } from '../table/table.js'

export { MATCH_TYPES, OPERATOR_NAMES, OPERATORS, type MatchType, type Operator } from '../table/operators.js'

/** Varchar, Text and Email: filtered by match type (the type's descriptor says). */
export function isText (column: ColumnSpec): boolean {
  return typeOf(column).matches
}

/** The operators a filter on this column accepts (SPEC §2.3): those of its type's filtering. */
export function operatorsFor (column: ColumnSpec): readonly Operator[] {
  return operatorsOf(typeOf(column).filtering(column))
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
