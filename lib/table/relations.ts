import { allTables, DefinitionError, tablesDefined, targetOf, type Table, type TableColumn } from './table.js'

/*
 * Relations (SPEC §8.1): the hops a path may take from a table. A ForeignKey leads forward to
 * one row; every ForeignKey pointing at a table gives that table a reverse relation to many
 * rows; a junction gives each of its two sides a many-to-many relation to the other. Reverse
 * and many-to-many relations are found among every table defined in the process (as
 * `/references/` is), once all of them exist: ForeignKey thunks resolve late.
 */

export type RelationKind = 'forward' | 'reverse' | 'junction'

export interface Relation {
  /** The path segment: the ForeignKey's name, or the relation's. */
  readonly name: string
  readonly kind: RelationKind
  /** The table the hop leaves from, and the one whose rows it reaches. */
  readonly from: Table
  readonly to: Table
  /** Whether it reaches many rows (reverse and many-to-many). */
  readonly many: boolean
  /**
   * The ForeignKey followed: forward, `from`'s own; reverse, `to`'s key pointing at `from`;
   * many-to-many, the junction's key pointing at `from`.
   */
  readonly column: TableColumn
  /** Many-to-many only: the junction table and its key pointing at `to`. */
  readonly junction: { readonly table: Table, readonly far: TableColumn } | null
}

/** A ForeignKey of `table`, as a forward hop. */
export function forwardOf (table: Table, column: TableColumn): Relation {
  return Object.freeze({ name: column.name, kind: 'forward', from: table, to: targetOf(table, column), many: false, column, junction: null })
}

function forward (table: Table): Relation[] {
  return table.columns.filter((c) => c.type === 'foreignKey').map((column) => forwardOf(table, column))
}

/** Where a relation name comes from, for the message of a clash, with the option that renames it. */
function origin (relation: Relation): string {
  if (relation.junction === null) return `the foreign key ${relation.to.name}.${relation.column.name} (rename it with its option related: '<name>')`
  const junction = relation.junction.table
  const [first, second] = junction.junction!.keys.map((key) => targetOf(junction, key).name)
  return `the junction ${junction.name} (rename it with its option junction: { related: ['<name on ${first!}>', '<name on ${second!}>'] })`
}

/** Every reverse and many-to-many relation leading from `table`, unchecked. */
function inbound (table: Table): Relation[] {
  const out: Relation[] = []
  for (const other of allTables()) {
    for (const column of other.columns) {
      if (column.type !== 'foreignKey' || resolve(other, column) !== table) continue
      out.push(Object.freeze({ name: column.related ?? other.name, kind: 'reverse', from: table, to: other, many: true, column, junction: null }))
      const junction = other.junction
      if (junction === null) continue
      const side = junction.keys.indexOf(column)
      const far = junction.keys[1 - side]!
      const to = targetOf(other, far)
      out.push(Object.freeze({ name: junction.related[side] ?? to.name, kind: 'junction', from: table, to, many: true, column, junction: Object.freeze({ table: other, far }) }))
    }
  }
  return out
}

/** A ForeignKey's target, or undefined when its thunk does not resolve (it cannot point here, and must not break this). */
function resolve (table: Table, column: TableColumn): Table | undefined {
  try {
    return targetOf(table, column)
  } catch {
    return undefined
  }
}

/** Refuses two relations of one name, or one named like a column, naming both and the fix. */
function checkNames (table: Table, relations: readonly Relation[]): void {
  const seen = new Map<string, Relation>()
  // A ForeignKey's name is its column's: only the other relations can clash.
  for (const relation of relations.filter((r) => r.kind !== 'forward')) {
    if (table.columnMap.has(relation.name)) {
      throw new DefinitionError(table.name, null, `the relation "${relation.name}" from ${origin(relation)} has the name of the column ${table.name}.${relation.name}; rename the relation`)
    }
    const before = seen.get(relation.name)
    if (before !== undefined) {
      throw new DefinitionError(table.name, null, `two relations are named "${relation.name}": one from ${origin(before)}, one from ${origin(relation)}; give them distinct names`)
    }
    seen.set(relation.name, relation)
  }
}

/**
 * The hops from `table` without the check of their names: which tables a statement may reach,
 * for the scopes (plugins/crud/context.ts), which must not fail a mount that walks no relation
 * while two of them share a name (docs/table-crud.md).
 */
export function hopsOf (table: Table): Relation[] {
  return [...forward(table), ...inbound(table)]
}

const cache = new WeakMap<Table, { readonly count: number, readonly relations: ReadonlyMap<string, Relation> }>()

/**
 * The hops a path may take from `table`, by name: its ForeignKeys first, then its reverse and
 * many-to-many relations. Throws a TableDefinitionError naming the clash and its fix when two
 * relations share a name, or one has a column's. Kept until another table is defined.
 */
export function relationsOf (table: Table): ReadonlyMap<string, Relation> {
  const count = tablesDefined()
  const found = cache.get(table)
  if (found?.count === count) return found.relations
  const relations = hopsOf(table)
  checkNames(table, relations)
  const map = new Map(relations.map((r) => [r.name, r]))
  cache.set(table, { count, relations: map })
  return map
}
