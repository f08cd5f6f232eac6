import type { DbColumn, DbForeignKey, DbSchema, DbTable } from '../db/introspect.js'
import { typeOf } from '../table/column-types.js'
import { cutToBytes, MAX_IDENTIFIER_BYTES } from '../sql/identifier.js'
import { assignedOf, columnProblem, hasBlank, listItems, mapDefault, mapType, spec, valueOf, type Assigned, type MappedColumn, type Outcome } from './columns.js'
import { typeScript, variableName, writeColumn, type WrittenColumn } from './write.js'

/*
 * `fastify-tablecrud generate`: an existing schema -> TypeScript table definitions, and one
 * note per thing it could not carry over, saying why. Pure: lib/db/introspect.ts reads the
 * database. What it writes, `createTables` turns back into the same schema as far as
 * `checkTables` compares (types, nullability, defaults), and reading that back writes the
 * same file: choices become CHECK constraints and help texts comments (lib/db/ddl.ts).
 */

export interface GeneratedTables {
  /** The module: one `export const <table> = defineTable(...)` per table, then `tables`. */
  source: string
  /** What was left out or changed, one sentence each: `Column film.fulltext (tsvector): not generated, no column type is tsvector.` */
  notes: string[]
  /** The tables written, in the module's order. */
  tables: string[]
}

const ON_DELETE: Readonly<Record<string, string>> = { a: 'no action', r: 'restrict', c: 'cascade', n: 'set null', d: 'set default' }
const KINDS = { view: 'a view', 'materialized view': 'a materialized view', 'foreign table': 'a foreign table', 'partitioned table': 'a partitioned table' }

interface Key { column: DbColumn, mapped: MappedColumn }

/** The table's one key column and its type, or why the table cannot be defined. */
function keyOf (table: DbTable): Outcome<Key> {
  if (table.kind !== 'table') return { reason: `${KINDS[table.kind]} has no key a definition writes by: TableCRUD serves tables` }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table.name)) return { reason: 'its name is not an identifier a definition takes (letters, digits and _)' }
  if (table.primaryKey === null) return { reason: 'it has no primary key (a definition without one adds an id serial the table does not have)' }
  if (table.primaryKey.length > 1) return { reason: `its primary key (${table.primaryKey.join(', ')}) has ${table.primaryKey.length} columns: a definition's key is one column` }
  const column = table.columns.find((c) => c.name === table.primaryKey![0])!
  const mapped = mapType(column.type, column.enumLabels)
  const assigned = 'ok' in mapped ? assignedOf(column, mapped.ok, true) : null
  const problem = columnProblem(column) ?? ('reason' in mapped ? mapped.reason : null) ?? (assigned !== null && 'reason' in assigned ? assigned.reason : null) ??
    ('ok' in mapped && typeOf(spec(mapped.ok)).key === null ? `a ${column.type} cannot be a definition's key` : null)
  if (problem !== null) return { reason: `its key ${column.name} (${column.type}) cannot be mapped: ${problem}` }
  return { ok: { column, mapped: (mapped as { ok: MappedColumn }).ok } }
}

