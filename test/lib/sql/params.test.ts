import t from 'tap'
import { NO_SCOPES } from '../../../lib/query/scope.js'
import { Params, Values } from '../../../lib/sql/params.js'

t.test('Params: each placeholder written with how its value is fetched, values fetched per input in order', async (t) => {
  const params = new Params<{ a: number, b: string }>()
  t.equal(params.add((input) => input.a), '$1')
  t.equal(params.add((input) => input.b), '$2')
  t.equal(params.add(() => 'fixed'), '$3')
  t.strictSame(params.values({ a: 1, b: 'x' }, NO_SCOPES), [1, 'x', 'fixed'])
  t.strictSame(params.values({ a: 2, b: 'y' }, NO_SCOPES), [2, 'y', 'fixed'], 'the same parameters serve another input')
  t.strictSame(new Params<null>().values(null, NO_SCOPES), [])
})

t.test('Values: each value kept as its placeholder is written', async (t) => {
  const values = new Values()
  t.equal(values.add('a'), '$1')
  t.equal(values.add(null), '$2')
  t.strictSame(values.list, ['a', null])
})
