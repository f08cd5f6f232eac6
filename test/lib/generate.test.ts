import t from 'tap'
import type { DbColumn, DbSchema, DbTable } from '../../lib/db/introspect.js'
import { generateTables, checkChoices } from '../../lib/generate/index.js'
import { mapDefault, mapType } from '../../lib/generate/columns.js'
import { literal, quote } from '../../lib/generate/write.js'

/*
 * The writer of `fastify-tablecrud generate`, on schemas made up for each case that a real
 * database seldom has together (test/bin/generate.test.ts reads a real one): what it writes,
 * and the note that says why when it cannot.
 */

const col = (name: string, type: string, extra: Partial<DbColumn> = {}): DbColumn =>
  ({ name, type, notNull: false, default: null, comment: null, enumLabels: null, identity: null, generated: false, ...extra })

const SERIAL_ID = col('id', 'integer', { notNull: true, default: "nextval('t_id_seq'::regclass)" })

const table = (name: string, columns: DbColumn[], extra: Partial<DbTable> = {}): DbTable => ({
  name, kind: 'table', comment: null, columns, primaryKey: [columns[0]!.name], uniques: [], indexes: [], otherIndexes: [], foreignKeys: [], checks: [], ...extra
})

const schema = (...tables: DbTable[]): DbSchema => ({ name: 'public', tables })

t.test('tables that cannot be defined are left out, each with its reason; a key keeps only its type\'s default', async (t) => {
  const { notes, tables } = generateTables(schema(
    table('mv', [col('a', 'integer')], { kind: 'materialized view', primaryKey: null }),
    table('ft', [col('a', 'integer')], { kind: 'foreign table', primaryKey: null }),
    table('pt', [col('a', 'integer')], { kind: 'partitioned table' }),
    table('Bad-Name', [SERIAL_ID]),
    table('nokey', [col('a', 'integer')], { primaryKey: null }),
    table('jsonkey', [col('doc', 'jsonb', { notNull: true })]),
    table('pointkey', [col('p', 'point', { notNull: true })]),
    table('smallident', [col('id', 'smallint', { notNull: true, identity: 'always' })]),
    table('textkey', [col('code', 'text', { notNull: true, default: "'x'::text" })])
  ))
  t.same(tables, ['textkey'])
  t.same(notes, [
    'Materialized view mv: not generated, a materialized view has no key a definition writes by: TableCRUD serves tables.',
    'Foreign table ft: not generated, a foreign table has no key a definition writes by: TableCRUD serves tables.',
    'Partitioned table pt: not generated, a partitioned table has no key a definition writes by: TableCRUD serves tables.',
    'Table Bad-Name: not generated, its name is not an identifier a definition takes (letters, digits and _).',
    'Table nokey: not generated, it has no primary key (a definition without one adds an id serial the table does not have).',
    'Table jsonkey: not generated, its key doc (jsonb) cannot be mapped: a jsonb cannot be a definition\'s key.',
    'Table pointkey: not generated, its key p (point) cannot be mapped: no column type is point.',
    'Table smallident: not generated, its key id (smallint) cannot be mapped: a smallint identity column: the column types the database assigns are serial (integer) and bigSerial (bigint).',
    'Column textkey.code (text): its default \'x\'::text is not kept: a key of this type gets none.'
  ])
})

t.test('keys the database assigns: bigserial a BigSerial, identity keys with `identity`, no note', async (t) => {
  const { source, notes } = generateTables(schema(
    table('always', [col('id', 'integer', { notNull: true, identity: 'always' })]),
    table('big', [col('id', 'bigint', { notNull: true, default: "nextval('big_id_seq'::regclass)" })]),
    table('by_default', [col('code', 'bigint', { notNull: true, identity: 'by default' }), col('big', 'bigint')], {
      foreignKeys: [{ columns: ['big'], table: 'big', references: ['id'], onDelete: 'c' }]
    })
  ))
  t.same(notes, [])
  for (const line of [
    // An identity `id` is written: the `id` defineTable adds is a serial.
    "export const always = defineTable('always', {\n  id: column.serial({ primaryKey: true, identity: 'always' })\n})",
    "export const big = defineTable('big', {\n  id: column.bigSerial({ primaryKey: true })\n})",
    "  code: column.bigSerial({ primaryKey: true, identity: 'by default' }),",
    '  big: column.foreignKey<string>((): Table => big)'
  ]) t.ok(source.includes(line), line)
})

