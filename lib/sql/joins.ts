import type { FieldPath } from '../query/fields.js'
import type { Readable } from '../table/table.js'
import { quoteIdent, quoteLiteral } from './identifier.js'
import { relatedRows } from './related.js'
import type { ScopedRows } from './scope.js'

/** The readable representation in SQL: `format()` renders NULL as '' (SPEC §2.12). */
export function readableSql (readable: Readable, alias: string): string {
  const template = quoteLiteral(readable.template.replace(/%(?!s)/g, '%%'))
  return `format(${template}, ${readable.columns.map((c) => `${alias}.${quoteIdent(c)}`).join(', ')})`
}

/**
 * LEFT JOINs for ForeignKey paths from the row aliased `root`, one alias per distinct path:
 * `t1`, `t2`... for a statement's own rows, `<root>_1`... inside an embed (lib/sql/embed.ts).
 */
export class Joins {
  private readonly aliases = new Map<string, string>()
  private readonly clauses: string[] = []

  constructor (private readonly rows: ScopedRows, private readonly root = 't0', private readonly prefix = 't') {}

  alias (joins: FieldPath['joins']): string {
    let alias = this.root
    let key = ''
    for (const relation of joins) {
      key += `${relation.name}.`
      let next = this.aliases.get(key)
      if (next === undefined) {
        next = `${this.prefix}${this.aliases.size + 1}`
        this.aliases.set(key, next)
        const { from, on } = relatedRows(relation, alias, next, this.rows)
        this.clauses.push(` LEFT JOIN ${from} ON ${on}`)
      }
      alias = next
    }
    return alias
  }

  toString (): string {
    return this.clauses.join('')
  }
}
