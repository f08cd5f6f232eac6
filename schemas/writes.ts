import { Type, type TObject } from '@sinclair/typebox'
import type { Table } from '../lib/table/table.js'
import { listQuerySchema, type ListQueryOptions } from './query.js'

/** Schemas of the writes of many rows (SPEC §8.5): upsert's and bulk PATCH/DELETE's parameters, bulk PATCH's answer. */

/** The query string of PATCH and DELETE `/`: the filters of GET `/`, and `__max_affected`. */
export function bulkQuerySchema (table: Table, options: ListQueryOptions, maxAffected: number): TObject {
  return Type.Object({
    ...listQuerySchema(table, options).properties,
    __max_affected: Type.Optional(Type.Integer({
      minimum: 1,
      maximum: maxAffected,
      description: `At most this many rows may change, 1 to ${maxAffected} (the mount's maxAffected, the default): more matching rows are a 400 TABLECRUD_ERR_TOO_MANY_ROWS and nothing changes.`
    }))
  }, { additionalProperties: false, style: 'form', explode: true })
}

/**
 * The query string of POST `/`: `__on_conflict`, listing the column sets it takes; none when
 * the table has none (a Serial key and no unique column), where it can only be refused.
 */
export function createQuerySchema (targets: readonly string[]): TObject {
  if (targets.length === 0) return Type.Object({}, { style: 'form', explode: true })
  return Type.Object({
    __on_conflict: Type.Optional(Type.String({
      enum: [...targets],
      description: 'Upsert: insert, or update the row that has the same value in this column (the primary key or a unique column): 201 with Location when inserted, 200 when updated; an array body answers 200 `{"rows": [...]}`. Only the columns the body gives (and those a preSave hook changes) are updated. In an array, two elements with the same value in this column are a 400: one statement cannot update a row twice.'
    }))
  }, { style: 'form', explode: true })
}

/** The answer of PATCH `/`. */
export const UpdatedCountResponse = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'How many rows were changed.' })
}, { title: 'UpdatedCountResponse' })
