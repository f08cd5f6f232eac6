import type { Aggregate, AggregateQuery, GroupKey, Output } from '../query/aggregate.js'
import type { Filter, FilterTree, QueryContext } from '../query/parse.js'
import { filtersKey } from '../query/filter.js'
import { forwardOf } from '../table/relations.js'
import { targetOf } from '../table/table.js'
import type { Statement } from '../table/statement.js'
import { quoteIdent, quoteLiteral } from './identifier.js'
import { Params } from './params.js'
import { relatedRows } from './related.js'
import { Joins, NO_SHAPE, readableSql, shapeCache, TOTAL } from './select.js'
import { ScopedRows } from './scope.js'
import { where } from './where.js'

/*
 * GET `/aggregate/` (SPEC §8.3) in one statement: the rows filtered (WHERE) and grouped in a
 * subquery whose columns are the outputs by alias, then `__having` as a WHERE over those
 * columns, the order, and the page. The text depends on the query's structure only; values,
 * the page and its size are parameters.
 */

/** An aggregate statement: its rows hold each output at its alias (and the total when asked for). */
export interface AggregateStatement extends Statement {
  readonly offset: number
  /**
   * True when the rows hold each output under its wire name, so pg's rows are the response
   * rows; false when a name passes PostgreSQL's 63-byte limit and rows hold the aliases.
   */
  readonly named: boolean
}

interface Input { readonly filters: readonly Filter[], readonly having: readonly FilterTree[], readonly limit: number, readonly offset: number }

const pageCache = shapeCache<Input>()

/** The SQL of an aggregate; the field's column on its join, or every row for `count`. */
function aggregateSql (aggregate: Aggregate, joins: Joins): string {
  const { fn, field, kind } = aggregate
  if (field === null) return 'count(*)'
  const column = `${joins.alias(field.joins)}.${quoteIdent(field.column.name)}`
  const sql = fn === 'count_distinct' ? `count(DISTINCT ${column})` : `${fn}(${column})`
  // avg and sum of integers and floats go out as JSON numbers: a float8 says so to pg.
  return kind === 'float' ? `(${sql})::float8` : sql
}

/**
 * A group key's SQL: its column, truncated as asked. A timestamptz is truncated in UTC, not
 * in the session's zone; a truncated date stays a date.
 */
function groupSql (group: GroupKey, joins: Joins): string {
  const column = `${joins.alias(group.field.joins)}.${quoteIdent(group.field.column.name)}`
  if (group.truncate === null) return column
  const unit = quoteLiteral(group.truncate)
  switch (group.field.column.type) {
    case 'timestamptz': return `date_trunc(${unit}, ${column}, 'UTC')`
    case 'date': return `date_trunc(${unit}, ${column})::date`
    default: return `date_trunc(${unit}, ${column})`
  }
}

/**
 * The readable representation of the row a ForeignKey group key points at (SPEC §2.12), NULL
 * for none, read through `relatedRows` like every join, so a row scope applies here too.
 */
function readableOf (group: GroupKey, joins: Joins, rows: ScopedRows, index: number): string {
  const { table, column } = group.field
  const target = targetOf(table, column)
  const alias = `x${index}`
  const { from, on } = relatedRows(forwardOf(table, column), joins.alias(group.field.joins), alias, rows)
  return `(SELECT ${readableSql(target.readable, alias)} FROM ${from} WHERE ${on})`
}

/** The grouped rows, each output at its alias, with the WHERE of the filters. */
function grouped (ctx: QueryContext, query: AggregateQuery, params: Params<Input>, rows: ScopedRows): string {
  const joins = new Joins(rows)
  const list: string[] = []
  const keys: string[] = []
  query.groups.forEach((group, i) => {
    const key = groupSql(group, joins)
    keys.push(key)
    list.push(`${key} AS ${quoteIdent(group.alias)}`)
    if (group.readable !== null) list.push(`${readableOf(group, joins, rows, i)} AS ${quoteIdent(group.readable.alias)}`)
  })
  for (const aggregate of query.aggregates) list.push(`${aggregateSql(aggregate, joins)} AS ${quoteIdent(aggregate.alias)}`)
  const filter = where(params, rows, query.filters, (input) => input.filters)
  const groupBy = keys.length === 0 ? '' : ` GROUP BY ${keys.join(', ')}`
  return `SELECT ${list.join(', ')} FROM ${rows.from(ctx.table, 't0')}${joins}${filter}${groupBy}`
}

