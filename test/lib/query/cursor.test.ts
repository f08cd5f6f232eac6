import t from 'tap'
import { cursorKey, openCursor, sealCursor } from '../../../lib/query/cursor.js'

t.test('a cursor opens only with its key, binding and length', async (t) => {
  const key = cursorKey('a secret of sixteen+')
  const sealed = sealCursor(key, 'bound', ['1', null])
  t.strictSame(openCursor(key, 'bound', sealed, 2), ['1', null])
  t.equal(openCursor(key, 'other', sealed, 2), undefined)
  t.equal(openCursor(cursorKey(undefined), 'bound', sealed, 2), undefined)
  t.equal(openCursor(key, 'bound', sealed, 3), undefined, 'another number of sort keys')
  t.equal(openCursor(key, 'bound', sealCursor(key, 'bound', [1 as unknown as string]), 1), undefined, 'values are texts or null')
  t.equal(openCursor(key, 'bound', '', 1), undefined)
})

t.test('a cursor opens only as it was issued, not as another spelling of its bytes', async (t) => {
  const key = cursorKey('a secret of sixteen+')
  const sealed = sealCursor(key, 'bound', ['1', null])
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  // 38 bytes: the last character carries 4 bits and 2 spare ones, which a lenient decoder ignores.
  const spare = sealed.slice(0, -1) + ALPHABET[ALPHABET.indexOf(sealed.at(-1)!) + 1]
  t.strictSame(Buffer.from(spare, 'base64url'), Buffer.from(sealed, 'base64url'), 'the same bytes to Node')
  for (const other of [sealed + 'A', sealed + '=', sealed + '==', `${sealed.slice(0, 5)} ${sealed.slice(5)}`, `${sealed.slice(0, 5)}!${sealed.slice(5)}`, spare]) {
    t.equal(openCursor(key, 'bound', other, 2), undefined, JSON.stringify(other))
  }
  t.notMatch(Buffer.from(sealCursor(key, 'b', ['visible-value']), 'base64url').toString('latin1'), /visible-value/)
})
