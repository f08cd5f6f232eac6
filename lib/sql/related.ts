import type { Relation } from '../table/relations.js'
import { quoteIdent } from './identifier.js'
import type { ScopedRows } from './scope.js'

/**
 * The one place a related table's rows are selected, for a join, an embed or an EXISTS: the
 * FROM item (aliased `alias`) and the condition tying it to the row aliased `outer`. The rows
 * come through `rows`, so that every path reads only what its table's scope (SPEC §8.6) lets
 * through, a junction's included.
 */
export function relatedRows (relation: Relation, outer: string, alias: string, rows: ScopedRows): { readonly from: string, readonly on: string } {
  const to = rows.from(relation.to, alias)
  const key = (table: string, column: string): string => `${table}.${quoteIdent(column)}`
  const toKey = key(alias, relation.to.primaryKey.name)
  const fromKey = key(outer, relation.from.primaryKey.name)
  const column = relation.column.name
  switch (relation.kind) {
    case 'forward':
      return { from: to, on: `${toKey} = ${key(outer, column)}` }
    case 'reverse':
      return { from: to, on: `${key(alias, column)} = ${fromKey}` }
    case 'junction': {
      const junction = `${alias}j`
      const far = relation.junction!
      return {
        from: `${rows.from(far.table, junction)} JOIN ${to} ON ${toKey} = ${key(junction, far.far.name)}`,
        on: `${key(junction, column)} = ${fromKey}`
      }
    }
  }
}
