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
