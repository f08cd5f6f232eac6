import { TABLECRUD_ERR_QS_INVALID_TREE } from '../errors.js'
import { typeOf } from '../table/column-types.js'
import { isMatchType, isOperator, OPERATORS, type MatchType, type Operator } from '../table/operators.js'
import { isText, operatorsFor, type FieldPath } from './fields.js'
import { filterKind, readValue, type Condition, type Filter, type FilterTree } from './filter.js'

/*
 * Logical trees (SPEC §8.2): `__or=(<cond>,...)` and `__and=(...)`, parsed by recursive
 * descent over the parameter's text, keeping offsets so that every error quotes where it is
 * (as PostgREST's PGRST100 does). Grammar:
 *
 *   tree  := "(" cond ("," cond)* ")"
 *   cond  := ["not."] ( ("and" | "or") tree | path "." op ["." value] )
 *   value := quoted | bare | "(" item ("," item)* ")"      (the list form for in/not_in)
 *
 * A path is dotted names; the first name that is an operator or match type after a path the
 * table knows ends it. A value holding , ( ) " or \ is quoted, with \" and \\.
 */

/** Most conditions one request's trees may hold, and how deep they may nest. */
export const MAX_TREE_CONDITIONS = 50
export const MAX_TREE_DEPTH = 5

/** What a tree parser needs of the query context. */
export interface TreeContext {
  readonly filterable: ReadonlyMap<string, FieldPath>
  readonly maxPageSize: number
}

const NAME = /[A-Za-z0-9_]/

class TreeParser {
  private at = 0
  conditions = 0

  constructor (private readonly ctx: TreeContext, private readonly key: string, private readonly text: string) {}

  fail (problem: string, at = this.at): never {
    throw new TABLECRUD_ERR_QS_INVALID_TREE(this.key, problem, at)
  }

  private found (): string {
    return this.at < this.text.length ? `unexpected ${JSON.stringify(this.text[this.at])}` : 'unexpected end'
  }

  private expect (char: string, what: string): void {
    if (this.text[this.at] !== char) this.fail(`${this.found()}, expecting ${what}`)
    this.at++
  }

  private eat (word: string): boolean {
    if (!this.text.startsWith(word, this.at)) return false
    this.at += word.length
    return true
  }

  /** The whole parameter: one tree, nothing after it. */
  parse (logic: 'and' | 'or'): FilterTree {
    const tree = this.tree(logic, false, 1)
    if (this.at < this.text.length) this.fail(`${this.found()}, expecting the end`)
    return tree
  }

  private tree (logic: 'and' | 'or', negated: boolean, depth: number): FilterTree {
    if (depth > MAX_TREE_DEPTH) this.fail(`nested deeper than ${MAX_TREE_DEPTH}`)
    this.expect('(', '"("')
    const children: Filter[] = [this.condition(depth)]
    while (this.eat(',')) children.push(this.condition(depth))
    this.expect(')', '"," or ")"')
    return { kind: 'tree', logic, negated, children }
  }

  private condition (depth: number): Filter {
    const negated = this.eat('not.')
    for (const logic of ['and', 'or'] as const) {
      if (this.text.startsWith(`${logic}(`, this.at)) {
        this.at += logic.length
        return this.tree(logic, negated, depth + 1)
      }
    }
    if (++this.conditions > MAX_TREE_CONDITIONS) this.fail(`more than ${MAX_TREE_CONDITIONS} conditions`)
    return this.leaf(negated)
  }

  private name (): string {
    const start = this.at
    while (this.at < this.text.length && NAME.test(this.text[this.at]!)) this.at++
    if (this.at === start) this.fail(`${this.found()}, expecting a field name`)
    return this.text.slice(start, this.at)
  }

  /** `path.op[.value]`: the path ends at the first operator or match name after a known field. */
  private leaf (negated: boolean): Condition {
    const start = this.at
    let path = this.name()
    this.known(path, start)
    for (;;) {
      this.expect('.', '"." and an operator')
      const at = this.at
      const word = this.name()
      const field = this.ctx.filterable.get(path)
      if (field !== undefined && (isOperator(word) || isMatchType(word))) return this.operands(field, word, negated, start)
      path = `${path}.${word}`
      this.known(path, at)
    }
  }

