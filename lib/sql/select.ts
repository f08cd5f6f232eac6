import type { FieldPath } from '../query/fields.js'
import type { Filter, IdsQuery, ListQuery, QueryContext, SingleQuery } from '../query/parse.js'
import { embedsKey, NO_EMBED_CONTROLS, type EmbedControls } from '../query/embed.js'
import { visibleColumns, type Table } from '../table/table.js'
import type { SelectStatement, Shape, Statement } from '../table/statement.js'
import { EmbedScope, isEmbed, selectItems, shapeKey } from './embed.js'
import { quoteIdent } from './identifier.js'
import { Joins, readableSql } from './joins.js'
import { Params, Values } from './params.js'
import { rankSql } from './search.js'
import { ScopedRows } from './scope.js'
import { filtersKey, likeEscape, where, whereOf } from './where.js'
import { searchText } from '../query/search.js'
import { RANK } from '../table/search.js'
import { perTable } from '../table/per-table.js'

export { Joins, readableSql } from './joins.js'

export { whereClause } from './where.js'

/** A page of rows: the statement, and the offset it starts at (for `Content-Range`). */
export interface ListStatement extends SelectStatement {
  readonly offset: number
}

/** The alias of the total column `count(*) OVER ()`: `__` cannot start a column name. */
export const TOTAL = '__total'

/**
 * The select list of a row response and the shape of its rows. Without requested fields, every
 * visible column (lib/sql/embed.ts `selectItems` says what each field becomes).
 */
function selectList<I> (ctx: QueryContext, fields: readonly FieldPath[] | null, readable: boolean, joins: Joins, scope: EmbedScope<I>): { list: string, shape: Shape } {
  const wanted = fields ?? [...ctx.fields.values()].filter((f) => f.joins.length === 0)
  const items = selectItems(scope, ctx.table, wanted, readable, joins)
  const paths = items.map((i) => i.path)
  // Flat rows keep their keys as aliases, so pg's rows are the response; nested ones (and
  // embeds, whose values may need a conversion) are numbered, since PostgreSQL cuts aliases at 63 bytes.
  const flat = items.every((i) => i.path.length === 1 && Buffer.byteLength(i.path[0]!) <= 63 && !isEmbed(i.source))
  const aliases = paths.map((p, i) => flat ? p[0]! : `c${i}`)
  const list = items.map((item, i) => `${item.sql} AS ${quoteIdent(aliases[i]!)}`).join(', ')
  return { list, shape: { paths, aliases, sources: items.map((i) => i.source), flat, key: shapeKey(items) } }
}

/**
 * The SQL of a sort key: a column of the rows or a join, or the relevance of `__search`, whose
 * query is a parameter fetched from the input's filters (SPEC §8.4).
 */
function sortKey<I extends { readonly filters: readonly Filter[] }> (table: Table, field: FieldPath, joins: Joins, params: Params<I>): string {
  if (field.column === RANK) return rankSql(table, params.add((input) => searchText(input.filters)))
  return `${joins.alias(field.joins)}.${quoteIdent(field.column.name)}`
}

function orderBy<I extends { readonly filters: readonly Filter[] }> (table: Table, order: ListQuery['order'], joins: Joins, params: Params<I>): string {
  return order.map((o) => `${sortKey(table, o.field, joins, params)} ${o.descending ? 'DESC' : 'ASC'}`).join(', ')
}

/** A cached statement: its text, the shape of its rows, and how to fetch its values from an input. */
interface Cached<I> {
  readonly text: string
  readonly shape: Shape
  readonly params: Params<I>
}

const MAX_SHAPES = 1000

/**
 * SQL text, row shape and parameters by query shape, per TableCRUD context: a statement's text
 * depends on the columns, operators, filter kinds, fields, order and flags of a query, never
 * on its values, so a shape seen before reuses its text and only fetches the values.
 */
export function shapeCache<I> (): (ctx: QueryContext, key: string, build: () => Cached<I>) => Cached<I> {
  const byContext = new WeakMap<object, Map<string, Cached<I>>>()
  return (ctx, shapeKey, build) => {
    // Kept by the context's registration (a request's scoped context shares it), and keyed by
    // the structure of the request's row scopes too (SPEC §8.6): they are part of the text.
    let byKey = byContext.get(ctx.shapes)
    if (byKey === undefined) byContext.set(ctx.shapes, byKey = new Map())
    const key = `${shapeKey}|${ctx.scopes.key}`
    let found = byKey.get(key)
    if (found === undefined) {
      found = build()
      if (byKey.size < MAX_SHAPES) byKey.set(key, found)
    }
    return found
  }
}

