import { Type, type TObject, type TProperties } from '@sinclair/typebox'
import type { Shape } from '../lib/table/statement.js'
import { valueSchema } from './row.js'

const Readable = Type.Union([Type.String(), Type.Null()])

/**
 * An embed (SPEC §8.1) is written as pg parsed it, by `JSON.stringify`: PostgreSQL built its
 * JSON from the embed's own items, each in wire form (lib/sql/embed.ts puts the rest in it, and
 * fails a double JSON cannot write as GET `/` does). Written by its own schema, the bench's
 * embed spent twice the hand-written route's GC concatenating strings (docs/performance.md).
 */
const Embed = Type.Unsafe<unknown[]>({})

/**
 * The response row of a query shape (`__visible_fields` with joins, `__readable`): nested
 * objects for joined fields, `<fk>_readable` strings. Serialises the rows of that shape.
 */
export function shapeSchema (shape: Shape): TObject {
  const root: TProperties = {}
  shape.paths.forEach((path, i) => {
    let properties = root
    for (const key of path.slice(0, -1)) {
      // hasOwn: a ForeignKey may be called `constructor`.
      const existing = Object.hasOwn(properties, key) ? properties[key] as TObject : undefined
      const object = existing ?? Type.Object({})
      if (existing === undefined) properties[key] = object
      properties = object.properties
    }
    const source = shape.sources[i]!
    // An embed (SPEC §8.1): an array of rows of its own shape, never null (no related row: []).
    if (source?.embed !== undefined) {
      properties[path[path.length - 1]!] = Embed
      return
    }
    const value = source === null ? Readable : valueSchema(source.table, source.column, 'out')
    // A joined row may be missing (a NULL ForeignKey): its fields are then null.
    properties[path[path.length - 1]!] = path.length > 1 ? Type.Union([value, Type.Null()]) : value
  })
  return Type.Object(root)
}
