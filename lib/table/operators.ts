/*
 * Filter operators and match types (SPEC §2.3, §7.6, §8.2), each one descriptor typed
 * `satisfies Record<...>`: an operator added to `Operator` without its kind, the values it
 * applies to, its SQL and its arity fails to compile. The query parser, the WHERE compiler, the
 * query-string schema and OpenAPI all read these tables; nothing falls back to a default.
 *
 * Here in lib/table because column types say which family of operators they take, and
 * schemas/ may import lib/table only (STYLE.md).
 */

/**
 * How a column type is filtered, as its descriptor says: `ordered` values (numbers, dates)
 * compare and sort, `equality` values (text, booleans, UUIDs) only compare equal, arrays test
 * `containment`, and JSONB only its `presence`.
 */
export type Filtering = 'ordered' | 'equality' | 'containment' | 'presence'

/**
 * What a filter does with its operator: `compare` one value, `null` test (no value), `list`
 * one of several values. The parser refines `compare` by column: a text column's `e` becomes
 * `like`, an array column's `e`/`ne` becomes `contains`. `search` matches a text column's
 * words against a websearch query (SPEC §8.4).
 */
export type OperatorKind = 'compare' | 'null' | 'list' | 'search'

/** How many values an operator takes: none (`is_null`), one, or a list (`in`). */
export type Arity = 'none' | 'one' | 'many'

export interface OperatorSpec {
  readonly kind: OperatorKind
  /** The filterings that take it. */
  readonly appliesTo: readonly Filtering[]
  /** The SQL operator written between the column and its value (or after the column, for null checks). */
  readonly sql: string
  readonly arity: Arity
  /** Only text columns (varchar, text, email) take it, whatever their filtering. */
  readonly textOnly: boolean
}

const ALL: readonly Filtering[] = ['ordered', 'equality', 'containment', 'presence']
const EQUAL: readonly Filtering[] = ['ordered', 'equality', 'containment']
const ORDER: readonly Filtering[] = ['ordered']
const LIST: readonly Filtering[] = ['ordered', 'equality']
const TEXT: readonly Filtering[] = ['equality']

export type Operator = 'e' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'is_null' | 'not_null' | 'in' | 'not_in' | 'search'

/** Every filter operator, in the order documents list them. */
export const OPERATORS = Object.freeze({
  e: { kind: 'compare', appliesTo: EQUAL, sql: '=', arity: 'one', textOnly: false },
  ne: { kind: 'compare', appliesTo: EQUAL, sql: '<>', arity: 'one', textOnly: false },
  lt: { kind: 'compare', appliesTo: ORDER, sql: '<', arity: 'one', textOnly: false },
  lte: { kind: 'compare', appliesTo: ORDER, sql: '<=', arity: 'one', textOnly: false },
  gt: { kind: 'compare', appliesTo: ORDER, sql: '>', arity: 'one', textOnly: false },
  gte: { kind: 'compare', appliesTo: ORDER, sql: '>=', arity: 'one', textOnly: false },
  is_null: { kind: 'null', appliesTo: ALL, sql: 'IS NULL', arity: 'none', textOnly: false },
  not_null: { kind: 'null', appliesTo: ALL, sql: 'IS NOT NULL', arity: 'none', textOnly: false },
  // One array parameter whatever the count of values: the text never depends on it.
  in: { kind: 'list', appliesTo: LIST, sql: '= ANY', arity: 'many', textOnly: false },
  not_in: { kind: 'list', appliesTo: LIST, sql: '<> ALL', arity: 'many', textOnly: false },
  // The column's words (to_tsvector) against a websearch query, both read by the table's search config.
  search: { kind: 'search', appliesTo: TEXT, sql: '@@', arity: 'one', textOnly: true }
} as const satisfies Record<Operator, OperatorSpec>)

/** The operator names, in order. */
export const OPERATOR_NAMES = Object.freeze(Object.keys(OPERATORS) as Operator[])

/** Whether a string from a request names an operator (an own key: never `constructor`). */
export function isOperator (name: string): name is Operator {
  return Object.hasOwn(OPERATORS, name)
}

export interface MatchSpec {
  /** The ILIKE pattern of a value already escaped for LIKE, or null for `exact` (case-sensitive equality). */
  readonly pattern: ((escaped: string) => string) | null
}

/** How a text column matches its value (SPEC §2.3): `contains` unless `__match` says otherwise. */
export type MatchType = 'contains' | 'exact' | 'starts' | 'ends'

export const MATCHES = Object.freeze({
  contains: { pattern: (v: string) => `%${v}%` },
  exact: { pattern: null },
  starts: { pattern: (v: string) => `${v}%` },
  ends: { pattern: (v: string) => `%${v}` }
} as const satisfies Record<MatchType, MatchSpec>)

export const MATCH_TYPES = Object.freeze(Object.keys(MATCHES) as MatchType[])

export function isMatchType (name: string): name is MatchType {
  return Object.hasOwn(MATCHES, name)
}

const takenBy = (filtering: Filtering, text: boolean): readonly Operator[] =>
  Object.freeze(OPERATOR_NAMES.filter((op) => OPERATORS[op].appliesTo.includes(filtering) && (text || !OPERATORS[op].textOnly)))

/** Per filtering, the operators of other columns and of text columns (which also take the text-only ones). */
const BY_FILTERING = {
  ordered: [takenBy('ordered', false), takenBy('ordered', true)],
  equality: [takenBy('equality', false), takenBy('equality', true)],
  containment: [takenBy('containment', false), takenBy('containment', true)],
  presence: [takenBy('presence', false), takenBy('presence', true)]
} as const satisfies Record<Filtering, readonly [readonly Operator[], readonly Operator[]]>

/** The operators a filtering takes, in order (frozen, one list per filtering), with the text-only ones for a text column. */
export function operatorsOf (filtering: Filtering, text = false): readonly Operator[] {
  return BY_FILTERING[filtering][text ? 1 : 0]
}
