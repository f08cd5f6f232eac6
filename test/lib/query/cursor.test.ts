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
  t.notMatch(Buffer.from(sealCursor(key, 'b', ['visible-value']), 'base64url').toString('latin1'), /visible-value/)
})
