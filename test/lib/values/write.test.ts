import t from 'tap'
import { column } from '../../../lib/table/index.js'
import { toDatabase } from '../../../lib/table/column-types.js'
import { writeDefault } from '../../../lib/table/defaults.js'
import { ValueError } from '../../../lib/values/index.js'

t.test('toDatabase: body values as pg sends them', async (t) => {
  t.equal(toDatabase(column.numeric({ digits: [5, 2] }), 1.5), '1.50')
  t.equal(toDatabase(column.numeric({ digits: [5, 2] }), '-0.10'), '-0.10')
  t.throws(() => toDatabase(column.numeric({ digits: [5, 2] }), '1234.5'), new ValueError('must be a decimal with at most 3 digits before the point and 2 after it'))
  t.equal(toDatabase(column.timestamp(), '2024-01-02T03:04:05+01:00'), '2024-01-02 02:04:05.000000')
  t.throws(() => toDatabase(column.timestamp(), '2024-02-30'), new ValueError('must be an ISO 8601 date or date-time'))
  t.same(toDatabase(column.array(column.array(column.timestamp())), [['2024-01-02'], [null]]), [['2024-01-02 00:00:00.000000'], [null]])
  t.equal(toDatabase(column.text(), 'x'), 'x')
  t.equal(toDatabase(column.text(), null), null)
  t.equal(toDatabase(column.text(), undefined), null)
})

t.test('writeDefault: the declared default, else the type default of a NOT NULL column, else null (SPEC §6.2)', async (t) => {
  const cases: Array<[string, ReturnType<typeof column.text>, unknown]> = [
    ['varchar', column.varchar({ length: 3 }), ''],
    ['text', column.text(), ''],
    ['integer', column.integer(), 0],
    ['real', column.real(), 0],
    ['numeric', column.numeric({ digits: [4, 1] }), 0],
    ['boolean', column.boolean(), false],
    ['array', column.array(column.text()), []],
    ['email', column.email(), null],
    ['foreign key', column.foreignKey((): never => { throw new Error('not resolved') }), null],
    ['nullable', column.integer({ null: true }), null],
    ['declared', column.integer({ default: 7 }), 7],
    ['declared null', column.integer({ null: true, default: null }), null],
    ['choices: no type default', column.varchar({ length: 3, choices: { a: 'a' } }), null],
    ['choices, declared', column.varchar({ length: 3, choices: { a: 'a' }, default: 'a' }), 'a']
  ]
  for (const [label, spec, expected] of cases) t.same(writeDefault(spec), expected, label)
  t.match(writeDefault(column.timestamp()), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/, 'timestamp: now')
  t.match(writeDefault(column.timestamp({ default: 'now' })), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/, "declared 'now'")
  t.equal(writeDefault(column.timestamp({ default: '2020-01-01T00:00:00' })), '2020-01-01T00:00:00')
})
