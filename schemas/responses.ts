import { Type, type TArray, type TObject, type TSchema } from '@sinclair/typebox'

/** Every error body (SPEC §1); other members may be added, so none is refused. */
export const ErrorResponse = Type.Object({
  statusCode: Type.Integer(),
  code: Type.String(),
  error: Type.String(),
  message: Type.String(),
  validFields: Type.Optional(Type.Array(Type.String())),
  details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  errors: Type.Optional(Type.Array(Type.Object({
    index: Type.Optional(Type.Integer({ description: 'In an array body, the failing element (from 0).' })),
    field: Type.String(),
    message: Type.String()
  })))
}, { title: 'ErrorResponse', additionalProperties: true })

/** GET `/count/` (SPEC §2.8). */
export const CountResponse = Type.Object({
  count: Type.Integer(),
  page_size: Type.Integer(),
  estimated: Type.Optional(Type.Boolean({ description: "With countMode 'estimated' only: whether count is the planner's estimate (SPEC §7.2)." }))
}, { title: 'CountResponse' })

/** GET `/ids/` (SPEC §2.8): primary key -> readable representation. */
export const IdsResponse = Type.Object({}, { title: 'IdsResponse', additionalProperties: Type.String() })

/**
 * GET `/schema/` (SPEC §2.8): the JSON Schema of the row a client sends, with the `extra` of
 * each property and of the table. Sent as serialised at registration; this documents it.
 */
export const SchemaDocumentResponse = Type.Object({
  title: Type.String(),
  type: Type.Literal('object'),
  properties: Type.Record(Type.String(), Type.Object({
    title: Type.String(),
    extra: Type.Object({
      help_text: Type.Union([Type.String(), Type.Null()]),
      choices: Type.Union([Type.Record(Type.String(), Type.Object({ display_name: Type.String(), value: Type.Unknown() })), Type.Null()]),
      secret: Type.Boolean(),
      nullable: Type.Boolean(),
      unique: Type.Boolean(),
      foreign_key: Type.Optional(Type.Object({ to: Type.String(), target_column: Type.String() })),
      widget: Type.Optional(Type.String()),
      dimensions: Type.Optional(Type.Integer({ minimum: 1 }))
    }, { additionalProperties: true })
  }, { additionalProperties: true, description: "A column's JSON Schema (a nullable one as anyOf with null), its title and extra." })),
  required: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
  extra: Type.Object({
    help_text: Type.Union([Type.String(), Type.Null()]),
    primary_key_name: Type.String(),
    visible_fields_options: Type.Array(Type.String())
  }, { additionalProperties: true, description: 'The table: its help text, primary key, the names __visible_fields takes, and the schemaExtra option.' })
}, { title: 'SchemaDocument' })

/** GET `/references/` (SPEC §2.8). */
export const ReferencesResponse = Type.Object({
  references: Type.Array(Type.Object({ tableName: Type.String(), columnName: Type.String() }))
}, { title: 'ReferencesResponse' })

/** GET `/` (SPEC §2.3): `MovieRow` gives `MovieList`. */
export function listResponse<T extends TSchema> (row: T): TObject<{ rows: TArray<T> }> {
  const title = typeof row.title === 'string' ? { title: row.title.replace(/Row$/, '') + 'List' } : {}
  return Type.Object({
    rows: Type.Array(row),
    next_cursor: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'With `__cursor` only: the `__cursor` of the next page, null on the last (SPEC §7.1).' }))
  }, title)
}

/** POST `/` of an array (SPEC §7.4): `MovieRow` gives `MovieCreatedList`, the rows in the order sent. */
export function createdResponse<T extends TObject> (row: T): TObject<{ rows: TArray<T> }> {
  return Type.Object({ rows: Type.Array(row) }, { title: `${String(row.title).replace(/Row$/, '')}CreatedList`, description: 'An array body: the created rows, in the order sent.' })
}

/*
 * Response headers, for OpenAPI: @fastify/swagger reads `headers` beside a response's body
 * schema; the serialiser ignores it.
 */

/** GET `/` with `__range_header` (SPEC §2.3). */
export const ContentRangeHeader = Type.String({
  description: 'Sent with `__range_header`: `<name> <first>-<last>/<total>`, from 0; `<total>` counts the rows matching the filters.'
})

/** GET `/` with `__cursor` (SPEC §7.1). */
export const LinkHeader = Type.String({ description: 'With `__cursor`, unless this is the last page: `<full URL of the next page>; rel="next"`.' })

/** GET `/` streams instead of a page for these media types (SPEC §7.5); named in the route's description. */
export const EXPORT_DESCRIPTION = 'With `Accept: application/x-ndjson` or `Accept: text/csv` (or `__format=ndjson|csv`), streams every row matching the filters in `__order`, with `__visible_fields` and `__readable`, as NDJSON (`application/x-ndjson`) or RFC 4180 CSV with a header row (`text/csv`); `__page` and `__page_size` are ignored.'

/**
 * The 200 of GET `/`: a page as JSON, or every matching row streamed as NDJSON or CSV (SPEC
 * §7.5), each media type with its schema. Fastify serialises the JSON page by its schema; the
 * streams are sent as they are.
 */
