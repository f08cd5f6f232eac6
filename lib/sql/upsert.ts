import type { TableColumn } from '../table/table.js'
import { quoteIdent } from './identifier.js'
import type { InsertTail } from './write.js'

/** The alias of what an upsert returns besides the row: whether it inserted. `__` is no column's (lib/table). */
export const INSERTED = '__inserted'

/**
 * What turns an INSERT (compileInsert, compileInsertRows) into an upsert (SPEC §8.5):
 * `ON CONFLICT (<target>) DO UPDATE SET <column> = EXCLUDED.<column>` for each column of
 * `update`, and `(xmax = 0) AS "__inserted"` in RETURNING: a row the statement inserted has no
 * deleting or locking transaction yet, one it updated has its own, so the statement itself
 * tells the two apart, atomically. With nothing to update, the target is set to itself: the
 * conflicting row is still locked and returned, which `DO NOTHING` would not return.
 */
export function upsertTail (target: readonly TableColumn[], update: readonly TableColumn[]): InsertTail {
  if (target.length === 0) throw new Error('upsertTail: a conflict target needs a column')
  let byUpdate = tails.get(target)
  if (byUpdate === undefined) tails.set(target, byUpdate = new Map())
  // NUL is in no PostgreSQL name: the key of one list of columns is no other's.
  const key = update.map((c) => c.name).join('\0')
  const known = byUpdate.get(key)
  if (known !== undefined) return known
  const sets = (update.length === 0 ? target.slice(0, 1) : update).map((c) => `${quoteIdent(c.name)} = EXCLUDED.${quoteIdent(c.name)}`)
  const tail = Object.freeze({
    onConflict: ` ON CONFLICT (${target.map((c) => quoteIdent(c.name)).join(', ')}) DO UPDATE SET ${sets.join(', ')}`,
    returning: `, (xmax = 0) AS ${quoteIdent(INSERTED)}`
  })
  if (byUpdate.size < MAX_TAILS) byUpdate.set(key, tail)
  return tail
}

/**
 * The tails written, by target (conflictTargets keeps one array each) and the columns updated:
 * each upsert of a shape seen before reuses its text. The columns a body sends choose them, so
 * a target keeps at most this many; past it, a tail is written each time.
 */
const tails = new WeakMap<readonly TableColumn[], Map<string, InsertTail>>()
export const MAX_TAILS = 256
