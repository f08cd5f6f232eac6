import { TABLECRUD_ERR_QS_INVALID_CONFLICT, TABLECRUD_ERR_QS_INVALID_MAX_AFFECTED } from '../errors.js'
import { typeOf } from '../table/column-types.js'
import { visibleColumns, type Table, type TableColumn } from '../table/table.js'
import { parseInteger } from '../values/index.js'
import { perTable } from '../table/per-table.js'
import { parseFilterQuery, type Filter, type QueryContext, type RawQuery } from './parse.js'

/** The query parameters of the writes of many rows (SPEC §8.5): `__on_conflict` and `__max_affected`. */

/**
 * The column sets an upsert may name: the primary key, then each unique column, as the table
 * definition declares them (one unique constraint per `unique: true` column), a Serial key
 * excepted. Secret columns
 * are left out while `excludeSecrets`, as everywhere a client names columns.
 */
export function conflictTargets (table: Table, excludeSecrets: boolean): ReadonlyArray<readonly TableColumn[]> {
  // A Serial key is the database's to assign (SPEC §2.5): a new row never conflicts on it.
  return targetsOf(table, excludeSecrets, () => Object.freeze(visibleColumns(table, excludeSecrets)
    .filter((c) => c.primaryKey ? !typeOf(c).key!.assigned : c.unique).map((c) => Object.freeze([c]))))
}

const targetsOf = perTable<boolean, ReadonlyArray<readonly TableColumn[]>>()
const spellingsOf = perTable<boolean, ReadonlyMap<string, readonly TableColumn[]>>()

/**
 * `__on_conflict=<column>[,<column>...]`: the columns of one constraint of `conflictTargets`,
 * in any order, or a 400 naming the parameter, what was given and what is accepted. A target
 * spelt as `conflictTargets` lists it (what upserts send) is found by one lookup: each upsert
 * parses it.
 */
export function parseOnConflict (table: Table, excludeSecrets: boolean, value: string | string[]): readonly TableColumn[] {
  const targets = conflictTargets(table, excludeSecrets)
  const exact = typeof value === 'string' ? spellingsOf(table, excludeSecrets, () => new Map(targets.map((t) => [t.map((c) => c.name).join(','), t]))).get(value) : undefined
  if (exact !== undefined) return exact
  const refuse = (given: string): never => {
    throw new TABLECRUD_ERR_QS_INVALID_CONFLICT(table.name, targets.length === 0 ? 'none' : targets.map((t) => t.map((c) => c.name).join(',')).join('; '), JSON.stringify(given))
  }
  if (Array.isArray(value)) return refuse(value.join('&'))
  const names = new Set(value.split(',').map((n) => n.trim()))
  const found = targets.find((t) => t.length === names.size && t.every((c) => names.has(c.name)))
  return found ?? refuse(value)
}

/** What bulk PATCH and DELETE `/` take: the filters, and the row limit in force. */
export interface BulkQuery {
  readonly filters: Filter[]
  readonly maxAffected: number
}

/**
 * The query of a bulk PATCH or DELETE `/`: `__max_affected` (1 to the mount's `maxAffected`: a
 * request may lower the limit, never raise it), and the filters as `/count/` takes them.
 */
export function parseBulkQuery (ctx: QueryContext, maxAffected: number, raw: RawQuery): BulkQuery {
  const { __max_affected: given, ...rest } = raw
  if (!Object.hasOwn(raw, '__max_affected')) return { filters: parseFilterQuery(ctx, raw), maxAffected }
  const n = typeof given === 'string' ? parseInteger(given) : undefined
  if (n === undefined || n < 1 || n > maxAffected) throw new TABLECRUD_ERR_QS_INVALID_MAX_AFFECTED(maxAffected)
  return { filters: parseFilterQuery(ctx, rest), maxAffected: n }
}
