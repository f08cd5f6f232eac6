import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import type { FastifySchemaCompiler, FastifyValidationResult } from 'fastify/types/schema.js'
import { Type, type TArray, type TObject, type TUnion } from '@sinclair/typebox'
import type { Ajv } from 'ajv'
import { textETag } from '../../lib/etag.js'
import { bodyInvalid, bodyOf, TABLECRUD_ERR_BODY_ROW_COUNT, type FieldError } from '../../lib/errors.js'
import { compileInsert, compileInsertRows, sameColumns } from '../../lib/sql/write.js'
import type { QueryContext, RawQuery } from '../../lib/query/parse.js'
import { conflictTargets, parseOnConflict } from '../../lib/query/writes.js'
import { typeOf } from '../../lib/table/column-types.js'
import { resultTypes } from '../../lib/db/types.js'
import type { Table, TableColumn } from '../../lib/table/table.js'
import { createQuerySchema } from '../../schemas/writes.js'
import { createdResponse, ETagHeader, LocationHeader, withHeaders } from '../../schemas/responses.js'
import { aRow } from '../../schemas/query.js'
import { createBodySchema } from '../../schemas/row.js'
import { fieldErrors } from '../errors.js'
import type { BodyValues, Checked } from './body.js'
import { guarded, hookError, type CrudContext } from './context.js'
import type { Row } from './options.js'
import { lazyValidator } from './compilers.js'
import { rowAnswer, rowsAnswer, type RowAnswer } from './before-commit.js'
import { route } from './routing.js'
import { sendJson } from './serialise.js'
import { convertChildren, holdsNested, insertNested, nestedBodyCompiler, nestedBodySchema, nestedRelations, nestedRowSchema, type Nested } from './nested.js'
import { updateColumns, upsertOne, upsertRows, type UpsertRow } from './upsert.js'
import { atIndex, writeRows, writeStatement } from './write-rows.js'

/** POST `/` (SPEC §2.5): one row from an object, or all the rows of an array, or none (SPEC §7.4). */

type Values = Map<TableColumn, unknown>

type ToWrite = (request: FastifyRequest, body: Row, checked: Checked, target?: readonly TableColumn[]) => UpsertRow | Promise<UpsertRow>

/**
 * How a POST checks one element (`check`: its values converted, before the validators) and what
 * it writes of it (`toWrite`: the default of each column left out, the preSave hooks' result,
 * converted; for an upsert (`target`), also the columns a conflict updates). Without hooks or a
 * password to hash, nothing is awaited: an array's rows are written in a loop, and a promise
 * each (three, with prepare's) was a fifth of an upsert of 100 rows in the profile.
 */
function writing (c: CrudContext, values: BodyValues): { check: (body: Row) => Checked, toWrite: ToWrite } {
  const { table, hooks: { preSave } } = c
  const pk = table.primaryKey
  const assigned = typeOf(pk).key!.assigned
  // Without hooks the full row is the body and defaults, so the columns a conflict updates are
  // those the body gives: updateColumns of the body as before and after the hooks.
  const bodyColumns = (body: Row, target?: readonly TableColumn[]): TableColumn[] => target === undefined ? [] : updateColumns(table, target, body, body, body)
  const validated = c.validated('postSingle')
  const check = (body: Row): Checked => values.check(body, validated)
  if (preSave.length === 0 && !values.hashes) {
    // With no validator either, nothing but the client changes a body: what is written is
    // checked, values and defaults converted in one walk (for an upsert of 100 rows, a second
    // walk was some 3% of its CPU).
    if (!validated) {
      return {
        check: (body) => ({ body, row: values.postRow(body) }),
        toWrite: (_request, body, checked, target) => ({ values: checked.row, update: bodyColumns(body, target) })
      }
    }
    return { check, toWrite: (_request, body, checked, target) => ({ values: values.postRow(body, checked), update: bodyColumns(body, target) }) }
  }
  return {
    check,
    toWrite: async (request, body, checked, target) => {
      const filled = values.fullRow(body, undefined)
      let full = target === undefined ? filled : { ...filled }
      for (const hook of preSave) full = await guarded(async () => await hook.callable(full, { request }), hookError)
      // fullRow leaves out a key the database assigns: a hook may have added it.
      if (assigned) delete full[pk.name]
      return { values: await values.prepare(full, checked), update: target === undefined ? [] : updateColumns(table, target, body, filled, full) }
    }
  }
}

/** What a POST writes of each element of an array, in order; an element's error says its index. */
async function writingAll (toWrite: ToWrite, request: FastifyRequest, body: readonly Row[], checked: readonly Checked[], target?: readonly TableColumn[]): Promise<UpsertRow[]> {
  const rows: UpsertRow[] = []
  for (const [index, one] of body.entries()) {
    try {
      // Awaited only when it is a promise (hooks): an await of each row of 100 was 4% of an upsert's CPU.
      const row = toWrite(request, one, checked[index]!, target)
      rows.push(row instanceof Promise ? await row : row)
    } catch (error) {
      throw atIndex(error, index)
    }
  }
  return rows
}

