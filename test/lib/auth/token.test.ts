import t from 'tap'
import { generateToken, isBearerToken, parseBearer, safeEqual } from '../../../lib/auth/token.js'

t.test('tokens are 43 base64url characters, all different', async (t) => {
  const tokens = new Set(Array.from({ length: 200 }, generateToken))
  t.equal(tokens.size, 200)
  for (const token of tokens) t.match(token, /^[A-Za-z0-9_-]{43}$/)
})

t.test('safeEqual compares whole strings of any length', async (t) => {
  t.equal(safeEqual('abc', 'abc'), true)
  t.equal(safeEqual('abc', 'abd'), false)
  t.equal(safeEqual('abc', 'abcd'), false)
  t.equal(safeEqual('', ''), true)
  t.equal(safeEqual('é', 'e\u0301'), false, 'no normalisation')
})

t.test('parseBearer reads "Bearer <token>" and tells a missing header from a malformed one', async (t) => {
  const cases: Array<[string | undefined, unknown]> = [
    [undefined, { error: 'missing' }],
    ['', { error: 'missing' }],
    ['  ', { error: 'missing' }],
    ['Bearer abc', { token: 'abc' }],
    ['bearer abc', { token: 'abc' }],
    ['BEARER   abc  ', { token: 'abc' }],
    ['Bearer a-b.c_d~e+f/g==', { token: 'a-b.c_d~e+f/g==' }],
    ['Bearer', { error: 'format' }],
    ['Bearer ', { error: 'format' }],
    ['Bearer a b', { error: 'format' }],
    ['Bearer a=b', { error: 'format' }],
    ['Bearer a,b', { error: 'format' }],
    ['Bearer\tabc', { error: 'format' }],
    ['Basic abc', { error: 'format' }],
    ['abc', { error: 'format' }],
    ['Bearerabc', { error: 'format' }]
  ]
  for (const [header, expected] of cases) t.same(parseBearer(header), expected, JSON.stringify(header))
})

t.test('isBearerToken: RFC 6750 b64token', async (t) => {
  t.equal(isBearerToken('abc'), true)
  t.equal(isBearerToken('='), false)
  t.equal(isBearerToken(''), false)
  t.equal(isBearerToken('a b'), false)
})
