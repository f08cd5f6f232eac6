import { hashPassword } from '../../lib/auth/password.js'
import { userTable } from '../../lib/table/auth-tables.js'
import { bodyInvalid, type FieldError } from '../../lib/errors.js'
import { typeOf } from '../../lib/table/column-types.js'
import type { Table, TableColumn } from '../../lib/table/table.js'
import { toDatabase } from '../../lib/table/column-types.js'
import { writeDefault } from '../../lib/table/defaults.js'
import type { Row } from './options.js'

/** A write body's way to the database: wire values converted, defaults filled, passwords hashed. */
export interface BodyValues {
  /**
   * Body values as the database takes them; each failing field named in one 400. With
   * `checked` (see `prepare`), a scalar value still the body's is not converted again.
   */
  readonly toRow: (values: Row, checked?: { body: Row, row: ReadonlyMap<TableColumn, unknown> }) => Map<TableColumn, unknown>
  /** Whether `prepare` does more than `toRow`: it hashes the password of the built-in user table. */
  readonly hashes: boolean
  /** The row a POST or PUT writes: the body, and the default of every column left out (SPEC §6.15). */
  readonly fullRow: (body: Row, key: unknown) => Row
  /**
   * The values a write sends, after the hooks: on the built-in user table the password is
   * hashed (SPEC §3), so no hook or client ever stores it as given. `checked` is what `toRow`
   * made of `body` before the hooks: a scalar value still the body's is not converted again.
   */
  readonly prepare: (values: Row, checked?: { body: Row, row: ReadonlyMap<TableColumn, unknown> }) => Promise<Map<TableColumn, unknown>>
}

export function bodyValues (table: Table): BodyValues {
  const columns = new Map(table.columns.map((c) => [c.name, c]))
  const toRow = (values: Row, checked?: { body: Row, row: ReadonlyMap<TableColumn, unknown> }): Map<TableColumn, unknown> => {
    const out = new Map<TableColumn, unknown>()
    let failures: FieldError[] | null = null
    for (const name in values) {
      const column = columns.get(name)
      // A body is a plain object (JSON, or a hook's); an inherited key is no value of it.
      if (column === undefined || !Object.hasOwn(values, name)) continue
      const value = values[name]
      // The same scalar as in the body checked before the hooks converts the same way: a POST
      // profile spent a fifth of its own time converting each value twice. Objects and arrays
      // are converted again, as a hook may have changed them in place.
      if (checked !== undefined && (typeof value !== 'object' || value === null) && checked.row.has(column) && Object.is(checked.body[name], value)) {
        out.set(column, checked.row.get(column))
        continue
      }
      try {
        out.set(column, toDatabase(column, value))
      } catch (error) {
        (failures ??= []).push({ field: name, message: (error as Error).message })
      }
    }
    if (failures !== null) throw bodyInvalid(failures)
    return out
  }
  return {
    toRow,
    hashes: table === userTable,
    fullRow: (body, key) => fullRow(table, body, key),
    async prepare (values, checked) {
      if (table === userTable && typeof values.password === 'string') {
        values = { ...values, password: await hashPassword(values.password) }
      }
      return toRow(values, checked)
    }
  }
}

function fullRow (table: Table, body: Row, key: unknown): Row {
  const out: Row = {}
  for (const column of table.columns) {
    if (column.primaryKey) {
      if (key !== undefined) out[column.name] = key
      // POST: a key the database does not assign (not a Serial) is the client's; a UUID's may be left out.
      else if (!typeOf(column).key!.assigned && Object.hasOwn(body, column.name)) out[column.name] = body[column.name]
    } else {
      out[column.name] = Object.hasOwn(body, column.name) ? body[column.name] : writeDefault(column)
    }
  }
  return out
}
