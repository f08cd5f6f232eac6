import { Secret, TOTP } from 'otpauth'

/**
 * TOTP as authenticator apps speak it (RFC 6238: SHA-1, 6 digits, 30-second steps), through
 * otpauth rather than a hand-written HOTP: it compares codes in constant time and its URI
 * format is the one the apps read.
 */

export const TOTP_PERIOD = 30
export const TOTP_DIGITS = 6

/** A new shared secret: 160 random bits (RFC 4226's recommended length), base32. */
export function newTotpSecret (): string {
  return new Secret({ size: 20 }).base32
}

function totp (secret: string, issuer = '', label = ''): TOTP {
  return new TOTP({ issuer, label, secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD })
}

/** `otpauth://totp/<issuer>:<label>?secret=<base32>&issuer=<issuer>&...`: what the QR code holds. */
export function otpauthUrl (secret: string, issuer: string, label: string): string {
  return totp(secret, issuer, label).toString()
}

/** The time step a timestamp (milliseconds) falls in. */
export function stepAt (timestamp: number): number {
  return Math.floor(timestamp / 1000 / TOTP_PERIOD)
}

/** The code of `secret` at a timestamp (milliseconds); what an authenticator app shows. */
export function totpCode (secret: string, timestamp = Date.now()): string {
  return totp(secret).generate({ timestamp })
}

/**
 * The time step whose code `code` is, within `window` steps either side of `timestamp`'s, or
 * null. Anything but six ASCII digits is refused before any work (a 10,000-digit code costs
 * nothing).
 */
export function matchTotp (secret: string, code: string, window: number, timestamp = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null
  const delta = totp(secret).validate({ token: code, timestamp, window })
  return delta === null ? null : stepAt(timestamp) + delta
}

/** A PNG data URL of a QR code holding `text`. */
export async function qrCodeDataUrl (text: string): Promise<string> {
  const { default: QRCode } = await import('qrcode')
  return await QRCode.toDataURL(text, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2 })
}

/** A PNG of a QR code holding `text`: what a page links when it cannot embed a data URL. */
export async function qrCodePng (text: string): Promise<Buffer> {
  const { default: QRCode } = await import('qrcode')
  return await QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 2 })
}
