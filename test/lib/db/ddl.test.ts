import t from 'tap'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { createTables, createTablesSql, dropTables } from '../../../lib/db/index.js'
import { wireTypes } from '../../../lib/db/types.js'
import { testDatabase } from '../../helpers/db.js'

const db = await testDatabase(t)

const person = defineTable('person', {
  name: column.varchar({ length: 50, unique: true }),
  boss: column.foreignKey((): Table => person, { onDelete: 'set null' })
})
const everything = defineTable('every_type', {
  label: column.varchar({ length: 20, default: "it's", index: true }),
  body: column.text(),
  count: column.integer({ default: 7 }),
  ratio: column.real({ null: true }),
  price: column.numeric({ digits: [8, 2] }),
  flag: column.boolean(),
  at: column.timestamp(),
  owner: column.foreignKey(person, { onDelete: 'restrict', null: false }),
  tags: column.array(column.varchar({ length: 10 })),
  grid: column.array(column.array(column.integer())),
  prices: column.array(column.numeric({ digits: [5, 1] }), { null: true }),
  times: column.array(column.timestamp(), { null: true }),
  mail: column.email({ null: true })
})

t.test('creates every type with its defaults, and again without complaint', async (t) => {
  await createTables(db.pool, [everything, person])
  await createTables(db.pool, [everything, person])
  const owner = await db.pool.query("INSERT INTO person (name) VALUES ('Ann') RETURNING id")
  await db.pool.query('INSERT INTO every_type (owner) VALUES ($1)', [owner.rows[0].id])
  const { rows } = await db.pool.query({ text: 'SELECT * FROM every_type', types: wireTypes })
  const row = rows[0]
  t.match(row, {
    id: 1,
    label: "it's",
    body: '',
    count: 7,
    ratio: null,
    price: '0.00',
    flag: false,
    owner: 1,
    tags: [],
    grid: [],
    prices: null,
    times: null,
    mail: null
  })
  t.match(row.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/)
  const at = new Date(row.at + 'Z').getTime()
  t.ok(Math.abs(at - Date.now()) < 60000, 'the default timestamp is now, in UTC')
})

t.test('reads values back exactly', async (t) => {
  await db.pool.query(`INSERT INTO every_type (label, price, at, owner, tags, grid, prices, times, ratio)
    VALUES ('x', 123456.5, '2024-02-29 23:59:59.000001', 1, '{a,"b c"}', '{{1,2},{3,4}}', '{1.5,NULL}',
            '{"2024-01-01 00:00:00","2024-01-01 00:00:00.25"}', 0.1)`)
  const { rows } = await db.pool.query({ text: "SELECT * FROM every_type WHERE label = 'x'", types: wireTypes })
  t.match(rows[0], {
    price: '123456.50',
    at: '2024-02-29T23:59:59.000001',
    tags: ['a', 'b c'],
    grid: [[1, 2], [3, 4]],
    prices: ['1.5', null],
    times: ['2024-01-01T00:00:00', '2024-01-01T00:00:00.250000'],
    ratio: 0.1
  })
})

t.test('enforces NOT NULL, unique and on-delete rules', async (t) => {
  await t.rejects(db.pool.query('INSERT INTO every_type (owner) VALUES (NULL)'), { code: '23502' })
  await t.rejects(db.pool.query("INSERT INTO person (name) VALUES ('Ann')"), { code: '23505', constraint: 'person_name_key' })
  // RESTRICT is 23001 on PostgreSQL 15 and 23503 on later versions (PGlite).
  await t.rejects(db.pool.query('DELETE FROM person WHERE id = 1'), { code: /^(23001|23503)$/ })
  const boss = await db.pool.query("INSERT INTO person (name) VALUES ('Boss') RETURNING id")
  await db.pool.query("INSERT INTO person (name, boss) VALUES ('Sub', $1)", [boss.rows[0].id])
  await db.pool.query('DELETE FROM person WHERE id = $1', [boss.rows[0].id])
  const sub = await db.pool.query("SELECT boss FROM person WHERE name = 'Sub'")
  t.equal(sub.rows[0].boss, null, 'set null')
  const idx = await db.pool.query("SELECT indexname FROM pg_indexes WHERE tablename = 'every_type' ORDER BY 1")
  t.ok(idx.rows.some((r) => r.indexname === 'every_type_label_idx'))
})

