import { isColumnType, typeOf } from './column-types.js'
import { column as col, type AnyColumn, type Column, type ColumnSpec, type ValueOf, type WriteOf } from './column.js'
import { parseSearch, type Search, type SearchOptions } from './search.js'

export interface TableColumn extends ColumnSpec {
  readonly name: string
}

export interface Readable {
  /** `%s` placeholders, one per column. */
  readonly template: string
  readonly columns: readonly string[]
}

export interface TableOptions {
  /** How a row is shown to people: a column name, or a template over several columns. Default: the primary key. */
  readable?: string | { template: string, columns: string[] }
  helpText?: string
  /**
   * Marks a many-to-many junction (exactly two ForeignKeys): each side gets a relation to the
   * other (SPEC §8.1), named `related[0]` on the first ForeignKey's table and `related[1]` on
   * the second's; `true` names each after the other side's table.
   */
  junction?: true | { related: [string, string] }
  /** Full-text search over these text columns (SPEC §8.4): `__search`, and the GIN index `createTables` makes. */
  search?: SearchOptions
  /**
   * Row scope (SPEC §8.6): `(request) => conditions`, sync or async, applied wherever the table
   * is read or written: its own mounts, and every join, embed, path filter and `__readable`
   * that reaches it from another.
   */
  scope?: (request: any) => unknown
}

/** A junction's two ForeignKeys, in declaration order, and the relation name each side gets (null: the other table's name). */
export interface Junction {
  readonly keys: readonly [TableColumn, TableColumn]
  readonly related: readonly [string | null, string | null]
}

type HasPrimary<C> = true extends { [K in keyof C]: C[K] extends Column<any, any, true> ? true : false }[keyof C] ? true : false
export type WithPrimary<C> = HasPrimary<C> extends true ? C : { id: Column<number, false, true> } & C

export interface Table<C extends Record<string, AnyColumn> = Record<string, AnyColumn>> {
  readonly name: string
  /** Columns in declaration order, the added `id` first. */
  readonly columns: readonly TableColumn[]
  readonly columnMap: ReadonlyMap<string, TableColumn>
  readonly primaryKey: TableColumn
  readonly readable: Readable
  readonly helpText: string | null
  /** Set when the table is a many-to-many junction. */
  readonly junction: Junction | null
  /** Full-text search (SPEC §8.4), or null when the table has none. */
  readonly search: Search | null
  /** The row scope of the table's definition (SPEC §8.6), or null. */
  readonly scope: ((request: any) => unknown) | null
  /** Type-level only: the columns as declared. */
  readonly __columns?: C
}

/** The row type of a table: `RowOf<typeof movie>`. */
export type RowOf<T> = T extends Table<infer C> ? { [K in keyof C]: ValueOf<C[K]> } : never

/** The name of a table's primary key: `KeyOf<typeof movie>` is `'id'`. */
export type KeyOf<T> = T extends Table<infer C> ? { [K in keyof C]: C[K] extends Column<any, any, true, any> ? K : never }[keyof C] : never

/** The value of a table's primary key (`number` for the added `id`); a key of some table for `Table`. */
export type KeyValueOf<T> = [KeyOf<T>] extends [never] ? number | string : T extends Table<infer C> ? ValueOf<C[KeyOf<T>]> : never

/**
 * The row a `preSave` hook gets and returns: every column as the body gave it or as its default
 * (a Numeric may be a number, a NOT NULL column without a default null), the primary key
 * optional (absent on POST when the database assigns it).
 */
export type WriteRowOf<T> = T extends Table<infer C>
  ? Flat<{ [K in keyof C as K extends KeyOf<T> ? never : K]: WriteOf<C[K]> } & { [K in KeyOf<T>]?: ValueOf<C[K]> }>
  : never

/** One object type of an intersection, as editors show it. */
type Flat<O> = { [K in keyof O]: O[K] }

/** The values a `prePatch` hook gets and returns: some columns, never the primary key. */
export type PatchOf<T> = T extends Table<infer C> ? { [K in keyof C as K extends KeyOf<T> ? never : K]?: WriteOf<C[K]> } : never

/** Every table made by `defineTable` in this process, for `/references/` (SPEC §6.16). */
const registry = new Set<Table>()

