import type { FieldPath } from '../query/fields.js'
import type { Filter, IdsQuery, ListQuery, QueryContext, SingleQuery } from '../query/parse.js'
import { targetOf, visibleColumns, type Readable, type Table, type TableColumn } from '../table/table.js'
import { quoteIdent, quoteLiteral } from './identifier.js'

export interface Statement {
  readonly text: string
  readonly values: readonly unknown[]
}

/** Where each selected column goes in a response row: `director.name` -> `{ director: { name } }`. */
export interface Shape {
  /** Where each selected column goes; a nested one is a path. */
  readonly paths: ReadonlyArray<readonly string[]>
  /** The column aliases, in select order. */
  readonly aliases: readonly string[]
  /** What each path holds: a table's column, or null for a readable representation (text). */
  readonly sources: ReadonlyArray<{ readonly table: Table, readonly column: TableColumn } | null>
  /** True when every path is one key long, so rows from pg are already the response rows. */
  readonly flat: boolean
  /** Identifies the shape, for caching its serialiser. */
  readonly key: string
}

export interface SelectStatement extends Statement {
  readonly shape: Shape
}

/** The alias of the total column `count(*) OVER ()`: `__` cannot start a column name. */
export const TOTAL = '__total'

class Builder {
  readonly values: unknown[] = []
  param (value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

const ORDERED_SQL = new Map([['lt', '<'], ['lte', '<='], ['gt', '>'], ['gte', '>='], ['e', '='], ['ne', '<>']])

/** `%`, `_` and `\` are literal in a match value (SPEC §2.3). */
function likeEscape (value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`)
}

const LIKE = new Map([
  ['contains', (v: string) => `%${likeEscape(v)}%`],
  ['starts', (v: string) => `${likeEscape(v)}%`],
  ['ends', (v: string) => `%${likeEscape(v)}`]
])

const TEXT_TYPES = new Set(['varchar', 'text', 'email'])

/** Whether a filter is a LIKE match: `e` on a text column with a match type other than exact. */
function isLike (filter: Filter): boolean {
  return filter.operator === 'e' && LIKE.has(filter.match) && TEXT_TYPES.has(filter.column.type)
}

/** The one parameter a filter sends (none for is_null and not_null). */
function filterParam (filter: Filter): unknown {
  if (filter.column.type === 'array') return filter.values
  return isLike(filter) ? LIKE.get(filter.match)!(filter.values[0] as string) : filter.values[0]
}

function filterParams (filters: readonly Filter[]): unknown[] {
  const values: unknown[] = []
  for (const f of filters) if (f.operator !== 'is_null' && f.operator !== 'not_null') values.push(filterParam(f))
  return values
}

function condition (b: Builder, filter: Filter, alias: string): string {
  const col = `${alias}.${quoteIdent(filter.column.name)}`
  const { operator } = filter
  if (operator === 'is_null') return `${col} IS NULL`
  if (operator === 'not_null') return `${col} IS NOT NULL`
  const param = b.param(filterParam(filter))
  // Containment looks at every element, whatever the depth, and wants each value present.
  if (filter.column.type === 'array') return operator === 'ne' ? `NOT (${col} @> ${param})` : `${col} @> ${param}`
  return isLike(filter) ? `${col} ILIKE ${param}` : `${col} ${ORDERED_SQL.get(operator)!} ${param}`
}

function where (b: Builder, filters: readonly Filter[]): string {
  return filters.length === 0 ? '' : ` WHERE ${filters.map((f) => condition(b, f, 't0')).join(' AND ')}`
}

/** The WHERE clause of filters on the table aliased `t0`, with its parameters from $1. */
export function whereClause (filters: readonly Filter[]): Statement {
  const b = new Builder()
  return { text: where(b, filters), values: b.values }
}

/** The readable representation in SQL: `format()` renders NULL as '' (SPEC §2.12). */
export function readableSql (readable: Readable, alias: string): string {
  const template = quoteLiteral(readable.template.replace(/%(?!s)/g, '%%'))
  return `format(${template}, ${readable.columns.map((c) => `${alias}.${quoteIdent(c)}`).join(', ')})`
}

/** LEFT JOINs for ForeignKey paths, one alias per distinct path. */
class Joins {
  private readonly aliases = new Map<string, string>()
  private readonly clauses: string[] = []

  alias (joins: FieldPath['joins']): string {
    let alias = 't0'
    let key = ''
    for (const { from, column } of joins) {
      key += `${column.name}.`
      let next = this.aliases.get(key)
      if (next === undefined) {
        next = `t${this.aliases.size + 1}`
        const target = targetOf(from, column)
        this.aliases.set(key, next)
        this.clauses.push(` LEFT JOIN ${quoteIdent(target.name)} AS ${next} ON ${next}.${quoteIdent(target.primaryKey.name)} = ${alias}.${quoteIdent(column.name)}`)
      }
      alias = next
    }
    return alias
  }

  toString (): string {
    return this.clauses.join('')
  }
}

/**
 * The select list of a row response and the shape of its rows. Without requested fields, every
 * visible column. A ForeignKey asked for with its joined fields becomes one nested object that
 * also holds the key; `__readable` adds `<fk>_readable` after each top-level ForeignKey.
 */
function selectList (ctx: QueryContext, table: Table, fields: readonly FieldPath[] | null, readable: boolean, joins: Joins): { list: string, shape: Shape } {
  const wanted = fields ?? [...ctx.fields.values()].filter((f) => f.joins.length === 0)
  // Every ForeignKey some wanted field is joined through (`director`, `director.mentor`): the
  // object of its joined fields, not its bare value, goes at its name.
  const nested = new Set(wanted.flatMap((f) => f.joins.map((_, i) => f.joins.slice(0, i + 1).map((j) => j.column.name).join('.'))))
  const sqls: string[] = []
  const paths: string[][] = []
  const sources: Shape['sources'][number][] = []
  const readables = new Set<string>()
  const add = (sql: string, path: string[], source: Shape['sources'][number]): void => {
    sqls.push(sql)
    paths.push(path)
    sources.push(source)
  }
  const addReadable = (fk: TableColumn): void => {
    if (!readable || readables.has(fk.name)) return
    readables.add(fk.name)
    const alias = joins.alias([{ from: table, column: fk }])
    const target = targetOf(table, fk)
    add(`CASE WHEN ${alias}.${quoteIdent(target.primaryKey.name)} IS NULL THEN NULL ELSE ${readableSql(target.readable, alias)} END`, [`${fk.name}_readable`], null)
  }
  for (const field of wanted) {
    const alias = joins.alias(field.joins)
    const sql = `${alias}.${quoteIdent(field.column.name)}`
    if (nested.has(field.name)) {
      // Asked for both `director` and `director.name`: the key goes inside the object.
      const target = targetOf(field.table, field.column)
      add(sql, [...field.name.split('.'), target.primaryKey.name], { table: target, column: target.primaryKey })
    } else {
      add(sql, field.name.split('.'), { table: field.table, column: field.column })
    }
    const top = field.joins[0]?.column ?? field.column
    if (top.type === 'foreignKey') addReadable(top)
  }
  // Flat rows keep their keys as aliases, so pg's rows are the response; nested ones are
  // numbered, since PostgreSQL cuts aliases at 63 bytes.
  const flat = paths.every((p) => p.length === 1 && Buffer.byteLength(p[0]!) <= 63)
  const aliases = paths.map((p, i) => flat ? p[0]! : `c${i}`)
  const list = sqls.map((sql, i) => `${sql} AS ${quoteIdent(aliases[i]!)}`).join(', ')
  return { list, shape: { paths, aliases, sources, flat, key: paths.map((p) => p.join('.')).join(',') } }
}

function orderBy (order: ListQuery['order'], joins: Joins): string {
  return order.map((o) => `${joins.alias(o.field.joins)}.${quoteIdent(o.field.column.name)} ${o.descending ? 'DESC' : 'ASC'}`).join(', ')
}

/**
 * SQL text and shape by query shape, per TableCRUD context: a statement's text depends on the
 * columns, operators, fields, order and flags of a query, never on its values, so a shape
 * seen before reuses its text and only gathers the values again.
 */
const texts = new WeakMap<QueryContext, Map<string, { text: string, shape: Shape | null }>>()
const MAX_SHAPES = 1000

function memo (ctx: QueryContext, key: string, build: () => { text: string, shape: Shape | null }): { text: string, shape: Shape | null } {
  let byKey = texts.get(ctx)
  if (byKey === undefined) texts.set(ctx, byKey = new Map())
  let found = byKey.get(key)
  if (found === undefined) {
    found = build()
    if (byKey.size < MAX_SHAPES) byKey.set(key, found)
  }
  return found
}

function filtersKey (filters: readonly Filter[]): string {
  return filters.map((f) => `${f.column.name}:${f.operator}:${isLike(f) ? 'like' : ''}`).join('&')
}

function fieldsKey (fields: readonly FieldPath[] | null, readable: boolean): string {
  return `${fields === null ? '*' : fields.map((f) => f.name).join(',')}|${readable}`
}

/**
 * GET `/`: one statement, with the total of the filtered rows as a window column when asked
 * for (SPEC §2.3), so the page and its total take one round trip.
 */
export function compileList (ctx: QueryContext, query: ListQuery, withTotal: boolean): SelectStatement {
  const key = `list|${withTotal}|${filtersKey(query.filters)}|${fieldsKey(query.fields, query.readable)}|${query.order.map((o) => (o.descending ? '-' : '') + o.field.name).join(',')}`
  const { text, shape } = memo(ctx, key, () => {
    const b = new Builder()
    const joins = new Joins()
    const { list, shape } = selectList(ctx, ctx.table, query.fields, query.readable, joins)
    const order = orderBy(query.order, joins)
    const filter = where(b, query.filters)
    const limit = b.param(query.pageSize)
    const offset = b.param(0)
    const total = withTotal ? `, count(*) OVER () AS ${TOTAL}` : ''
    return { text: `SELECT ${list}${total} FROM ${quoteIdent(ctx.table.name)} AS t0${joins}${filter} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`, shape }
  })
  const values = filterParams(query.filters)
  values.push(query.pageSize, (query.page - 1) * query.pageSize)
  return Object.freeze({ text, values, shape: shape! })
}

/** GET `/count/`, and the total of an empty page. */
export function compileCount (ctx: QueryContext, filters: readonly Filter[]): Statement {
  const { text } = memo(ctx, `count|${filtersKey(filters)}`, () => {
    const b = new Builder()
    return { text: `SELECT count(*) AS count FROM ${quoteIdent(ctx.table.name)} AS t0${where(b, filters)}`, shape: null }
  })
  return Object.freeze({ text, values: filterParams(filters) })
}

/** GET `/:id/`. */
export function compileSingle (ctx: QueryContext, id: unknown, query: SingleQuery): SelectStatement {
  const { text, shape } = memo(ctx, `single|${fieldsKey(query.fields, query.readable)}`, () => {
    const joins = new Joins()
    const { list, shape } = selectList(ctx, ctx.table, query.fields, query.readable, joins)
    return { text: `SELECT ${list} FROM ${quoteIdent(ctx.table.name)} AS t0${joins} WHERE t0.${quoteIdent(ctx.table.primaryKey.name)} = $1`, shape }
  })
  return Object.freeze({ text, values: [id], shape: shape! })
}

/** GET `/ids/`: ids and readable representations, searched case-insensitively, in key order. */
export function compileIds (ctx: QueryContext, query: IdsQuery): Statement {
  const b = new Builder()
  const pk = `t0.${quoteIdent(ctx.table.primaryKey.name)}`
  const readable = readableSql(ctx.table.readable, 't0')
  const search = query.search === null ? '' : ` WHERE ${readable} ILIKE ${b.param(`%${likeEscape(query.search)}%`)}`
  const text = `SELECT ${pk} AS id, ${readable} AS readable FROM ${quoteIdent(ctx.table.name)} AS t0${search} ORDER BY ${pk} LIMIT ${b.param(query.limit)} OFFSET ${b.param(query.offset)}`
  return Object.freeze({ text, values: b.values })
}

/** The columns a write returns: the row as GET `/:id/` gives it without fields asked for. */
export function returningList (table: Table, excludeSecrets: boolean): string {
  return visibleColumns(table, excludeSecrets).map((c) => quoteIdent(c.name)).join(', ')
}

/** Puts flat aliased columns into nested response rows. */
export function shapeRow (row: Record<string, unknown>, shape: Shape): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  shape.paths.forEach((path, i) => {
    let target = out
    for (let depth = 0; depth < path.length - 1; depth++) {
      const key = path[depth]!
      // hasOwn, not ??=: a column may be called `constructor`.
      if (!Object.hasOwn(target, key)) target[key] = {}
      target = target[key] as Record<string, unknown>
    }
    target[path[path.length - 1]!] = row[shape.aliases[i]!]
  })
  return out
}
