const UNITS = new Map([['s', 1], ['m', 60], ['h', 3600], ['d', 86400], ['w', 604800]])

/**
 * A lifetime in whole seconds: a positive integer of seconds, or a string such as `"90"`,
 * `"15m"`, `"12h"`, `"7d"` or `"2w"`. Undefined for anything else.
 */
export function parseDuration (value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined
  if (typeof value !== 'string') return undefined
  const match = /^(\d{1,9}) *([smhdw]?)$/.exec(value.trim())
  if (match === null) return undefined
  const seconds = Number(match[1]) * (UNITS.get(match[2]!) ?? 1)
  return seconds > 0 ? seconds : undefined
}
