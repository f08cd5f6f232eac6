import type { FastifyReply } from 'fastify'
import type { Result } from '../../lib/db/port.js'
import { shapeRow } from '../../lib/sql/select.js'
import type { SelectStatement, Shape } from '../../lib/table/statement.js'
import { listResponse } from '../../schemas/responses.js'
import { shapeSchema } from '../../schemas/shape.js'
import { serialiserCompiler } from './compilers.js'
import type { Row } from './options.js'

const MAX_SHAPES = 500

/**
 * Serialisers for query shapes the route schema does not cover (joins, `__readable`, embeds), by
 * shape, so each shape's fast-json-stringify function is compiled once per context: a page's
 * is sent by `page`, one row's is called by GET `/:id/`, which hashes the text for its ETag
 * (`text`).
 */
export function shapeSerialiser (): { page: (reply: FastifyReply, shape: Shape, page: object) => FastifyReply, text: (shape: Shape, row: Row) => string } {
  const serialisers = new Map<string, (data: unknown) => string>()
  const of = (shape: Shape, list: boolean): (data: unknown) => string => {
    const key = `${list ? 'list' : 'one'}:${shape.key}`
    let serialise = serialisers.get(key)
    if (serialise === undefined) {
      serialise = serialiserCompiler({ schema: list ? listResponse(shapeSchema(shape)) : shapeSchema(shape) })
      if (serialisers.size < MAX_SHAPES) serialisers.set(key, serialise)
    }
    return serialise
  }
  return {
    page: (reply, shape, page) => sendJson(reply, of(shape, true)(page)),
    text: (shape, row) => of(shape, false)(row)
  }
}

/**
 * A body written by a serialiser of the handler's own, sent as text. Not set with
 * `reply.serializer`: a value it cannot write (a NaN) is then the handler's error, answered
 * with the route's error schema; a serialiser set on the reply was also handed the error's
 * body, and its failure went out as Fastify's own 500 (`"rows" is required!`).
 */
export function sendJson (reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text)
}

/** The response rows of a SELECT: pg's rows as they are when the shape is flat. */
export function rowsOf (result: Result<Row>, statement: SelectStatement): Row[] {
  return statement.shape.flat ? result.rows : result.rows.map((r) => shapeRow(r, statement.shape))
}

/** Whether the route's own response schema cannot serialise these rows. */
export function customShape (statement: SelectStatement, readable: boolean): boolean {
  return !statement.shape.flat || readable
}
