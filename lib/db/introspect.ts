import { setupError } from '../errors.js'
import { runnerOf, type DatabaseHandle } from './port.js'

/*
 * What `fastify-tablecrud generate` reads of an existing database: the relations of one schema,
 * their columns, keys, indexes and constraints, as PostgreSQL writes them back (`format_type`,
 * `pg_get_expr`, `pg_get_constraintdef`), so that the pure writer (lib/generate.ts) compares
 * the same spellings `checkTables` compares. Plain objects out; no mapping decision is made here.
 */

export type RelationKind = 'table' | 'view' | 'materialized view' | 'foreign table' | 'partitioned table'

export interface DbColumn {
  name: string
  /** `format_type`: `character varying(100)`, `integer[]`, an enum's name. */
  type: string
  notNull: boolean
  /** `pg_get_expr` of the default: `'x'::text`, `nextval('t_id_seq'::regclass)`; null for none. */
  default: string | null
  comment: string | null
  /** The labels of an enum type, in their order; null for any other type. */
  enumLabels: string[] | null
  /** GENERATED ALWAYS or BY DEFAULT AS IDENTITY (`attidentity` 'a' or 'd'), null for neither. */
  identity: 'always' | 'by default' | null
  /** A generated (computed) column. */
  generated: boolean
}

/** A default that draws from a sequence (a `serial`'s, a `bigserial`'s): any `nextval(...)` is the same intent. */
export const SEQUENCE_DEFAULT = /^nextval\('.*'::regclass\)$/

export interface DbForeignKey {
  columns: string[]
  /** The referenced table, null when it is in another schema. */
  table: string | null
  references: string[]
  /** confdeltype: a no action, r restrict, c cascade, n set null, d set default. */
  onDelete: string
}

export interface DbTable {
  name: string
  kind: RelationKind
  comment: string | null
  columns: DbColumn[]
  primaryKey: string[] | null
  /** Unique indexes (constraints included) on plain columns, each its column list. */
  uniques: string[][]
  /** Other indexes on plain columns, each its column list. */
  indexes: string[][]
  /** Indexes on expressions or with a WHERE, as `pg_get_indexdef` writes them. */
  otherIndexes: string[]
  foreignKeys: DbForeignKey[]
  checks: Array<{ name: string, definition: string }>
}

export interface DbSchema {
  name: string
  tables: DbTable[]
}

const KINDS: Readonly<Record<string, RelationKind>> = { r: 'table', v: 'view', m: 'materialized view', f: 'foreign table', p: 'partitioned table' }

/** The schema named by $1; a name needs no quoting this way, unlike `$1::regnamespace`. */
const SCHEMA = '(SELECT oid FROM pg_namespace WHERE nspname = $1)'

/** Column names of a key given as attribute numbers, in the key's order. */
const names = (keys: string, rel: string): string =>
  `ARRAY(SELECT a.attname::text FROM unnest(${keys}) WITH ORDINALITY AS u(n, i) JOIN pg_attribute a ON a.attrelid = ${rel} AND a.attnum = u.n ORDER BY u.i)`

const RELATIONS = 'SELECT c.oid::int AS oid, c.relname AS name, c.relkind AS kind, obj_description(c.oid, \'pg_class\') AS comment ' +
  `FROM pg_class c WHERE c.relnamespace = ${SCHEMA} AND c.relkind IN ('r', 'v', 'm', 'f', 'p') ORDER BY c.relname`

const COLUMNS = 'SELECT a.attrelid::int AS rel, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS "notNull", ' +
  'pg_get_expr(d.adbin, d.adrelid) AS "default", col_description(a.attrelid, a.attnum) AS comment, ' +
  "CASE WHEN t.typtype = 'e' THEN ARRAY(SELECT e.enumlabel::text FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) END AS \"enumLabels\", " +
  "CASE a.attidentity WHEN 'a' THEN 'always' WHEN 'd' THEN 'by default' END AS identity, a.attgenerated <> '' AS generated " +
  'FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_type t ON t.oid = a.atttypid ' +
  'LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum ' +
  `WHERE c.relnamespace = ${SCHEMA} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attrelid, a.attnum`

