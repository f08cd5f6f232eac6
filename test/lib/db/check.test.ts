import t from 'tap'
import { checkTables, schemaDriftHint } from '../../../lib/db/check.js'
import { createTables } from '../../../lib/db/ddl.js'
import { column, defineTable } from '../../../lib/table/index.js'
import { testDatabase } from '../../helpers/db.js'

const db = await testDatabase(t)

const studio = defineTable('ck_studio', {
  code: column.varchar({ length: 8, primaryKey: true }),
  name: column.varchar({ length: 100, required: true })
})
const film = defineTable('ck_film', {
  name: column.varchar({ length: 100, required: true }),
  rating: column.real({ null: true }),
  genre: column.varchar({ length: 20, default: 'drama' }),
  released: column.timestamp(),
  tags: column.array(column.varchar({ length: 20 })),
  box_office: column.numeric({ digits: [12, 2], null: true }),
  studio: column.foreignKey<string>(studio, { null: true })
})

t.test('tables as createTables writes them have no problem', async (t) => {
  await createTables(db.pool, [studio, film])
  t.strictSame(await checkTables(db.pool, [studio, film]), [])
  t.strictSame(await checkTables(db.pool, []), [])
  t.strictSame(await checkTables(db.pool, [studio, film]), [], 'twice: the temporary tables of the first run are gone')
})

t.test('a missing table, then each kind of column difference', async (t) => {
  const absent = defineTable('ck_absent', { name: column.text() })
  t.strictSame(await checkTables(db.pool, [absent]), [
    { table: 'ck_absent', column: null, kind: 'missing table', expected: null, actual: null, message: 'Table ck_absent is missing.' }
  ])
  await db.pool.query(`
    ALTER TABLE ck_film DROP COLUMN rating;
    ALTER TABLE ck_film ALTER COLUMN name TYPE varchar(50);
    ALTER TABLE ck_film ALTER COLUMN tags DROP NOT NULL;
    ALTER TABLE ck_film ALTER COLUMN genre SET DEFAULT 'comedy';
    ALTER TABLE ck_film ALTER COLUMN released DROP DEFAULT;
    ALTER TABLE ck_film ADD COLUMN budget integer NOT NULL;
    ALTER TABLE ck_film ADD COLUMN notes text;
    ALTER TABLE ck_film ADD COLUMN kind text NOT NULL DEFAULT 'x'`)
  t.strictSame(await checkTables(db.pool, [film]), [
    { table: 'ck_film', column: 'name', kind: 'type', expected: 'character varying(100)', actual: 'character varying(50)', message: 'Column ck_film.name is character varying(50) in the database; the definition says character varying(100).' },
    { table: 'ck_film', column: 'rating', kind: 'missing column', expected: 'real', actual: null, message: 'Column ck_film.rating is missing (real).' },
    { table: 'ck_film', column: 'genre', kind: 'default', expected: "'drama'::character varying", actual: "'comedy'::character varying", message: "Column ck_film.genre has 'comedy'::character varying in the database; the definition says 'drama'::character varying." },
    { table: 'ck_film', column: 'released', kind: 'default', expected: "(now() AT TIME ZONE 'utc'::text)", actual: null, message: "Column ck_film.released has no default in the database; the definition says (now() AT TIME ZONE 'utc'::text)." },
    { table: 'ck_film', column: 'tags', kind: 'nullability', expected: 'NOT NULL', actual: 'nullable', message: 'Column ck_film.tags is nullable in the database; the definition says NOT NULL.' },
    { table: 'ck_film', column: 'budget', kind: 'extra column', expected: null, actual: 'integer', message: 'Column ck_film.budget is not in the definition, and NOT NULL without a default: every insert fails.' }
  ])
  await db.pool.query('ALTER TABLE ck_film ALTER COLUMN box_office SET NOT NULL; ALTER TABLE ck_film ALTER COLUMN id DROP DEFAULT')
  t.match(await checkTables(db.pool, [film]), [
    { column: 'id', kind: 'default', expected: 'serial', actual: null },
    { column: 'name' }, { column: 'rating' }, { column: 'genre' }, { column: 'released' }, { column: 'tags' },
    { column: 'box_office', kind: 'nullability', expected: 'nullable', actual: 'NOT NULL', message: 'Column ck_film.box_office is NOT NULL in the database; the definition says nullable.' },
    { column: 'budget' }
  ])
})

