import { Type, type TArray, type TObject, type TSchema } from '@sinclair/typebox'

/** Every error body (SPEC §1); other members may be added, so none is refused. */
export const ErrorResponse = Type.Object({
  statusCode: Type.Integer(),
  code: Type.String(),
  error: Type.String(),
  message: Type.String(),
  validFields: Type.Optional(Type.Array(Type.String())),
  details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() })))
}, { title: 'ErrorResponse', additionalProperties: true })

/** GET `/count/` (SPEC §2.8). */
export const CountResponse = Type.Object({
  count: Type.Integer(),
  page_size: Type.Integer()
}, { title: 'CountResponse' })

/** GET `/ids/` (SPEC §2.8): primary key -> readable representation. */
export const IdsResponse = Type.Object({}, { title: 'IdsResponse', additionalProperties: Type.String() })

/** GET `/references/` (SPEC §2.8). */
export const ReferencesResponse = Type.Object({
  references: Type.Array(Type.Object({ tableName: Type.String(), columnName: Type.String() }))
}, { title: 'ReferencesResponse' })

/** GET `/` (SPEC §2.3): `MovieRow` gives `MovieList`. */
export function listResponse<T extends TSchema> (row: T): TObject<{ rows: TArray<T> }> {
  const title = typeof row.title === 'string' ? { title: row.title.replace(/Row$/, '') + 'List' } : {}
  return Type.Object({ rows: Type.Array(row) }, title)
}

/*
 * Response headers, for OpenAPI: @fastify/swagger reads `headers` beside a response's body
 * schema; the serialiser ignores it.
 */

/** GET `/` with `__range_header` (SPEC §2.3). */
export const ContentRangeHeader = Type.String({
  description: 'Sent with `__range_header`: `<name> <first>-<last>/<total>`, from 0; `<total>` counts the rows matching the filters.'
})

/** POST `/` (SPEC §2.5). */
export const LocationHeader = Type.String({ description: 'The path of the created row: `<prefix>/<id>/`.' })

/** DELETE `/` (SPEC §2.7). */
export const DeletedCountHeader = Type.Integer({ minimum: 0, description: 'How many rows were deleted.' })

/** A 503 (SPEC §1). */
export const RetryAfterHeader = Type.Integer({ minimum: 0, description: 'Seconds to wait before trying again.' })

/** `schema` with response headers to document: `withHeaders(MovieRow, { Location: LocationHeader })`. */
export function withHeaders<T extends TSchema> (schema: T, headers: Record<string, TSchema>): T & { headers: Record<string, TSchema> } {
  return { ...schema, headers }
}

/** A 503: the database cannot be reached, with `Retry-After`. */
export const ServiceUnavailableResponse: TSchema = withHeaders(
  // @fastify/swagger's key for the response's description: the body keeps the error shape as it is.
  { ...ErrorResponse, 'x-response-description': 'The database cannot be reached or timed out.' },
  { 'Retry-After': RetryAfterHeader }
)
