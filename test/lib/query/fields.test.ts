import t from 'tap'
import { fieldPaths, isText, MATCH_TYPES, OPERATOR_NAMES as OPERATORS, operatorsFor, type FieldPath } from '../../../lib/query/fields.js'
import { column, defineTable, type ColumnSpec, type Table } from '../../../lib/table/index.js'

const ORDERED = ['e', 'ne', 'lt', 'lte', 'gt', 'gte', 'is_null', 'not_null', 'in', 'not_in']
const UNORDERED = ['e', 'ne', 'is_null', 'not_null', 'in', 'not_in']
const CONTAINS = ['e', 'ne', 'is_null', 'not_null']
/** Text columns also take `search` (SPEC §8.4), which only they take. */
const TEXT = [...UNORDERED, 'search']

const country = defineTable('fq_country', {
  code: column.varchar({ length: 2, primaryKey: true }),
  label: column.text(),
  vault: column.text({ secret: true })
})
const person = defineTable('fq_person', {
  name: column.varchar({ length: 50 }),
  boss: column.foreignKey((): Table => person),
  country: column.foreignKey<string>(country),
  pin: column.integer({ secret: true }),
  hidden_country: column.foreignKey<string>(country, { secret: true })
})

t.test('the operator and match type lists', async (t) => {
  t.strictSame(OPERATORS, [...ORDERED, 'search'])
  t.strictSame(MATCH_TYPES, ['contains', 'exact', 'starts', 'ends'])
  t.ok(Object.isFrozen(OPERATORS))
  t.ok(Object.isFrozen(MATCH_TYPES))
})

t.test('operatorsFor and isText, per column type', async (t) => {
  const cases: Array<[string, ColumnSpec, string[], boolean]> = [
    ['serial', column.serial(), ORDERED, false],
    ['integer', column.integer(), ORDERED, false],
    ['real', column.real(), ORDERED, false],
    ['numeric', column.numeric({ digits: [5, 2] }), ORDERED, false],
    ['timestamp', column.timestamp(), ORDERED, false],
    ['foreignKey', column.foreignKey(country), ORDERED, false],
    ['boolean', column.boolean(), UNORDERED, false],
    ['varchar', column.varchar({ length: 3 }), TEXT, true],
    ['text', column.text(), TEXT, true],
    ['email', column.email(), TEXT, true],
    ['array of integer', column.array(column.integer()), CONTAINS, false],
    ['array of text', column.array(column.text()), CONTAINS, false],
    ['array of arrays of timestamps', column.array(column.array(column.timestamp())), CONTAINS, false]
  ]
  for (const [label, spec, operators, text] of cases) {
    t.strictSame(operatorsFor(spec), operators, `operators of ${label}`)
    t.ok(Object.isFrozen(operatorsFor(spec)), `the list of ${label} is frozen`)
    t.equal(isText(spec), text, `isText(${label})`)
  }
})

type PathSummary = [string, Array<[string, string]>, string, string]
/** name, the joins as [from table, column], the table and the column. */
const paths = (list: readonly FieldPath[]): PathSummary[] =>
  list.map((p) => [p.name, p.joins.map((j) => [j.from.name, j.column.name]), p.table.name, p.column.name])

t.test('fieldPaths: no joins', async (t) => {
  t.strictSame(paths(fieldPaths(person, 0, true)), [
    ['id', [], 'fq_person', 'id'],
    ['name', [], 'fq_person', 'name'],
    ['boss', [], 'fq_person', 'boss'],
    ['country', [], 'fq_person', 'country']
  ])
  t.strictSame(fieldPaths(person, 0, false).map((p) => p.name), ['id', 'name', 'boss', 'country', 'pin', 'hidden_country'])
})

t.test('fieldPaths: one join, secrets of the joined table left out', async (t) => {
  t.strictSame(paths(fieldPaths(person, 1, true)), [
    ['id', [], 'fq_person', 'id'],
    ['name', [], 'fq_person', 'name'],
    ['boss', [], 'fq_person', 'boss'],
    ['boss.id', [['fq_person', 'boss']], 'fq_person', 'id'],
    ['boss.name', [['fq_person', 'boss']], 'fq_person', 'name'],
    ['boss.boss', [['fq_person', 'boss']], 'fq_person', 'boss'],
    ['boss.country', [['fq_person', 'boss']], 'fq_person', 'country'],
    ['country', [], 'fq_person', 'country'],
    ['country.code', [['fq_person', 'country']], 'fq_country', 'code'],
    ['country.label', [['fq_person', 'country']], 'fq_country', 'label']
  ])
  const list = fieldPaths(person, 1, true)
  const label = list.find((p) => p.name === 'country.label')!
  t.equal(label.table, country)
  t.equal(label.column, country.columnMap.get('label'))
  t.equal(label.joins[0]!.from, person)
  t.equal(label.joins[0]!.column, person.columnMap.get('country'))
})

t.test('fieldPaths: two joins, and every name without excluding secrets', async (t) => {
  t.strictSame(fieldPaths(person, 2, true).map((p) => p.name), [
    'id', 'name',
    'boss', 'boss.id', 'boss.name',
    'boss.boss', 'boss.boss.id', 'boss.boss.name', 'boss.boss.boss', 'boss.boss.country',
    'boss.country', 'boss.country.code', 'boss.country.label',
    'country', 'country.code', 'country.label'
  ])
  const deep = fieldPaths(person, 2, true).find((p) => p.name === 'boss.country.label')!
  t.strictSame(deep.joins.map((j) => [j.from.name, j.column.name]), [['fq_person', 'boss'], ['fq_person', 'country']])
  t.strictSame(fieldPaths(person, 1, false).map((p) => p.name), [
    'id', 'name',
    'boss', 'boss.id', 'boss.name', 'boss.boss', 'boss.country', 'boss.pin', 'boss.hidden_country',
    'country', 'country.code', 'country.label', 'country.vault',
    'pin',
    'hidden_country', 'hidden_country.code', 'hidden_country.label', 'hidden_country.vault'
  ])
})

t.test('fieldPaths: a table without ForeignKeys is its columns at any depth', async (t) => {
  t.strictSame(fieldPaths(country, 5, true).map((p) => p.name), ['code', 'label'])
  t.strictSame(fieldPaths(country, 5, false).map((p) => p.name), ['code', 'label', 'vault'])
})
