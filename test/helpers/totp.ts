import { totpCode } from '../../lib/auth/totp.js'

/**
 * The current TOTP code of `secret`, waiting for the next step first when fewer than `margin`
 * milliseconds are left in this one: a code read at 29.9 s would be stale by the time the
 * server checks it, and the test would fail at random.
 */
export async function freshCode (secret: string, margin = 3000): Promise<string> {
  const left = 30_000 - (Date.now() % 30_000)
  if (left < margin) await new Promise((resolve) => setTimeout(resolve, left + 20))
  return totpCode(secret)
}
