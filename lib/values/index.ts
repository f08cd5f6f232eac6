/**
 * Wire <-> database values (SPEC §2.2). Every function returns `undefined` for input it cannot
 * take, so callers decide which error to raise.
 */

const INT = /^[+-]?\d+$/
const INT32_MIN = -2147483648
const INT32_MAX = 2147483647

/** A 32-bit integer from a query string or path (digits, optional sign). */
export function parseInteger (text: string): number | undefined {
  if (!INT.test(text)) return undefined
  const n = Number(text)
  return isInt32(n) ? n : undefined
}

export function isInt32 (n: unknown): n is number {
  return Number.isInteger(n) && (n as number) >= INT32_MIN && (n as number) <= INT32_MAX
}

/** A plain decimal, as a filter value or a Numeric body string takes it: no exponent, no blanks. */
export const DECIMAL_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)$/

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/** A finite number from a query string. */
export function parseReal (text: string): number | undefined {
  if (!NUMBER.test(text)) return undefined
  const n = Number(text)
  return Number.isFinite(n) ? n : undefined
}

const BOOLEANS = new Map([
  ['true', true], ['false', false], ['1', true], ['0', false],
  ['t', true], ['f', false], ['yes', true], ['no', false]
])

/** The boolean spellings of SPEC §2.2, lower case (any case is taken). */
export const BOOLEAN_SPELLINGS: readonly string[] = Object.freeze([...BOOLEANS.keys()])

/** `true false 1 0 t f yes no`, any case. */
export function parseBoolean (text: string): boolean | undefined {
  return BOOLEANS.get(text.toLowerCase())
}

const DECIMAL = /^([+-])?(\d*)(?:\.(\d*))?$/

/**
 * A Numeric(precision, scale) value, from a JSON number or a decimal string, as the canonical
 * string PostgreSQL stores (`"12.50"`). Undefined when it is not a decimal or does not fit:
 * more integer digits than precision - scale allows, or more fraction digits than scale.
 */
export function parseNumeric (value: unknown, precision: number, scale: number): string | undefined {
  let text: string
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined
    text = numberToPlain(value)
  } else if (typeof value === 'string') {
    text = value.trim()
  } else {
    return undefined
  }
  const m = DECIMAL.exec(text)
  if (m === null) return undefined
  const [, sign = '', intRaw = '', fracRaw = ''] = m
  if (intRaw === '' && fracRaw === '') return undefined
  const int = intRaw.replace(/^0+(?=\d)/, '') || '0'
  const frac = fracRaw.replace(/0+$/, '')
  if (frac.length > scale) return undefined
  if ((int === '0' ? 0 : int.length) > precision - scale) return undefined
  const isZero = int === '0' && frac === ''
  const out = scale > 0 ? `${int}.${frac.padEnd(scale, '0')}` : int
  return sign === '-' && !isZero ? `-${out}` : out
}

/**
 * A JS number written without exponent (1e-7 -> "0.0000001", 1e21 -> "1000000000000000000000"),
 * digit for digit as JSON wrote it: `toFixed` would round small numbers away.
 */
function numberToPlain (n: number): string {
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(String(n))
  if (m === null) return String(n)
  const [, sign, lead, rest = '', exponent] = m
  const digits = lead! + rest
  const point = 1 + Number(exponent)
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`
  // JS writes a large number with an exponent only from 1e21 on: past all of its 17 digits.
  return sign + digits + '0'.repeat(point - digits.length)
}

/** An ISO 8601 date or date-time with an optional zone; the calendar is checked by parseTimestamp. */
export const TIMESTAMP_IN = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6})\d*)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/

/**
 * An ISO 8601 date-time or date, as the `YYYY-MM-DD HH:MM:SS.ffffff` text PostgreSQL takes for
 * a timestamp without zone. A zone offset is applied, so the result is UTC.
 */
export function parseTimestamp (text: string): string | undefined {
  const m = TIMESTAMP_IN.exec(text)
  if (m === null) return undefined
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)] as const
  // Not Date.UTC, which reads years 0 to 99 as 1900 to 1999.
  const date = new Date(0)
  date.setUTCFullYear(fields[0], fields[1], fields[2])
  date.setUTCHours(fields[3], fields[4], fields[5])
  const ms = date.getTime()
  // Dates roll 31 February over into March: a calendar check refuses it.
  if (date.getUTCFullYear() !== fields[0] || date.getUTCMonth() !== fields[1] || date.getUTCDate() !== fields[2] ||
      date.getUTCHours() !== fields[3] || date.getUTCMinutes() !== fields[4] || date.getUTCSeconds() !== fields[5]) {
    return undefined
  }
  let utc = date
  if (zone !== undefined && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1
    const digits = zone.slice(1).replace(':', '')
    const minutes = Number(digits.slice(2) || 0)
    const offset = Number(digits.slice(0, 2)) * 60 + minutes
    if (offset >= 24 * 60 || minutes > 59) return undefined
    utc = new Date(ms - sign * offset * 60000)
  }
  const iso = utc.toISOString()
  // PostgreSQL has no year 0, and a zone offset can push 9999-12-31 out of the four-digit form.
  if (!/^\d{4}-/.test(iso) || iso.startsWith('0000')) return undefined
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${frac.padEnd(6, '0')}`
}

const WIRE_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?$/

/**
 * PostgreSQL's timestamp text (`2024-01-02 03:04:05.5`) as the wire form
 * `2024-01-02T03:04:05.500000`; the fraction only when it is not zero.
 */
export function formatTimestamp (text: string): string {
  if (!WIRE_TIMESTAMP.test(text)) return text // infinity, -infinity, BC dates, years past 9999
  const dot = text.indexOf('.', 19)
  if (dot === -1) return `${text.slice(0, 10)}T${text.slice(11)}`
  return `${text.slice(0, 10)}T${text.slice(11, dot)}.${text.slice(dot + 1).padEnd(6, '0')}`
}

/** The current time in UTC, in the wire form, to the second (what `/new/` offers). */
export function nowTimestamp (): string {
  return new Date().toISOString().slice(0, 19)
}
