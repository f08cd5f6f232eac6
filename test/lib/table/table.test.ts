import t from 'tap'
import {
  allTables, column, defineTable, dimensions, displayName, isTable, scalarOf, targetOf, visibleColumns,
  type AnyColumn, type Table
} from '../../../lib/table/index.js'

/** The column as the definition sees it, without the members every test repeats. */
const DEFAULTS = {
  nullable: false,
  hasDefault: false,
  default: undefined,
  unique: false,
  index: false,
  secret: false,
  required: false,
  choices: null,
  helpText: null,
  primaryKey: false
}

t.test('every column builder gives its type and defaults', async (t) => {
  const target = defineTable('builder_target', {})
  const cases: Array<[string, AnyColumn, Record<string, unknown>]> = [
    ['serial', column.serial(), { type: 'serial' }],
    ['integer', column.integer(), { type: 'integer' }],
    ['real', column.real(), { type: 'real' }],
    ['numeric', column.numeric({ digits: [12, 2] }), { type: 'numeric', digits: [12, 2] }],
    ['boolean', column.boolean(), { type: 'boolean' }],
    ['varchar', column.varchar({ length: 20 }), { type: 'varchar', length: 20 }],
    ['text', column.text(), { type: 'text' }],
    ['email', column.email(), { type: 'email' }],
    ['timestamp', column.timestamp(), { type: 'timestamp' }],
    ['array', column.array(column.integer()), { type: 'array', element: { ...DEFAULTS, type: 'integer' } }]
  ]
  for (const [name, built, expected] of cases) {
    t.strictSame(built, { ...DEFAULTS, ...expected }, name)
    t.ok(Object.isFrozen(built), `${name} is frozen`)
  }
  const fk = column.foreignKey(target)
  t.equal(fk.type, 'foreignKey')
  t.equal(fk.nullable, true, 'a foreign key is nullable unless told')
  t.equal(fk.onDelete, 'cascade', 'and cascades unless told')
  t.equal(fk.target!(), target, 'a table given directly is wrapped in a thunk')
  t.equal(fk.thunk, false)
  const lazy = column.foreignKey(() => target, { onDelete: 'set null', null: false })
  t.equal(lazy.onDelete, 'set null')
  t.equal(lazy.nullable, false)
  t.equal(lazy.thunk, true)
  t.equal(lazy.target!(), target)
})

t.test('column options are kept', async (t) => {
  const c = column.varchar({
    length: 10, null: true, default: 'x', unique: true, index: true, secret: true, required: true, helpText: 'Why'
  })
  t.match(c, {
    nullable: true, hasDefault: true, default: 'x', unique: true, index: true, secret: true, required: true, helpText: 'Why'
  })
  t.equal(column.integer({ default: 0 }).hasDefault, true, 'a falsy default is a default')
  t.equal(column.text({ default: null }).hasDefault, true, 'so is null')
  t.equal(column.text({ default: undefined }).hasDefault, false, 'undefined is no default')
})

t.test('choices are normalised with derived display names (SPEC §6.1)', async (t) => {
  const c = column.varchar({
    length: 20,
    choices: { bad: 'b', very_good: 'vg', __odd__name: 3, so_so: { value: 'ss' }, own: { value: true, displayName: 'Own label' } }
  })
  t.same([...c.choices!], [
    ['bad', { value: 'b', displayName: 'Bad' }],
    ['very_good', { value: 'vg', displayName: 'Very Good' }],
    ['__odd__name', { value: 3, displayName: 'Odd Name' }],
    ['so_so', { value: 'ss', displayName: 'So So' }],
    ['own', { value: true, displayName: 'Own label' }]
  ])
  t.equal(displayName('release_date'), 'Release Date')
  t.equal(displayName('x'), 'X')
})

t.test('nesting helpers', async (t) => {
  const grid = column.array(column.array(column.numeric({ digits: [5, 1] })))
  t.equal(dimensions(grid), 2)
  t.equal(dimensions(column.text()), 0)
  t.equal(scalarOf(grid).type, 'numeric')
  t.same(scalarOf(grid).digits, [5, 1])
})

