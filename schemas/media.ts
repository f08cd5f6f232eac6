import { Type, type TObject } from '@sinclair/typebox'

/**
 * POST `/media/` (SPEC §5.8), for the OpenAPI document only: the body is multipart, read as a
 * stream by the route, never validated as an object. `file` as a binary string is what gives
 * Swagger UI its file picker.
 */
export function mediaUploadBody (columns: readonly string[]): TObject {
  return Type.Object({
    column: Type.Union(columns.map((c) => Type.Literal(c)), { description: 'The media column the file is for; send it before the file' }),
    file: Type.String({ format: 'binary', description: 'The file; its name is checked by the storage\'s rules' })
  }, { title: 'MediaUpload' })
}

export const MediaUploadResponse = Type.Object({
  file_key: Type.String({ description: 'The key to write in the column' })
}, { title: 'MediaUploadResponse', description: 'Stored: write the key in the column' })

/** GET `/media/url/` (SPEC §5.8). */
export function mediaUrlQuery (columns: readonly string[]): TObject {
  return Type.Object({
    column: Type.Union(columns.map((c) => Type.Literal(c))),
    file_key: Type.String({ description: 'A key the column holds' })
  }, { additionalProperties: false })
}

export const MediaUrlResponse = Type.Object({
  file_url: Type.String({ description: 'Where the file can be fetched: presigned for a private bucket' })
}, { title: 'MediaUrlResponse', description: 'The URL of the file' })
