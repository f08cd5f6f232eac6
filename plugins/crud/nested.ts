import type { FastifySchema } from 'fastify'
import type { FastifySchemaCompiler, FastifyValidationResult } from 'fastify/types/schema.js'
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { Ajv } from 'ajv'
import { bodyInvalid, bodyOf, optionError, withBody, type FieldError } from '../../lib/errors.js'
import type { Runner } from '../../lib/db/port.js'
import { compileInsert, compileInsertRows, sameColumns } from '../../lib/sql/write.js'
import { toDatabase, typeOf } from '../../lib/table/column-types.js'
import { relationsOf, type Relation } from '../../lib/table/relations.js'
import type { Table, TableColumn } from '../../lib/table/table.js'
import { createSchema, OPENAPI_RULES, pascalName, rowSchema } from '../../schemas/row.js'
import { fieldErrors } from '../errors.js'
import { bodyValues, type BodyValues } from './body.js'
import { lazyValidator } from './compilers.js'
import type { CrudContext } from './context.js'
import { beforeCommit, type RowAnswer } from './before-commit.js'
import { clientError } from './write-rows.js'
import { checkWritten } from './scope.js'
import type { QueryContext } from '../../lib/query/parse.js'
import type { Row } from './options.js'

/**
 * Nested insert (SPEC §8.5): a POST body may hold the to-many relations named in the mount
 * option `nestedWrites`; the row is inserted, then its children with their ForeignKey set to
 * it, in one transaction. Depth 1: a child holds columns only.
 */

type Values = Map<TableColumn, unknown>

/** One relation a POST body may hold, with what checks and converts its children. */
export interface Nested {
  readonly relation: Relation
  /** The child's POST schema without the ForeignKey back to the parent. */
  readonly schema: TObject
  readonly values: BodyValues
}

/** The relations of `nestedWrites`, checked at registration: each a reverse relation of the table. */
export function nestedRelations (table: Table, names: readonly string[], maxRows: number): Nested[] {
  if (names.length === 0) return []
  const relations = relationsOf(table)
  return names.map((name) => {
    const relation = relations.get(name)
    if (relation?.kind !== 'reverse') {
      const reverse = [...relations.values()].filter((r) => r.kind === 'reverse').map((r) => r.name)
      throw optionError('tableCrud', 'nestedWrites', `names ${JSON.stringify(name)}, which is not a reverse relation of ${table.name} (a ForeignKey of another table pointing at it): use ${reverse.length === 0 ? 'none, it has none' : reverse.join(', ')}`)
    }
    return { relation, schema: childSchema(table, relation, maxRows), values: bodyValues(relation.to) }
  })
}

/** The child's POST schema, its ForeignKey to the parent left out (the insert sets it). */
function childSchema (parent: Table, relation: Relation, maxRows: number): TObject {
  const create = createSchema(relation.to)
  const fk = relation.column.name
  const { [fk]: _left, ...properties } = create.properties
  const rules = (create as { [OPENAPI_RULES]?: { required?: string[] } })[OPENAPI_RULES]
  const schema = Type.Object(properties, {
    title: `${pascalName(relation.to)}InNested${pascalName(parent)}`,
    additionalProperties: false,
    description: `A ${relation.to.name} row inserted with the new ${parent.name} row; its ${fk} is set to it, and may not be given. At most ${maxRows}.`
  })
  return rules?.required === undefined ? schema : { ...schema, [OPENAPI_RULES]: { ...rules, required: rules.required.filter((n) => n !== fk) } }
}

/** The POST body of one row with its nested relations: the row's schema, and an array of children per relation. */
export function nestedBodySchema (table: Table, one: TObject, nested: readonly Nested[], maxRows: number): TObject {
  const children: Record<string, TSchema> = {}
  for (const n of nested) children[n.relation.name] = Type.Optional(Type.Array(n.schema, { maxItems: maxRows }))
  const schema = Type.Object({ ...one.properties, ...children }, {
    title: `${pascalName(table)}InNested`,
    additionalProperties: false,
    description: `A ${table.name} row, with ${nested.map((n) => n.relation.name).join(', ')} to insert with it (SPEC §8.5).`
  })
  // The document's own rules of the row (`OPENAPI_RULES`), when it has any, hold for it here too.
  return { ...schema, [OPENAPI_RULES]: (one as { [OPENAPI_RULES]?: unknown })[OPENAPI_RULES] }
}

/** The answer of a nested insert: the row, with each relation's children as inserted. */
export function nestedRowSchema (table: Table, row: TObject, nested: readonly Nested[], excludeSecrets: boolean): TObject {
  const children: Record<string, TSchema> = {}
  for (const n of nested) children[n.relation.name] = Type.Optional(Type.Array(rowSchema(n.relation.to, excludeSecrets)))
  return Type.Object({ ...row.properties, ...children }, { title: `${pascalName(table)}RowNested` })
}

/** Whether a body holds any nested relation. */
export function holdsNested (nested: readonly Nested[], body: Row): boolean {
  return nested.some((n) => Object.hasOwn(body, n.relation.name))
}

/**
 * The body validator of POST `/` with `nestedWrites`: an array as before (`plain`, by `plainSchema`); an object by
 * the row's schema, and each child by its table's, a failure named by its path (`movies[0].year`).
 * A child giving the ForeignKey back to the parent is named with why.
 */
