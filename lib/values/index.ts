/**
 * Wire <-> database values (SPEC §2.2). Every function returns `undefined` for input it cannot
 * take, so callers decide which error to raise.
 */

/** A body value that passed the JSON schema but not the column's finer rules; the message is the reason. */
export class ValueError extends Error {}

const INT = /^[+-]?\d+$/
const INT32_MIN = -2147483648
/** The largest 32-bit integer: the bound of a page number and an offset, which PostgreSQL takes as int4. */
export const INT32_MAX = 2147483647

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
  const year = Number(y)
  // Dates roll 31 February over into March: a calendar check refuses it.
  if (!inCalendar(year, Number(mo), Number(d), Number(h), Number(mi), Number(s))) return undefined
  // In UTC already, the text is the answer (PostgreSQL has no year 0): no Date to build and
  // read back, which was half of a POST's value conversion in its profile.
  if (zone === undefined || zone === 'Z') return year === 0 ? undefined : `${y}-${mo}-${d} ${h}:${mi}:${s}.${frac.padEnd(6, '0')}`
  const sign = zone[0] === '-' ? -1 : 1
  const digits = zone.slice(1).replace(':', '')
  const minutes = Number(digits.slice(2) || 0)
  const offset = Number(digits.slice(0, 2)) * 60 + minutes
  if (offset >= 24 * 60 || minutes > 59) return undefined
  // Not Date.UTC, which reads years 0 to 99 as 1900 to 1999.
  const date = new Date(0)
  date.setUTCFullYear(year, Number(mo) - 1, Number(d))
  date.setUTCHours(Number(h), Number(mi), Number(s))
  const iso = new Date(date.getTime() - sign * offset * 60000).toISOString()
  // PostgreSQL has no year 0, and a zone offset can push 9999-12-31 out of the four-digit form.
  if (!/^\d{4}-/.test(iso) || iso.startsWith('0000')) return undefined
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${frac.padEnd(6, '0')}`
}

/**
 * Whether the fields name a moment of the proleptic Gregorian calendar, as a JS Date reads it
 * (year 0 included, as a zone offset may move it into year 1): no 31 February, no hour 24, no
 * leap second.
 */
function inCalendar (year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const days = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
  return month >= 1 && month <= 12 && day >= 1 && day <= days && hour <= 23 && minute <= 59 && second <= 59
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

const INT16_MIN = -32768
const INT16_MAX = 32767

/** A 16-bit integer from a query string or path. */
export function parseSmallInt (text: string): number | undefined {
  const n = parseInteger(text)
  return n !== undefined && n >= INT16_MIN && n <= INT16_MAX ? n : undefined
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/**
 * A 64-bit integer, from a query string, a JSON digit string or a JSON number, as the digit
 * string pg sends and returns: exact past 2^53, where a JS number is not. A JSON number must be
 * a safe integer, since JSON.parse has already rounded any other.
 */
export function parseBigInt (value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : undefined
  if (typeof value !== 'string' || !INT.test(value)) return undefined
  const n = BigInt(value)
  return n >= INT64_MIN && n <= INT64_MAX ? n.toString() : undefined
}

/** A calendar date `YYYY-MM-DD` (years 0001 to 9999). */
export const DATE_IN = /^\d{4}-\d{2}-\d{2}$/

/** A date as PostgreSQL takes and gives it, or undefined for any other text or a day the calendar lacks. */
export function parseDate (value: unknown): string | undefined {
  if (typeof value !== 'string' || !DATE_IN.test(value)) return undefined
  return parseTimestamp(value) === undefined ? undefined : value
}

/** A time of day `HH:MM:SS`, with up to six fraction digits. */
export const TIME_IN = /^([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d{1,6}))?$/

/** The wire form of a time: the fraction padded to six digits, left out when zero (as Timestamp). */
function canonicalTime (clock: string, fraction: string): string {
  return /^0*$/.test(fraction) ? clock : `${clock}.${fraction.padEnd(6, '0')}`
}

/** A time of day from a query string or body, in its wire form; undefined when it is not one. */
export function parseTime (value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const m = TIME_IN.exec(value)
  return m === null ? undefined : canonicalTime(value.slice(0, 8), m[4] ?? '')
}

const WIRE_TIME = /^(\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?$/

/** PostgreSQL's time text (`04:05:06.5`) as the wire form `04:05:06.500000`. */
export function formatTime (text: string): string {
  const m = WIRE_TIME.exec(text)
  return m === null ? text : canonicalTime(m[1]!, m[2] ?? '')
}

/** An ISO 8601 date-time that says its zone: `Z` or an offset. The calendar is checked by parseTimestamp. */
export const TIMESTAMPTZ_IN = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$/

/** A zoned date-time as UTC text PostgreSQL reads the same whatever its TimeZone; undefined without a zone. */
export function parseTimestamptz (value: unknown): string | undefined {
  // RFC 3339 (JSON Schema's date-time) lets the T and Z be lower case.
  const text = typeof value === 'string' ? value.toUpperCase() : ''
  if (!TIMESTAMPTZ_IN.test(text)) return undefined
  const utc = parseTimestamp(text)
  return utc === undefined ? undefined : `${utc}+00`
}

const WIRE_TIMESTAMPTZ = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?$/

/**
 * PostgreSQL's timestamptz text, in the session's zone (`2024-01-02 08:34:05.5+05:30`), as the
 * wire form in UTC: `2024-01-02T03:04:05.500000Z`. The seconds are shifted as whole numbers and
 * the fraction kept as text, so no microsecond is lost (a JS Date keeps milliseconds only).
 */
export function formatTimestamptz (text: string): string {
  const m = WIRE_TIMESTAMPTZ.exec(text)
  if (m === null) return text // infinity, -infinity, BC dates, years past 9999
  const [, y, mo, d, h, mi, s, frac = '', sign, oh, om = '0', os = '0'] = m
  const date = new Date(0)
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d))
  date.setUTCHours(Number(h), Number(mi), Number(s))
  const offset = (Number(oh) * 3600 + Number(om) * 60 + Number(os)) * (sign === '-' ? -1 : 1)
  const iso = new Date(date.getTime() - offset * 1000).toISOString()
  // A shift past year 1 or 9999 has no four-digit form: the server's own text says more.
  if (!/^\d{4}-/.test(iso) || iso.startsWith('0000')) return text
  return `${iso.slice(0, 19)}${/^0*$/.test(frac) ? '' : `.${frac.padEnd(6, '0')}`}Z`
}

/** The current time in UTC, in the Timestamptz wire form, to the second. */
export function nowTimestamptz (): string {
  return `${nowTimestamp()}Z`
}

/** Today's date in UTC. */
export function today (): string {
  return new Date().toISOString().slice(0, 10)
}

/** The current time of day in UTC, to the second. */
export function nowTime (): string {
  return new Date().toISOString().slice(11, 19)
}

/**
 * An ISO 8601 duration (`P1Y2M3W4DT5H6M7.5S`, each part optional, a part may be negative as
 * PostgreSQL allows, only seconds with a fraction). The digit limits keep every value inside
 * PostgreSQL's interval range, so a valid form never fails in the database.
 */
export const INTERVAL_IN = /^P(?=.)(?:-?\d{1,6}Y)?(?:-?\d{1,9}M)?(?:-?\d{1,6}W)?(?:-?\d{1,9}D)?(?:T(?=.)(?:-?\d{1,9}H)?(?:-?\d{1,9}M)?(?:-?\d{1,9}(?:[.,]\d{1,6})?S)?)?$/

/** An ISO 8601 duration, which PostgreSQL reads as it is; undefined for anything else. */
export function parseInterval (value: unknown): string | undefined {
  return typeof value === 'string' && INTERVAL_IN.test(value) ? value.replace(',', '.') : undefined
}

const PG_INTERVAL = /^(?:([+-]?\d+) years? ?)?(?:([+-]?\d+) mons? ?)?(?:([+-]?\d+) days? ?)?(?:([+-])?(\d+):(\d\d):(\d\d)(?:\.(\d+))?)?$/

/**
 * PostgreSQL's interval text in its default style (`1 year 2 mons -3 days +04:05:06.789`) as an
 * ISO 8601 duration, written as PostgreSQL's own `iso_8601` style writes it (`P1Y2M-3DT4H5M6.789S`,
 * `PT0S` for zero). Text already in that style passes as it is.
 */
export function formatInterval (text: string): string {
  const m = PG_INTERVAL.exec(text)
  if (m === null || text === '') return text
  const [, years, months, days, sign = '', hours = '0', minutes = '0', seconds = '0', fraction = ''] = m
  let out = 'P'
  for (const [value, unit] of [[years, 'Y'], [months, 'M'], [days, 'D']] as const) {
    if (value !== undefined && Number(value) !== 0) out += `${Number(value)}${unit}`
  }
  const minus = sign === '-' ? '-' : ''
  const frac = fraction.replace(/0+$/, '')
  let time = ''
  if (Number(hours) !== 0) time += `${minus}${Number(hours)}H`
  if (Number(minutes) !== 0) time += `${minus}${Number(minutes)}M`
  if (Number(seconds) !== 0 || frac !== '') time += `${minus}${Number(seconds)}${frac === '' ? '' : `.${frac}`}S`
  if (time !== '') out += `T${time}`
  return out === 'P' ? 'PT0S' : out
}

/** A UUID in its canonical 8-4-4-4-12 form, any case. */
export const UUID_IN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

/** A UUID, lower case as PostgreSQL writes it; undefined for anything else. */
export function parseUuid (value: unknown): string | undefined {
  return typeof value === 'string' && UUID_IN.test(value) ? value.toLowerCase() : undefined
}
