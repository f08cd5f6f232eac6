import { TABLECRUD_ERR_QS_INVALID_EMBED_PAGE_SIZE, TABLECRUD_ERR_QS_REPEATED, TABLECRUD_ERR_QS_UNKNOWN_FIELD, withBody } from '../errors.js'
import { relationsOf, type Relation } from '../table/relations.js'
import { visibleColumns, type Table } from '../table/table.js'
import { parseInteger } from '../values/index.js'
import { visibleRelation, type FieldPath } from './fields.js'

/*
 * Embeds (SPEC §8.1): `__visible_fields` naming a path through a reverse or many-to-many
 * relation gives that relation's rows as an array, ordered and capped per embed by the dotted
 * control parameters `<path>.__order` and `<path>.__page_size`.
 */

/** A sort key of an embed: one of the embedded table's own columns. */
export interface EmbedOrder {
  readonly field: FieldPath
  readonly descending: boolean
}

/** What a request says about one embed; what it leaves out takes the defaults. */
export interface EmbedControl {
  /** The sort keys asked for, or null for the related table's primary key descending. */
  readonly order: readonly EmbedOrder[] | null
  /** Rows per parent, or null for `maxEmbedRows`. */
  readonly pageSize: number | null
}

/** The controls of a request, by embed path (`films`, `films.genres`). */
export type EmbedControls = ReadonlyMap<string, EmbedControl>

export const NO_EMBED_CONTROLS: EmbedControls = new Map()

const CONTROL = /^(.+)\.(__order|__page_size)$/

/** Whether a query key is an embed's control parameter (passed over by the filter parser). */
export function isEmbedControl (key: string): boolean {
  return CONTROL.test(key)
}

/** Where an embed sits: the relations from the table to it, the last one to-many. */
export interface EmbedPath {
  readonly name: string
  readonly joins: readonly Relation[]
}

/**
 * Every path a field may be embedded through, in the order of `fields`: each prefix of a field's
 * joins that ends with a to-many relation.
 */
export function embedPaths (fields: Iterable<FieldPath>): ReadonlyMap<string, EmbedPath> {
  const out = new Map<string, EmbedPath>()
  for (const field of fields) {
    field.joins.forEach((relation, i) => {
      if (!relation.many) return
      const joins = field.joins.slice(0, i + 1)
      const name = joins.map((j) => j.name).join('.')
      if (!out.has(name)) out.set(name, { name, joins })
    })
  }
  return out
}

/**
 * The embed path a field goes through (`films` for `films.year`, `director.films` for
 * `director.films.year`), or null when it reaches one row: what `__order` (and any other
 * parameter that wants one value per row) refuses.
 */
export function toManyPath (field: FieldPath): { readonly relation: string, readonly path: string } | null {
  const many = field.joins.findIndex((j) => j.many)
  if (many < 0) return null
  return { relation: field.joins[many]!.name, path: field.joins.slice(0, many + 1).map((j) => j.name).join('.') }
}

/** What the parser of the controls needs from the TableCRUD context. */
export interface EmbedContext {
  readonly fields: ReadonlyMap<string, FieldPath>
  readonly embeds: ReadonlyMap<string, EmbedPath>
  readonly maxEmbedRows: number
}

type Raw = Record<string, string | string[] | undefined>

function unknown (name: string, validFields: readonly string[]): Error {
  return withBody(new TABLECRUD_ERR_QS_UNKNOWN_FIELD(name, ` Valid names: ${validFields.join(', ')}.`), { validFields })
}

/** `films.__order=-year,title`: the embedded table's own columns, `-` for descending. */
function parseOrder (ctx: EmbedContext, path: EmbedPath, texts: readonly string[]): EmbedOrder[] {
  const own = [...ctx.fields.values()].filter((f) => f.joins.length === path.joins.length && f.name.startsWith(`${path.name}.`))
  const order: EmbedOrder[] = []
  for (const item of texts.flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '')) {
    const descending = item.startsWith('-')
    const name = `${path.name}.${descending ? item.slice(1) : item}`
    const field = own.find((f) => f.name === name)
    if (field === undefined) throw unknown(name, own.map((f) => f.name))
    order.push({ field, descending })
  }
  return order
}

function parsePageSize (ctx: EmbedContext, key: string, texts: readonly string[]): number {
  if (texts.length > 1) throw new TABLECRUD_ERR_QS_REPEATED(key)
  const n = parseInteger(texts[0]!)
  if (n === undefined || n < 1 || n > ctx.maxEmbedRows) throw new TABLECRUD_ERR_QS_INVALID_EMBED_PAGE_SIZE(key, ctx.maxEmbedRows)
  return n
}

/**
 * The embed controls of a query string. A path that is no embed of this table (unknown, secret,
 * to-one, past `maxJoins`) is a 400 naming the parameter; so is a bad sort key or page size.
 * A control of an embed the request does not ask for is accepted and has no effect.
 */
export function parseEmbedControls (ctx: EmbedContext, raw: Raw): EmbedControls {
  const out = new Map<string, { order: EmbedOrder[] | null, pageSize: number | null }>()
  for (const key of Object.keys(raw)) {
    const match = CONTROL.exec(key)
    if (match === null) continue
    const path = ctx.embeds.get(match[1]!)
    if (path === undefined) throw unknown(key, [...ctx.embeds.keys()].flatMap((p) => [`${p}.__order`, `${p}.__page_size`]))
    const value = raw[key]
    const texts = Array.isArray(value) ? value : [String(value)]
    const control = out.get(path.name) ?? { order: null, pageSize: null }
    if (match[2] === '__order') control.order = parseOrder(ctx, path, texts)
    else control.pageSize = parsePageSize(ctx, key, texts)
    out.set(path.name, control)
  }
  // Most queries have none: the shared empty map, not one per request.
  return out.size === 0 ? NO_EMBED_CONTROLS : out
}

/** What of the controls makes a statement's text: the sort keys (page sizes are bound values). */
export function embedsKey (controls: EmbedControls): string {
  if (controls.size === 0) return ''
  return [...controls].filter(([, c]) => c.order !== null)
    .map(([path, c]) => `${path}:${c.order!.map((o) => (o.descending ? '-' : '') + o.field.name).join(',')}`).sort().join(';')
}

/**
 * Whether `name` is a path of `table`'s relations to one of their columns that only `maxJoins`
 * keeps out: that is a 400 `Max join depth exceeded`, not an unknown field. Relations are
 * looked up as a context with deeper joins would; a definition clash means no such path.
 */
export function pathPastMaxJoins (table: Table, name: string, excludeSecrets: boolean): boolean {
  const parts = name.split('.')
  let current = table
  try {
    for (const part of parts.slice(0, -1)) {
      const relation = relationsOf(current).get(part)
      if (relation === undefined || !visibleRelation(relation, excludeSecrets)) return false
      current = relation.to
    }
  } catch {
    return false
  }
  return parts.length > 1 && visibleColumns(current, excludeSecrets).some((c) => c.name === parts[parts.length - 1])
}