/** What the parameters of a page are fetched from. */
interface Page { readonly filters: readonly Filter[], readonly limit: number, readonly offset: number, readonly embeds: EmbedControls }

const listCache = shapeCache<Page>()
const countCache = shapeCache<readonly Filter[]>()
const singleCache = shapeCache<{ readonly key: unknown, readonly filters: readonly Filter[], readonly embeds: EmbedControls }>()

/** Where an embed's bind parameters read the request's filters and controls. */
const filtersOf = (input: { readonly filters: readonly Filter[] }): readonly Filter[] => input.filters
const controlsOf = (input: { readonly embeds: EmbedControls }): EmbedControls => input.embeds

export const NO_SHAPE: Shape = Object.freeze({ paths: [], aliases: [], sources: [], flat: true, key: '' })

function fieldsKey (fields: readonly FieldPath[] | null, readable: boolean): string {
  return `${fields === null ? '*' : fields.map((f) => f.name).join(',')}|${readable}`
}

/** The cache key of what a list query filters, selects and orders by. */
function listKey (query: ListQuery): string {
  return `${filtersKey(query.filters)}|${fieldsKey(query.fields, query.readable)}|${orderKey(query.order)}|${embedsKey(query.embeds)}`
}

/**
 * What every SELECT of a list query's rows is made of: the select list and its shape, the joins
 * it and the order need, the ORDER BY, and the WHERE (its values bound in `params`).
 */
function listParts<I extends { readonly filters: readonly Filter[], readonly embeds: EmbedControls }> (ctx: QueryContext, query: ListQuery, params: Params<I>):
{ list: string, shape: Shape, joins: Joins, order: string, filter: string, from: string } {
  const rows = new ScopedRows(ctx.scopes, params.scoped)
  const joins = new Joins(rows)
  const scope = new EmbedScope(params, rows, query.filters, filtersOf, query.embeds, controlsOf, ctx.maxEmbedRows)
  const { list, shape } = selectList(ctx, query.fields, query.readable, joins, scope)
  const order = orderBy(ctx.table, query.order, joins, params)
  const filter = where(params, rows, query.filters, (input) => input.filters)
  return { list, shape, joins, order, filter, from: rows.from(ctx.table, 't0') }
}

/**
 * GET `/`: one statement, with the total of the filtered rows as a window column when asked
 * for (SPEC §2.3), so the page and its total take one round trip.
 */
export function compileList (ctx: QueryContext, query: ListQuery, withTotal: boolean): ListStatement {
  const key = `list|${withTotal}|${listKey(query)}`
  const { text, shape, params } = listCache(ctx, key, () => {
    const params = new Params<Page>()
    const { list, shape, joins, order, filter, from } = listParts(ctx, query, params)
    const limit = params.add((page) => page.limit)
    const offset = params.add((page) => page.offset)
    const total = withTotal ? `, count(*) OVER () AS ${TOTAL}` : ''
    return { text: `SELECT ${list}${total} FROM ${from}${joins}${filter} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`, shape, params }
  })
  const offset = (query.page - 1) * query.pageSize
  return Object.freeze({ text, values: params.values({ filters: query.filters, limit: query.pageSize, offset, embeds: query.embeds }, ctx.scopes), shape, offset, plan: pagePlan(query.filters) })
}

/**
 * A page filtered by a pattern (ILIKE: contains, starts, ends) on the table's own columns is
 * planned for its pattern every time (`plan: 'custom'`, lib/table/statement.ts). How many rows a
 * pattern matches is all in its value; PostgreSQL's generic plan, used after five runs of a
 * named statement, assumes a few in a thousand and walks the sort key's index to stop after a
 * page. A rare pattern then reads the whole index in its order, row by row from the heap: in
 * the bench, `name` containing "Movie 9999" took 26 ms that way against 23 ms for the custom
 * plan's scan and top-N sort (0.88× the hand-written server's req/s, 1.01× planned each time),
 * and the gap grows with a table that is not cached. A pattern across a relation is left to the
 * plan cache: there the bench's case lost more (0.98× to 0.92× req/s, the statement parsed and
 * described on every run) than its plan gained.
 */