export function postRoute (c: CrudContext, values: BodyValues): void {
  const { fastify, table } = c
  const pk = table.primaryKey
  const { check, toWrite } = writing(c, values)
  const nested = nestedRelations(table, c.options.nestedWrites, c.options.maxPageSize)
  const answers = postAnswers(c, nested)
  const bodySchema = createBodySchema(table, c.options.maxPageSize)
  const one = bodySchema.anyOf[0]
  const targets = conflictTargets(table, c.options.excludeSecrets)
  const bodyCompiler = nested.length === 0 ? postBodyCompiler(c.ajv) : nestedBodyCompiler(c.ajv, postBodyCompiler(c.ajv), bodySchema, one, nested)
  const prefix = fastify.prefix.replace(/\/$/, '')
  // The ETag is of the row as GET `/:id/` serves it: `text` is its answer, or the row alone's.
  const located = (reply: FastifyReply, written: Row, text: string): FastifyReply =>
    reply.header('location', `${prefix}/${encodeURIComponent(String(written[pk.name]))}/`).header('etag', textETag(text))

  route<{ Body: Row | Row[], Querystring: { target: readonly TableColumn[] | null } }>(fastify, {
    method: 'POST',
    url: '/',
    schema: c.routeSchema('postSingle', 'create', [400, 413, 415, 422, 503], {
      summary: `Create ${aRow(table.name)}, or several`,
      description: `An object creates one row; an array of 1 to ${c.options.maxPageSize} objects creates them all, or none (SPEC §7.4). With \`__on_conflict\`, an upsert (SPEC §8.5).` +
        (nested.length === 0 ? '' : ` An object may hold ${nested.map((n) => n.relation.name).join(', ')}: rows inserted with it, in one transaction, their ForeignKey set to it.`),
      querystring: createQuerySchema(targets.map((t) => t.map((col) => col.name).join(','))),
      body: nested.length === 0 ? bodySchema : Type.Union([nestedBodySchema(table, one, nested, c.options.maxPageSize), bodySchema.anyOf[1]]),
      response: answers.route
    }),
    validatorCompiler: (part) => part.httpPart === 'querystring'
      ? (raw: unknown) => createQuery(table, c.options.excludeSecrets, raw as RawQuery)
      : bodyCompiler(part),
    handler: async (request, reply) => {
      const body = request.body
      const target = request.query.target ?? undefined
      if (Array.isArray(body)) {
        const checked = convertRows(body, check)
        await c.validate('postSingle', request)
        const rows = await writingAll(toWrite, request, body, checked, target)
        const ctx = await c.scoped(request)
        if (target !== undefined) return send(reply, await upsertRows(c, ctx, target, rows, answers.rows), 200)
        return send(reply, await insertRows(c, ctx, rows.map((r) => r.values), answers.rows))
      }
      const checked = check(body)
      const children = holdsNested(nested, body) ? await convertChildren(nested, body) : null
      if (children !== null && target !== undefined) throw bodyInvalid(children.map(({ n }) => ({ field: n.relation.name, message: 'cannot be written by an upsert (__on_conflict)' })))
      await c.validate('postSingle', request)
      const written = await toWrite(request, body, checked, target)
      const ctx = await c.scoped(request)
      if (target !== undefined) {
        const { row, inserted, text } = await upsertOne(c, ctx, target, written, answers.row)
        if (inserted) return send(located(reply, row, text), text)
        return send(reply.header('etag', textETag(text)), text, 200)
      }
      if (children !== null) {
        const { row: parent, text } = await insertNested(c, ctx, written.values, children, answers.nested)
        return send(located(reply, parent, answers.row(parent)), text)
      }
      const { row: created, text } = await insertOne(c, ctx, written.values, answers.row)
      return send(located(reply, created, text), text)
    }
  })
}

/** `__on_conflict` (SPEC §8.5); other parameters of POST are passed over, as before upserts were. */
function createQuery (table: Table, excludeSecrets: boolean, raw: RawQuery): { value: { target: readonly TableColumn[] | null } } | { error: Error } {
  const given = Object.hasOwn(raw, '__on_conflict') ? raw.__on_conflict : undefined
  try {
    return { value: { target: given === undefined ? null : parseOnConflict(table, excludeSecrets, given) } }
  } catch (error) {
    return { error: error as Error }
  }
}

/**
 * The answers of POST `/`, each written by its own schema (`route`, their union, is for
 * OpenAPI) before COMMIT, so a row the answer cannot carry is not committed (issue 27): a row;
 * `{"rows": [...]}`; a row with its nested children.
 */