t.test('the log line of a query that meets a missing table or column', async (t) => {
  const hint = (message: string, code = '42703', table?: string): string | undefined => schemaDriftHint(Object.assign(new Error(message), { code }), table)
  const tail = ': the table definitions and the database differ; run `npx fastify-tablecrud check <module>` to list the differences.'
  t.equal(hint('relation "movie" does not exist', '42P01'), 'The table movie is missing in the database (relation "movie" does not exist)' + tail)
  t.equal(hint('column "rating" of relation "movie" does not exist'), 'The column rating of the table movie is missing in the database (column "rating" of relation "movie" does not exist)' + tail)
  t.equal(hint('column movie.rating does not exist'), 'The column rating of the table movie is missing in the database (column movie.rating does not exist)' + tail)
  t.equal(hint('column t0.rating does not exist', '42703', 'movie'), 'The column rating of the table movie is missing in the database (column t0.rating does not exist)' + tail, 'an alias: the table of the request')
  t.equal(hint('column "rating" does not exist', '42703', 'movie'), 'The column rating of the table movie is missing in the database (column "rating" does not exist)' + tail)
  t.equal(hint('column t1.rating does not exist'), 'The column rating of the table (unknown) is missing in the database (column t1.rating does not exist)' + tail)
  t.equal(hint('something else', '42P01'), 'The table (unknown) is missing in the database (something else)' + tail)
  t.equal(hint('something else'), 'The column (unknown) of the table (unknown) is missing in the database (something else)' + tail)
  t.equal(hint('relation "movie" does not exist', '42P02'), undefined)
  t.equal(schemaDriftHint(null), undefined)
  t.equal(schemaDriftHint({ code: '42P01' }), undefined)
})

t.test('an enum whose labels are the choices is the definition\'s text column with choices (what generate writes)', async (t) => {
  await db.pool.query("CREATE TYPE ck_mood AS ENUM ('up', 'down'); CREATE TABLE ck_feeling (id serial PRIMARY KEY, mood ck_mood NOT NULL DEFAULT 'up', other ck_mood, calm ck_mood)")
  const feeling = defineTable('ck_feeling', {
    mood: column.text({ choices: { up: 'up', down: 'down' }, default: 'up' }),
    other: column.text({ null: true, choices: { up: 'up' } }),
    calm: column.text({ null: true, choices: { up: 'up', down: 'down' } })
  })
  t.strictSame(await checkTables(db.pool, [feeling]), [{
    table: 'ck_feeling',
    column: 'other',
    kind: 'type',
    expected: 'text',
    actual: 'ck_mood',
    message: 'Column ck_feeling.other is ck_mood in the database; the definition says text.'
  }], 'the same labels, in order, or a difference')
})

t.test('a numeric default is compared by its value, not its spelling', async (t) => {
  // PostgreSQL keeps `DEFAULT 12.5` as written, not at the column's scale; the definition's
  // default is written at it (12.50): one value, which check called a difference, so that a
  // schema `generate` read failed `check` at once.
  await db.pool.query('CREATE TABLE ck_price (id serial PRIMARY KEY, a numeric(6,2) DEFAULT 12.5, b numeric(6,2) DEFAULT -3.1, c numeric(6,2) DEFAULT 7, d numeric(6,2) DEFAULT 1.25, e numeric(6,2) DEFAULT 0)')
  const price = defineTable('ck_price', {
    a: column.numeric({ digits: [6, 2], null: true, default: '12.5' }),
    b: column.numeric({ digits: [6, 2], null: true, default: '-3.10' }),
    c: column.numeric({ digits: [6, 2], null: true, default: 7 }),
    d: column.numeric({ digits: [6, 2], null: true, default: '1.2' }),
    e: column.numeric({ digits: [6, 2], null: true })
  })
  t.strictSame((await checkTables(db.pool, [price])).map((p) => [p.column, p.kind, p.expected, p.actual]), [['d', 'default', '1.20', '1.25'], ['e', 'default', null, '0']], 'another value, or none, is a difference')
})

t.test('an enum whose name needs quotes is the text column with choices, its default too', async (t) => {
  // PostgreSQL writes its default 'up'::"Mood": the cast was not taken off, so the default of
  // every such enum (Prisma names them so) was a difference.
  await db.pool.query('CREATE TYPE "Mood" AS ENUM (\'up\', \'down\'); CREATE TABLE ck_quoted (id serial PRIMARY KEY, mood "Mood" NOT NULL DEFAULT \'up\')')
  const quoted = defineTable('ck_quoted', { mood: column.text({ choices: { up: 'up', down: 'down' }, default: 'up' }) })
  t.strictSame(await checkTables(db.pool, [quoted]), [])
})