const INDEXES = `SELECT i.indrelid::int AS rel, i.indisprimary AS "primary", i.indisunique AS "unique", ${names('i.indkey::int2[]', 'i.indrelid')} AS columns, ` +
  '(i.indexprs IS NOT NULL OR i.indpred IS NOT NULL) AS partial, pg_get_indexdef(i.indexrelid) AS definition ' +
  `FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = ${SCHEMA} ORDER BY i.indrelid, i.indexrelid::regclass::text`

const CONSTRAINTS = `SELECT k.conrelid::int AS rel, k.conname AS name, k.contype AS type, ${names('k.conkey', 'k.conrelid')} AS columns, ` +
  `CASE WHEN r.relnamespace = k.connamespace THEN r.relname::text END AS "table", ${names('k.confkey', 'k.confrelid')} AS "references", ` +
  'k.confdeltype AS "onDelete", pg_get_constraintdef(k.oid) AS definition ' +
  `FROM pg_constraint k LEFT JOIN pg_class r ON r.oid = k.confrelid WHERE k.connamespace = ${SCHEMA} AND k.contype IN ('f', 'c') ` +
  'AND k.conrelid <> 0 ORDER BY k.conrelid, k.conname'

interface Row { rel: number }
type IndexRow = Row & { primary: boolean, unique: boolean, columns: string[], partial: boolean, definition: string }
type ConstraintRow = Row & { name: string, type: 'f' | 'c', columns: string[], table: string | null, references: string[], onDelete: string, definition: string }

/** Rows grouped by relation. */
function byRelation<R extends Row> (rows: readonly R[]): (rel: number) => R[] {
  const groups = new Map<number, R[]>()
  for (const row of rows) groups.set(row.rel, [...groups.get(row.rel) ?? [], row])
  return (rel) => groups.get(rel) ?? []
}

/**
 * Reads the relations of one schema (the connection's current one when not given) in name
 * order: tables with their columns, keys, indexes and constraints; views and the other kinds
 * with their columns only, for the writer to skip with a reason.
 * @example const schema = await readSchema(client, 'public')
 */
export async function readSchema (db: DatabaseHandle, schema?: string): Promise<DbSchema> {
  const runner = runnerOf(db)
  const query = async <R>(text: string, values: unknown[]): Promise<R[]> => (await runner.run({ text, values })).rows as R[]
  const name = schema ?? (await query<{ name: string }>('SELECT current_schema() AS name', []))[0]!.name
  const exists = await query<{ found: boolean }>('SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1) AS found', [name])
  if (!exists[0]!.found) throw setupError(`There is no schema named ${name}.`)
  // One after the other: a client runs one query at a time.
  const relations = await query<{ oid: number, name: string, kind: string, comment: string | null }>(RELATIONS, [name])
  const columns = await query<DbColumn & Row>(COLUMNS, [name])
  const indexes = await query<IndexRow>(INDEXES, [name])
  const constraints = await query<ConstraintRow>(CONSTRAINTS, [name])
  const columnsOf = byRelation(columns)
  const indexesOf = byRelation(indexes)
  const constraintsOf = byRelation(constraints)
  const tables = relations.map((r): DbTable => {
    const plain = indexesOf(r.oid).filter((i) => !i.partial)
    return {
      name: r.name,
      kind: KINDS[r.kind]!,
      comment: r.comment,
      columns: columnsOf(r.oid).map(({ rel: _rel, ...c }) => c),
      primaryKey: plain.find((i) => i.primary)?.columns ?? null,
      uniques: plain.filter((i) => i.unique && !i.primary).map((i) => i.columns),
      indexes: plain.filter((i) => !i.unique).map((i) => i.columns),
      otherIndexes: indexesOf(r.oid).filter((i) => i.partial).map((i) => i.definition),
      foreignKeys: constraintsOf(r.oid).filter((k) => k.type === 'f')
        .map((k) => ({ columns: k.columns, table: k.table, references: k.references, onDelete: k.onDelete })),
      checks: constraintsOf(r.oid).filter((k) => k.type === 'c').map((k) => ({ name: k.name, definition: k.definition }))
    }
  })
  return { name, tables }
}
