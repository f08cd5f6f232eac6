import { objectName, quoteIdent, quoteLiteral } from '../sql/identifier.js'
import { searchIndexSql } from '../sql/search.js'
import { runnerOf, type DatabaseHandle } from './port.js'
import { setupError } from '../errors.js'
import type { ColumnSpec } from '../table/column.js'
import { sqlLiteral, typeOf } from '../table/column-types.js'
import { targetOf, type Table, type TableColumn } from '../table/table.js'

/** The SQL type of a column, from its type's descriptor (a ForeignKey takes its target key's type). */
export function sqlType (table: Table, column: TableColumn): string {
  // Resolving the target here checks a thunk's answer, with the table and column in the error.
  if (column.type === 'foreignKey') targetOf(table, column)
  return typeOf(column).sql(column)
}

/** A declared default as a SQL literal; the value comes from code, never from a request. */
function literal (column: ColumnSpec, value: unknown, where: string): string {
  const text = sqlLiteral(column, value)
  if (text === undefined) throw setupError(`${where}: the default ${JSON.stringify(value)} does not fit the column's type (${column.type})`)
  return text
}

/** The DEFAULT expression `createTables` writes for a column, or null. */
export function columnDefault (table: Table, column: TableColumn): string | null {
  if (column.hasDefault) {
    // No default at all: PostgreSQL would keep a typed NULL (`NULL::character varying`) as one.
    if (column.default === null) return null
    const value = literal(column, column.default, `Table ${table.name}, column ${column.name}`)
    // An empty ARRAY[] has no element type; an empty array literal takes the column's.
    return value === 'ARRAY[]' ? "'{}'" : value
  }
  if (column.primaryKey) return typeOf(column).key!.sqlDefault
  // A column with choices has no type default (SPEC §6.2): `''` is not one of its choices.
  return column.nullable || column.choices !== null ? null : typeOf(column).sqlBlank
}

/** `GENERATED ALWAYS AS IDENTITY` of a Serial or BigSerial with `identity`, or null: its place in DDL is a default's. */
export function identityClause (column: ColumnSpec): string | null {
  return column.identity === undefined ? null : `GENERATED ${column.identity.toUpperCase()} AS IDENTITY`
}

function foreignKeyClause (table: Table, column: TableColumn): string {
  const target = targetOf(table, column)
  return `REFERENCES ${quoteIdent(target.name)} (${quoteIdent(target.primaryKey.name)}) ON DELETE ${column.onDelete!.toUpperCase()}`
}

/**
 * The CHECK that keeps a column within its choices, so that the database holds what the
 * definition says (and `fastify-tablecrud generate` reads the choices back); null for a
 * column without choices, an array, or a choice its type cannot hold (validation refuses it).
 */
function choicesCheck (column: TableColumn): string | null {
  if (column.choices === null || column.type === 'array') return null
  const values = [...column.choices.values()].map((choice) => sqlLiteral(column, choice.value))
  return values.includes(undefined) ? null : `CHECK (${quoteIdent(column.name)} IN (${values.join(', ')}))`
}

/** `$tag$ body $tag$` with a tag the body does not hold: a help text is code's, but may say anything. */
function dollarQuoted (body: string): string {
  let tag = '$tablecrud$'
  for (let i = 1; body.includes(tag); i++) tag = `$tablecrud${i}$`
  return `${tag} ${body} ${tag}`
}

/**
 * The help texts as the table's and columns' comments, where psql's \d+ and other tools show
 * them. A role that does not own an existing table may not comment on it: that is no reason
 * for createTables to fail, so the block gives up quietly then.
 */
function comments (table: Table): string | null {
  const lines = table.helpText === null ? [] : [`COMMENT ON TABLE ${quoteIdent(table.name)} IS ${quoteLiteral(table.helpText)}`]
  for (const column of table.columns) {
    if (column.helpText !== null) lines.push(`COMMENT ON COLUMN ${quoteIdent(table.name)}.${quoteIdent(column.name)} IS ${quoteLiteral(column.helpText)}`)
  }
  return lines.length === 0 ? null : `DO ${dollarQuoted(`BEGIN ${lines.join('; ')}; EXCEPTION WHEN insufficient_privilege THEN NULL; END`)}`
}

function columnDefinition (table: Table, column: TableColumn, inlineForeignKey: boolean): string {
  const parts = [quoteIdent(column.name), sqlType(table, column)]
  if (column.primaryKey) parts.push('PRIMARY KEY')
  else if (!column.nullable) parts.push('NOT NULL')
  const fallback = columnDefault(table, column)
  if (fallback !== null) parts.push(`DEFAULT ${fallback}`)
  const identity = identityClause(column)
  if (identity !== null) parts.push(identity)
  if (column.unique && !column.primaryKey) parts.push('UNIQUE')
  const check = choicesCheck(column)
  if (check !== null) parts.push(check)
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
    const comment = comments(table)
    if (comment !== null) statements.push(comment)
    for (const column of table.columns) {
      if (column.index && !column.primaryKey && !column.unique) {
        statements.push(`CREATE INDEX IF NOT EXISTS ${quoteIdent(objectName(`${table.name}_${column.name}`, 'idx'))} ON ${quoteIdent(table.name)} (${quoteIdent(column.name)})`)
      }
    }
    // The GIN index of `__search`, on the very expression the queries write (SPEC §8.4).
    const search = searchIndexSql(table)
    if (search !== null) statements.push(search)
  }
  for (const [table, column] of deferred) {
    const name = quoteIdent(objectName(`${table.name}_${column.name}`, 'fkey'))
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
export async function createTables (db: DatabaseHandle, tables: readonly Table[]): Promise<void> {
  await runnerOf(db).run({ text: createTablesSql(tables), values: [] })
}

/**
 * Drops the tables (and what depends on them) if they exist.
 * @example await dropTables(app.pg, [movie, director])
 */
export async function dropTables (db: DatabaseHandle, tables: readonly Table[]): Promise<void> {
  if (tables.length === 0) return
  await runnerOf(db).run({ text: `DROP TABLE IF EXISTS ${tables.map((t) => quoteIdent(t.name)).join(', ')} CASCADE`, values: [] })
}