t.test('quotes identifiers and literals', async (t) => {
  const sql = createTablesSql([everything])
  t.match(sql, /"label" varchar\(20\) NOT NULL DEFAULT 'it''s'/)
  t.match(sql, /"owner" integer NOT NULL REFERENCES "person" \("id"\) ON DELETE RESTRICT/)
  t.match(sql, /"grid" integer\[\]\[\] NOT NULL DEFAULT '\{\}'/)
})

t.test('a foreign-key cycle is created, then its back edge added once', async (t) => {
  const a = defineTable('cycle_a', { b: column.foreignKey((): Table => b) })
  const b = defineTable('cycle_b', { a: column.foreignKey((): Table => a) })
  await createTables(db.pool, [a, b])
  await createTables(db.pool, [a, b])
  const fks = await db.pool.query("SELECT conname FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text IN ('cycle_a', 'cycle_b') ORDER BY 1")
  t.same(fks.rows.map((r) => r.conname), ['cycle_a_b_fkey', 'cycle_b_a_fkey'])
  await dropTables(db.pool, [a, b])
  await dropTables(db.pool, [])
  const left = await db.pool.query("SELECT to_regclass('cycle_a') AS t")
  t.equal(left.rows[0].t, null)
})

t.test('a default that does not fit its column is refused', async (t) => {
  const bad = defineTable('bad_default', { n: column.integer({ default: 'x' }) })
  t.throws(() => createTablesSql([bad]), /Table bad_default, column n: the default "x" does not fit the column's type \(integer\)/)
})

t.test('declared defaults become literals of their type, and a mismatch is refused', async (t) => {
  const cases: Array<[string, ReturnType<typeof column.integer>, unknown, string | null]> = [
    ['integer', column.integer(), 3, 'DEFAULT 3'],
    ['real', column.real(), 1.5, 'DEFAULT 1.5'],
    ['real', column.real(), 'x', null],
    ['numeric', column.numeric({ digits: [5, 2] }), '1.5', 'DEFAULT 1.50'],
    ['numeric', column.numeric({ digits: [5, 2] }), '1.555', null],
    ['boolean', column.boolean(), true, 'DEFAULT true'],
    ['boolean', column.boolean(), 'yes', null],
    ['varchar', column.varchar({ length: 5 }), 1, null],
    ['email', column.email(), 'a@b.c', "DEFAULT 'a@b.c'"],
    ['timestamp', column.timestamp(), 'now', "DEFAULT (now() AT TIME ZONE 'utc')"],
    ['timestamp', column.timestamp(), '2024-01-02T03:04:05', "DEFAULT '2024-01-02 03:04:05.000000'"],
    ['timestamp', column.timestamp(), 'yesterday', null],
    ['timestamp', column.timestamp(), 5, null],
    ['array', column.array(column.integer()), [1, 2], 'DEFAULT ARRAY[1, 2]'],
    ['array', column.array(column.integer()), [], "DEFAULT '{}'"],
    ['array', column.array(column.integer()), 'x', null],
    // A declared null is no default at all (PostgreSQL would keep a typed NULL of a varchar as one).
    ['nullable', column.integer({ null: true }), null, '"c" integer\n)']
  ]
  for (const [label, base, value, expected] of cases) {
    const spec = { ...base, hasDefault: true, default: value }
    const table = defineTable(`default_${label}_${cases.findIndex((c) => c[2] === value && c[0] === label)}`, { c: spec as typeof base })
    if (expected === null) {
      t.throws(() => createTablesSql([table]), { message: `Table ${table.name}, column c: the default ${JSON.stringify(value)} does not fit the column's type (${base.type})` }, `${label} ${JSON.stringify(value)}`)
    } else {
      t.match(createTablesSql([table]), `"c" ${label === 'nullable' ? 'integer' : ''}`, label)
      t.ok(createTablesSql([table]).includes(expected), `${label} ${JSON.stringify(value)}: ${expected}`)
    }
  }
})

t.test('choices become a CHECK and help texts comments, so the database says what the definition does', async (t) => {
  const note = defineTable('ddl_note', {
    kind: column.varchar({ length: 10, choices: { memo: 'memo', task: 'task' }, helpText: "It's a $tablecrud$ kind" }),
    level: column.integer({ null: true, choices: { low: 1, high: 2 } }),
    marks: column.array(column.text(), { choices: { a: 'a' } }),
    odd: column.integer({ null: true, choices: { text: 'not a number' } })
  }, { helpText: 'Notes' })
  const sql = createTablesSql([note])
  t.ok(sql.includes('"kind" varchar(10) NOT NULL CHECK ("kind" IN (\'memo\', \'task\'))'), 'text choices')
  t.ok(sql.includes('"level" integer CHECK ("level" IN (1, 2))'), 'a number of choices')
  t.ok(sql.includes('"marks" text[] NOT NULL,\n'), 'no CHECK of an array')
  t.ok(sql.includes('"odd" integer\n'), 'no CHECK when a choice does not fit the type')
  t.ok(sql.includes("DO $tablecrud1$ BEGIN COMMENT ON TABLE \"ddl_note\" IS 'Notes'; COMMENT ON COLUMN \"ddl_note\".\"kind\" IS 'It''s a $tablecrud$ kind'; " +
    'EXCEPTION WHEN insufficient_privilege THEN NULL; END $tablecrud1$'), 'a dollar quote the text does not hold')
  await createTables(db.pool, [note])
  await createTables(db.pool, [note])
  const { rows } = await db.pool.query("SELECT obj_description('ddl_note'::regclass, 'pg_class') AS t, col_description('ddl_note'::regclass, 2) AS c")
  t.same(rows, [{ t: 'Notes', c: "It's a $tablecrud$ kind" }])
  await t.rejects(db.pool.query("INSERT INTO ddl_note (kind, marks) VALUES ('other', '{}')"), { code: '23514' })
  await db.pool.query("INSERT INTO ddl_note (kind, level, marks) VALUES ('memo', 2, '{b}')")
})

t.test('index and constraint names past 63 bytes stay distinct', async (t) => {
  // `<table>_<column>_idx` was cut by PostgreSQL at 63 bytes: for a 63-byte table name it was
  // the table's own name, and two long columns cut alike made one name, so IF NOT EXISTS (and
  // duplicate_object for a cycle's foreign key) skipped the index or the key without a word.
  const long = 'l'.repeat(63)
  const c = 'c'.repeat(58)
  const wide = defineTable(long, { [`${c}_one`]: column.integer({ index: true }), [`${c}_two`]: column.integer({ index: true }) })
  const a: Table = defineTable('dd_a', { [`${c}_one`]: column.foreignKey((): Table => b), [`${c}_two`]: column.foreignKey((): Table => b) })
  const b: Table = defineTable('dd_b', { back: column.foreignKey((): Table => a) })
  // b first: a's two keys close the cycle, so both are added after the tables, by name.
  await createTables(db.pool, [wide, b, a])
  await createTables(db.pool, [wide, b, a])
  const count = async (sql: string, name: string): Promise<number> => (await db.pool.query<{ n: number }>(sql, [name])).rows[0]!.n
  t.equal(await count('SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = $1 AND schemaname = current_schema()', long), 3, 'the key and two indexes, created once')
  const keys = 'SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = $1::regclass AND contype = \'f\''
  t.equal(await count(keys, 'dd_a') + await count(keys, 'dd_b'), 3, 'three foreign keys, the cycle\'s included, created once')
})

t.test('the search index of a table named with 63 bytes is created', async (t) => {
  // `<table>_search_idx` was cut by PostgreSQL to the table's own name: IF NOT EXISTS found the
  // table and skipped the index without a word, and every `__search` scanned the table.
  const long = 's'.repeat(63)
  const searched = defineTable(long, { title: column.text() }, { search: { columns: ['title'] } })
  await createTables(db.pool, [searched])
  await createTables(db.pool, [searched])
  const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = $1 AND schemaname = current_schema() AND indexdef LIKE '%USING gin%'", [long])
  t.equal(rows[0]!.n, 1, 'the GIN index, created once')
})
