import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import type { FastifySchemaCompiler, FastifyValidationResult } from 'fastify/types/schema.js'
import { Type, type TArray, type TObject, type TUnion } from '@sinclair/typebox'
import type { Ajv } from 'ajv'
import { rowETag } from '../../lib/etag.js'
import {
  bodyInvalid, bodyOf, fromDatabaseError, TABLECRUD_ERR_BODY_INVALID, TABLECRUD_ERR_BODY_ROW_COUNT, withBody, type FieldError
} from '../../lib/errors.js'
import { compileInsert, compileInsertRows, sameColumns } from '../../lib/sql/write.js'
import { typeOf } from '../../lib/table/column-types.js'
import type { TableColumn } from '../../lib/table/table.js'
import { createdResponse, ETagHeader, LocationHeader, withHeaders } from '../../schemas/responses.js'
import { aRow } from '../../schemas/query.js'
import { createBodySchema } from '../../schemas/row.js'
import { fieldErrors } from '../errors.js'
import type { BodyValues } from './body.js'
import { guarded, hookError, type CrudContext } from './context.js'
import type { Row } from './options.js'
import { lazyValidator } from './compilers.js'
import { beforeCommit, rowAnswer } from './before-commit.js'
import { route } from './routing.js'

/** POST `/` (SPEC §2.5): one row from an object, or all the rows of an array, or none (SPEC §7.4). */

type Values = Map<TableColumn, unknown>
type Checked = { body: Row, row: ReadonlyMap<TableColumn, unknown> }

export function postRoute (c: CrudContext, values: BodyValues): void {
  const { fastify, table, hooks: { preSave }, schemas: { row } } = c
  const pk = table.primaryKey
  // What a POST writes of one element: the default of each column left out, the preSave hooks' result, converted.
  const toWrite = async (request: FastifyRequest, body: Row, checked: Checked): Promise<Values> => {
    let full = values.fullRow(body, undefined)
    for (const hook of preSave) full = await guarded(async () => await hook.callable(full, { request }), hookError)
    if (typeOf(pk).key!.assigned) delete full[pk.name]
    return await values.prepare(full, checked)
  }
  // A copy of each body: a validator or hook may change it in place.
  const check = (body: Row): Checked => ({ body: { ...body }, row: values.toRow(body) })
  const created = createdResponse(row)
  // Each answer by its own schema (the route's, the union of both, is for OpenAPI), written
  // before COMMIT: a row it cannot write is not committed (issue 27).
  const answerRow = rowAnswer(table, row)
  const answerRows = (rows: readonly Row[]): string => `{"rows":[${rows.map(answerRow).join(',')}]}`
  const answers = Type.Union([row, created], { 'x-response-description': 'Created: the row, with Location and ETag, for an object body; `{"rows": [...]}`, without them, for an array body.' })

  route<{ Body: Row | Row[] }>(fastify, {
    method: 'POST',
    url: '/',
    schema: c.routeSchema('postSingle', 'create', [400, 413, 415, 422, 503], {
      summary: `Create ${aRow(table.name)}, or several`,
      description: `An object creates one row; an array of 1 to ${c.options.maxPageSize} objects creates them all, or none (SPEC §7.4).`,
      body: createBodySchema(table, c.options.maxPageSize),
      response: { 201: withHeaders(answers, { Location: LocationHeader, ETag: ETagHeader }) }
    }),
    validatorCompiler: postBodyCompiler(c.ajv),
    handler: async (request, reply) => {
      const body = request.body
      if (Array.isArray(body)) {
        const checked = convertRows(body, check)
        await c.validate('postSingle', request)
        const rows: Values[] = []
        for (const [index, one] of body.entries()) rows.push(await toWrite(request, one, checked[index]!).catch((error: unknown) => { throw atIndex(error, index) }))
        return send(reply, await insertRows(c, rows, answerRows))
      }
      const checked = check(body)
      await c.validate('postSingle', request)
      const values = await toWrite(request, body, checked)
      const { one, text } = await beforeCommit(c.db, async (tx) => {
        const one = (await tx.run(compileInsert(table, values, c.options.excludeSecrets))).rows[0]!
        return { one, text: answerRow(one) }
      })
      const prefix = fastify.prefix.replace(/\/$/, '')
      reply.header('location', `${prefix}/${encodeURIComponent(String(one[pk.name]))}/`).header('etag', rowETag(one))
      return send(reply, text)
    }
  })
}

/** A 201 of POST `/`, its body already written. */
function send (reply: FastifyReply, text: string): FastifyReply {
  return reply.code(201).type('application/json; charset=utf-8').send(text)
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
 * The error of the element at `index`, saying so: field errors gain `index` (as Ajv's do), any
 * other error `details.index`.
 */
export function atIndex (error: unknown, index: number): Error {
  const body = bodyOf(error)
  if (error instanceof TABLECRUD_ERR_BODY_INVALID) return bodyInvalid((body!.errors as FieldError[]).map((e) => ({ index, ...e })))
  return withBody(error as Error, { ...body, details: { ...(body?.details as object | undefined), index } })
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
 * before COMMIT (a row it cannot write is not committed). Rows with the same
 * columns go in one statement (atomic by itself). When that statement is refused by a client
 * error of the database (a constraint, a value out of range), it has written nothing, and the
 * rows are inserted again one by one in a transaction, only to learn which one is refused: the
 * first to fail answers, with its index, and the transaction rolls back. Rows whose columns
 * differ (hooks that add or drop keys, a UUID key given for some rows only) take that second
 * way directly.
 */
export async function insertRows<T> (c: CrudContext, rows: readonly Values[], answer: (created: Row[]) => T): Promise<T> {
  const { table, db, options: { excludeSecrets } } = c
  if (sameColumns(rows)) {
    try {
      return await beforeCommit(db, async (tx) => answer((await tx.run(compileInsertRows(table, rows, excludeSecrets))).rows))
    } catch (error) {
      if (clientError(error) === undefined) throw error
    }
  }
  return await beforeCommit(db, async (tx) => {
    const created: Row[] = []
    for (const [index, row] of rows.entries()) {
      try {
        created.push((await tx.run(compileInsert(table, row, excludeSecrets))).rows[0]!)
      } catch (error) {
        const refused = clientError(error)
        // Anything else (a 503) is thrown as it came, for the transaction to judge its connection.
        throw refused === undefined ? error : atIndex(refused, index)
      }
    }
    return answer(created)
  })
}

/** The 4xx a database error maps to, or undefined for any other error (a 503, a bug). */
function clientError (error: unknown): Error | undefined {
  const mapped = fromDatabaseError(error) as (Error & { statusCode: number }) | undefined
  return mapped !== undefined && mapped.statusCode < 500 ? mapped : undefined
}
