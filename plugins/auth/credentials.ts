/** What a login body holds, read without trusting its shape. */

export interface Credentials { username: string, password: string }

/** `{ username, password }` from a login body, or null when either is missing, empty or not a string. */
export function credentialsOf (body: unknown): Credentials | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null
  const { username, password } = body as Record<string, unknown>
  if (typeof username !== 'string' || username === '' || typeof password !== 'string' || password === '') return null
  return { username, password }
}

/**
 * A field of a login body that must be a single string: undefined when absent or not a string
 * (a repeated form field arrives as an array, and is refused rather than one of its values picked).
 */
export function stringField (body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Object.hasOwn(body, name)) return undefined
  const value = (body as Record<string, unknown>)[name]
  return typeof value === 'string' ? value : undefined
}