t.test('a float default that is a large whole number is one value however PostgreSQL typed it', async (t) => {
  // DEFAULT 1e10 is kept '10000000000'::numeric, the definition's 10000000000 '10000000000'::bigint.
  await db.pool.query('CREATE TABLE ck_float (id serial PRIMARY KEY, big double precision DEFAULT 1e10, r real DEFAULT 3e9)')
  const float = defineTable('ck_float', { big: column.doublePrecision({ null: true, default: 1e10 }), r: column.real({ null: true, default: 3e9 }) })
  t.strictSame(await checkTables(db.pool, [float]), [])
})

t.test('keys the database assigns: a sequence (any nextval) or an identity, ALWAYS or BY DEFAULT, each compared', async (t) => {
  const seq = defineTable('ck_seq', { id: column.bigSerial({ primaryKey: true }) })
  const always = defineTable('ck_always', { id: column.serial({ primaryKey: true, identity: 'always' }) })
  const byDefault = defineTable('ck_by_default', { id: column.bigSerial({ primaryKey: true, identity: 'by default' }) })
  await createTables(db.pool, [seq, always, byDefault])
  t.strictSame(await checkTables(db.pool, [seq, always, byDefault]), [])
  // An identity column left out of a definition has a default of sorts: inserts do not fail.
  await db.pool.query('ALTER TABLE ck_seq ADD COLUMN n integer GENERATED ALWAYS AS IDENTITY')
  t.strictSame(await checkTables(db.pool, [seq]), [], 'an identity column the definition lacks is no extra column')

  // Each definition against the others' tables: the same names, other ways of assigning.
  const as = (name: string, id: ReturnType<typeof column.serial> | ReturnType<typeof column.bigSerial>): ReturnType<typeof defineTable> => defineTable(name, { id })
  t.strictSame(await checkTables(db.pool, [as('ck_seq', column.bigSerial({ primaryKey: true, identity: 'always' }))]), [
    { table: 'ck_seq', column: 'id', kind: 'default', expected: 'GENERATED ALWAYS AS IDENTITY', actual: "nextval('ck_seq_id_seq'::regclass)", message: "Column ck_seq.id has nextval('ck_seq_id_seq'::regclass) in the database; the definition says GENERATED ALWAYS AS IDENTITY." }
  ])
  t.strictSame(await checkTables(db.pool, [as('ck_always', column.serial({ primaryKey: true }))]), [
    { table: 'ck_always', column: 'id', kind: 'default', expected: 'serial', actual: 'GENERATED ALWAYS AS IDENTITY', message: 'Column ck_always.id has GENERATED ALWAYS AS IDENTITY in the database; the definition says serial.' }
  ])
  t.strictSame(await checkTables(db.pool, [as('ck_by_default', column.bigSerial({ primaryKey: true, identity: 'always' }))]), [
    { table: 'ck_by_default', column: 'id', kind: 'default', expected: 'GENERATED ALWAYS AS IDENTITY', actual: 'GENERATED BY DEFAULT AS IDENTITY', message: 'Column ck_by_default.id has GENERATED BY DEFAULT AS IDENTITY in the database; the definition says GENERATED ALWAYS AS IDENTITY.' }
  ])
  t.strictSame(await checkTables(db.pool, [as('ck_always', column.bigSerial({ primaryKey: true, identity: 'always' }))]), [
    { table: 'ck_always', column: 'id', kind: 'type', expected: 'bigint', actual: 'integer', message: 'Column ck_always.id is integer in the database; the definition says bigint.' }
  ], 'a BigSerial is a bigint')
  await db.pool.query('ALTER TABLE ck_by_default ALTER COLUMN id DROP IDENTITY')
  t.strictSame(await checkTables(db.pool, [byDefault]), [
    { table: 'ck_by_default', column: 'id', kind: 'default', expected: 'GENERATED BY DEFAULT AS IDENTITY', actual: null, message: 'Column ck_by_default.id has no default in the database; the definition says GENERATED BY DEFAULT AS IDENTITY.' }
  ])
  t.match(await checkTables(db.pool, [as('ck_by_default', column.bigSerial({ primaryKey: true }))]), [{ kind: 'default', expected: 'bigserial', actual: null }])
})
