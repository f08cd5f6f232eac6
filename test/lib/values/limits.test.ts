import t from 'tap'
import { jsonProblem, realProblem, rectangularProblem, textProblem } from '../../../lib/values/limits.js'

/** The values PostgreSQL refuses after the JSON Schema let them through (issue 18, point 4); boundaries measured on PostgreSQL 15. */

t.test('text: NUL characters', async (t) => {
  t.equal(textProblem('a\u0000b'), 'must be a string without NUL characters')
  t.equal(textProblem('\u0000'), 'must be a string without NUL characters')
  t.equal(textProblem('a\u0001b ü 😀'), null)
  t.equal(textProblem('\ud83d\ude00 a well-formed pair'), null)
})

t.test('text: lone surrogates, which have no UTF-8 form', async (t) => {
  const problem = 'must be well-formed Unicode: no lone surrogate such as \\ud800'
  for (const value of ['\ud800', 'a\udfffb', '\ude00\ud83d', '😀\ud83d']) t.equal(textProblem(value), problem, JSON.stringify(value))
  t.equal(textProblem(''), null)
})

t.test('real: what rounds to infinity or to zero', async (t) => {
  // 2^128 - 2^103, the midpoint between the largest float and infinity, is refused here though
  // PostgreSQL takes its shortest decimal (a hair below the midpoint) as the largest float: one
  // value, refused on the safe side.
  const refused = [1e39, -1e39, 3.4028236e38, 3.402823669209385e38, 3.4028235677973366e38, 7e-46, -7e-46, 1e-50, Number.MAX_VALUE, Number.MIN_VALUE]
  for (const value of refused) t.match(realProblem(value), /^must be a number a real can hold/, String(value))
  // Each accepted by PostgreSQL 15's float4in as well.
  const accepted = [0, -0, 1.5, -2, 3.4028235e38, 3.4028234663852886e38, 3.40282356e38, 1e-38, 1e-45, 1.4e-45, -1.4e-45]
  for (const value of accepted) t.equal(realProblem(value), null, String(value))
})

t.test('nested arrays: rectangular, none empty or null', async (t) => {
  const problem = 'must be a rectangular array: the inner arrays at each depth all of one length, none empty or null'
  const refused: Array<[unknown[], number]> = [
    [[[1, 2], [3]], 2], [[[], []], 2], [[[1], []], 2], [[[], [1]], 2], [[[1], null], 2], [[1, [2]], 2],
    [[[[1]], [[2, 3]]], 3], [[[[1], [2]], [[3]]], 3], [[[[1]], [[]]], 3]
  ]
  for (const [value, depth] of refused) t.equal(rectangularProblem(value, depth), problem, JSON.stringify(value))
  const accepted: Array<[unknown[], number]> = [
    [[], 2], [[[1, 2], [3, 4]], 2], [[[null, 2], [3, null]], 2], [[[1]], 2], [[[[1, 2]], [[3, 4]]], 3], [[], 3],
    [[1, 2, 3], 1], [[], 1]
  ]
  for (const [value, depth] of accepted) t.equal(rectangularProblem(value, depth), null, JSON.stringify(value))
})

t.test('jsonb: NUL in any string or key', async (t) => {
  const problem = 'must not hold NUL characters in its strings or keys'
  for (const value of ['a\u0000', ['x', ['\u0000']], { a: { b: 'c\u0000' } }, { 'k\u0000': 1 }]) t.equal(jsonProblem(value), problem, JSON.stringify(value))
  for (const value of ['a', 1, null, true, ['x', [1]], { a: { b: 'c' } }, [], { '1e400': 1.7976931348623157e308 }, '😀']) t.equal(jsonProblem(value), null, JSON.stringify(value))
})

t.test('jsonb: lone surrogates in strings or keys, numbers past a double', async (t) => {
  const unicode = 'must be well-formed Unicode in its strings and keys: no lone surrogate such as \\ud800'
  for (const value of ['\ud800', ['x', { a: 'b\udc00' }], { 'k\ud800': 1 }]) t.equal(jsonProblem(value), unicode, JSON.stringify(value))
  const range = 'must hold only numbers a double can: 1e400 is beyond its range'
  for (const value of [Infinity, [1, -Infinity], { a: { b: [NaN] } }]) t.equal(jsonProblem(value), range, String(value))
  t.equal(jsonProblem([{ 'a\u0000': Infinity }]), 'must not hold NUL characters in its strings or keys', 'the first problem found is named')
})

t.test('jsonb: arrays and objects nested at most 128 deep', async (t) => {
  const nested = (depth: number, inner: (v: unknown) => unknown): unknown => { let v: unknown = 1; for (let i = 0; i < depth; i++) v = inner(v); return v }
  for (const inner of [(v: unknown) => [v], (v: unknown) => ({ a: v })]) {
    t.equal(jsonProblem(nested(128, inner)), null, '128 deep')
    t.equal(jsonProblem(nested(129, inner)), 'must nest its arrays and objects at most 128 deep', '129 deep')
  }
})