t.test('a table without a primary key gets an id Serial, first', async (t) => {
  const movie = defineTable('tt_movie', {
    name: column.varchar({ length: 100, helpText: 'Title' }),
    secret_note: column.text({ secret: true })
  }, { helpText: 'Films' })
  t.same(movie.columns.map((c) => [c.name, c.type]), [['id', 'serial'], ['name', 'varchar'], ['secret_note', 'text']])
  t.equal(movie.primaryKey, movie.columns[0])
  t.match(movie.primaryKey, { name: 'id', type: 'serial', primaryKey: true, nullable: false })
  t.equal(movie.name, 'tt_movie')
  t.equal(movie.helpText, 'Films')
  t.equal(movie.columnMap.get('name'), movie.columns[1])
  t.equal(movie.columnMap.get('name')!.helpText, 'Title')
  t.same(movie.readable, { template: '%s', columns: ['id'] }, 'readable defaults to the primary key')
  t.ok(Object.isFrozen(movie) && Object.isFrozen(movie.columns) && Object.isFrozen(movie.columns[1]))
  t.same(visibleColumns(movie, true).map((c) => c.name), ['id', 'name'])
  t.same(visibleColumns(movie, false).map((c) => c.name), ['id', 'name', 'secret_note'])
  t.equal(defineTable('tt_bare', {}).helpText, null)
})

t.test('a custom primary key replaces the id', async (t) => {
  const studio = defineTable('tt_studio', {
    name: column.varchar({ length: 100 }),
    code: column.varchar({ length: 8, primaryKey: true })
  })
  t.same(studio.columns.map((c) => c.name), ['name', 'code'], 'declaration order is kept')
  t.equal(studio.primaryKey.name, 'code')
  t.same(studio.readable, { template: '%s', columns: ['code'] })
  const numbered = defineTable('tt_numbered', { id: column.integer({ primaryKey: true }), label: column.text() })
  t.equal(numbered.primaryKey.type, 'integer', 'id may be declared when it is the primary key')
  const other = defineTable('tt_other', { id: column.integer(), key: column.text({ primaryKey: true }) })
  t.equal(other.primaryKey.name, 'key', 'an id that is not the primary key is fine next to one that is')
  t.equal(defineTable('t'.repeat(63), { ['c'.repeat(63)]: column.text() }).columns[1]!.name, 'c'.repeat(63), '63 bytes is the limit')
})

t.test('readable: shorthand and template', async (t) => {
  const person = defineTable('tt_person', {
    first_name: column.varchar({ length: 50 }),
    last_name: column.varchar({ length: 50 })
  }, { readable: 'last_name' })
  t.same(person.readable, { template: '%s', columns: ['last_name'] })
  const full = defineTable('tt_person_full', {
    first_name: column.varchar({ length: 50 }),
    last_name: column.varchar({ length: 50 })
  }, { readable: { template: '%s %s', columns: ['first_name', 'last_name'] } })
  t.same(full.readable, { template: '%s %s', columns: ['first_name', 'last_name'] })
  t.ok(Object.isFrozen(full.readable.columns))
  const byId = defineTable('tt_by_id', { name: column.text() }, { readable: { template: '#%s', columns: ['id'] } })
  t.same(byId.readable, { template: '#%s', columns: ['id'] }, 'the added id can be named')
})

t.test('foreign keys resolve through targetOf', async (t) => {
  const parent = defineTable('tt_parent', {})
  const child = defineTable('tt_child', {
    parent: column.foreignKey(parent),
    self: column.foreignKey((): Table => child),
    later: column.foreignKey((): Table => later)
  })
  const later = defineTable('tt_later', {})
  t.equal(targetOf(child, child.columnMap.get('parent')!), parent)
  t.equal(targetOf(child, child.columnMap.get('self')!), child)
  t.equal(targetOf(child, child.columnMap.get('later')!), later)
  const bad = defineTable('tt_bad_thunk', { ref: column.foreignKey(() => ({ name: 'fake' }) as unknown as Table) })
  t.throws(() => targetOf(bad, bad.columnMap.get('ref')!), {
    name: 'TableDefinitionError',
    message: 'Table tt_bad_thunk, column ref: the foreign key target is not a table made by defineTable'
  })
})

