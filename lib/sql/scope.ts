import type { Scopes } from '../query/scope.js'
import type { Table } from '../table/table.js'
import { quoteIdent } from './identifier.js'
import type { ScopeBinder } from './params.js'
import { WhereWriter } from './where.js'

/**
 * The one place row scopes (SPEC §8.6) enter SQL. Every statement reads a table's rows through
 * `from` (its own rows as `t0`, and every join, embed, EXISTS and `__readable` through
 * `relatedRows`), and every UPDATE and DELETE adds `conditions` to its WHERE: a table with a
 * scope is read as the subquery of the rows in scope, which PostgreSQL pulls up into the
 * statement (the plan is the one of the conditions written inline). A table without one is
 * read as before, with the same text. Values are bound by `bind`: parameters of a cached text
 * fetched from each request's scopes, or known at once.
 */
export class ScopedRows {
  /** The tables whose scope is being written: a scope that reads its own table through a relation reads it unscoped there, rather than forever. */
  private readonly writing = new Set<Table>()
  private count = 0

  constructor (readonly scopes: Scopes, private readonly bind: ScopeBinder) {}

  /**
   * The conditions of `table`'s scope on the row aliased `alias`; none when it has no scope.
   * `prefix` starts the aliases of its EXISTS tests: the alias itself, unless that is a quoted
   * name (an upsert's conflicting row), which no alias may start with.
   */
  conditions (table: Table, alias: string, prefix = alias): string[] {
    const filters = this.writing.has(table) ? [] : this.scopes.of(table)
    if (filters.length === 0) return []
    this.writing.add(table)
    try {
      const writer = new WhereWriter<Scopes>(this.bind, (scopes) => scopes.of(table), this, `${prefix}r${++this.count}_`)
      return writer.all(filters, alias)
    } finally {
      this.writing.delete(table)
    }
  }

  /** The FROM item of `table` aliased `alias`: the table, or only the rows in its scope. */
  from (table: Table, alias: string): string {
    const inner = `${alias}s`
    const conditions = this.conditions(table, inner)
    const name = quoteIdent(table.name)
    return conditions.length === 0 ? `${name} AS ${alias}` : `(SELECT * FROM ${name} AS ${inner} WHERE ${conditions.join(' AND ')}) AS ${alias}`
  }
}
