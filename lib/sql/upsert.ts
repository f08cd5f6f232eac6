import type { TableColumn } from '../table/table.js'
import { perSequence } from '../table/per-table.js'
import { quoteIdent } from './identifier.js'
import type { InsertTail } from './write.js'

/** The alias of what an upsert returns besides the row: whether it inserted. `__` is no column's (lib/table). */
export const INSERTED = '__inserted'

/**
 * What turns an INSERT (compileInsert, compileInsertRows) into an upsert (SPEC §8.5):
 * `ON CONFLICT (<target>) DO UPDATE SET <column> = EXCLUDED.<column>` for each column of
 * `update`, and, when `flagged`, `(xmax = 0) AS "__inserted"` in RETURNING: a row the statement
 * inserted has no deleting or locking transaction yet, one it updated has its own, so the
 * statement itself tells the two apart, atomically. An array's answer does not tell them apart,
 * so its rows go without the flag. With nothing to update, the target is set to itself: the
 * conflicting row is still locked and returned, which `DO NOTHING` would not return. Kept by
 * shape, so that a statement's text is kept with its INSERT's (lib/sql/write.ts `tailed`).
 */
export function upsertTail (target: readonly TableColumn[], update: readonly TableColumn[], flagged = true): InsertTail {
  if (target.length === 0) throw new Error('upsertTail: a conflict target needs a column')
  return tails[flagged ? 0 : 1](target, update, () => {
    const sets = (update.length === 0 ? target.slice(0, 1) : update).map((c) => `${quoteIdent(c.name)} = EXCLUDED.${quoteIdent(c.name)}`)
    return Object.freeze({
      onConflict: ` ON CONFLICT (${target.map((c) => quoteIdent(c.name)).join(', ')}) DO UPDATE SET ${sets.join(', ')}`,
      returning: flagged ? `, (xmax = 0) AS ${quoteIdent(INSERTED)}` : ''
    })
  })
}

/**
 * The tails written, flagged ([0]) or not ([1]), by target (conflictTargets keeps one array
 * each) and the columns updated: each upsert of a shape seen before reuses its text. The
 * columns a body sends choose them, so a target keeps at most this many; past it, a tail is
 * written each time.
 */
export const MAX_TAILS = 256
const tails = [perSequence<readonly TableColumn[], TableColumn, InsertTail>(MAX_TAILS), perSequence<readonly TableColumn[], TableColumn, InsertTail>(MAX_TAILS)] as const
