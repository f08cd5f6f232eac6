import t from 'tap'
import { parseDuration } from '../../../lib/auth/duration.js'

t.test('seconds, or a number with a unit', async (t) => {
  const cases: Array<[unknown, number | undefined]> = [
    [60, 60],
    [1, 1],
    ['90', 90],
    ['30s', 30],
    ['15m', 900],
    ['12h', 43200],
    ['1d', 86400],
    [' 7d ', 604800],
    ['7 d', 604800],
    ['2w', 1209600],
    [0, undefined],
    [-5, undefined],
    [1.5, undefined],
    [Infinity, undefined],
    [NaN, undefined],
    ['0', undefined],
    ['0m', undefined],
    ['-1h', undefined],
    ['1.5h', undefined],
    ['1y', undefined],
    ['15M', undefined],
    ['m', undefined],
    ['', undefined],
    ['1234567890', undefined],
    [null, undefined],
    [undefined, undefined],
    [{ seconds: 5 }, undefined]
  ]
  for (const [value, expected] of cases) t.equal(parseDuration(value), expected, JSON.stringify(value))
})
