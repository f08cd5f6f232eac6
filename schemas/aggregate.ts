import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { Output } from '../lib/query/aggregate.js'
import type { Table } from '../lib/table/table.js'
import { BOOLEAN_SPELLINGS } from '../lib/values/index.js'
import { listQuerySchema, type ListQueryOptions } from './query.js'
import { valueSchema } from './row.js'

/*
 * GET `/aggregate/` (SPEC §8.3): the query string, for OpenAPI (the plugin parses it itself),
 * and the rows of each shape of answer, which serialise them.
 */

/**
 * A schema or null. A single-typed schema becomes a type list (`["number", "null"]`), which
 * fast-json-stringify serialises by a typeof check; an anyOf costs it a validation per value,
 * some 1 µs each, which the aggregate bench showed on every nullable output of every row.
 */
function orNull (schema: TSchema): TSchema {
  const { type } = schema as { type?: unknown }
  return typeof type === 'string' ? { ...schema, type: [type, 'null'] } : Type.Union([schema, Type.Null()])
}

/** One output's wire form (SPEC §2.2): a count an integer, avg/sum a number or an exact decimal string, min/max/keys their field's. */
function outputSchema (output: Output): TSchema {
  switch (output.kind) {
    case 'count': return Type.Integer()
    case 'float': return orNull(Type.Number())
    case 'decimal': return orNull(Type.String())
    case 'same': return orNull(output.source === null ? Type.String() : valueSchema(output.source.table, { ...output.result, nullable: false }, 'out'))
  }
}

/** The row of an answer with these outputs, in order. */
export function aggregateRowSchema (outputs: readonly Output[]): TObject {
  const properties: TProperties = {}
  for (const output of outputs) properties[output.name] = outputSchema(output)
  return Type.Object(properties)
}

/** What OpenAPI says of the 200: rows whose members depend on the query. */
export const AggregateResponse = Type.Object({
  rows: Type.Array(Type.Object({}, {
    additionalProperties: true,
    description: 'One per group: each __group_by key (with `<key>_readable` for a ForeignKey when __readable), then each __aggregate output.'
  }))
}, { title: 'AggregateResponse' })

const SPELLINGS = Type.Unsafe<string>({ type: 'string', enum: [...BOOLEAN_SPELLINGS] })

/** The query string of GET `/aggregate/`: the filters of GET `/` and the aggregate's own parameters. */
export function aggregateQuerySchema (table: Table, options: ListQueryOptions): TObject {
  const { __visible_fields: _fields, __order: _order, __page_size: _pageSize, ...filters } = listQuerySchema(table, options).properties
  const list = (description: string): TSchema => Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description }))
  return Type.Object({
    ...filters,
    __aggregate: list('Comma-separated, or repeated: count, count(<field>), count_distinct(<field>), avg(<field>), sum(<field>), min(<field>), max(<field>). Outputs: count, <fn>_<field> (a path\'s dots as _). Default: count.'),
    __group_by: list('Comma-separated, or repeated: fields or ForeignKey paths within maxJoins; a date or timestamp field truncated with :year, :month, :day or :hour (output <field>_<unit>).'),
    __having: Type.Optional(Type.Array(Type.String(), { description: 'Filters groups: (<output>.<op>.<value>,...) over output names, the grammar of __and (SPEC §8.2); may repeat.' })),
    __order: list('Comma-separated output names (group keys and aggregates), a - prefix for descending. Default: the group keys ascending, which also break ties.'),
    __page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: options.maxPageSize, description: `Groups per page, 1 to ${options.maxPageSize}.` })),
    __readable: Type.Optional(Type.Unsafe<string>({ ...SPELLINGS, description: 'Add `<key>_readable` after each ForeignKey group key: the referenced row as text. Any case.' })),
    __range_header: Type.Optional(Type.Unsafe<string>({ ...SPELLINGS, description: 'Send `Content-Range: <name> <first>-<last>/<groups>`. Any case.' }))
  }, { additionalProperties: false, style: 'form', explode: true })
}