export function nestedBodyCompiler (ajv: Ajv, plain: FastifySchemaCompiler<FastifySchema>, plainSchema: TSchema, one: TObject, nested: readonly Nested[]): FastifySchemaCompiler<FastifySchema> {
  return (route) => {
    // An array's elements hold no nested rows: checked by the plain POST schema.
    const arrays = plain({ ...route, schema: plainSchema }) as ((data: unknown) => unknown) & { errors?: unknown }
    const checkRow = lazyValidator(ajv, one)
    const checks = nested.map((n) => ({ n, check: lazyValidator(ajv, n.schema) }))
    const validate = (data: unknown): unknown => {
      if (typeof data !== 'object' || data === null || Array.isArray(data)) {
        // Fastify reads a `false`'s errors off the function it called: without them, `null` or
        // `42` passed as valid (a 500, or a row of defaults written).
        const valid = arrays(data)
        validate.errors = arrays.errors
        return valid
      }
      const body = data as Row
      const row: Row = { ...body }
      for (const { n } of checks) delete row[n.relation.name]
      const failures: FieldError[] = checkRow(row) ? [] : fieldErrors(checkRow.errors!)
      for (const { n, check } of checks) {
        if (Object.hasOwn(body, n.relation.name)) failures.push(...childFailures(n, check, body[n.relation.name]))
      }
      return failures.length === 0 || { error: bodyInvalid(failures) }
    }
    validate.errors = null as unknown
    return validate as FastifyValidationResult
  }
}

function childFailures (n: Nested, check: ReturnType<typeof lazyValidator>, children: unknown): FieldError[] {
  const name = n.relation.name
  if (!Array.isArray(children)) return [{ field: name, message: 'must be array' }]
  const failures: FieldError[] = []
  children.forEach((child, i) => {
    const path = `${name}[${i}]`
    if (typeof child === 'object' && child !== null && Object.hasOwn(child, n.relation.column.name)) {
      failures.push({ field: `${path}.${n.relation.column.name}`, message: `is set to the new ${n.relation.from.name} row; leave it out` })
      return
    }
    if (!check(child)) failures.push(...fieldErrors(check.errors!, '(row)').map((e) => ({ ...e, field: e.field === '(row)' ? path : `${path}.${e.field}` })))
  })
  return failures
}

/** Each relation's children as the database takes them (conversions failing named by path), without their ForeignKey yet. */
export async function convertChildren (nested: readonly Nested[], body: Row): Promise<Array<{ n: Nested, rows: Values[] }>> {
  const failures: FieldError[] = []
  const out: Array<{ n: Nested, rows: Values[] }> = []
  for (const n of nested.filter((n) => Object.hasOwn(body, n.relation.name))) {
    const rows: Values[] = []
    for (const [i, child] of (body[n.relation.name] as Row[]).entries()) {
      const full = n.values.fullRow(child, undefined)
      if (typeOf(n.relation.to.primaryKey).key!.assigned) delete full[n.relation.to.primaryKey.name]
      delete full[n.relation.column.name]
      rows.push(await n.values.prepare(full).catch((error: unknown) => {
        failures.push(...(bodyOf(error)!.errors as FieldError[]).map((e) => ({ ...e, field: `${n.relation.name}[${i}].${e.field}` })))
        return new Map<TableColumn, unknown>()
      }))
    }
    out.push({ n, rows })
  }
  if (failures.length > 0) throw bodyInvalid(failures)
  return out
}

/**
 * Inserts the row, then each relation's children with their ForeignKey set to it, in one
 * transaction, and resolves to the row, and to the row with its children embedded as inserted.
 * The children of a relation go in one statement; when the database refuses something, the
 * whole is tried again, children one by one, in a new transaction, only to name the child
 * that fails (`details.path`, `films[2]`); the parent's own refusal has no path.
 */
export async function insertNested (c: CrudContext, ctx: QueryContext, parent: Values, children: ReadonlyArray<{ n: Nested, rows: Values[] }>, answer: RowAnswer): Promise<{ row: Row, text: string }> {
  const { table, db, options: { excludeSecrets } } = c
  const attempt = async (oneByOne: boolean): Promise<{ row: Row, text: string }> => await beforeCommit(db, async (tx) => {
    const inserted = (await tx.run(compileInsert(table, parent, excludeSecrets))).rows
    const row = inserted[0]!
    const embedded: Row = { ...row }
    for (const { n, rows } of children) {
      const fk = toDatabase(n.relation.column, row[table.primaryKey.name])
      const withKey = rows.map((r) => new Map(r).set(n.relation.column, fk))
      // The children's table may have a scope of its own (SPEC §8.6): they must be in it too.
      embedded[n.relation.name] = await checkWritten({ table: n.relation.to, scopes: ctx.scopes }, tx, withKey.length, await insertChildren(tx, n, withKey, excludeSecrets, oneByOne))
    }
    // The row's own scope last: it may reach the row through its children (`cards.owner.e.7`).
    await checkWritten(ctx, tx, 1, inserted)
    return { row, text: answer(embedded) }
  })
  try {
    return await attempt(false)
  } catch (error) {
    // Anything else (a 503) is thrown as it came.
    if (clientError(error) === undefined) throw error
  }
  return await attempt(true)
}

/** A relation's children: in one statement, or one by one, each refusal named by its path. None: nothing to run. */
async function insertChildren (tx: Runner, n: Nested, rows: Values[], excludeSecrets: boolean, oneByOne: boolean): Promise<Row[]> {
  const child = n.relation.to
  if (!oneByOne && sameColumns(rows)) return (await tx.run(compileInsertRows(child, rows, excludeSecrets))).rows
  const out: Row[] = []
  for (const [i, row] of rows.entries()) {
    const result = await tx.run(compileInsert(child, row, excludeSecrets)).catch((error: unknown) => {
      const refused = clientError(error)
      throw refused === undefined ? error : withBody(refused, { ...bodyOf(refused), details: { ...(bodyOf(refused)?.details as object | undefined), path: `${n.relation.name}[${i}]` } })
    })
    out.push(result.rows[0]!)
  }
  return out
}
