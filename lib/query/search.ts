import { TABLECRUD_ERR_QS_INVALID_STRING, TABLECRUD_ERR_QS_REPEATED, TABLECRUD_ERR_QS_SEARCH_UNAVAILABLE } from '../errors.js'
import { DOCUMENT, RANK } from '../table/search.js'
import type { Table } from '../table/table.js'
import type { FieldPath } from './fields.js'
import type { Condition, Filter } from './filter.js'

/** The field `__search` filters on (the table's document), and the one its relevance sorts by. */
export function searchFields (table: Table): { readonly document: FieldPath, readonly rank: FieldPath } {
  return {
    document: { name: '__search', joins: [], table, column: DOCUMENT },
    rank: { name: '__rank', joins: [], table, column: RANK }
  }
}

/**
 * `__search=<websearch query>` (SPEC §8.4) as a condition on the table's document, or null when
 * absent or empty (an empty form field searches nothing, as an empty filter value filters
 * nothing). A table without the `search` option refuses it with a 400.
 */
export function parseSearch (table: Table, value: string | string[] | undefined): Condition | null {
  if (value === undefined) return null
  if (Array.isArray(value) && value.length > 1) throw new TABLECRUD_ERR_QS_REPEATED('__search')
  const text = Array.isArray(value) ? value[0] ?? '' : value
  if (table.search === null) throw new TABLECRUD_ERR_QS_SEARCH_UNAVAILABLE(table.name)
  if (text.includes('\0')) throw new TABLECRUD_ERR_QS_INVALID_STRING('__search')
  if (text.trim() === '') return null
  const field = searchFields(table).document
  return { kind: 'search', field, column: DOCUMENT, operator: 'search', match: 'contains', values: [text], negated: false }
}

/** Whether a filter is the `__search` condition; its query text is `values[0]`. */
export function isSearch (filter: Filter): filter is Condition {
  return filter.kind !== 'tree' && filter.column === DOCUMENT
}

/** The query text of a `__search` among filters (the rank's parameter), or undefined when none. */
export function searchText (filters: readonly Filter[]): string | undefined {
  return filters.find(isSearch)?.values[0] as string | undefined
}
