/**
 * Values that pass a body's JSON Schema but that PostgreSQL would refuse with its own message
 * (SQLSTATE class 22), checked before any query so the 400 names the field (SPEC §1) and the
 * database's text stays out of the body. Each returns the reason, or null when the value fits.
 */

/** PostgreSQL text cannot hold U+0000 (22021 `invalid byte sequence for encoding "UTF8": 0x00`). */
export function textProblem (value: string): string | null {
  return value.includes('\0') ? 'must be a string without NUL characters' : null
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

/**
 * PostgreSQL's jsonb cannot hold U+0000 in a string or a key (22P05 `unsupported Unicode
 * escape sequence`).
 */
export function jsonProblem (value: unknown): string | null {
  const holdsNul = (v: unknown): boolean => {
    if (typeof v === 'string') return v.includes('\0')
    if (Array.isArray(v)) return v.some(holdsNul)
    if (typeof v === 'object' && v !== null) return Object.entries(v).some(([key, inner]) => key.includes('\0') || holdsNul(inner))
    return false
  }
  return holdsNul(value) ? 'must not hold NUL characters in its strings or keys' : null
}
