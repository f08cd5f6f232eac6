import t from 'tap'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { relationsOf, type Relation } from '../../../lib/table/relations.js'
import { queryContext } from '../../../lib/query/parse.js'

/* Relations in the table definition (SPEC §8.1): names, kinds, and the errors naming a clash and its fix. */

const summary = (relations: ReadonlyMap<string, Relation>): Array<[string, string, string, boolean, string, string | null]> =>
  [...relations.values()].map((r) => [r.name, r.kind, r.to.name, r.many, r.column.name, r.junction === null ? null : `${r.junction.table.name}.${r.junction.far.name}`])

const author = defineTable('rl_author', { name: column.text() })
const book = defineTable('rl_book', {
  title: column.text(),
  author: column.foreignKey(author),
  editor: column.foreignKey(author, { related: 'edited' })
})
const shelf = defineTable('rl_shelf', { label: column.text() })
defineTable('rl_placing', { book: column.foreignKey(book), shelf: column.foreignKey(shelf) }, { junction: true })

t.test('forward, reverse and many-to-many relations, with their default names', async (t) => {
  t.strictSame(summary(relationsOf(author)), [
    ['rl_book', 'reverse', 'rl_book', true, 'author', null],
    ['edited', 'reverse', 'rl_book', true, 'editor', null]
  ])
  t.strictSame(summary(relationsOf(book)), [
    ['author', 'forward', 'rl_author', false, 'author', null],
    ['editor', 'forward', 'rl_author', false, 'editor', null],
    ['rl_placing', 'reverse', 'rl_placing', true, 'book', null],
    ['rl_shelf', 'junction', 'rl_shelf', true, 'book', 'rl_placing.shelf']
  ])
  t.strictSame(summary(relationsOf(shelf)), [
    ['rl_placing', 'reverse', 'rl_placing', true, 'shelf', null],
    ['rl_book', 'junction', 'rl_book', true, 'shelf', 'rl_placing.book']
  ])
  t.equal(relationsOf(shelf), relationsOf(shelf), 'kept while no table is defined')
  defineTable('rl_review', { book: column.foreignKey(book, { related: 'reviews' }) })
  t.ok(relationsOf(book).has('reviews'), 'a table defined later adds its relation')
  defineTable('rl_broken', { book: column.foreignKey((): Table => ({}) as Table) })
  t.ok(relationsOf(book).has('reviews'), 'a ForeignKey whose thunk does not resolve is passed over')
})

t.test('clashes are errors naming both sides and the option that fixes them', async (t) => {
  const person = defineTable('rl_person', { name: column.text() })
  const film = defineTable('rl_film', { director: column.foreignKey(person), writer: column.foreignKey(person) })
  t.throws(() => relationsOf(person), {
    name: 'TableDefinitionError',
    message: "Table rl_person: two relations are named \"rl_film\": one from the foreign key rl_film.director (rename it with its option related: '<name>'), " +
      "one from the foreign key rl_film.writer (rename it with its option related: '<name>'); give them distinct names"
  })
  const options = { pageSize: 1, maxPageSize: 1, excludeSecrets: true }
  t.throws(() => queryContext(person, { ...options, maxJoins: 1 }), { name: 'TableDefinitionError' }, 'a TableCRUD context reaching it fails')
  t.throws(() => queryContext(film, { ...options, maxJoins: 2 }), { name: 'TableDefinitionError' }, 'also two hops away')
  t.doesNotThrow(() => queryContext(film, { ...options, maxJoins: 1 }), 'a context that does not reach it does not')
  t.doesNotThrow(() => queryContext(person, { ...options, maxJoins: 0 }), 'without joins no relation is walked')

  const city = defineTable('rl_city', { rl_road: column.text() })
  defineTable('rl_road', { city: column.foreignKey(city) })
  t.throws(() => relationsOf(city), {
    message: "Table rl_city: the relation \"rl_road\" from the foreign key rl_road.city (rename it with its option related: '<name>') has the name of the column rl_city.rl_road; rename the relation"
  })

  const user = defineTable('rl_user', { name: column.text() })
  defineTable('rl_friend', { a: column.foreignKey(user, { related: 'a_of' }), b: column.foreignKey(user, { related: 'b_of' }) }, { junction: true })
  t.throws(() => relationsOf(user), {
    message: "Table rl_user: two relations are named \"rl_user\": one from the junction rl_friend (rename it with its option junction: { related: ['<name on rl_user>', '<name on rl_user>'] }), " +
      "one from the junction rl_friend (rename it with its option junction: { related: ['<name on rl_user>', '<name on rl_user>'] }); give them distinct names"
  })
  const member = defineTable('rl_member', { name: column.text() })
  defineTable('rl_follow', { a: column.foreignKey(member, { related: 'a_of' }), b: column.foreignKey(member, { related: 'b_of' }) }, { junction: { related: ['follows', 'followers'] } })
  t.strictSame([...relationsOf(member).keys()], ['a_of', 'follows', 'b_of', 'followers'])
})

t.test('bad relation options throw at definition time', async (t) => {
  const target = defineTable('rl_target', { name: column.text() })
  const cases: Array<[string, () => unknown, string]> = [
    ['related not an identifier', () => defineTable('rl_bad', { t: column.foreignKey(target, { related: 'a b' }) }),
      'Table rl_bad, column t: "a b" is not a valid identifier (letters, digits and _, not starting with a digit)'],
    ['related with __', () => defineTable('rl_bad', { t: column.foreignKey(target, { related: 'a__b' }) }),
      'Table rl_bad, column t: the relation name "a__b" holds "__", which is reserved for query operators'],
    ['related not a string', () => defineTable('rl_bad', { t: column.foreignKey(target, { related: 5 as unknown as string }) }),
      'Table rl_bad, column t: a relation name must be a string'],
    ['a junction with one ForeignKey', () => defineTable('rl_bad', { t: column.foreignKey(target) }, { junction: true }),
      'Table rl_bad: a junction needs exactly two foreign keys; it has 1'],
    ['junction.related of one name', () => defineTable('rl_bad', { a: column.foreignKey(target), b: column.foreignKey(target) }, { junction: { related: ['x'] as unknown as [string, string] } }),
      'Table rl_bad: junction.related must be two relation names: [nameOnFirstSide, nameOnSecondSide]'],
    ['junction.related with a bad name', () => defineTable('rl_bad', { a: column.foreignKey(target), b: column.foreignKey(target) }, { junction: { related: ['x', '1y'] } }),
      'Table rl_bad: "1y" is not a valid identifier (letters, digits and _, not starting with a digit)']
  ]
  for (const [what, define, message] of cases) t.throws(define, { name: 'TableDefinitionError', message }, what)
})
