import pg from 'pg'
import { formatTimestamp } from '../values/index.js'

const TIMESTAMP = 1114
const TIMESTAMP_ARRAY = 1115
const NUMERIC_ARRAY = 1231

type Parser = (text: string) => unknown

const arrayOf = (parse: Parser): Parser => (text) => (pg.types as any).arrayParser.create(text, parse).parse()
const identity: Parser = (text) => text

const overrides = new Map<number, Parser>([
  [TIMESTAMP, formatTimestamp],
  [TIMESTAMP_ARRAY, arrayOf(formatTimestamp)],
  [NUMERIC_ARRAY, arrayOf(identity)]
])

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