  /** A 400 unless `path` is a field, or the start of one. */
  private known (path: string, at: number): void {
    if (this.ctx.filterable.has(path)) return
    for (const name of this.ctx.filterable.keys()) if (name.startsWith(`${path}.`)) return
    this.fail(`unknown field ${JSON.stringify(path)}`, at)
  }

  private operands (field: FieldPath, word: string, negated: boolean, start: number): Condition {
    const operator: Operator = isOperator(word) ? word : 'e'
    const match: MatchType = isMatchType(word) ? word : 'contains'
    const { column } = field
    if (isMatchType(word) && !isText(column)) this.fail(`the match ${word} applies to text fields only, not ${field.name}`, start)
    if (!operatorsFor(column).includes(operator)) this.fail(`the operator ${operator} does not apply to ${field.name} (type ${column.type})`, start)
    const arity = OPERATORS[operator].arity
    let texts: Array<{ text: string, at: number }> = []
    if (arity === 'none') {
      // A null check ignores any value (SPEC §6.7).
      if (this.eat('.')) this.value()
    } else {
      this.expect('.', 'a value')
      texts = arity === 'many' ? this.list() : [this.value()]
    }
    const values = texts.map(({ text, at }) => {
      const value = readValue(column, text)
      if (value === undefined) this.fail(`the value ${JSON.stringify(text)} of ${field.name} is not a valid ${typeOf(column).expected(column)}`, at)
      return value
    })
    // As in plain filters, `e` on text compares as its match (contains); `exact` is case-sensitive equality.
    return { kind: filterKind(column, operator, match), field, column, operator, match, values, negated }
  }

  private list (): Array<{ text: string, at: number }> {
    this.expect('(', '"(" and a list of values')
    const items = [this.value()]
    while (this.eat(',')) items.push(this.value())
    this.expect(')', '"," or ")"')
    if (items.length > this.ctx.maxPageSize) this.fail(`more than ${this.ctx.maxPageSize} values`)
    return items
  }

  /** A bare value up to `,` or `)`, or a quoted one. */
  private value (): { text: string, at: number } {
    const at = this.at
    if (this.text[this.at] === '"') return { text: this.quoted(), at }
    while (this.at < this.text.length && !',()"\\'.includes(this.text[this.at]!)) this.at++
    if (this.text[this.at] === '(' || this.text[this.at] === '"' || this.text[this.at] === '\\') this.fail(`${this.found()} in a value (quote it: "...")`)
    if (this.at === at) this.fail(`${this.found()}, expecting a value`)
    return { text: this.text.slice(at, this.at), at }
  }

  private quoted (): string {
    const start = this.at++
    let out = ''
    while (this.at < this.text.length && this.text[this.at] !== '"') {
      if (this.text[this.at] === '\\') {
        this.at++
        if (this.text[this.at] !== '"' && this.text[this.at] !== '\\') this.fail(`${this.found()} after "\\" (only \\" and \\\\)`)
      }
      out += this.text[this.at++]!
    }
    if (this.at >= this.text.length) this.fail('an unterminated quoted value', start)
    this.at++
    return out
  }
}

/**
 * The trees of `__or` and `__and` (each may repeat; every tree holds, SPEC §8.2), or a 400
 * `TABLECRUD_ERR_QS_INVALID_TREE` quoting the offending part and its offset.
 */
export function parseTrees (ctx: TreeContext, trees: ReadonlyArray<{ readonly key: '__or' | '__and' | '__having', readonly text: string }>): FilterTree[] {
  let conditions = 0
  return trees.map(({ key, text }) => {
    const parser = new TreeParser(ctx, key, text)
    parser.conditions = conditions
    const tree = parser.parse(key === '__or' ? 'or' : 'and')
    conditions = parser.conditions
    return tree
  })
}