function postAnswers (c: CrudContext, nested: readonly Nested[]): { row: RowAnswer, rows: (rows: readonly Row[]) => string, nested: RowAnswer, route: Record<number, unknown> } {
  const row = c.schemas.row
  const created = createdResponse(row)
  const withChildren = nestedRowSchema(c.table, row, nested, c.options.excludeSecrets)
  const kinds = nested.length === 0 ? [row, created] : [row, created, withChildren]
  const nestedText = nested.length === 0 ? '' : '; the row with its nested rows as inserted, with Location and ETag (of the row alone), for an object holding them'
  const answers = Type.Union(kinds, { 'x-response-description': `Created: the row, with Location and ETag, for an object body; \`{"rows": [...]}\`, without them, for an array body${nestedText}.` })
  const updated = Type.Union([row, created], { 'x-response-description': 'Upsert (`__on_conflict`) of an object whose row existed: the row as updated, with its ETag; of an array: `{"rows": [...]}`, every row as written.' })
  const answerRow = rowAnswer(c.table, row)
  return {
    row: answerRow,
    rows: rowsAnswer(created, answerRow),
    nested: rowAnswer(c.table, withChildren),
    route: { 200: withHeaders(updated, { ETag: ETagHeader }), 201: withHeaders(answers, { Location: LocationHeader, ETag: ETagHeader }) }
  }
}

/**
 * One row inserted, and its answer written before COMMIT; without a row scope to check, in one
 * statement once the connection has shown the table's types (`single`): BEGIN and COMMIT were
 * two of a POST's three round trips.
 */
async function insertOne (c: CrudContext, ctx: QueryContext, values: Values, answer: RowAnswer): Promise<{ row: Row, text: string }> {
  const statement = compileInsert(c.table, values, c.options.excludeSecrets)
  return await writeStatement(c, ctx, statement, resultTypes(c.table, c.options.excludeSecrets), 1, ([row]) => ({ row: row!, text: answer(row!) }))
}

/** A 201 (or `status`) of POST `/`, its body already written. */
function send (reply: FastifyReply, text: string, status = 201): FastifyReply {
  return sendJson(reply.code(status), text)
}

/**
 * The body validator of POST `/` (the compiler's `schema` is `createBodySchema`'s union): an
 * object is checked by the row schema as before, with Ajv's errors; an array by its length,
 * then each element by the same row schema, every failure named with its element's index.
 */
export function postBodyCompiler (ajv: Ajv): FastifySchemaCompiler<FastifySchema> {
  return ({ schema }) => {
    const [one, many] = (schema as TUnion<[TObject, TArray<TObject>]>).anyOf
    // Compiled on the first body, like every body validator (compilers.ts).
    const check = lazyValidator(ajv, one)
    const validate = (data: unknown): boolean | { error: Error } => {
      if (!Array.isArray(data)) {
        const valid = check(data)
        validate.errors = check.errors
        return valid
      }
      if (data.length < many.minItems! || data.length > many.maxItems!) return { error: new TABLECRUD_ERR_BODY_ROW_COUNT(many.maxItems, data.length) }
      const failures: FieldError[] = []
      data.forEach((row, index) => {
        if (!check(row)) failures.push(...fieldErrors(check.errors!, '(row)').map((e) => ({ index, ...e })))
      })
      return failures.length === 0 || { error: bodyInvalid(failures) }
    }
    validate.errors = null as typeof check.errors
    // Fastify's type says boolean results; at run time it also takes { error }.
    return validate as FastifyValidationResult
  }
}

/**
 * Converts every element's values (`toRow`, which throws only its 400 of field errors): the
 * failures of all the elements make one 400, each with its element's index.
 */
export function convertRows<T> (rows: readonly Row[], convert: (row: Row) => T): T[] {
  const failures: FieldError[] = []
  const out = rows.map((row, index) => {
    try {
      return convert(row)
    } catch (error) {
      failures.push(...(bodyOf(atIndex(error, index))!.errors as FieldError[]))
      return undefined as T
    }
  })
  if (failures.length > 0) throw bodyInvalid(failures)
  return out
}

/**
 * Inserts the rows, all or none, and resolves to `answer` of them as created, in order, written
 * before COMMIT (a row it cannot write is not committed). Rows with the same columns go in one
 * statement (atomic by itself). Rows whose columns differ (hooks that add or drop keys, a UUID
 * key given for some rows only) go one by one, in a transaction.
 */
export async function insertRows<T> (c: CrudContext, ctx: QueryContext, rows: readonly Values[], answer: (created: Row[]) => T): Promise<T> {
  const { table, options: { excludeSecrets } } = c
  return await writeRows(c, ctx, rows, sameColumns(rows) ? [rows] : [],
    (run) => compileInsertRows(table, run, excludeSecrets), (row) => compileInsert(table, row, excludeSecrets), answer, resultTypes(table, excludeSecrets))
}
