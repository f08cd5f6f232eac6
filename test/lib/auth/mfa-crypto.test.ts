import t from 'tap'
import { randomBytes } from 'node:crypto'
import {
  decryptSecret, encryptSecret, generateRecoveryCode, hashRecoveryCode, matchRecoveryCode, normalizeRecoveryCode, parseKeys
} from '../../../lib/auth/mfa-crypto.js'

const key = randomBytes(32)

t.test('parseKeys takes 32 bytes as a Buffer, hex or base64, alone or in an array', async (t) => {
  const forms: unknown[] = [key, key.toString('hex'), key.toString('hex').toUpperCase(), key.toString('base64'), key.toString('base64url')]
  for (const form of forms) {
    const keys = parseKeys(form)
    t.equal(keys?.length, 1)
    t.ok(keys![0]!.key.equals(key), `${typeof form} form`)
    t.match(keys![0]!.id, /^[0-9a-f]{8}$/)
  }
  const other = randomBytes(32)
  const both = parseKeys([other.toString('hex'), key])!
  t.same(both.map((k) => k.key.toString('hex')), [other.toString('hex'), key.toString('hex')])
  t.not(both[0]!.id, both[1]!.id)
  // A copy: changing the caller's Buffer later does not change the key in use.
  const mine = Buffer.from(key)
  const kept = parseKeys(mine)!
  mine.fill(0)
  t.ok(kept[0]!.key.equals(key))
})

t.test('parseKeys refuses a missing, short, long or malformed key', async (t) => {
  const bad: unknown[] = [undefined, null, '', 42, {}, [], [key, 'short'], randomBytes(16), randomBytes(33),
    key.toString('hex').slice(2), `${key.toString('hex')}00`, 'z'.repeat(64), randomBytes(24).toString('base64'),
    randomBytes(48).toString('base64'), 'not a key at all, not at all, really!!!!!!!']
  for (const value of bad) t.equal(parseKeys(value), null, JSON.stringify(value))
})

t.test('a secret encrypts and decrypts, bound to its context and key', async (t) => {
  const keys = parseKeys(key)!
  const stored = encryptSecret(keys, 'JBSWY3DPEHPK3PXP', '7')
  t.match(stored, /^v1:[0-9a-f]{8}:[\w-]{16}:[\w-]{22}:[\w-]+$/)
  t.notMatch(stored, /JBSWY3DPEHPK3PXP/)
  t.not(encryptSecret(keys, 'JBSWY3DPEHPK3PXP', '7'), stored, 'a fresh IV each time')
  t.equal(decryptSecret(keys, stored, '7'), 'JBSWY3DPEHPK3PXP')
  t.equal(decryptSecret(keys, stored, '8'), null, "another user's row: the authenticated data differs")
  t.equal(decryptSecret(parseKeys(randomBytes(32))!, stored, '7'), null, 'an unknown key id')
  const [v, id, iv, tag, ct] = stored.split(':') as [string, string, string, string, string]
  const flipped = Buffer.from(ct, 'base64url')
  flipped[0]! ^= 1
  t.equal(decryptSecret(keys, [v, id, iv, tag, flipped.toString('base64url')].join(':'), '7'), null, 'an altered ciphertext')
  t.equal(decryptSecret(keys, ['v2', id, iv, tag, ct].join(':'), '7'), null, 'an unknown version')
  t.equal(decryptSecret(keys, 'JBSWY3DPEHPK3PXP', '7'), null, 'a value in clear')
  // A key whose id collides with the stored one (forced here) fails on the tag, not with a throw.
  const impostor = [{ id, key: randomBytes(32) }]
  t.equal(decryptSecret(impostor, stored, '7'), null)
})

t.test('key rotation: the first key encrypts, every key decrypts', async (t) => {
  const oldKey = randomBytes(32)
  const newKey = randomBytes(32)
  const before = encryptSecret(parseKeys(oldKey)!, 'OLDSECRET', '1')
  const rotated = parseKeys([newKey, oldKey])!
  t.equal(decryptSecret(rotated, before, '1'), 'OLDSECRET', 'a row of the old key decrypts with the second key')
  const after = encryptSecret(rotated, 'NEWSECRET', '1')
  t.equal(after.split(':')[1], rotated[0]!.id)
  t.equal(decryptSecret(parseKeys(newKey)!, after, '1'), 'NEWSECRET')
  t.equal(decryptSecret(parseKeys(oldKey)!, after, '1'), null)
})

t.test('recovery codes: 12 characters of [a-z0-9], written xxxxxx-xxxxxx, different each time', async (t) => {
  const codes = Array.from({ length: 200 }, generateRecoveryCode)
  for (const code of codes) t.match(code, /^[a-z0-9]{6}-[a-z0-9]{6}$/)
  t.equal(new Set(codes).size, 200)
  const letters = new Set(codes.join('').replaceAll('-', ''))
  t.ok(letters.size > 30, 'the whole alphabet is used')
})

t.test('normalizeRecoveryCode ignores case, dashes and spaces', async (t) => {
  t.equal(normalizeRecoveryCode('abc123-def456'), 'abc123def456')
  t.equal(normalizeRecoveryCode('ABC123 DEF456'), 'abc123def456')
  t.equal(normalizeRecoveryCode('abc123def456'), 'abc123def456')
  t.equal(normalizeRecoveryCode('abc123-def45'), null)
  t.equal(normalizeRecoveryCode('abc123-def45!'), null)
  t.equal(normalizeRecoveryCode('a'.repeat(33)), null)
  t.equal(normalizeRecoveryCode('1'.repeat(10000)), null)
})

t.test('recovery code hashes: salted, matched in constant time, each its own', async (t) => {
  const codes = ['abc123-def456', 'zzzzzz-000000']
  const hashes = codes.map((c) => hashRecoveryCode(c))
  for (const h of hashes) t.match(h, /^[0-9a-f]{32}\$[0-9a-f]{64}$/)
  t.not(hashRecoveryCode('abc123-def456'), hashes[0], 'a fresh salt each time')
  t.notMatch(hashes.join(), /abc123|def456/)
  t.equal(matchRecoveryCode('abc123-def456', hashes), hashes[0])
  t.equal(matchRecoveryCode('ZZZZZZ000000', hashes), hashes[1])
  t.equal(matchRecoveryCode('abc123-def457', hashes), null)
  t.equal(matchRecoveryCode('1'.repeat(10000), hashes), null)
  t.equal(matchRecoveryCode('abc123-def456', ['garbage', `${'0'.repeat(32)}$short`]), null, 'malformed stored values are skipped')
  t.equal(matchRecoveryCode('abc123-def456', []), null)
  // An empty input must not match a hash of the empty string.
  t.equal(matchRecoveryCode('!!!!!!-!!!!!!', [hashRecoveryCode('')]), null)
})