t.test('columns and foreign keys that cannot be mapped are left out or written plain, each with a note', async (t) => {
  const { source, notes } = generateTables(schema(
    table('other', [col('code', 'text', { notNull: true })]),
    table('default', [SERIAL_ID]),
    table('t', [
      col('uid', 'uuid', { notNull: true }),
      col('computed', 'integer', { generated: true }),
      col('Weird Name', 'integer'),
      col('a__b', 'integer'),
      col('stamp', 'timestamp(3) without time zone'),
      col('docs', 'jsonb[]'),
      col('points', 'point[]', { notNull: true }),
      col('elsewhere', 'integer'),
      col('skipped', 'integer'),
      col('not_key', 'text'),
      col('narrow', 'integer'),
      col('fk_default', 'text', { default: "'x'::text" }),
      col('pair_a', 'integer'),
      col('seq', 'integer', { notNull: true, default: "nextval('t_seq_seq'::regclass)" }),
      col('big_seq', 'bigint', { notNull: true, default: "nextval('t_big_seq'::regclass)" }),
      col('ident', 'integer', { notNull: true, identity: 'by default' }),
      col('when', 'timestamp with time zone', { notNull: true, default: 'CURRENT_TIMESTAMP' }),
      col('tags', 'text[]', { default: "ARRAY['a'::text, 'it''s'::text]" }),
      col('odd', 'integer[]', { default: 'ARRAY[(1 + 1)]' }),
      col('doc', 'jsonb', { default: "'{x'::jsonb" }),
      col('flag', 'boolean', { notNull: true, default: 'true' }),
      col('level', 'smallint', { checks: undefined } as never),
      col('mood', 'text', { comment: "it's\nfine" })
    ], {
      comment: 'A table named t',
      foreignKeys: [
        { columns: ['elsewhere'], table: null, references: ['id'], onDelete: 'a' },
        { columns: ['skipped'], table: 'nokey', references: ['id'], onDelete: 'a' },
        { columns: ['not_key'], table: 'other', references: ['name'], onDelete: 'a' },
        { columns: ['narrow'], table: 'other', references: ['code'], onDelete: 'a' },
        { columns: ['fk_default'], table: 'other', references: ['code'], onDelete: 'c' },
        { columns: ['pair_a', 'narrow'], table: 'other', references: ['code', 'code'], onDelete: 'a' }
      ],
      checks: [
        { name: 't_level_check', definition: 'CHECK ((level = ANY (ARRAY[1, 2])))' },
        { name: 't_level_check2', definition: 'CHECK ((level = ANY (ARRAY[1, (2 + 1)])))' },
        { name: 't_mood_check', definition: "CHECK ((mood = 'ok'::text))" },
        { name: 't_flag_check', definition: 'CHECK ((flag = true))' }
      ]
    })
  ))
  t.same(notes, [
    'Column t.uid (uuid): its default (none) is not kept: a key of this type gets gen_random_uuid().',
    'Column t.computed (integer): not generated, a generated column: a definition has no computed columns.',
    'Column t.Weird Name (integer): not generated, its name is not an identifier a definition takes (letters, digits and _, no __).',
    'Column t.a__b (integer): not generated, its name is not an identifier a definition takes (letters, digits and _, no __).',
    'Column t.stamp (timestamp(3) without time zone): not generated, a time type with a precision: the column types keep microseconds.',
    'Column t.docs (jsonb[]): not generated, no column type is an array of jsonb.',
    'Column t.points (point[]): not generated, an array of point: no column type is point. It is NOT NULL without a default: inserts through the API fail.',
    'Column t.elsewhere: its foreign key to another schema is not kept (its table is in another schema); written as a plain column.',
    'Column t.skipped: its foreign key to nokey is not kept (nokey is not generated); written as a plain column.',
    'Column t.not_key: its foreign key to other is not kept (it references other.name, not the key); written as a plain column.',
    'Column t.narrow: its foreign key to other is not kept (its type differs from other\'s key (text)); written as a plain column.',
    'Column t.fk_default (text): its default is not kept: a foreign key takes none.',
    // Not the key: no "inserts fail", the database assigns it.
    'Column t.ident (integer): not generated, an identity column that is not the key: a definition\'s identity is its key\'s. The database still assigns it when a write leaves it out.',
    'Column t.when: its default is not kept: the default CURRENT_TIMESTAMP is not a constant of its type (a definition\'s default is a value, or \'now\' for the clock types).',
    'Column t.odd: its default is not kept: the default ARRAY[(1 + 1)] is not a constant of its type (a definition\'s default is a value, or \'now\' for the clock types).',
    'Column t.doc: its default is not kept: the default \'{x\'::jsonb is not a constant of its type (a definition\'s default is a value, or \'now\' for the clock types).',
    'Table t: the foreign key (pair_a, narrow) is not kept: a definition\'s foreign key is one column.',
    'Table t: the check t_level_check2, CHECK ((level = ANY (ARRAY[1, (2 + 1)]))), is not kept: a definition turns only a column\'s list of values into choices.'
  ])
  for (const line of [
    "import { column, defineTable, type Table } from 'fastify-tablecrud'",
    "export const other = defineTable('other', {\n  code: column.text({ primaryKey: true })\n})",
    "export const default_table = defineTable('default', {})",
    '  uid: column.uuid({ primaryKey: true }),',
    '  elsewhere: column.integer({ null: true }),',
    '  fk_default: column.foreignKey<string>((): Table => other),',
    '  seq: column.serial(),',
    '  big_seq: column.bigSerial(),',
    '  when: column.timestamptz(),',
    "  tags: column.array(column.text(), { null: true, default: ['a', 'it\\'s'] }),",
    '  flag: column.boolean({ default: true, choices: { true: true } }),',
    "  level: column.smallInt({ null: true, choices: { '1': 1, '2': 2 } }),",
    "  mood: column.text({ null: true, choices: { ok: 'ok' }, helpText: 'it\\'s\\nfine' })",
    "}, { helpText: 'A table named t' })",
    'export const tables = [other, default_table, t]'
  ]) t.ok(source.includes(line), line)
  t.notOk(source.includes('computed'), 'a column left out is not written')
})

