/**
 * Values that pass a body's JSON Schema but that PostgreSQL would refuse with its own message
 * (SQLSTATE class 22), checked before any query so the 400 names the field (SPEC §1) and the
 * database's text stays out of the body. Each returns the reason, or null when the value fits.
 */

/**
 * Whether a string has no UTF-16 surrogate outside a pair: String#isWellFormed (ES2024, in Node
 * 20), typed here as the library compiles against ES2023's lib, as do the applications and
 * checks that compile its sources.
 */
const wellFormed = (text: string): boolean => (text as string & { isWellFormed: () => boolean }).isWellFormed()

/**
 * PostgreSQL text cannot hold U+0000 (22021 `invalid byte sequence for encoding "UTF8": 0x00`),
 * and a lone surrogate (`"\ud800"` in JSON) has no UTF-8 form: pg would send U+FFFD in its place,
 * storing another string than the one sent.
 */
export function textProblem (value: string): string | null {
  if (value.includes('\0')) return 'must be a string without NUL characters'
  // The regex /\p{Cs}/u that wellFormed replaces was 3 µs of the 47 that an upsert of 100 rows
  // (200 strings) spent converting and writing its rows.
  return wellFormed(value) ? null : 'must be well-formed Unicode: no lone surrogate such as \\ud800'
}

/**
 * A `real` is a 4-byte float: PostgreSQL refuses a number that rounds to infinity or, not
 * being zero, to zero (22003 `out of range for type real`). Math.fround rounds as its
 * strtof does, to the nearest float; subnormals are accepted by both.
 */
export function realProblem (value: number): string | null {
  const rounded = Math.fround(value)
  return Number.isFinite(rounded) && (rounded !== 0 || value === 0)
    ? null
    : 'must be a number a real can hold: at most 3.4028235e38 in magnitude and, unless 0, at least 1.4e-45'
}

/**
 * A `double precision` holds Infinity, but JSON.parse reads a number past a double's range
 * (`1e309`) as one, which PostgreSQL would store and JSON answer as `null`.
 */
export function doubleProblem (value: number): string | null {
  return Number.isFinite(value) ? null : 'must be a number a double can hold: 1e309 is beyond its range'
}

/**
 * A nested array is stored as one multidimensional array: PostgreSQL refuses one whose inner
 * arrays differ in length at a depth, or are empty, or are null where an array is due
 * (22P02 `malformed array literal`). `[]` alone is fine.
 */
export function rectangularProblem (value: readonly unknown[], depth: number): string | null {
  if (depth < 2 || value.length === 0) return null
  const problem = 'must be a rectangular array: the inner arrays at each depth all of one length, none empty or null'
  let level: unknown[] = [value]
  for (let d = 1; d < depth; d++) {
    const next: unknown[] = []
    let length: number | null = null
    for (const array of level as unknown[][]) {
      for (const inner of array) {
        if (!Array.isArray(inner) || inner.length === 0 || (length !== null && inner.length !== length)) return problem
        length = inner.length
        next.push(inner)
      }
    }
    level = next
  }
  return null
}

function jsonTextProblem (text: string): string | null {
  if (text.includes('\0')) return 'must not hold NUL characters in its strings or keys'
  return wellFormed(text) ? null : 'must be well-formed Unicode in its strings and keys: no lone surrogate such as \\ud800'
}

/**
 * How deep a jsonb value may nest its arrays and objects (serde_json's default limit). Some
 * 4,000 levels in, JSON.stringify runs out of stack writing the answer, after the row is
 * written: a 500 for a row committed. The embedded server (PGlite, lib/db/embedded.ts) breaks
 * first: a value 1,000 deep is stored, then its WebAssembly memory is corrupt (`memory access
 * out of bounds` at the next stop); 900 survived. 128 keeps well below both.
 */
const JSON_MAX_DEPTH = 128

/**
 * PostgreSQL's jsonb cannot hold U+0000 in a string or a key (22P05 `unsupported Unicode
 * escape sequence`), nor a lone surrogate (its raw text would come back), and a number past a
 * double's range (`1e400`) was parsed to Infinity, which JSON writes as `null`: each would store
 * another value than the one sent. `depth`: how many arrays and objects hold `value`.
 */
export function jsonProblem (value: unknown, depth = 0): string | null {
  if (typeof value === 'string') return jsonTextProblem(value)
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'must hold only numbers a double can: 1e400 is beyond its range'
  if (typeof value !== 'object' || value === null) return null
  if (depth === JSON_MAX_DEPTH) return `must nest its arrays and objects at most ${JSON_MAX_DEPTH} deep`
  for (const [key, inner] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const problem = (typeof key === 'string' ? jsonTextProblem(key) : null) ?? jsonProblem(inner, depth + 1)
    if (problem !== null) return problem
  }
  return null
}
