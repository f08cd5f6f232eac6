import pg from 'pg'
import { COLUMN_TYPES } from '../table/column-types.js'

type Parser = (text: string) => unknown

const arrayOf = (parse: Parser): Parser => (text) => (pg.types as any).arrayParser.create(text, parse).parse()

/** Each column type's own reader, where its descriptor has one (lib/table/column-types.ts). */
const overrides = new Map<number, Parser>()
for (const type of Object.values(COLUMN_TYPES)) {
  const read = type.read
  if (read === null) continue
  if (read.oid !== null) overrides.set(read.oid, read.parse)
  if (read.arrayOid !== null) overrides.set(read.arrayOid, arrayOf(read.parse))
}

/**
 * Per-query type parsers (pg's `types` query option), so values come back as SPEC §2.2 says
 * whatever pool the integrator made: timestamps keep their text and never pass through JS
 * `Date` (which drops microseconds and applies the local zone); Numeric arrays stay exact.
 */
export const wireTypes = {
  getTypeParser (oid: number, format?: 'text' | 'binary'): Parser {
    return overrides.get(oid) ?? (pg.types.getTypeParser(oid, format) as Parser)
  }
}
