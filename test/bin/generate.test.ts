import t, { type Test } from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { checkTables, createTables } from '../../lib/db/index.js'
import type { Table } from '../../lib/table/index.js'
import { relationsOf } from '../../lib/table/relations.js'
import { cliHarness } from '../helpers/cli.js'
import { testDatabase } from '../helpers/db.js'
import { RENTAL_DROP_SQL, RENTAL_SQL } from '../fixtures/rental-schema.js'

/*
 * `fastify-tablecrud generate` against a film-rental database written without this library
 * (test/fixtures/rental-schema.ts): what it writes, what it says it leaves out, and the round
 * trip: the written module, checked against that database, differs in nothing; created in an
 * empty schema and read again, it is written the same.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const db = await testDatabase(t)
const { sql, cli } = cliHarness(db.connectionString)

/** The generated module, importable from a folder of this checkout (the package name is this checkout's index.ts). */
function save (t: Test, source: string): string {
  const dir = mkdtempSync(join(ROOT, '.generated-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const path = join(dir, 'tables.ts')
  writeFileSync(path, source.replace("from 'fastify-tablecrud'", "from '../index.js'"))
  return path
}

const NOTES = [
  'Table film_category: not generated, its primary key (film, category) has 2 columns: a definition\'s key is one column.',
  'View film_list: not generated, a view has no key a definition writes by: TableCRUD serves tables.',
  'Column address.location (point): not generated, no column type is point.',
  'Table city: unique (name, country) is not kept: a definition\'s unique is one column\'s. The database keeps enforcing it.',
  'Column coupon.label (character varying): not generated, a varchar without a length (column.varchar needs one).',
  'Table customer: the index on (last_name, first_name) is not kept: a definition\'s index is one column\'s.',
  'Column film.fulltext (tsvector): not generated, no column type is tsvector.',
  /^Table film: CREATE INDEX film_long_idx ON \S+\.film USING btree \(title\) WHERE \(length > '02:00:00'::interval\) is not kept: a definition's index is one plain column's\.$/,
  'Table film: the check film_release_year_check, CHECK ((release_year > 1888)), is not kept: a definition turns only a column\'s list of values into choices.',
  'Table film_actor: unique (actor, film) is not kept: a definition\'s unique is one column\'s. The database keeps enforcing it.',
  'Column payment.receipt (json): not generated, json: the column type is jsonb.',
  'Table payment: the check payment_amount_check, CHECK ((amount >= (0)::numeric)), is not kept: a definition turns only a column\'s list of values into choices.',
  'Table rental: unique (inventory, rented_at) is not kept: a definition\'s unique is one column\'s. The database keeps enforcing it.'
]

t.test('generate reads a film-rental database, says what it leaves out, and round-trips through createTables', async (t) => {
  await sql(async (c) => await c.query(RENTAL_SQL))
  const first = await cli(['generate'])
  t.equal(first.code, 0, first.stderr)
  const notes = first.stderr.trimEnd().split('\n')
  t.equal(notes.length, NOTES.length, first.stderr)
  NOTES.forEach((note, i) => { t.match(notes[i], note, `note ${i + 1}`) })
  const source = first.stdout
  for (const line of [
    "import { column, defineTable, type Table } from 'fastify-tablecrud'",
    // A text key, a comment as help text.
    "  code: column.varchar({ length: 2, primaryKey: true, helpText: 'ISO 3166-1 alpha-2, upper case' }),",
    // A foreign key to a text key, NOT NULL, ON DELETE RESTRICT.
    "  country: column.foreignKey<string>((): Table => country, { null: false, onDelete: 'restrict' })",
    // A self-reference.
    "  referred_by: column.foreignKey((): Table => customer, { onDelete: 'set null' }),",
    // An enum as choices, its default and comment.
    "  rating: column.text({ null: true, default: 'G', choices: { G: 'G', PG: 'PG', 'PG-13': 'PG-13', R: 'R', 'NC-17': 'NC-17' }, helpText: 'The MPAA rating' }),",
    // CHECK lists as choices, text and integer.
    "  status: column.varchar({ length: 10, default: 'open', choices: { open: 'open', returned: 'returned', lost: 'lost' } })",
    "  discount: column.integer({ required: true, choices: { '5': 5, '10': 10, '25': 25 } }),",
    // NOT NULL without a default: required, and no type default either.
    '  name: column.varchar({ length: 20, unique: true, default: null, required: true }),',
    // UUID, smallint and bigint keys; a serial key not named id.
    '  id: column.uuid({ primaryKey: true }),',
    '  id: column.smallInt({ primaryKey: true }),',
    '  id: column.bigInt({ primaryKey: true }),',
    '  film_id: column.serial({ primaryKey: true }),',
    // Defaults of each kind.
    "  created: column.date({ default: 'now' }),",
    "  last_update: column.timestamp({ default: 'now' })",
    "  rental_rate: column.numeric({ digits: [4, 2], default: '4.99' }),",
    "  loyalty_points: column.bigInt({ default: '0' }),",
    '  preferences: column.jsonb({ default: { newsletter: false } })',
    '  special_features: column.array(column.text(), { default: [] }),',
    "  opens: column.time({ default: '09:00:00' }),",
    '  vat_rate: column.real({ default: 0.2 })',
    "}, { helpText: 'One film copy lent to one customer' })",
    // The junction with its own key: two foreign keys.
    "export const film_actor = defineTable('film_actor', {\n  actor: column.foreignKey((): Table => actor, { null: false }),\n  film: column.foreignKey((): Table => film, { null: false })\n})",
    'export const tables = [actor, address, category, city, country, coupon, customer, film, film_actor, inventory, language, payment, rental, store]'
  ]) t.ok(source.includes(line), line)

  const path = save(t, source)
  const { tables } = await import(pathToFileURL(path).href) as { tables: Table[] }
  t.same(await sql(async (c) => await checkTables(c, tables)), [], 'the original database matches what was written')
  t.same(await cli(['check', path]), {
    code: 0,
    stdout: 'The database matches the definitions of actor, address, category, city, country, coupon, customer, film, film_actor, inventory, language, payment, rental and store.\n',
    stderr: ''
  }, 'check takes the TypeScript module as written')

  await sql(async (c) => { await c.query(RENTAL_DROP_SQL); await createTables(c, tables) })
  const second = await cli(['generate'])
  t.same(second, { code: 0, stdout: source, stderr: '' }, 'created and read again, the same module, with nothing left out')
})

t.test('generate --out writes a file that must not exist; --schema names the schema; mistakes are one line', async (t) => {
  // The tables the first test created from what it generated, and a view to note.
  await sql(async (c) => await c.query('CREATE VIEW film_title AS SELECT title FROM film'))
  const dir = mkdtempSync(join(ROOT, '.generated-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const out = join(dir, 'tables.ts')
  const schema = await sql(async (c) => (await c.query<{ name: string }>('SELECT current_schema() AS name')).rows[0]!.name)
  const written = await cli(['generate', '--schema', schema, '--out', out])
  t.same(written, {
    code: 0,
    stdout: `Wrote 14 tables to ${out}; 1 note above.\n`,
    stderr: 'View film_title: not generated, a view has no key a definition writes by: TableCRUD serves tables.\n'
  })
  t.match(readFileSync(out, 'utf8'), /^\/\/ Written by `fastify-tablecrud generate`/)
  t.same(await cli(['generate', '--out', out]), { code: 1, stdout: '', stderr: `${written.stderr}Error: ${out} exists already: remove it, or give another --out.\n` })
  const cases: Array<[string[], RegExp]> = [
    [['generate', '--schema', 'no_such_schema'], /^Error: There is no schema named no_such_schema\.\n$/],
    [['generate', 'tables.ts'], /^Error: generate takes no arguments, not tables\.ts\nUsage: fastify-tablecrud generate \[--schema <name>\] \[--out <file>\]\n/],
    [['generate', '--out', join(dir, 'no/such/dir.ts')], /^View film_title: .*\nError: ENOENT: no such file or directory/]
  ]
  for (const [args, expected] of cases) {
    const run = await cli(args)
    t.same([run.code, run.stdout], [1, ''], args.join(' '))
    t.match(run.stderr, expected, args.join(' '))
  }
  await sql(async (c) => await c.query('DROP VIEW film_title'))
  const clean = join(dir, 'clean.ts')
  t.same(await cli(['generate', '--out', clean]), { code: 0, stdout: `Wrote 14 tables to ${clean}.\n`, stderr: '' }, 'nothing to note: no notes mentioned')
})

t.test('foreign keys whose reverse relations would share a name are given related names', async (t) => {
  // Two keys from film to language, and a self-reference named like its table: under the
  // default names language had two relations named film, and node one named like its column
  // node, so the module failed any mount that joins (and, before, any mount at all).
  const own = await testDatabase(t)
  const harness = cliHarness(own.connectionString)
  const long = 'c'.repeat(58)
  await harness.sql(async (c) => await c.query(`
    CREATE TABLE language (id serial PRIMARY KEY, name text);
    CREATE TABLE film (id serial PRIMARY KEY, language integer REFERENCES language, original integer REFERENCES language, sequel_of integer REFERENCES film);
    CREATE TABLE node (id serial PRIMARY KEY, node integer REFERENCES node ON DELETE CASCADE);
    CREATE TABLE part (part integer PRIMARY KEY, _ integer REFERENCES part ON DELETE CASCADE);
    CREATE TABLE lender (id serial PRIMARY KEY, ${long}_one integer REFERENCES language, ${long}_two integer REFERENCES language)`))
  const { code, stdout, stderr } = await harness.cli(['generate'])
  t.same([code, stderr], [0, ''])
  for (const line of [
    "  language: column.foreignKey((): Table => language, { onDelete: 'no action', related: 'film_language' }),",
    "  original: column.foreignKey((): Table => language, { onDelete: 'no action', related: 'film_original' }),",
    "  sequel_of: column.foreignKey((): Table => film, { onDelete: 'no action' })",
    "  node: column.foreignKey((): Table => node, { related: 'node_node' })",
    // Not part__: a relation name holds no __.
    "  _: column.foreignKey((): Table => part, { related: 'part_' })",
    // At most 63 bytes, and distinct once cut.
    `  ${long}_one: column.foreignKey((): Table => language, { onDelete: 'no action', related: 'lender_${'c'.repeat(56)}' }),`,
    `  ${long}_two: column.foreignKey((): Table => language, { onDelete: 'no action', related: 'lender_${'c'.repeat(54)}_2' })`
  ]) t.ok(stdout.includes(line), line)
  const { tables } = await import(pathToFileURL(save(t, stdout)).href) as { tables: Table[] }
  for (const table of tables) t.doesNotThrow(() => relationsOf(table), `${table.name}: its relations have distinct names`)
})

t.test('each note is one line: control characters of names and defaults are escaped', async (t) => {
  // A newline in a column name split a note over two lines, and an escape character reached
  // the terminal as it was.
  const own = await testDatabase(t)
  const harness = cliHarness(own.connectionString)
  await harness.sql(async (c) => await c.query(`CREATE TABLE odd (id serial PRIMARY KEY, "new
line" integer, "esc${'\x1b'}[31m" integer, label text DEFAULT 'a' || E'\\n\\u2028')`))
  const { code, stderr } = await harness.cli(['generate'])
  t.equal(code, 0)
  t.equal(stderr, [
    'Column odd.new\\nline (integer): not generated, its name is not an identifier a definition takes (letters, digits and _, no __).',
    'Column odd.esc\\u001b[31m (integer): not generated, its name is not an identifier a definition takes (letters, digits and _, no __).',
    "Column odd.label: its default is not kept: the default ('a'::text || '\\n\\u2028'::text) is not a constant of its type (a definition's default is a value, or 'now' for the clock types).",
    ''
  ].join('\n'))
})

t.test('a label or a JSON key __proto__ is written as a key of its own', async (t) => {
  // Written `__proto__: ...`, an object literal sets its prototype instead: the enum lost a
  // label and the JSON default a key, so check found the module differing from the database.
  const own = await testDatabase(t)
  const harness = cliHarness(own.connectionString)
  await harness.sql(async (c) => await c.query(`CREATE TYPE mood AS ENUM ('__proto__', 'calm');
    CREATE TABLE feeling (id serial PRIMARY KEY, mood mood, doc jsonb DEFAULT '{"__proto__": {"a": 1}}')`))
  const { code, stdout } = await harness.cli(['generate'])
  t.equal(code, 0)
  for (const line of [
    "  mood: column.text({ null: true, choices: { ['__proto__']: '__proto__', calm: 'calm' } }),",
    "  doc: column.jsonb({ null: true, default: { ['__proto__']: { a: 1 } } })"
  ]) t.ok(stdout.includes(line), line)
  const { tables } = await import(pathToFileURL(save(t, stdout)).href) as { tables: Table[] }
  t.same(await harness.sql(async (c) => await checkTables(c, tables)), [], 'check finds no difference')
})

t.test('a JSONB default that is JSON null is noted, not written default: null', async (t) => {
  // default: null means no default: the module said none and check found 'null'::jsonb.
  const own = await testDatabase(t)
  const harness = cliHarness(own.connectionString)
  await harness.sql(async (c) => await c.query("CREATE TABLE doc (id serial PRIMARY KEY, body jsonb NOT NULL DEFAULT 'null')"))
  const { code, stdout, stderr } = await harness.cli(['generate'])
  t.equal(code, 0)
  t.ok(stdout.includes('  body: column.jsonb()\n'), stdout)
  t.equal(stderr, "Column doc.body: its default is not kept: the default 'null'::jsonb is JSON's null, and a definition's default null means none.\n")
})

t.test('keys the database assigns, as Rails, Django and others make them, round-trip', async (t) => {
  // A bigserial key was written bigInt (a POST had to give the id) and an identity key left
  // its table out.
  const own = await testDatabase(t)
  const harness = cliHarness(own.connectionString)
  await harness.sql(async (c) => await c.query(`
    CREATE TABLE rails_post (id bigserial PRIMARY KEY, title text, n bigserial);
    CREATE TABLE django_tag (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, post bigint REFERENCES rails_post);
    CREATE TABLE strict_one (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tag bigint NOT NULL REFERENCES django_tag ON DELETE RESTRICT,
      seen integer GENERATED BY DEFAULT AS IDENTITY);
    CREATE TABLE small_one (id smallint GENERATED ALWAYS AS IDENTITY PRIMARY KEY)`))
  const first = await harness.cli(['generate'])
  t.equal(first.code, 0)
  t.equal(first.stderr, [
    'Table small_one: not generated, its key id (smallint) cannot be mapped: a smallint identity column: the column types the database assigns are serial (integer) and bigSerial (bigint).',
    "Column strict_one.seen (integer): not generated, an identity column that is not the key: a definition's identity is its key's. The database still assigns it when a write leaves it out.",
    ''
  ].join('\n'))
  for (const line of [
    "export const django_tag = defineTable('django_tag', {\n  id: column.bigSerial({ primaryKey: true, identity: 'by default' }),\n  post: column.foreignKey<string>((): Table => rails_post, { onDelete: 'no action' })\n})",
    "export const rails_post = defineTable('rails_post', {\n  id: column.bigSerial({ primaryKey: true }),\n  title: column.text({ null: true }),\n  n: column.bigSerial()\n})",
    "export const strict_one = defineTable('strict_one', {\n  id: column.serial({ primaryKey: true, identity: 'always' }),\n  tag: column.foreignKey<string>((): Table => django_tag, { null: false, onDelete: 'restrict' })\n})"
  ]) t.ok(first.stdout.includes(line), line)
  const { tables } = await import(pathToFileURL(save(t, first.stdout)).href) as { tables: Table[] }
  t.same(await harness.sql(async (c) => await checkTables(c, tables)), [], 'check finds no difference, the column left out included')
  await harness.sql(async (c) => { await c.query('DROP TABLE small_one, strict_one, django_tag, rails_post'); await createTables(c, tables) })
  t.same(await harness.cli(['generate']), { code: 0, stdout: first.stdout, stderr: '' }, 'created and read again, the same module')
})