t.test('allTables lists every table defined, isTable recognises them', async (t) => {
  const a = defineTable('tt_all_a', {})
  const b = defineTable('tt_all_b', { a: column.foreignKey(a) })
  const names = allTables().map((x) => x.name)
  t.ok(names.includes('tt_all_a') && names.includes('tt_all_b') && names.includes('tt_movie'))
  t.equal(allTables().filter((x) => x === a || x === b).length, 2)
  t.equal(isTable(a), true)
  t.equal(isTable({ ...a }), false, 'a copy is not a defined table')
  t.equal(isTable(null), false)
  t.throws(() => defineTable('tt_all_c', { 'bad name': column.text() }))
  t.notOk(allTables().some((x) => x.name === 'tt_all_c'), 'a refused definition is not registered')
})

const wrong = (column: AnyColumn | unknown): AnyColumn => column as AnyColumn

const BAD: Array<[string, () => unknown, string]> = [
  ['a foreign key to undefined',
    () => defineTable('bad_fk', { ref: column.foreignKey(undefined as unknown as Table) }),
    'Table bad_fk, column ref: the foreign key target is not a table made by defineTable'],
  ['a foreign key to an object that is not a defined table',
    () => defineTable('bad_fk', { ref: column.foreignKey({ name: 'movie' } as unknown as Table) }),
    'Table bad_fk, column ref: the foreign key target is not a table made by defineTable'],
  ['a foreign key without a target',
    () => defineTable('bad_fk', { ref: wrong({ ...column.foreignKey(() => defineTable('unused', {})), target: undefined }) }),
    'Table bad_fk, column ref: a foreign key needs a target table'],
  ['a varchar without a length',
    () => defineTable('bad_varchar', { name: column.varchar({} as { length: number }) }),
    'Table bad_varchar, column name: a varchar needs a length between 1 and 10485760'],
  ['a varchar of length 0',
    () => defineTable('bad_varchar', { name: column.varchar({ length: 0 }) }),
    'Table bad_varchar, column name: a varchar needs a length between 1 and 10485760'],
  ['a varchar of a fractional length',
    () => defineTable('bad_varchar', { name: column.varchar({ length: 2.5 }) }),
    'Table bad_varchar, column name: a varchar needs a length between 1 and 10485760'],
  ['a varchar longer than PostgreSQL allows',
    () => defineTable('bad_varchar', { name: column.varchar({ length: 10485761 }) }),
    'Table bad_varchar, column name: a varchar needs a length between 1 and 10485760'],
  ...([[0, 0], [5, 6], [5, -1], [1.5, 1], [1001, 2]] as const).map(([p, s]): [string, () => unknown, string] => [
    `numeric digits [${p}, ${s}]`,
    () => defineTable('bad_numeric', { price: column.numeric({ digits: [p, s] }) }),
    'Table bad_numeric, column price: numeric digits must be [precision, scale] with 1 <= precision <= 1000 and 0 <= scale <= precision']),
  ['numeric without digits',
    () => defineTable('bad_numeric', { price: column.numeric({} as { digits: [number, number] }) }),
    'Table bad_numeric, column price: numeric digits must be [precision, scale] with 1 <= precision <= 1000 and 0 <= scale <= precision'],
  ['two primary keys',
    () => defineTable('bad_pk', { a: column.integer({ primaryKey: true }), b: column.text({ primaryKey: true }) }),
    'Table bad_pk: two primary keys: a, b'],
  ['a nullable primary key',
    () => defineTable('bad_pk', { code: column.varchar({ length: 5, primaryKey: true, null: true }) }),
    'Table bad_pk, column code: the primary key cannot be nullable'],
  ['a primary key of a type that cannot be one',
    () => defineTable('bad_pk', { at: column.timestamp({ primaryKey: true }) }),
    'Table bad_pk, column at: a timestamp column cannot be the primary key'],
  ['id declared without being the primary key',
    () => defineTable('bad_id', { id: column.integer(), name: column.text() }),
    'Table bad_id, column id: "id" is the added primary key; mark a column primaryKey: true or rename it'],
  ['an invalid table name',
    () => defineTable('movie; drop', {}),
    'Table movie; drop: "movie; drop" is not a valid identifier (letters, digits and _, not starting with a digit)'],
  ['a table name starting with a digit',
    () => defineTable('1movie', {}),
    'Table 1movie: "1movie" is not a valid identifier (letters, digits and _, not starting with a digit)'],
  ['an empty column name',
    () => defineTable('bad_column', { '': column.text() }),
    'Table bad_column, column : "" is not a valid identifier (letters, digits and _, not starting with a digit)'],
  ['a column name with a quote',
    () => defineTable('bad_column', { 'a"b': column.text() }),
    'Table bad_column, column a"b: "a"b" is not a valid identifier (letters, digits and _, not starting with a digit)'],
  ['a non-ASCII column name',
    () => defineTable('bad_column', { tàg: column.text() }),
    'Table bad_column, column tàg: "tàg" is not a valid identifier (letters, digits and _, not starting with a digit)'],
  ['a table name over 63 bytes',
    () => defineTable('t'.repeat(64), {}),
    `Table ${'t'.repeat(64)}: "${'t'.repeat(64)}" is longer than PostgreSQL's 63-byte identifier limit`],
  ['a column name over 63 bytes',
    () => defineTable('bad_column', { ['c'.repeat(64)]: column.text() }),
    `Table bad_column, column ${'c'.repeat(64)}: "${'c'.repeat(64)}" is longer than PostgreSQL's 63-byte identifier limit`],
  ['a column named with __',
    () => defineTable('bad_column', { name__x: column.text() }),
    'Table bad_column, column name__x: "__" is reserved for query operators'],
  ['a column that is not built by column.*',
    () => defineTable('bad_column', { name: wrong('text') }),
    'Table bad_column, column name: is not a column (use the column.* builders)'],
  ['an array of serials',
    () => defineTable('bad_array', { ids: column.array(column.serial()) }),
    'Table bad_array, column ids: an array cannot hold serials'],
  ['an array of bigserials',
    () => defineTable('bad_array', { ids: column.array(column.bigSerial()) }),
    'Table bad_array, column ids: an array cannot hold bigserials'],
  ['an identity that is neither always nor by default',
    () => defineTable('bad_identity', { id: column.serial({ primaryKey: true, identity: 'sometimes' as never }) }),
    "Table bad_identity, column id: identity must be 'always' or 'by default'"],
  ['an identity on a column that is not the key',
    () => defineTable('bad_identity', { n: column.bigSerial({ identity: 'always' }) }),
    'Table bad_identity, column n: identity is for the primary key only'],
  ['an array of foreign keys',
    () => defineTable('bad_array', { refs: column.array(column.foreignKey(() => defineTable('unused', {}))) }),
    'Table bad_array, column refs: an array cannot hold foreign keys'],
  ['a 2-D array of foreign keys',
    () => defineTable('bad_array', { refs: column.array(column.array(column.foreignKey(() => defineTable('unused', {})))) }),
    'Table bad_array, column refs: an array cannot hold foreign keys'],
  ['an array of bad varchars',
    () => defineTable('bad_array', { tags: column.array(column.varchar({ length: 0 })) }),
    'Table bad_array, column tags: a varchar needs a length between 1 and 10485760'],
  ['an array without an element',
    () => defineTable('bad_array', { tags: wrong({ ...column.array(column.text()), element: undefined }) }),
    'Table bad_array, column tags: an array needs an element column'],
  ['a readable naming a missing column',
    () => defineTable('bad_readable', { name: column.text() }, { readable: 'title' }),
    'Table bad_readable: readable names "title", which is not a column'],
  ['a readable template naming a missing column',
    () => defineTable('bad_readable', { name: column.text() }, { readable: { template: '%s %s', columns: ['name', 'nope'] } }),
    'Table bad_readable: readable names "nope", which is not a column'],
  ['a template with fewer %s than columns',
    () => defineTable('bad_readable', { a: column.text(), b: column.text() }, { readable: { template: '%s', columns: ['a', 'b'] } }),
    'Table bad_readable: the readable template has 1 %s for 2 columns'],
  ['a template with more %s than columns',
    () => defineTable('bad_readable', { a: column.text() }, { readable: { template: '%s (%s)', columns: ['a'] } }),
    'Table bad_readable: the readable template has 2 %s for 1 columns']
]

t.test('bad definitions throw at definition time, naming the table and column', async (t) => {
  for (const [what, define, message] of BAD) {
    t.throws(define, { name: 'TableDefinitionError', message }, what)
  }
  t.notOk(allTables().some((x) => x.name.startsWith('bad_')), 'none of them is registered')
})
