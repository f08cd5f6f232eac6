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
 * Serialisers for query shapes the route schema does not cover (joins, `__readable`), by
 * shape, so each shape's fast-json-stringify function is compiled once per context: a list's
 * is set on the reply (`reply`), one row's is called by GET `/:id/`, which hashes the text for
 * its ETag (`text`).
 */
export function shapeSerialiser (): { reply: (reply: FastifyReply, shape: Shape) => void, text: (shape: Shape, row: Row) => string } {
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
    // A custom serialiser leaves the content type unset: Fastify only sets it for its own.
    reply: (reply, shape) => { reply.type('application/json; charset=utf-8').serializer(of(shape, true)) },
    text: (shape, row) => of(shape, false)(row)
  }
}

/** The response rows of a SELECT: pg's rows as they are when the shape is flat. */
export function rowsOf (result: Result<Row>, statement: SelectStatement): Row[] {
  return statement.shape.flat ? result.rows : result.rows.map((r) => shapeRow(r, statement.shape))
}

/** Whether the route's own response schema cannot serialise these rows. */
export function customShape (statement: SelectStatement, readable: boolean): boolean {
  return !statement.shape.flat || readable
}