export function allTables (): readonly Table[] {
  return [...registry]
}

/**
 * How many tables are defined: what a cache of what relations reach is kept by, as the count
 * only grows. Without allTables' copy, which the requests that read it paid for each time.
 */
export function tablesDefined (): number {
  return registry.size
}

export function isTable (value: unknown): value is Table {
  return registry.has(value as Table)
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

export class DefinitionError extends Error {
  constructor (table: string, column: string | null, message: string) {
    super(column === null ? `Table ${table}: ${message}` : `Table ${table}, column ${column}: ${message}`)
    this.name = 'TableDefinitionError'
  }
}

function checkIdentifier (table: string, column: string | null, name: string): void {
  if (!IDENTIFIER.test(name)) throw new DefinitionError(table, column, `"${name}" is not a valid identifier (letters, digits and _, not starting with a digit)`)
  if (Buffer.byteLength(name) > 63) throw new DefinitionError(table, column, `"${name}" is longer than PostgreSQL's 63-byte identifier limit`)
}

function checkColumn (table: string, name: string, spec: ColumnSpec, inArray = false): void {
  const fail = (message: string): never => { throw new DefinitionError(table, name, message) }
  if (typeof spec !== 'object' || spec === null || !isColumnType(spec.type)) fail('is not a column (use the column.* builders)')
  const type = typeOf(spec)
  const problem = type.check(spec, inArray)
  if (problem !== null) fail(problem)
  if (spec.type === 'foreignKey') {
    if (typeof spec.target !== 'function') fail('a foreign key needs a target table')
    if (spec.related != null) relationName(table, name, spec.related)
    // A table given directly can be checked now; a thunk waits for targetOf.
    if (spec.thunk === false && !isTable(spec.target!())) fail('the foreign key target is not a table made by defineTable')
  }
  if (spec.type === 'array') {
    if (spec.element === undefined) fail('an array needs an element column')
    checkColumn(table, name, spec.element!, true)
  }
  if (spec.primaryKey) {
    if (type.key === null) fail(`a ${spec.type} column cannot be the primary key`)
    if (spec.nullable) fail('the primary key cannot be nullable')
  }
}

/** A relation name (SPEC §8.1) is a wire name: an identifier, without the `__` of control parameters. */
function relationName (table: string, column: string | null, name: unknown): string {
  if (typeof name !== 'string') throw new DefinitionError(table, column, 'a relation name must be a string')
  checkIdentifier(table, column, name)
  if (name.includes('__')) throw new DefinitionError(table, column, `the relation name "${name}" holds "__", which is reserved for query operators`)
  return name
}

function parseJunction (table: string, columns: readonly TableColumn[], junction: TableOptions['junction']): Junction | null {
  if (junction === undefined) return null
  const keys = columns.filter((c) => c.type === 'foreignKey')
  if (keys.length !== 2) throw new DefinitionError(table, null, `a junction needs exactly two foreign keys; it has ${keys.length}`)
  const pair = [keys[0]!, keys[1]!] as const
  if (junction === true) return Object.freeze({ keys: pair, related: [null, null] as const })
  const related = (junction as { related?: unknown }).related
  if (!Array.isArray(related) || related.length !== 2) throw new DefinitionError(table, null, 'junction.related must be two relation names: [nameOnFirstSide, nameOnSecondSide]')
  return Object.freeze({ keys: pair, related: [relationName(table, null, related[0]), relationName(table, null, related[1])] as const })
}

function checkSearch (table: string, columns: ReadonlyMap<string, TableColumn>, option: TableOptions['search']): Search | null {
  if (option === undefined) return null
  const search = parseSearch(columns, option)
  if (typeof search === 'string') throw new DefinitionError(table, null, search)
  return search
}

function checkScope (table: string, scope: unknown): ((request: any) => unknown) | null {
  if (scope === undefined) return null
  if (typeof scope !== 'function') throw new DefinitionError(table, null, 'scope must be a function (request) => conditions')
  return scope as (request: any) => unknown
}

function parseReadable (table: string, columns: ReadonlyMap<string, TableColumn>, readable: TableOptions['readable'], primaryKey: string): Readable {
  const spec = readable === undefined
    ? { template: '%s', columns: [primaryKey] }
    : typeof readable === 'string' ? { template: '%s', columns: [readable] } : readable
  for (const name of spec.columns) {
    if (!columns.has(name)) throw new DefinitionError(table, null, `readable names "${name}", which is not a column`)
  }
  if (spec.template.split('%s').length - 1 !== spec.columns.length) {
    throw new DefinitionError(table, null, `the readable template has ${spec.template.split('%s').length - 1} %s for ${spec.columns.length} columns`)
  }
  return Object.freeze({ template: spec.template, columns: Object.freeze([...spec.columns]) })
}

/**
 * Defines a table. Column keys are the database column names and the wire names. A table
 * without a `primaryKey: true` column gets an `id` Serial. A bad definition throws here,
 * naming the table and column.
 * @example
 * const director = defineTable('director', {
 *   name: column.varchar({ length: 100, required: true, unique: true })
 * }, { readable: 'name', helpText: 'People who direct movies' })
 * type Director = RowOf<typeof director> // { id: number, name: string }
 */
export function defineTable<C extends Record<string, AnyColumn>> (name: string, columns: C, options: TableOptions = {}): Table<WithPrimary<C>> {
  checkIdentifier(name, null, name)
  const entries = Object.entries(columns)
  for (const [key, spec] of entries) {
    checkIdentifier(name, key, key)
    if (key.includes('__')) throw new DefinitionError(name, key, '"__" is reserved for query operators')
    checkColumn(name, key, spec)
  }
  const primaries = entries.filter(([, spec]) => spec.primaryKey)
  if (primaries.length > 1) throw new DefinitionError(name, null, `two primary keys: ${primaries.map(([k]) => k).join(', ')}`)
  if (primaries.length === 0) {
    if (Object.hasOwn(columns, 'id')) throw new DefinitionError(name, 'id', '"id" is the added primary key; mark a column primaryKey: true or rename it')
    entries.unshift(['id', col.serial({ primaryKey: true })])
  }
  const list = entries.map(([key, spec]) => Object.freeze({ ...spec, name: key }))
  const columnMap = new Map(list.map((c) => [c.name, c]))
  const primaryKey = list.find((c) => c.primaryKey)!
  const table: Table<WithPrimary<C>> = Object.freeze({
    name,
    columns: Object.freeze(list),
    columnMap,
    primaryKey,
    readable: parseReadable(name, columnMap, options.readable, primaryKey.name),
    helpText: options.helpText ?? null,
    junction: parseJunction(name, list, options.junction),
    search: checkSearch(name, columnMap, options.search),
    scope: checkScope(name, options.scope)
  })
  registry.add(table)
  return table
}

/** The table a column object belongs to: `defineTable` freezes a column object per table, so identity tells. */
export function tableOf (column: unknown): Table | undefined {
  for (const table of registry) if (table.columns.includes(column as TableColumn)) return table
  return undefined
}

/** The table a ForeignKey points at; checks a thunk's answer the first time it is asked. */
export function targetOf (table: Table, column: TableColumn): Table {
  const target = column.target!()
  if (!isTable(target)) throw new DefinitionError(table.name, column.name, 'the foreign key target is not a table made by defineTable')
  return target
}

/** The columns of `table` that a client may see while `excludeSecrets` is `exclude`. */
export function visibleColumns (table: Table, exclude: boolean): readonly TableColumn[] {
  return exclude ? table.columns.filter((c) => !c.secret) : table.columns
}

/**
 * Every ForeignKey of every defined table that points at `table` (SPEC §6.16). A table whose
 * thunk does not resolve is passed over: it cannot point here, and must not break this.
 */
export function referencesTo (table: Table): Array<{ tableName: string, columnName: string }> {
  const out: Array<{ tableName: string, columnName: string }> = []
  for (const other of allTables()) {
    for (const column of other.columns) {
      if (column.type !== 'foreignKey') continue
      let target: Table
      try {
        target = targetOf(other, column)
      } catch {
        continue
      }
      if (target === table) out.push({ tableName: other.name, columnName: column.name })
    }
  }
  return out
}
