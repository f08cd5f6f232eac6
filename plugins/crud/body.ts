import { hashPassword } from '../../lib/auth/password.js'
import { userTable } from '../../lib/table/auth-tables.js'
import { bodyInvalid, type FieldError } from '../../lib/errors.js'
import type { Table, TableColumn } from '../../lib/table/table.js'
import { databaseWriter, typeOf } from '../../lib/table/column-types.js'
import { writeDefault } from '../../lib/table/defaults.js'
import type { Row } from './options.js'

/** A body as checked before the validators (a copy where a validator may change it in place), and its values converted. */
export interface Checked { readonly body: Row, readonly row: Map<TableColumn, unknown> }

/** A write body's way to the database: wire values converted, defaults filled, passwords hashed. */
export interface BodyValues {
  /**
   * Body values as the database takes them; each failing field named in one 400. With
   * `checked` (see `prepare`), a scalar value still the body's is not converted again.
   */
  readonly toRow: (values: Row, checked?: Checked) => Map<TableColumn, unknown>
  /**
   * What a write checks of its body before the validators (SPEC §6.14): its values converted by
   * `toRow`, kept with the body for `prepare` and `postRow` to reuse each scalar still the same.
   * `copy` when validators will see the body, as one may change it in place; hooks are handed
   * copies.
   */
  readonly check: (body: Row, copy: boolean) => Checked
  /** Whether `prepare` does more than `toRow`: it hashes the password of the built-in user table. */
  readonly hashes: boolean
  /** The row a POST or PUT writes: the body, and the default of every column left out (SPEC §6.15). */
  readonly fullRow: (body: Row, key: unknown) => Row
  /**
   * `toRow(fullRow(body, undefined), checked)` in one walk of the columns, without the full row
   * as an object between them: what a POST without hooks writes (for an upsert of 100 rows the
   * two walks and the object were 4% of its CPU).
   */
  readonly postRow: (body: Row, checked?: Checked) => Map<TableColumn, unknown>
  /**
   * The values a write sends, after the hooks: on the built-in user table the password is
   * hashed (SPEC §3), so no hook or client ever stores it as given. `checked` is what `toRow`
   * made of `body` before the hooks: a scalar value still the body's is not converted again.
   */
  readonly prepare: (values: Row, checked?: Checked) => Promise<Map<TableColumn, unknown>>
}

/**
 * A column as a write converts its values: `toDatabase` with its type found once, and whether
 * a POST leaves it out when the body does (a key the database assigns), found once per table.
 * An upsert of 100 rows converted each value through the lookup and a callback a column, 0.5
 * µs a row on the bench machine; this walk takes half that.
 */
interface Writer {
  readonly column: TableColumn
  readonly name: string
  readonly toDatabase: (value: unknown) => unknown
  /** A key, written only when given and the database does not assign it. */
  readonly key: boolean
  readonly assigned: boolean
}

export function bodyValues (table: Table): BodyValues {
  const writers: readonly Writer[] = table.columns.map((column) =>
    ({ column, name: column.name, toDatabase: databaseWriter(column), key: column.primaryKey, assigned: column.primaryKey && typeOf(column).key!.assigned }))
  const byName = new Map(writers.map((w) => [w.name, w]))
  const position = new Map(table.columns.map((c, i) => [c.name, i]))
  const toRow = (values: Row, checked?: Checked): Map<TableColumn, unknown> => {
    const out = new Map<TableColumn, unknown>()
    let failures: FieldError[] | null = null
    for (const name in values) {
      const writer = byName.get(name)
      // A body is a plain object (JSON, or a hook's); an inherited key is no value of it.
      if (writer === undefined || !Object.hasOwn(values, name)) continue
      const failure = put(out, writer, values[name], checked)
      if (failure !== null) (failures ??= []).push(failure)
    }
    // In the table's order, as postRow finds them: a body fails alike on every write.
    if (failures !== null) throw bodyInvalid(failures.sort((a, b) => position.get(a.field)! - position.get(b.field)!))
    return out
  }
  return {
    toRow,
    check: (body, copy) => ({ body: copy ? { ...body } : body, row: toRow(body) }),
    hashes: table === userTable,
    fullRow (body, key) {
      const out: Row = {}
      for (const writer of writers) {
        const value = written(writer, body, key)
        if (value !== LEFT_OUT) out[writer.name] = value
      }
      return out
    },
    postRow (body, checked) {
      const out = new Map<TableColumn, unknown>()
      let failures: FieldError[] | null = null
      for (const writer of writers) {
        const value = written(writer, body, undefined)
        if (value === LEFT_OUT) continue
        const failure = put(out, writer, value, checked)
        if (failure !== null) (failures ??= []).push(failure)
      }
      if (failures !== null) throw bodyInvalid(failures)
      return out
    },
    async prepare (values, checked) {
      if (table === userTable && typeof values.password === 'string') {
        values = { ...values, password: await hashPassword(values.password) }
      }
      return toRow(values, checked)
    }
  }
}

/** Sets the column's value as the database takes it into `out`; its field error when it fails. */
function put (out: Map<TableColumn, unknown>, writer: Writer, value: unknown, checked: Checked | undefined): FieldError | null {
  const column = writer.column
  // The same scalar as in the body checked before the hooks converts the same way: a POST
  // profile spent a fifth of its own time converting each value twice. Objects and arrays
  // are converted again, as a hook may have changed them in place.
  if (checked !== undefined && (typeof value !== 'object' || value === null) && checked.row.has(column) && Object.is(checked.body[writer.name], value)) {
    out.set(column, checked.row.get(column))
    return null
  }
  try {
    out.set(column, writer.toDatabase(value))
    return null
  } catch (error) {
    return { field: writer.name, message: (error as Error).message }
  }
}

/** What `written` gives for a column a write leaves out. */
const LEFT_OUT = Symbol('left out')

/**
 * The value a POST or PUT writes of a column: the body's, or the column's default (SPEC §6.15).
 * The key is `key` (PUT); on POST the client's when the database does not assign it (not a
 * Serial; a UUID's may be left out), else left out. `fullRow` and `postRow` collect them, one
 * into an object, the other converted.
 */
function written (writer: Writer, body: Row, key: unknown): unknown {
  const given = Object.hasOwn(body, writer.name)
  if (!writer.key) return given ? body[writer.name] : writeDefault(writer.column)
  if (key !== undefined) return key
  return given && !writer.assigned ? body[writer.name] : LEFT_OUT
}