function pagePlan (filters: readonly Filter[]): 'custom' | undefined {
  return holdsPattern(filters) ? 'custom' : undefined
}

function holdsPattern (filters: readonly Filter[]): boolean {
  return filters.some((f) => f.kind === 'tree' ? holdsPattern(f.children) : f.kind === 'like' && f.field.joins.length === 0)
}

/** The alias of the i-th sort key's text, selected beside the row for the next cursor. */
export const sortKeyAlias = (i: number): string => `__k${i}`

/** A keyset page: the page holds one row more than asked, which says whether a next page exists. */
export interface KeysetStatement extends SelectStatement {
  /** The number of sort keys; the row carries their text as `__k0`...`__k<n-1>`. */
  readonly keys: number
}

interface Keyset { readonly filters: readonly Filter[], readonly after: readonly string[], readonly limit: number, readonly embeds: EmbedControls }

const keysetCache = shapeCache<Keyset>()

/**
 * GET `/` with `__cursor` (SPEC §7.1): the rows after the cursor's sort-key values. Mixed
 * directions and NULLs rule out a row-value comparison, so the predicate is the OR-chain
 * "k1 after v1, or k1 = v1 and k2 after v2, ..." where "after" follows where PostgreSQL sorts
 * NULLs (last ascending, first descending) and a NULL value compares by IS [NOT] NULL. Which
 * values are NULL changes the text (part of the cache key); the others are bound as text
 * parameters whose type PostgreSQL infers from the column they are compared with, and the key
 * columns are selected as text, so every type round-trips exactly (microseconds, floats).
 */
export function compileKeyset (ctx: QueryContext, query: ListQuery, after: ReadonlyArray<string | null> | null, limit: number): KeysetStatement {
  const nulls = after === null ? 'first' : after.map((v) => v === null ? 'n' : 'v').join('')
  const key = `keyset|${nulls}|${listKey(query)}`
  const { text, shape, params } = keysetCache(ctx, key, () => {
    const params = new Params<Keyset>()
    const { list, shape, joins, order, filter, from } = listParts(ctx, query, params)
    const columns = query.order.map((o) => sortKey(ctx.table, o.field, joins, params))
    const keys = columns.map((c, i) => `${c}::text AS ${sortKeyAlias(i)}`).join(', ')
    let seek = ''
    if (after !== null) {
      // Values are fetched by position; NULL ones have no parameter.
      const value = (i: number): string => params.add((input) => input.after[i])
      const branches = columns.map((column, i) => {
        const descending = query.order[i]!.descending
        // Nothing sorts after a NULL ascending (NULLs last): no branch, and no parameter left unused.
        if (after[i] === null && !descending) return null
        const equal = columns.slice(0, i).map((c, j) => after[j] === null ? `${c} IS NULL` : `${c} = ${value(j)}`)
        const beyond = after[i] === null
          ? `${column} IS NOT NULL`
          : (descending ? `${column} < ${value(i)}` : `(${column} > ${value(i)} OR ${column} IS NULL)`)
        return [...equal, beyond].join(' AND ')
      }).filter((b): b is string => b !== null)
      const predicate = branches.length === 0 ? 'FALSE' : branches.map((b) => `(${b})`).join(' OR ')
      seek = `${filter === '' ? ' WHERE' : ' AND'} (${predicate})`
    }
    const text = `SELECT ${list}, ${keys} FROM ${from}${joins}${filter}${seek} ORDER BY ${order} LIMIT ${params.add((input) => input.limit)}`
    return { text, shape, params }
  })
  return Object.freeze({ text, values: params.values({ filters: query.filters, after: (after ?? []) as string[], limit, embeds: query.embeds }, ctx.scopes), shape, keys: query.order.length, plan: pagePlan(query.filters) })
}

/**
 * Streaming export (SPEC §7.5): every row matching the filters in the query's order, capped at
 * `limit` rows when the table sets `maxExportRows`.
 */
