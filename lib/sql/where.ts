import { type Condition, type Filter, type FilterKind, type FilterTree } from '../query/filter.js'
export { filtersKey } from '../query/filter.js'
import { typeOf } from '../table/column-types.js'
import { MATCHES, OPERATORS } from '../table/operators.js'
import type { Table, TableColumn } from '../table/table.js'
import type { Statement } from '../table/statement.js'
import { NO_SCOPES, type Scopes } from '../query/scope.js'
import { Params } from './params.js'
import { relatedRows } from './related.js'
import { ScopedRows } from './scope.js'
import { conditionColumn, matchSql } from './search.js'

/** `%`, `_` and `\` are literal in a match value (SPEC §2.3). */
export function likeEscape (value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/** The ILIKE pattern of a `like` condition's value; the parser makes `like` only of a match with a pattern. */
function likePattern (condition: Condition): string {
  const pattern = MATCHES[condition.match].pattern
  /* c8 ignore next: unreached, `exact` makes a compare condition (lib/query/filter.ts filterKind) */
  if (pattern === null) throw new TypeError('an exact match has no pattern')
  return pattern(likeEscape(condition.values[0] as string))
}

/** Writes `$<n>` for a condition's one parameter, with how to fetch it from a condition of the same shape. */
type Placeholder = (fetch: (condition: Condition) => unknown) => string

/** How each kind of condition is written; the parser decided the kind. */
const CONDITION_SQL = {
  compare: (column, condition, value) => `${column} ${OPERATORS[condition.operator].sql} ${value((c) => c.values[0])}`,
  like: (column, _condition, value) => `${column} ILIKE ${value(likePattern)}`,
  // Containment looks at every element, whatever the depth, and wants each value present.
  contains: (column, condition, value) => {
    const contains = `${column} @> ${value((c) => c.values)}`
    return condition.operator === 'ne' ? `NOT (${contains})` : contains
  },
  null: (column, condition) => `${column} ${OPERATORS[condition.operator].sql}`,
  // One array parameter whatever the count: the text, and its prepared statement, never depend on it.
  list: (column, condition, value, type) => `${column} ${OPERATORS[condition.operator].sql}(${value((c) => c.values)}::${type})`,
  search: (column, condition, value) => matchSql(condition.field, condition.column, column, value((c) => c.values[0]))
} as const satisfies Record<FilterKind, (column: string, condition: Condition, value: Placeholder, arrayType: string) => string>

/**
 * The array type a list filter's parameter is cast to: the column's type without a modifier,
 * since a cast to varchar(3)[] would cut longer values and one to numeric(5, 2)[] round them,
 * making values equal that the column never holds. A serial is an integer.
 */
export function arrayType (column: TableColumn): string {
  const type = typeOf(column)
  return `${(type.key?.referencedAs(column) ?? type.sql(column)).replace(/\(.*\)$/, '')}[]`
}

/** A filter of the input, found by its address: its index, then its index in each tree down to it. */
function at (filters: readonly Filter[], address: readonly number[]): Filter {
  let found = filters[address[0]!]!
  for (const i of address.slice(1)) found = (found as FilterTree).children[i]!
  return found
}

/** A condition with where it sits in the input's filters, so a cached text fetches its value. */
interface Placed { readonly condition: Condition, readonly address: readonly number[] }

/** Writes `$<n>` for a value fetched from the input: a `Params`' `add`, or a scope's binder. */
type Bind<I> = (fetch: (input: I) => unknown) => string

/**
 * Writes conditions on the rows aliased `alias` and EXISTS tests for what they reach through
 * relations (each reading its rows through `rows`, under their scopes). EXISTS aliases are
 * `<prefix><n>`: a scope's own conditions, written inside a statement, take a prefix of theirs.
 */
export class WhereWriter<I> {
  private count = 0

  constructor (private readonly bind: Bind<I>, private readonly filtersOf: (input: I) => readonly Filter[], private readonly rows: ScopedRows, private readonly prefix = 'r') {}

  /**
   * The conditions of `placed` on the row aliased `alias`, whose paths are followed from hop
   * `depth`. Conditions through the same relation share one EXISTS (one related row meets all
   * of them, SPEC §8.2), nested for deeper hops; a to-one hop is an EXISTS too, so that the
   * same text serves SELECT, count and DELETE.
   */
  conditions (placed: readonly Placed[], depth: number, alias: string): string[] {
    const own: string[] = []
    const groups = new Map<string, Placed[]>()
    for (const item of placed) {
      const hop = item.condition.field.joins[depth]
      if (hop === undefined) own.push(this.condition(item, alias))
      else groups.set(hop.name, [...groups.get(hop.name) ?? [], item])
    }
    for (const group of groups.values()) {
      const inner = `${this.prefix}${++this.count}`
      const { from, on } = relatedRows(group[0]!.condition.field.joins[depth]!, alias, inner, this.rows)
      own.push(`EXISTS (SELECT 1 FROM ${from} WHERE ${[on, ...this.conditions(group, depth + 1, inner)].join(' AND ')})`)
    }
    return own
  }

  private condition ({ condition, address }: Placed, alias: string): string {
    const value: Placeholder = (fetch) => this.bind((input) => fetch(at(this.filtersOf(input), address) as Condition))
    return CONDITION_SQL[condition.kind](conditionColumn(condition.field, condition.column, alias), condition, value, arrayType(condition.column))
  }

  /** A tree (SPEC §8.2): each condition on its own (its own EXISTS), joined by the tree's logic. */
  tree (tree: FilterTree, address: readonly number[], alias: string): string {
    // `not.` negates the whole condition, its EXISTS included: `not.director.born.e.1935` keeps a film without a director.
    const parts = tree.children.map((child, i) => child.kind === 'tree'
      ? this.tree(child, [...address, i], alias)
      : this.leaf(child, [...address, i], alias))
    const sql = `(${parts.join(tree.logic === 'and' ? ' AND ' : ' OR ')})`
    return tree.negated ? `NOT ${sql}` : sql
  }

  private leaf (condition: Condition, address: readonly number[], alias: string): string {
    const sql = this.conditions([{ condition, address }], 0, alias)[0]!
    return condition.negated ? `NOT (${sql})` : sql
  }

  /** Every filter on the table aliased `alias`: plain conditions first, grouped by relation, then each tree. */
  all (filters: readonly Filter[], alias: string): string[] {
    const placed: Placed[] = []
    filters.forEach((filter, i) => { if (filter.kind !== 'tree') placed.push({ condition: filter, address: [i] }) })
    // Written in text order, so that placeholders are numbered as they appear.
    const plain = this.conditions(placed, 0, alias)
    return [...plain, ...filters.flatMap((filter, i) => filter.kind === 'tree' ? [this.tree(filter, [i], alias)] : [])]
  }
}

/**
 * The plain filters through the relation path `names` (an embed's, SPEC §8.2), as conditions on
 * the related row aliased `alias`: an embed then lists only the rows its path filters match.
 */
export function pathConditions<I> (params: Params<I>, rows: ScopedRows, filters: readonly Filter[], filtersOf: (input: I) => readonly Filter[], names: readonly string[], alias: string): string[] {
  const placed: Placed[] = []
  filters.forEach((filter, i) => {
    if (filter.kind === 'tree') return
    const joins = filter.field.joins
    if (joins.length >= names.length && names.every((name, depth) => joins[depth]!.name === name)) placed.push({ condition: filter, address: [i] })
  })
  return new WhereWriter((fetch) => params.add(fetch), filtersOf, rows).conditions(placed, names.length, alias)
}

/**
 * The conditions of filters on the table aliased `t0`. Each parameter's value is fetched from
 * the filters of the input (`filtersOf`) at the same address: what makes a text cached for one
 * query serve every query of its shape.
 */
export function whereConditions<I> (params: Params<I>, rows: ScopedRows, filters: readonly Filter[], filtersOf: (input: I) => readonly Filter[]): string[] {
  return new WhereWriter((fetch) => params.add(fetch), filtersOf, rows).all(filters, 't0')
}

/** ` WHERE <every condition>`, or nothing for none. */
export function whereOf (conditions: readonly string[]): string {
  return conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`
}

/** The WHERE clause of filters on the table aliased `t0` (rows read through `rows`). */
export function where<I> (params: Params<I>, rows: ScopedRows, filters: readonly Filter[], filtersOf: (input: I) => readonly Filter[]): string {
  return whereOf(whereConditions(params, rows, filters, filtersOf))
}

/**
 * The WHERE clause of filters on the table aliased `t0`, and of the scope of `table` when it
 * has one, with its parameters from $1.
 */
export function whereClause (filters: readonly Filter[], scoped: { readonly table: Table | null, readonly scopes: Scopes } = NO_TABLE): Statement {
  const params = new Params<readonly Filter[]>()
  const rows = new ScopedRows(scoped.scopes, params.scoped)
  const own = scoped.table === null ? [] : rows.conditions(scoped.table, 't0')
  const text = whereOf([...own, ...whereConditions(params, rows, filters, (f) => f)])
  return { text, values: params.values(filters, scoped.scopes) }
}

const NO_TABLE = { table: null, scopes: NO_SCOPES }