/**
 * What makes each output's SQL: its field's path and truncation or function, not its name, which
 * a column and a path may share (`maker_code`, `maker.code`) in two queries.
 */
const groupsKey = (groups: readonly GroupKey[]): string => groups.map((g) => `${g.field.name}:${g.truncate ?? ''}`).join(',')
const aggregatesKey = (aggregates: readonly Aggregate[]): string => aggregates.map((a) => `${a.fn}(${a.field?.name ?? ''})`).join(',')

/** Whether every output's wire name fits PostgreSQL's 63 bytes, so the rows can hold the outputs under them. */
const fitsNames = (outputs: readonly Output[]): boolean => outputs.every((o) => Buffer.byteLength(o.name) <= 63)

/** What makes the text: outputs, filters, having trees, order (never values). */
function aggregateKey (query: AggregateQuery): string {
  const order = query.order.map((o) => (o.descending ? '-' : '') + o.output.alias).join(',')
  return `${groupsKey(query.groups)}|${query.readable}|${aggregatesKey(query.aggregates)}|${filtersKey(query.filters)}|${filtersKey(query.having)}|${order}`
}

/** One page of groups, with the number of groups as `__total` when `withTotal`. */
export function compileAggregate (ctx: QueryContext, query: AggregateQuery, withTotal: boolean): AggregateStatement {
  const named = fitsNames(query.outputs)
  const { text, params } = pageCache(ctx, `aggregate|${withTotal}|${aggregateKey(query)}`, () => {
    // Each output under its wire name, unless one is too long for PostgreSQL.
    const outer = named ? query.outputs.map((o) => `t0.${quoteIdent(o.alias)} AS ${quoteIdent(o.name)}`).join(', ') : 't0.*'
    const params = new Params<Input>()
    const rows = new ScopedRows(ctx.scopes, params.scoped)
    const inner = grouped(ctx, query, params, rows)
    const having = where(params, rows, query.having, (input) => input.having)
    const order = query.order.length === 0 ? '' : ` ORDER BY ${query.order.map((o) => `t0.${quoteIdent(o.output.alias)} ${o.descending ? 'DESC' : 'ASC'}`).join(', ')}`
    const total = withTotal ? `, count(*) OVER () AS ${TOTAL}` : ''
    const page = ` LIMIT ${params.add((input) => input.limit)} OFFSET ${params.add((input) => input.offset)}`
    return { text: `SELECT ${outer}${total} FROM (${inner}) AS t0${having}${order}${page}`, shape: NO_SHAPE, params }
  })
  const offset = (query.page - 1) * query.pageSize
  return Object.freeze({ text, values: params.values({ filters: query.filters, having: query.having, limit: query.pageSize, offset }, ctx.scopes), offset, named, plan: 'custom' as const })
}

/** The number of groups an aggregate query has, for the total of an empty page. */
export function compileAggregateCount (ctx: QueryContext, query: AggregateQuery): Statement {
  const { text, params } = pageCache(ctx, `aggregate-count|${aggregateKey(query)}`, () => {
    const params = new Params<Input>()
    const rows = new ScopedRows(ctx.scopes, params.scoped)
    const inner = grouped(ctx, query, params, rows)
    const having = where(params, rows, query.having, (input) => input.having)
    return { text: `SELECT count(*) AS count FROM (${inner}) AS t0${having}`, shape: NO_SHAPE, params }
  })
  return Object.freeze({ text, values: params.values({ filters: query.filters, having: query.having, limit: 0, offset: 0 }, ctx.scopes), plan: 'custom' as const })
}