/** The choices a CHECK constraint lists for one column (`c IN ('a', 'b')`, as PostgreSQL writes it back), or null. */
export function checkChoices (definition: string): { column: string, items: Array<string | boolean> } | null {
  const m = /^CHECK \(\(\(?("(?:[^"]|"")+"|\w+)\)?(?:::[\w ]+)? = (?:ANY \(\(?ARRAY\[((?:'(?:[^']|'')*'|[^'\]])*)\]\)?(?:::[\w ]+\[\])?\)|(.*))\)\)$/.exec(definition)
  if (m === null) return null
  const items = listItems(m[2] ?? m[3]!)
  return items === undefined ? null : { column: m[1]!.replace(/^"(.*)"$/, '$1').replaceAll('""', '"'), items }
}

interface Context {
  table: DbTable
  keys: ReadonlyMap<string, Key>
  variables: ReadonlyMap<string, string>
  related: ReadonlyMap<DbColumn, string>
  notes: string[]
  choices: Map<string, Array<string | boolean>>
  chosen: Set<string>
}

interface Link { fk: DbForeignKey, target: Key | undefined, why: string | null }

/** The one-column foreign key of a column, its target's key, and why it is not kept (null: it is). */
function linkOf (keys: ReadonlyMap<string, Key>, table: DbTable, column: DbColumn): Link | undefined {
  const fk = table.foreignKeys.find((k) => k.columns.length === 1 && k.columns[0] === column.name)
  if (fk === undefined) return undefined
  const target = fk.table === null ? undefined : keys.get(fk.table)
  const why = fk.table === null
    ? 'its table is in another schema'
    : target === undefined
      ? `${fk.table} is not generated`
      : target.column.name !== fk.references[0] ? `it references ${fk.table}.${fk.references[0]!}, not the key` : target.column.type !== column.type ? `its type differs from ${fk.table}'s key (${target.column.type})` : null
  return { fk, target, why }
}

/** `wanted` as a relation name (SPEC §8.1: no `__`, 63 bytes at most) that `taken` has not, then taken. */
function freeName (wanted: string, taken: Set<string>): string {
  const one = (text: string): string => text.replaceAll(/_{2,}/g, '_')
  const base = cutToBytes(one(wanted), MAX_IDENTIFIER_BYTES)
  let name = base
  for (let n = 2; taken.has(name); n++) name = one(`${cutToBytes(base, MAX_IDENTIFIER_BYTES - 1 - String(n).length)}_${n}`)
  taken.add(name)
  return name
}

/**
 * The `related` name of each foreign key whose reverse relation would clash under the default
 * name, the referencing table's (SPEC §8.1): two from one table to the same table, or one named
 * like a column of its target (a self-reference named like its table). Each is named
 * `<table>_<column>`, made a relation name (`freeName`), so that the module can be mounted with
 * joins as written.
 */
function relatedNames (tables: readonly DbTable[], keys: ReadonlyMap<string, Key>): Map<DbColumn, string> {
  const inbound = new Map<string, Array<{ table: DbTable, column: DbColumn }>>()
  for (const table of tables) {
    for (const column of table.columns) {
      const link = linkOf(keys, table, column)
      if (column.name === table.primaryKey![0] || columnProblem(column) !== null || link === undefined || link.why !== null) continue
      const target = link.fk.table!
      inbound.set(target, [...inbound.get(target) ?? [], { table, column }])
    }
  }
  const names = new Map<DbColumn, string>()
  for (const [target, links] of inbound) {
    const columns = tables.find((t) => t.name === target)!.columns
    const clashes = ({ table }: { table: DbTable }): boolean => links.filter((l) => l.table === table).length > 1 || columns.some((c) => c.name === table.name)
    // Taken: the target's columns, and the relations that keep their default names.
    const taken = new Set([...columns.map((c) => c.name), ...links.filter((l) => !clashes(l)).map((l) => l.table.name)])
    for (const link of links.filter(clashes)) names.set(link.column, freeName(`${link.table.name}_${link.column.name}`, taken))
  }
  return names
}

/** The foreign key a column is, when its target is written too and it points at that key; else a note. */
function foreignKeyOf (ctx: Context, column: DbColumn): WrittenColumn['foreignKey'] {
  const link = linkOf(ctx.keys, ctx.table, column)
  if (link === undefined) return undefined
  if (link.why !== null) {
    ctx.notes.push(`Column ${ctx.table.name}.${column.name}: its foreign key to ${link.fk.table ?? 'another schema'} is not kept (${link.why}); written as a plain column.`)
    return undefined
  }
  const target = link.target!
  const stringKey = typeOf(spec(target.mapped)).schema(spec(target.mapped), 'out').type === 'string'
  return { variable: ctx.variables.get(link.fk.table!)!, onDelete: ON_DELETE[link.fk.onDelete]!, stringKey, related: ctx.related.get(column) }
}

/** The options of a plain (not key, not foreign key) column that come from its constraints and default. */
function plainOptions (ctx: Context, column: DbColumn, mapped: MappedColumn): void {
  const where = `Column ${ctx.table.name}.${column.name}`
  const choices = ctx.choices.get(column.name)
  if (choices !== undefined && !mapped.options.has('choices')) {
    mapped.options.set('choices', choices.map((item) => valueOf(mapped, item)))
    ctx.chosen.add(column.name)
  }
  if (column.default !== null) {
    const value = mapDefault(mapped, column.default)
    if ('ok' in value) mapped.options.set('default', value.ok)
    else ctx.notes.push(`${where}: its default is not kept: ${value.reason}.`)
  } else if (column.notNull && hasBlank(mapped) && !mapped.options.has('choices')) {
    // NOT NULL without a default: without `default: null` createTables would write the type's ('' or 0).
    mapped.options.set('default', null)
  }
  if (column.notNull && column.default === null) mapped.options.set('required', true)
}

/** One column's line, or null with a note saying why it is left out. */
function columnLine (ctx: Context, column: DbColumn): string | null {
  const where = `Column ${ctx.table.name}.${column.name} (${column.type})`
  const isKey = ctx.table.primaryKey![0] === column.name
  const mapped = mapType(column.type, column.enumLabels)
  const assigned = 'ok' in mapped ? assignedOf(column, mapped.ok, isKey) : null
  const problem = columnProblem(column) ?? ('reason' in mapped ? mapped.reason : null) ?? (assigned !== null && 'reason' in assigned ? assigned.reason : null)
  if (problem !== null) {
    const inserts = column.notNull && column.default === null && column.identity === null ? ' It is NOT NULL without a default: inserts through the API fail.' : ''
    ctx.notes.push(`${where}: not generated, ${problem}.${inserts}`)
    return null
  }
  const ok = (mapped as { ok: MappedColumn }).ok
  const by = (assigned as { ok: Assigned | null }).ok
  // The key defineTable adds: an `id` serial.
  if (isKey && by?.type === 'serial' && by.identity === null && column.name === 'id') return null
  if (by !== null) ok.type = by.type
  const written: WrittenColumn = { name: column.name, mapped: ok, foreignKey: isKey ? undefined : foreignKeyOf(ctx, column) }
  if (isKey) {
    ok.options.set('primaryKey', true)
    if (by !== null && by.identity !== null) ok.options.set('identity', by.identity)
    const own = typeOf(spec(ok)).key!.sqlDefault
    if (by === null && column.default !== own) ctx.notes.push(`${where}: its default ${column.default ?? '(none)'} is not kept: a key of this type gets ${own ?? 'none'}.`)
  } else if (written.foreignKey !== undefined) {
    // The key's type is the target's: the builder takes no length or digits.
    ok.options.clear()
    if (column.notNull) ok.options.set('null', false)
    if (column.default !== null) ctx.notes.push(`${where}: its default is not kept: a foreign key takes none.`)
  } else if (by === null) {
    if (!column.notNull) ok.options.set('null', true)
    plainOptions(ctx, column, ok)
  }
  const unique = ctx.table.uniques.some((u) => u.length === 1 && u[0] === column.name)
  if (unique && !isKey) ok.options.set('unique', true)
  if (!unique && !isKey && ctx.table.indexes.some((i) => i.length === 1 && i[0] === column.name)) ok.options.set('index', true)
  if (column.comment !== null) ok.options.set('helpText', column.comment)
  return writeColumn(written)
}

/** The notes of a table's constraints and indexes that no column option holds. */
function constraintNotes (ctx: Context): void {
  const t = ctx.table.name
  const several = (cols: string[]): boolean => cols.length > 1
  for (const u of ctx.table.uniques.filter(several)) ctx.notes.push(`Table ${t}: unique (${u.join(', ')}) is not kept: a definition's unique is one column's. The database keeps enforcing it.`)
  for (const i of ctx.table.indexes.filter(several)) ctx.notes.push(`Table ${t}: the index on (${i.join(', ')}) is not kept: a definition's index is one column's.`)
  for (const i of ctx.table.otherIndexes) ctx.notes.push(`Table ${t}: ${i} is not kept: a definition's index is one plain column's.`)
  for (const fk of ctx.table.foreignKeys.filter((k) => several(k.columns))) {
    ctx.notes.push(`Table ${t}: the foreign key (${fk.columns.join(', ')}) is not kept: a definition's foreign key is one column.`)
  }
  for (const check of ctx.table.checks) {
    const choices = checkChoices(check.definition)
    if (choices === null || !ctx.chosen.has(choices.column)) ctx.notes.push(`Table ${t}: the check ${check.name}, ${check.definition}, is not kept: a definition turns only a column's list of values into choices.`)
  }
}

/** The choices each column's CHECK lists, for the columns that may have choices. */
function choicesOf (table: DbTable): Map<string, Array<string | boolean>> {
  const out = new Map<string, Array<string | boolean>>()
  for (const check of table.checks) {
    const found = checkChoices(check.definition)
    if (found !== null && !out.has(found.column)) out.set(found.column, found.items)
  }
  return out
}

/**
 * A note on one line, as docs/tables.md promises: a control character of a name, a default or
 * a constraint (a newline, an escape that would drive the terminal) written as JSON escapes it.
 */
function oneLine (note: string): string {
  return note.replaceAll(/[\p{Cc}\u2028\u2029]/gu, (c) => c < ' ' ? JSON.stringify(c).slice(1, -1) : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/**
 * Table definitions for a schema read by `readSchema`, and the notes of what they leave out.
 * @example const { source, notes } = generateTables(await readSchema(client))
 */
export function generateTables (schema: DbSchema): GeneratedTables {
  const notes: string[] = []
  const keys = new Map<string, Key>()
  for (const table of schema.tables) {
    const key = keyOf(table)
    if ('ok' in key) keys.set(table.name, key.ok)
    else notes.push(`${table.kind === 'table' ? 'Table' : table.kind[0]!.toUpperCase() + table.kind.slice(1)} ${table.name}: not generated, ${key.reason}.`)
  }
  const variables = new Map([...keys.keys()].map((name) => [name, variableName(name)]))
  const written = schema.tables.filter((t) => keys.has(t.name))
  const related = relatedNames(written, keys)
  const tables = written.map((table) => {
    const ctx: Context = { table, keys, variables, related, notes, choices: choicesOf(table), chosen: new Set() }
    const lines = table.columns.map((c) => columnLine(ctx, c)).filter((line) => line !== null)
    constraintNotes(ctx)
    return { name: table.name, variable: variables.get(table.name)!, comment: table.comment, lines }
  })
  return { source: typeScript(tables), notes: notes.map(oneLine), tables: tables.map((t) => t.name) }
}