export function compileExport (ctx: QueryContext, query: ListQuery, limit: number | null): SelectStatement {
  const key = `export|${limit === null}|${listKey(query)}`
  const { text, shape, params } = listCache(ctx, key, () => {
    const params = new Params<Page>()
    const { list, shape, joins, order, filter, from } = listParts(ctx, query, params)
    const cap = limit === null ? '' : ` LIMIT ${params.add((page) => page.limit)}`
    return { text: `SELECT ${list} FROM ${from}${joins}${filter} ORDER BY ${order}${cap}`, shape, params }
  })
  return Object.freeze({ text, values: params.values({ filters: query.filters, limit: limit ?? 0, offset: 0, embeds: query.embeds }, ctx.scopes), shape })
}

function orderKey (order: ListQuery['order']): string {
  return order.map((o) => (o.descending ? '-' : '') + o.field.name).join(',')
}

/** GET `/count/`, and the total of an empty page. */
export function compileCount (ctx: QueryContext, filters: readonly Filter[]): Statement {
  const { text, params } = countCache(ctx, `count|${filtersKey(filters)}`, () => {
    const params = new Params<readonly Filter[]>()
    const rows = new ScopedRows(ctx.scopes, params.scoped)
    const text = `SELECT count(*) AS count FROM ${rows.from(ctx.table, 't0')}${where(params, rows, filters, (f) => f)}`
    return { text, shape: NO_SHAPE, params }
  })
  return Object.freeze({ text, values: params.values(filters, ctx.scopes) })
}

/** GET `/:id/`. */
export function compileSingle (ctx: QueryContext, id: unknown, query: SingleQuery): SelectStatement {
  const embeds = query.embeds ?? NO_EMBED_CONTROLS
  const { text, shape, params } = singleCache(ctx, `single|${fieldsKey(query.fields, query.readable)}|${embedsKey(embeds)}`, () => {
    const params = new Params<{ readonly key: unknown, readonly filters: readonly Filter[], readonly embeds: EmbedControls }>()
    const rows = new ScopedRows(ctx.scopes, params.scoped)
    const joins = new Joins(rows)
    // Filters are ignored on GET `/:id/` (SPEC §2.4): embeds list every related row.
    const scope = new EmbedScope(params, rows, [], filtersOf, embeds, controlsOf, ctx.maxEmbedRows)
    const { list, shape } = selectList(ctx, query.fields, query.readable, joins, scope)
    const text = `SELECT ${list} FROM ${rows.from(ctx.table, 't0')}${joins} WHERE t0.${quoteIdent(ctx.table.primaryKey.name)} = ${params.add((input) => input.key)}`
    return { text, shape, params }
  })
  return Object.freeze({ text, values: params.values({ key: id, filters: [], embeds }, ctx.scopes), shape })
}

/** GET `/ids/`: ids and readable representations, searched case-insensitively, in key order. */
export function compileIds (ctx: QueryContext, query: IdsQuery): Statement {
  const values = new Values(ctx.scopes)
  const pk = `t0.${quoteIdent(ctx.table.primaryKey.name)}`
  const readable = readableSql(ctx.table.readable, 't0')
  const from = new ScopedRows(ctx.scopes, values.scoped).from(ctx.table, 't0')
  const search = whereOf(query.search === null ? [] : [`${readable} ILIKE ${values.add(`%${likeEscape(query.search)}%`)}`])
  const text = `SELECT ${pk} AS id, ${readable} AS readable FROM ${from}${search} ORDER BY ${pk} LIMIT ${values.add(query.limit)} OFFSET ${values.add(query.offset)}`
  return Object.freeze({ text, values: values.list })
}

const returningLists = perTable<boolean, string>()

/**
 * The columns a write returns: the row as GET `/:id/` gives it without fields asked for. Kept
 * per table: a POST profile spent 7 µs a request writing it anew.
 */
export function returningList (table: Table, excludeSecrets: boolean): string {
  return returningLists(table, excludeSecrets, () => visibleColumns(table, excludeSecrets).map((c) => quoteIdent(c.name)).join(', '))
}

/** The value of a shape's i-th column in a row from pg, an embed's in wire form. */
export function cellOf (row: Record<string, unknown>, shape: Shape, i: number): unknown {
  const value = row[shape.aliases[i]!]
  const source = shape.sources[i]!
  return isEmbed(source) && source.convert !== null ? source.convert(value) : value
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
    target[path[path.length - 1]!] = cellOf(row, shape, i)
  })
  return out
}
