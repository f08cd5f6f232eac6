import t from 'tap'
import { Secret, TOTP, URI } from 'otpauth'
import { matchTotp, newTotpSecret, otpauthUrl, qrCodeDataUrl, stepAt, totpCode } from '../../../lib/auth/totp.js'

// RFC 6238 appendix B: the SHA-1 secret "12345678901234567890", 8-digit codes; the last 6 digits are ours.
const RFC_SECRET = Secret.fromLatin1('12345678901234567890').base32
const RFC_VECTORS: Array<[number, string]> = [
  [59, '94287082'], [1111111109, '07081804'], [1111111111, '14050471'], [1234567890, '89005924'], [2000000000, '69279037']
]

t.test('codes are RFC 6238 SHA-1 codes, 6 digits, 30-second steps', async (t) => {
  for (const [seconds, code] of RFC_VECTORS) t.equal(totpCode(RFC_SECRET, seconds * 1000), code.slice(2), `T=${seconds}`)
  t.equal(stepAt(59_000), 1)
  t.equal(stepAt(60_000), 2)
})

t.test('newTotpSecret is 160 random bits in base32', async (t) => {
  const a = newTotpSecret()
  t.match(a, /^[A-Z2-7]{32}$/)
  t.not(newTotpSecret(), a)
})

t.test('matchTotp gives the step of the code, within the window', async (t) => {
  const secret = newTotpSecret()
  const now = 1_700_000_015_000
  const step = stepAt(now)
  const at = (s: number): string => totpCode(secret, s * 30_000)
  t.equal(matchTotp(secret, at(step), 0, now), step)
  t.equal(matchTotp(secret, at(step - 1), 0, now), null, 'the previous step, window 0')
  t.equal(matchTotp(secret, at(step - 1), 1, now), step - 1)
  t.equal(matchTotp(secret, at(step + 1), 1, now), step + 1)
  t.equal(matchTotp(secret, at(step - 2), 1, now), null, 'two windows ago')
  const current = matchTotp(secret, totpCode(secret), 1)
  t.ok(current !== null && Math.abs(current - stepAt(Date.now())) <= 1, 'the timestamp defaults to now')
  const wrong = String((Number(at(step)) + 1) % 1_000_000).padStart(6, '0')
  t.equal(matchTotp(secret, wrong, 0, now), null)
  for (const bad of ['', '12345', '1234567', '12345a', '１２３４５６', ' 123456', '1'.repeat(10000)]) t.equal(matchTotp(secret, bad, 3, now), null, JSON.stringify(bad.slice(0, 10)))
})

t.test('otpauthUrl is what authenticator apps read', async (t) => {
  const secret = newTotpSecret()
  const url = otpauthUrl(secret, 'My Site', 'ann@example.com')
  t.match(url, /^otpauth:\/\/totp\/My%20Site:ann%40example\.com\?/)
  const parsed = URI.parse(url) as TOTP
  t.equal(parsed.secret.base32, secret)
  t.equal(parsed.issuer, 'My Site')
  t.equal(parsed.label, 'ann@example.com')
  t.equal(parsed.algorithm, 'SHA1')
  t.equal(parsed.digits, 6)
  t.equal(parsed.period, 30)
})

t.test('qrCodeDataUrl is a PNG data URL', async (t) => {
  const url = await qrCodeDataUrl('otpauth://totp/x:y?secret=JBSWY3DPEHPK3PXP')
  t.match(url, /^data:image\/png;base64,/)
  const png = Buffer.from(url.slice('data:image/png;base64,'.length), 'base64')
  t.same([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
})
