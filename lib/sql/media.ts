import type { Table, TableColumn } from '../table/table.js'
import { quoteIdent } from './identifier.js'
import type { Statement } from '../table/statement.js'

/**
 * Every distinct file key a media column holds, for finding unused files (SPEC §5.8). An array
 * column is unnested (every dimension: `unnest` flattens them all); NULLs are left out. The
 * column must be one of the table's own: it is looked up, never taken as a name.
 */
export function compileFileKeys (t: Table, column: TableColumn): Statement {
  if (t.columnMap.get(column.name) !== column) throw new Error(`compileFileKeys: ${column.name} is not a column of ${t.name}`)
  const name = quoteIdent(column.name)
  const from = quoteIdent(t.name)
  const text = column.type === 'array'
    ? `SELECT DISTINCT k AS key FROM ${from} CROSS JOIN LATERAL unnest(${from}.${name}) AS k WHERE k IS NOT NULL ORDER BY key`
    : `SELECT DISTINCT ${name} AS key FROM ${from} WHERE ${name} IS NOT NULL ORDER BY key`
  return Object.freeze({ text, values: [] })
}
