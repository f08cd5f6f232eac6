import t from 'tap'
import { perSequence } from '../../../lib/table/per-table.js'

const [a, b, c] = [{ n: 'a' }, { n: 'b' }, { n: 'c' }]

t.test('perSequence: one value a sequence, in order, an owner; past the cap made each time', async (t) => {
  const made: string[] = []
  const cache = perSequence<object, { n: string }, { text: string }>(3)
  const of = (owner: object, keys: Array<{ n: string }>): { text: string } => cache(owner, keys, () => {
    const text = keys.map((k) => k.n).join('')
    made.push(text)
    return { text }
  })
  const owner = {}
  const ab = of(owner, [a, b])
  t.equal(of(owner, [a, b]), ab, 'a sequence seen before: the value kept')
  t.not(of(owner, [b, a]), ab, 'the same keys in another order: another value')
  t.equal(of(owner, []).text, '', 'the empty sequence has one too')
  t.strictSame(made, ['ab', 'ba', ''])
  t.equal(of({}, [a, b]).text, 'ab', 'another owner keeps its own')
  t.strictSame(made, ['ab', 'ba', '', 'ab'])

  // Three kept for `owner`: a new sequence, or a prefix of one kept, is made each time and not kept.
  t.not(of(owner, [a, b, c]), of(owner, [a, b, c]))
  t.not(of(owner, [a]), of(owner, [a]))
  t.equal(of(owner, [b, a]).text, 'ba')
  t.strictSame(made, ['ab', 'ba', '', 'ab', 'abc', 'abc', 'a', 'a'])
})

t.test('perSequence: a make that throws keeps nothing, and is asked again', async (t) => {
  const cache = perSequence<object, { n: string }, string>()
  const owner = {}
  t.throws(() => cache(owner, [a], () => { throw new Error('no') }), /no/)
  t.equal(cache(owner, [a], () => 'a'), 'a')
  t.equal(cache(owner, [a], () => 'again'), 'a')
})
