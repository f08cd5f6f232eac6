import type { ColumnSpec } from '../table/column.js'
import { typeOf } from '../table/column-types.js'
import { operatorsOf, type Operator } from '../table/operators.js'
import { forwardOf, relationsOf, type Relation } from '../table/relations.js'
import { targetOf, visibleColumns, type Table, type TableColumn } from '../table/table.js'

export { MATCH_TYPES, OPERATOR_NAMES, OPERATORS, type MatchType, type Operator } from '../table/operators.js'

/** Varchar, Text and Email: filtered by match type (the type's descriptor says). */
export function isText (column: ColumnSpec): boolean {
  return typeOf(column).matches
}

/** The operators a filter on this column accepts (SPEC §2.3): those of its type's filtering. */
export function operatorsFor (column: ColumnSpec): readonly Operator[] {
  return operatorsOf(typeOf(column).filtering(column), isText(column))
}

/** One name `__visible_fields`, `__order` or a filter accepts: a path of relations, then a column. */
export interface FieldPath {
  /** `director.name` */
  readonly name: string
  /** The relations followed, outermost first, each with the table it leaves from. */
  readonly joins: readonly Relation[]
  readonly table: Table
  readonly column: TableColumn
}

/** Whether a reverse or many-to-many relation may be followed: its keys are not secret (SPEC §6.4). */
export function visibleRelation (relation: Relation, excludeSecrets: boolean): boolean {
  return !excludeSecrets || (!relation.column.secret && relation.junction?.far.secret !== true)
}

/**
 * Every field path, in order: each visible column, each ForeignKey followed by its target's
 * fields, up to `maxJoins` hops deep; with `many`, then each reverse and many-to-many relation
 * followed likewise (SPEC §8.1). Without `many` this list is the schema's
 * `visible_fields_options` and the `validFields` of a field error; with it, what filters name.
 */
export function fieldPaths (table: Table, maxJoins: number, excludeSecrets: boolean, many = false): readonly FieldPath[] {
  const out: FieldPath[] = []
  const walk = (current: Table, prefix: string, joins: readonly Relation[]): void => {
    const deeper = joins.length < maxJoins
    for (const column of visibleColumns(current, excludeSecrets)) {
      const name = prefix + column.name
      out.push({ name, joins, table: current, column })
      if (column.type === 'foreignKey' && deeper) walk(targetOf(current, column), `${name}.`, [...joins, forwardOf(current, column)])
    }
    if (!many || !deeper) return
    for (const relation of relationsOf(current).values()) {
      if (relation.many && visibleRelation(relation, excludeSecrets)) walk(relation.to, `${prefix}${relation.name}.`, [...joins, relation])
    }
  }
  walk(table, '', [])
  return out
}
