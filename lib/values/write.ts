import type { ColumnSpec } from '../table/column.js'
import { nowTimestamp, parseNumeric, parseTimestamp } from './index.js'

/** A body value that passed the JSON schema but not the column's finer rules. */
export class ValueError extends Error {}

/**
 * A validated JSON body value as pg should send it: Numeric checked against precision and
 * scale, timestamps as UTC text, arrays element by element. Throws ValueError with a reason,
 * and nothing else.
 */
export function toDatabase (column: ColumnSpec, value: unknown): unknown {
  if (value === null || value === undefined) return null
  switch (column.type) {
    case 'numeric': {
      const [precision, scale] = column.digits!
      const text = parseNumeric(value, precision, scale)
      if (text === undefined) throw new ValueError(`must be a decimal with at most ${precision - scale} digits before the point and ${scale} after it`)
      return text
    }
    case 'timestamp': {
      const text = parseTimestamp(value as string)
      if (text === undefined) throw new ValueError('must be an ISO 8601 date or date-time')
      return text
    }
    case 'array': {
      // A hook may hand back what the body schema never saw.
      if (!Array.isArray(value)) throw new ValueError('must be an array')
      const element = column.element!
      return value.map((v) => toDatabase(element, v))
    }
    default: return value
  }
}

/**
 * The default of a column's type (SPEC §6.2): blank text, zero, false, now, an empty array;
 * null where a type has none (ForeignKey, Email, Serial).
 */
export function typeDefault (column: ColumnSpec): unknown {
  switch (column.type) {
    case 'varchar': case 'text': return ''
    case 'integer': case 'real': case 'numeric': return 0
    case 'boolean': return false
    case 'timestamp': return nowTimestamp()
    case 'array': return []
    default: return null
  }
}

/**
 * The value a write gives a column left out (SPEC §6.2), in wire form as hooks see it: the
 * declared default, else the type's for a NOT NULL column, else NULL.
 */
export function writeDefault (column: ColumnSpec): unknown {
  if (column.hasDefault) return column.type === 'timestamp' && column.default === 'now' ? nowTimestamp() : column.default
  return column.nullable ? null : typeDefault(column)
}
