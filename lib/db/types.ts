import pg from 'pg'
import { COLUMN_TYPES } from '../table/column-types.js'
import { visibleColumns, type Table } from '../table/table.js'
import { sqlType } from './ddl.js'
import { perTable } from '../table/per-table.js'

type Parser = (text: string) => unknown

const arrayOf = (parse: Parser): Parser => (text) => (pg.types as any).arrayParser.create(text, parse).parse()

/** Each column type's own reader, where its descriptor has one (lib/table/column-types.ts). */
const overrides = new Map<number, Parser>()
for (const type of Object.values(COLUMN_TYPES)) {
  const read = type.read
  if (read === null) continue
  if (read.oid !== null) overrides.set(read.oid, read.parse)
  if (read.arrayOid !== null) overrides.set(read.arrayOid, arrayOf(read.parse))
}

/**
 * Per-query type parsers (pg's `types` query option), so values come back as SPEC §2.2 says
 * whatever pool the integrator made: timestamps keep their text and never pass through JS
 * `Date` (which drops microseconds and applies the local zone); Numeric arrays stay exact.
 */
export const wireTypes = {
  getTypeParser (oid: number, format?: 'text' | 'binary'): Parser {
    return overrides.get(oid) ?? (pg.types.getTypeParser(oid, format) as Parser)
  }
}

/**
 * The type OIDs of PostgreSQL's built-in types, as `sqlType` writes them (modifiers dropped):
 * the type and its array. Built-in OIDs are fixed across PostgreSQL versions.
 */
const OIDS: Readonly<Record<string, readonly [number, number]>> = {
  serial: [23, 1007],
  integer: [23, 1007],
  smallint: [21, 1005],
  bigint: [20, 1016],
  bigserial: [20, 1016],
  real: [700, 1021],
  'double precision': [701, 1022],
  numeric: [1700, 1231],
  boolean: [16, 1000],
  varchar: [1043, 1015],
  text: [25, 1009],
  uuid: [2950, 2951],
  date: [1082, 1182],
  time: [1083, 1183],
  timestamp: [1114, 1115],
  timestamptz: [1184, 1185],
  interval: [1186, 1187],
  jsonb: [3802, 3807]
}

// By a number of the two flags: a key string built each request cost its hashing.
const resultTypesOf = perTable<number, readonly number[] | null>()

/**
 * The type OIDs of the columns a write returns (`returningList`: the visible columns, in order)
 * when the database matches the definition; null when a type has no known OID. What a write
 * compares its result's columns with before it trusts a prepared statement (plugins/database.ts
 * `single`): a column whose type was changed by hand has another OID. An upsert of one row
 * (`upsert`) returns one more, a boolean: whether it inserted (lib/sql/upsert.ts); an array's
 * rows come back without it. One array per table and kind, as `single` trusts the very array
 * it was shown.
 */
export function resultTypes (table: Table, excludeSecrets: boolean, upsert = false): readonly number[] | null {
  return resultTypesOf(table, (excludeSecrets ? 1 : 0) + (upsert ? 2 : 0), () => {
    const oids = visibleColumns(table, excludeSecrets).map((column) => {
      const sql = sqlType(table, column)
      const array = sql.endsWith('[]')
      return OIDS[sql.replace(/\[\]$/, '').replace(/\(.*\)$/, '')]?.[array ? 1 : 0]
    })
    /* c8 ignore next: every column type's SQL type is in OIDS; a type added without its OID is written in a transaction, never wrongly trusted */
    if (!oids.every((oid) => oid !== undefined)) return null
    return upsert ? [...oids as number[], OIDS.boolean![0]] : oids as number[]
  })
}
