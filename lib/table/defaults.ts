import type { ColumnSpec } from './column.js'
import { typeOf } from './column-types.js'

/**
 * The default of a column's type (SPEC §6.2): blank text, zero, false, now, an empty array;
 * null where a type has none (ForeignKey, Email, Serial; each type's descriptor says which)
 * and for a column with choices, whose blank value would not be one of them (SPEC §6.2, §6.5).
 */
export function typeDefault (column: ColumnSpec): unknown {
  return column.choices === null ? typeOf(column).blank(column) : null
}

/**
 * The value a write gives a column left out (SPEC §6.2), in wire form as hooks see it: the
 * declared default, else the type's for a NOT NULL column without choices, else NULL.
 */
export function writeDefault (column: ColumnSpec): unknown {
  const now = typeOf(column).now
  if (column.hasDefault) return now !== null && column.default === 'now' ? now() : column.default
  // A column with choices has no type default (SPEC §6.2): left out, NOT NULL makes it a 422.
  return column.nullable ? null : typeDefault(column)
}
