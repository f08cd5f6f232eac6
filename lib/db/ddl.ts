import { quoteIdent, quoteLiteral } from '../sql/identifier.js'
import { scalarOf, dimensions, type ColumnSpec } from '../table/column.js'
import { targetOf, type Table, type TableColumn } from '../table/table.js'
import { parseNumeric, parseTimestamp } from '../values/index.js'

/** Anything with pg's `query(text)`: a Pool, a client or `fastify.pg` (SPEC §6.23). */
export interface Queryable {
  query: (text: string, values?: unknown[]) => Promise<unknown>
}

const SCALAR_TYPES: Record<string, (c: ColumnSpec) => string> = {
  serial: () => 'serial',
  integer: () => 'integer',
  real: () => 'real',
  numeric: (c) => `numeric(${c.digits![0]}, ${c.digits![1]})`,
  boolean: () => 'boolean',
  varchar: (c) => `varchar(${c.length})`,
  text: () => 'text',
  email: () => 'text',
  timestamp: () => 'timestamp'
}

/** The SQL type of a column; a ForeignKey takes its target key's type (a Serial as integer). */
export function sqlType (table: Table, column: TableColumn): string {
  if (column.type === 'foreignKey') {
    const key = targetOf(table, column).primaryKey
    return key.type === 'serial' ? 'integer' : SCALAR_TYPES[key.type]!(key)
  }
  return SCALAR_TYPES[scalarOf(column).type]!(scalarOf(column)) + '[]'.repeat(dimensions(column))
}

/** The `now` default of a timestamp, in UTC like every timestamp this library writes. */
const NOW = "(now() AT TIME ZONE 'utc')"

/** The default a NOT NULL column gets when none is declared (SPEC §6.2). */
function typeDefault (column: ColumnSpec): string | null {
  switch (column.type) {
    case 'varchar': case 'text': return "''"
    case 'integer': case 'real': case 'numeric': return '0'
    case 'boolean': return 'false'
    case 'timestamp': return NOW
    case 'array': return "'{}'"
    default: return null
  }
}

/** A declared default as a SQL literal; the value comes from code, never from a request. */
function literal (column: ColumnSpec, value: unknown, where: string): string {
  if (value === null) return 'NULL'
  switch (column.type) {
    case 'integer': case 'real':
      if (typeof value === 'number' && Number.isFinite(value)) return String(value)
      break
    case 'numeric': {
      const text = parseNumeric(value, column.digits![0], column.digits![1])
      if (text !== undefined) return text
      break
    }
    case 'boolean':
      if (typeof value === 'boolean') return String(value)
      break
    case 'varchar': case 'text': case 'email':
      if (typeof value === 'string') return quoteLiteral(value)
      break
    case 'timestamp':
      if (value === 'now') return NOW
      if (typeof value === 'string' && parseTimestamp(value) !== undefined) return quoteLiteral(parseTimestamp(value)!)
      break
    case 'array':
      if (Array.isArray(value)) return `ARRAY[${value.map((v) => literal(column.element!, v, where)).join(', ')}]`
      break
  }
  throw new Error(`${where}: the default ${JSON.stringify(value)} does not fit the column's type (${column.type})`)
}

function columnDefault (table: Table, column: TableColumn): string | null {
  if (column.hasDefault) {
    const value = literal(column, column.default, `Table ${table.name}, column ${column.name}`)
    // An empty ARRAY[] has no element type; an empty array literal takes the column's.
    return value === 'ARRAY[]' ? "'{}'" : value
  }
  return column.nullable || column.primaryKey ? null : typeDefault(column)
}

function foreignKeyClause (table: Table, column: TableColumn): string {
  const target = targetOf(table, column)
  return `REFERENCES ${quoteIdent(target.name)} (${quoteIdent(target.primaryKey.name)}) ON DELETE ${column.onDelete!.toUpperCase()}`
}

function columnDefinition (table: Table, column: TableColumn, inlineForeignKey: boolean): string {
  const parts = [quoteIdent(column.name), sqlType(table, column)]
  if (column.primaryKey) parts.push('PRIMARY KEY')
  else if (!column.nullable) parts.push('NOT NULL')
  const fallback = columnDefault(table, column)
  if (fallback !== null) parts.push(`DEFAULT ${fallback}`)
  if (column.unique && !column.primaryKey) parts.push('UNIQUE')
  if (column.type === 'foreignKey' && inlineForeignKey) parts.push(foreignKeyClause(table, column))
  return parts.join(' ')
}

/**
 * Orders tables so each comes after the tables its ForeignKeys point at. A ForeignKey that
 * points forward (a cycle) is returned apart, to be added once every table exists.
 */
function plan (tables: readonly Table[]): { order: Table[], deferred: Array<[Table, TableColumn]> } {
  const given = new Set(tables)
  const order: Table[] = []
  const state = new Map<Table, 'visiting' | 'done'>()
  const deferred: Array<[Table, TableColumn]> = []
  const visit = (table: Table): void => {
    state.set(table, 'visiting')
    for (const column of table.columns) {
      if (column.type !== 'foreignKey') continue
      const target = targetOf(table, column)
      if (target === table || !given.has(target)) continue
      const seen = state.get(target)
      if (seen === 'visiting') deferred.push([table, column])
      else if (seen === undefined) visit(target)
    }
    state.set(table, 'done')
    order.push(table)
  }
  for (const table of tables) if (!state.has(table)) visit(table)
  return { order, deferred }
}

/** The DDL of `createTables`, as one script. */
export function createTablesSql (tables: readonly Table[]): string {
  const { order, deferred } = plan(tables)
  const isDeferred = (t: Table, c: TableColumn): boolean => deferred.some(([dt, dc]) => dt === t && dc === c)
  const statements: string[] = []
  for (const table of order) {
    const columns = table.columns.map((c) => columnDefinition(table, c, !isDeferred(table, c)))
    statements.push(`CREATE TABLE IF NOT EXISTS ${quoteIdent(table.name)} (\n  ${columns.join(',\n  ')}\n)`)
    for (const column of table.columns) {
      if (column.index && !column.primaryKey && !column.unique) {
        statements.push(`CREATE INDEX IF NOT EXISTS ${quoteIdent(`${table.name}_${column.name}_idx`)} ON ${quoteIdent(table.name)} (${quoteIdent(column.name)})`)
      }
    }
  }
  for (const [table, column] of deferred) {
    const name = quoteIdent(`${table.name}_${column.name}_fkey`)
    // ADD CONSTRAINT has no IF NOT EXISTS: a second run finds it there and moves on.
    statements.push(`DO $$ BEGIN ALTER TABLE ${quoteIdent(table.name)} ADD CONSTRAINT ${name} FOREIGN KEY (${quoteIdent(column.name)}) ${foreignKeyClause(table, column)}; EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
  }
  return statements.join(';\n') + ';'
}

/**
 * Creates the tables that do not exist yet, in foreign-key order, in one statement batch (so
 * in one implicit transaction).
 * @example await createTables(app.pg, [userTable, director, movie])
 */
export async function createTables (db: Queryable, tables: readonly Table[]): Promise<void> {
  await db.query(createTablesSql(tables))
}

/**
 * Drops the tables (and what depends on them) if they exist.
 * @example await dropTables(app.pg, [movie, director])
 */
export async function dropTables (db: Queryable, tables: readonly Table[]): Promise<void> {
  if (tables.length === 0) return
  await db.query(`DROP TABLE IF EXISTS ${tables.map((t) => quoteIdent(t.name)).join(', ')} CASCADE`)
}