t.test('a module imports only what it uses: no column builder where no table has a column of its own, nothing without tables', async (t) => {
  const { source } = generateTables(schema(table('bare', [SERIAL_ID])))
  t.ok(source.includes("import { defineTable } from 'fastify-tablecrud'\n\nexport const bare = defineTable('bare', {})\n"), source)
  const empty = generateTables(schema()).source
  t.notOk(empty.includes('import'), empty)
  t.ok(empty.includes('export const tables = []'))
})

t.test('a module without foreign keys imports no Table type', async (t) => {
  const { source } = generateTables(schema(table('solo', [SERIAL_ID, col('n', 'integer', { notNull: true, default: '0' })])))
  t.equal(source, [
    '// Written by `fastify-tablecrud generate` from the database; edit it as your own. `fastify-tablecrud check` compares it with the database.',
    "import { column, defineTable } from 'fastify-tablecrud'",
    '',
    "export const solo = defineTable('solo', {\n  n: column.integer({ default: 0 })\n})\n",
    '/** Every table above, for createTables and checkTables. */',
    'export const tables = [solo]',
    ''
  ].join('\n'))
})

t.test('the pieces: types, defaults, CHECK lists, literals', async (t) => {
  t.same(mapType('numeric', null), { reason: 'a numeric without precision and scale (column.numeric needs digits)' })
  t.same(mapType('character(2)', null), { reason: 'a blank-padded character type: no column type keeps the padding (varchar or text do not)' })
  t.same(mapDefault({ type: 'interval', options: new Map() }, "'01:00:00'::interval"), { ok: 'PT1H' })
  // At the column's scale, as createTables writes it and the API answers it: read again, the same module.
  const money = { type: 'numeric', options: new Map<string, unknown>([['digits', [6, 2]]]) } as const
  t.same(mapDefault(money, "'-3.1'::numeric"), { ok: '-3.10' })
  t.same(mapDefault(money, '3.1'), { ok: '3.10' })
  t.same(mapDefault({ type: 'array', element: { type: 'integer', options: new Map() }, options: new Map() }, "'{}'::integer[]"), { ok: [] })
  t.same(mapDefault({ type: 'array', element: { type: 'integer', options: new Map() }, options: new Map() }, "'{1}'::integer[]"), {
    reason: "the default '{1}'::integer[] is not a constant of its type (a definition's default is a value, or 'now' for the clock types)"
  })
  t.same(mapDefault({ type: 'integer', options: new Map() }, "'x'::text"), {
    reason: "the default 'x'::text is not a constant of its type (a definition's default is a value, or 'now' for the clock types)"
  }, 'a constant that does not fit the type')
  t.same(checkChoices('CHECK (("Odd ""name""" = ANY (ARRAY[\'a\'::text])))'), { column: 'Odd "name"', items: ['a'] })
  t.equal(checkChoices('CHECK ((a > 1))'), null)
  t.equal(quote('a\'b"c\\d\u0001'), "'a\\'b\"c\\\\d\\u0001'")
  t.equal(literal({ 'a-b': [1, null], ok: {} }), "{ 'a-b': [1, null], ok: {} }")
})