export function listOrExportResponse<T extends TSchema> (row: T): { description: string, headers: Record<string, TSchema>, content: Record<string, { schema: TSchema }> } {
  return {
    description: 'A page of rows; every matching row with an export media type.',
    headers: { 'Content-Range': ContentRangeHeader, Link: LinkHeader },
    content: {
      'application/json': { schema: listResponse(row) },
      'application/x-ndjson': { schema: Type.String({ description: 'Every matching row, one JSON object per line, as a row of the JSON page.' }) },
      'text/csv': { schema: Type.String({ description: 'Every matching row, RFC 4180: a header row of the field names (`director.name` for a joined field), arrays as their JSON text.' }) }
    }
  }
}

/** POST `/` (SPEC §2.5). */
export const LocationHeader = Type.String({ description: 'The path of the created row: `<prefix>/<id>/` (not sent for an array body).' })

/** A row's entity tag (SPEC §7.3). */
export const ETagHeader = Type.String({ description: 'The strong entity tag of the row as served: send it back in If-Match to write only over this version, or in If-None-Match for a 304.' })

/** A 304 of GET `/:id/`: the client's copy is current. */
export const NotModifiedResponse = { type: 'null', description: 'Not modified: If-None-Match holds the current ETag.', headers: { ETag: ETagHeader } }

/** DELETE `/` (SPEC §2.7). */
export const DeletedCountHeader = Type.Integer({ minimum: 0, description: 'How many rows were deleted.' })

/** A 503 (SPEC §1). */
export const RetryAfterHeader = Type.Integer({ minimum: 0, description: 'Seconds to wait before trying again.' })

/** `schema` with response headers to document: `withHeaders(MovieRow, { Location: LocationHeader })`. */
export function withHeaders<T extends TSchema> (schema: T, headers: Record<string, TSchema>): T & { headers: Record<string, TSchema> } {
  return { ...schema, headers }
}

/**
 * A response schema with the description OpenAPI shows for its status (else "Default
 * Response"): @fastify/swagger's key beside the body schema, which the body itself does not get.
 */
export function described<T extends object> (schema: T, description: string): T {
  return { ...schema, 'x-response-description': description }
}

/** The error shape, documented for one status with what it means there. */
export function errorResponse (description: string): TSchema {
  return described(ErrorResponse, description)
}

/** A 503 whose cause `description` names, with `Retry-After`. */
/** The 429 of a login whose account tried too many wrong MFA codes (authenticatorProvider's lockout). */
export const MfaLockedResponse = withHeaders(errorResponse('Too many wrong MFA codes for this account (TABLECRUD_ERR_MFA_LOCKED): try again after `Retry-After` seconds, or use a recovery code.'), { 'Retry-After': RetryAfterHeader })

const unavailable = (description: string): TSchema => withHeaders(errorResponse(description), { 'Retry-After': RetryAfterHeader })

/** A 503: the database cannot be reached, with `Retry-After`. */
export const ServiceUnavailableResponse: TSchema = unavailable('The database cannot be reached or timed out.')

/** The 503 of a media upload: the database's, or the media store's (TABLECRUD_ERR_MEDIA_UNAVAILABLE). */
export const MediaUnavailableResponse: TSchema = unavailable('The database or the media store cannot be reached or timed out.')

/** What each error status of the TableCRUD routes means (SPEC §1, §7.3). */
const MEANINGS = {
  400: 'Bad input: the query string, the id or the body (not JSON, failing validation, unknown keys), or a validator or hook refusing it; the message names the offending input.',
  401: 'Credentials missing, malformed, expired or revoked.',
  403: 'A validator refuses the request.',
  404: 'No row has this id.',
  412: "If-Match does not hold the row's current ETag: the row has changed since it was read, and nothing was written.",
  413: 'The body is over the size limit.',
  415: 'The body is not `application/json`.',
  422: 'The write violates a database constraint (unique, foreign key, not-null, check), named in `details`.',
  428: 'If-Match is missing, and this table requires it for writes.'
} as const

export type ErrorStatus = keyof typeof MEANINGS | 503

/**
 * One schema object per status, shared by every route: Fastify's serialisers are kept per
 * schema object (plugins/crud/compilers.ts).
 */
const RESPONSES = new Map<ErrorStatus, TSchema>([
  ...Object.entries(MEANINGS).map(([status, meaning]): [ErrorStatus, TSchema] => [Number(status) as ErrorStatus, errorResponse(meaning)]),
  [503, ServiceUnavailableResponse]
])

/**
 * A route's responses by status, as Fastify takes them: plain properties, held by V8 in a small
 * dictionary. Set on an ordinary object, numeric keys make an array as long as the highest
 * status, 504 slots (some 5 kB) for a route that can answer 503, kept by every route of every
 * table (0.6 MB of heap with 20 tables; docs/performance.md, ninth pass). A read-only element
 * turns the elements into a dictionary, which stays one once it is deleted, keys this sparse.
 */
export function byStatus<T> (responses: Record<number, T>): Record<number, T> {
  const out: Record<number, T> = {}
  Object.defineProperty(out, 0, { configurable: true })
  delete out[0]
  return Object.assign(out, responses)
}

/** The error responses of a route, one per status it can answer, in the shape of SPEC §1. */
export function errorResponses (statuses: readonly ErrorStatus[]): Record<number, TSchema> {
  const sorted = [...new Set(statuses)].sort((a, b) => a - b)
  return Object.fromEntries(sorted.map((status) => [status, RESPONSES.get(status)!]))
}
