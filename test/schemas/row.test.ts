import t, { type Test } from 'tap'
import Fastify from 'fastify'
import type { ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'
import { bodyAjv } from '../../plugins/crud/compilers.js'
import type { TSchema } from '@sinclair/typebox'
import { column, defineTable, type ColumnSpec, type Table } from '../../lib/table/index.js'
import {
  createSchema, DECIMAL_PATTERN, filterValueSchema, OPENAPI_RULES, newRow, newRowSchema, patchSchema, replaceSchema, rowSchema, schemaDocument,
  TIMESTAMP_PATTERN, valueSchema
} from '../../schemas/row.js'

const addFormats = formats.default

/** The JSON a schema serialises to: TypeBox's symbol members dropped. */
/** Plain JSON Schema, without the OpenAPI `examples` (checked by a test of their own). */
const plain = (schema: unknown): any => JSON.parse(JSON.stringify(schema, (name, value) => name === 'examples' ? undefined : value))
/**
 * A row schema without its arrays of embedded rows (SPEC §8.1): every table of this file that
 * points at `person` gives it one, and test/schemas/embeds.test.ts checks them.
 */
const joinsOnly = (schema: unknown): any => JSON.parse(JSON.stringify(plain(schema), (_name, value: any) => {
  if (value === null || typeof value !== 'object' || value.properties === undefined) return value
  const properties = Object.fromEntries(Object.entries(value.properties as Record<string, any>).filter(([, v]) => !/Embedded/.test(String(v?.items?.title))))
  return { ...value, properties }
}))

const INT = { minimum: -2147483648, maximum: 2147483647, type: 'integer' }
/** A nullable value out: `type: [t, 'null']`, which fast-json-stringify writes faster than anyOf. */
const orNull = (schema: { type: string, [k: string]: unknown }): object => ({ ...schema, type: [schema.type, 'null'] })
const NULL = { type: 'null' }
const extra = (members: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ help_text: null, choices: null, secret: false, nullable: false, unique: false, ...members })

const country = defineTable('country', {
  code: column.varchar({ length: 2, primaryKey: true }),
  name: column.varchar({ length: 100, required: true, unique: true })
}, { readable: 'name' })

const person = defineTable('person', {
  name: column.varchar({ length: 50, required: true }),
  boss: column.foreignKey((): Table => person, { onDelete: 'set null' }),
  country: column.foreignKey(country, { null: false, onDelete: 'restrict' }),
  password: column.varchar({ length: 128, secret: true, required: true })
}, { readable: 'name' })

const movie = defineTable('movie', {
  name: column.varchar({ length: 100, required: true, unique: true, helpText: 'The title' }),
  rating: column.real({ null: true }),
  box_office: column.numeric({ digits: [12, 2], null: true }),
  released: column.timestamp({ null: true }),
  director: column.foreignKey(person, { onDelete: 'restrict' }),
  tags: column.array(column.varchar({ length: 20 })),
  contact: column.email({ null: true, secret: true }),
  genre: column.varchar({ length: 20, choices: { action: 'Action', drama: { value: 'Drama', displayName: 'Serious drama' } } }),
  synopsis: column.text(),
  seen: column.boolean(),
  grid: column.array(column.array(column.integer()))
}, { readable: 'name', helpText: 'Feature films' })

const movieRole = defineTable('movie_role', {
  body: column.text({ null: true })
})

t.test('valueSchema: every column type, in and out', async (t) => {
  const cases: Array<[string, ColumnSpec, 'in' | 'out', unknown]> = [
    ['serial', column.serial(), 'in', INT],
    ['integer', column.integer(), 'out', INT],
    ['real', column.real(), 'in', { type: 'number' }],
    ['numeric in', column.numeric({ digits: [5, 2] }), 'in', { anyOf: [{ type: 'number' }, { pattern: DECIMAL_PATTERN, type: 'string' }] }],
    ['numeric out', column.numeric({ digits: [5, 2] }), 'out', { type: 'string' }],
    ['boolean', column.boolean(), 'in', { type: 'boolean' }],
    ['varchar', column.varchar({ length: 20 }), 'in', { maxLength: 20, type: 'string' }],
    ['text', column.text(), 'in', { type: 'string' }],
    ['email in', column.email(), 'in', { format: 'email', type: 'string' }],
    ['email out', column.email(), 'out', { type: 'string' }],
    ['timestamp in', column.timestamp(), 'in', { pattern: TIMESTAMP_PATTERN, type: 'string' }],
    ['timestamp out', column.timestamp(), 'out', { type: 'string' }],
    ['foreign key to a serial', column.foreignKey(person, { null: false }), 'in', INT],
    ['foreign key to a varchar key', column.foreignKey(country, { null: false }), 'out', { maxLength: 2, type: 'string' }],
    ['nullable foreign key (the default)', column.foreignKey(country), 'in', { anyOf: [{ maxLength: 2, type: 'string' }, NULL] }],
    ['array', column.array(column.integer()), 'in', { type: 'array', items: INT }],
    ['array of arrays', column.array(column.array(column.varchar({ length: 5 }))), 'out',
      { type: 'array', items: { type: 'array', items: { maxLength: 5, type: 'string' } } }],
    ['nullable array of arrays of nullable integers', column.array(column.array(column.integer({ null: true })), { null: true }), 'in',
      { anyOf: [{ type: 'array', items: { type: 'array', items: { anyOf: [INT, NULL] } } }, NULL] }],
    ['nullable integer', column.integer({ null: true }), 'out', orNull(INT)],
    ['nullable numeric in: one flat anyOf', column.numeric({ digits: [5, 2], null: true }), 'in',
      { anyOf: [{ type: 'number' }, { pattern: DECIMAL_PATTERN, type: 'string' }, NULL] }],
    ['choices in', column.varchar({ length: 10, choices: { a: 'x', b: 'y' } }), 'in', { enum: ['x', 'y'], maxLength: 10, type: 'string' }],
    ['choices out', column.varchar({ length: 10, choices: { a: 'x', b: 'y' } }), 'out', { maxLength: 10, type: 'string' }],
    ['nullable integer choices', column.integer({ null: true, choices: { one: 1, two: { value: 2 } } }), 'in',
      { anyOf: [{ enum: [1, 2], ...INT }, NULL] }],
    ['nullable numeric choices', column.numeric({ digits: [3, 2], null: true, choices: { low: '1.50', high: '2.00' } }), 'in',
      { anyOf: [{ enum: ['1.50', '2.00'], anyOf: [{ type: 'number' }, { pattern: DECIMAL_PATTERN, type: 'string' }] }, NULL] }],
    ['choices on an array constrain its elements', column.array(column.array(column.text()), { choices: { a: 'a' } }), 'in',
      { type: 'array', items: { type: 'array', items: { enum: ['a'], type: 'string' } } }],
    ['choices on the element', column.array(column.text({ choices: { b: 'b' } }), { choices: { a: 'a' } }), 'in',
      { type: 'array', items: { enum: ['b'], type: 'string' } }]
  ]
  for (const [name, spec, mode, expected] of cases) {
    t.strictSame(plain(valueSchema(movie, spec, mode)), expected, name)
  }
})

t.test('the decimal and timestamp patterns', async (t) => {
  const decimal = new RegExp(DECIMAL_PATTERN)
  for (const ok of ['1', '-1', '+1.5', '1.', '.5', '0012.50']) t.ok(decimal.test(ok), ok)
  for (const bad of ['', '.', '1e5', ' 1', '1.2.3', 'abc', '--1']) t.notOk(decimal.test(bad), JSON.stringify(bad))
  const timestamp = new RegExp(TIMESTAMP_PATTERN)
  for (const ok of ['2024-01-02', '2024-01-02T03:04', '2024-01-02 03:04:05', '2024-01-02T03:04:05.123456789Z', '2024-01-02T03:04:05,5+01', '2024-01-02T03:04:05-0130']) {
    t.ok(timestamp.test(ok), ok)
  }
  for (const bad of ['yesterday', '2024-1-2', '2024-01-02T3:04', '2024-01-02T03:04:05+1', '2024-01-02Z']) t.notOk(timestamp.test(bad), bad)
})

const movieRow = {
  id: INT,
  name: { maxLength: 100, type: 'string' },
  rating: orNull({ type: 'number' }),
  box_office: orNull({ type: 'string' }),
  released: orNull({ type: 'string' }),
  director: orNull(INT),
  tags: { type: 'array', items: { maxLength: 20, type: 'string' } },
  genre: { maxLength: 20, type: 'string' },
  synopsis: { type: 'string' },
  seen: { type: 'boolean' },
  grid: { type: 'array', items: { type: 'array', items: INT } }
}

t.test('rowSchema: every visible column, none required, secrets as asked', async (t) => {
  t.strictSame(plain(rowSchema(movie, true)), {
    title: 'MovieRow',
    type: 'object',
    properties: { ...movieRow, director_readable: { anyOf: [{ type: 'string' }, NULL] } }
  })
  const withSecrets = plain(rowSchema(movie, false)) as { properties: Record<string, unknown> }
  t.strictSame(Object.keys(withSecrets.properties),
    ['id', 'name', 'rating', 'box_office', 'released', 'director', 'tags', 'contact', 'genre', 'synopsis', 'seen', 'grid', 'director_readable'])
  t.strictSame(withSecrets.properties.contact, orNull({ type: 'string' }))
  t.strictSame(plain(rowSchema(movieRole, true)), { title: 'MovieRoleRow', type: 'object', properties: { id: INT, body: orNull({ type: 'string' }) } })
})

t.test('rowSchema: a ForeignKey within maxJoins may hold its joined fields, every one nullable', async (t) => {
  const password = orNull({ maxLength: 128, type: 'string' })
  const name = orNull({ maxLength: 50, type: 'string' })
  // A joined row through a NULL ForeignKey is served with each field null: `{"name": null}`.
  const personJoined = (boss: unknown, secrets = {}): object => ({
    title: 'PersonJoined',
    type: 'object',
    properties: { id: orNull(INT), name, boss, country: orNull({ maxLength: 2, type: 'string' }), ...secrets }
  })
  t.strictSame(joinsOnly(rowSchema(movie, true, 1)), {
    title: 'MovieRow',
    type: 'object',
    properties: {
      ...movieRow,
      director: { anyOf: [INT, personJoined(orNull(INT)), NULL] },
      director_readable: { anyOf: [{ type: 'string' }, NULL] }
    }
  })
  const twoDeep = joinsOnly(rowSchema(person, false, 2)) as { properties: Record<string, unknown> }
  const countryJoined = { title: 'CountryJoined', type: 'object', properties: { code: orNull({ maxLength: 2, type: 'string' }), name: orNull({ maxLength: 100, type: 'string' }) } }
  t.strictSame(twoDeep.properties.boss, {
    anyOf: [INT, {
      title: 'PersonJoinedDepth1',
      type: 'object',
      properties: {
        id: orNull(INT),
        name,
        boss: { anyOf: [INT, personJoined(orNull(INT), { password }), NULL] },
        country: { anyOf: [{ maxLength: 2, type: 'string' }, countryJoined, NULL] },
        password
      }
    }, NULL]
  }, 'secrets follow excludeSecrets in joined tables too; a NOT NULL key in a joined row may be null')
  // One join left: the country may hold its own embeds, so it is another schema than a joined country at the end of the path.
  t.strictSame(twoDeep.properties.country, { anyOf: [{ maxLength: 2, type: 'string' }, { ...countryJoined, title: 'CountryJoinedDepth1' }] }, 'a NOT NULL key of the row itself has no null branch')
  t.strictSame(Object.keys(twoDeep.properties), ['id', 'name', 'boss', 'country', 'password', 'boss_readable', 'country_readable'])
})

t.test('rowSchema: no <fk>_readable where a column already has that name', async (t) => {
  const clash = defineTable('clash', { owner: column.foreignKey(person), owner_readable: column.integer() })
  t.strictSame(plain(rowSchema(clash, true)).properties, { id: INT, owner: orNull(INT), owner_readable: INT })
})

const createProperties = {
  id: { title: 'Id', extra: extra({ unique: true }), type: 'null' },
  name: { title: 'Name', extra: extra({ help_text: 'The title', unique: true }), maxLength: 100, type: 'string' },
  rating: { title: 'Rating', extra: extra({ nullable: true }), anyOf: [{ type: 'number' }, NULL] },
  box_office: { title: 'Box Office', extra: extra({ nullable: true }), anyOf: [{ type: 'number' }, { pattern: DECIMAL_PATTERN, type: 'string' }, NULL] },
  released: { title: 'Released', extra: extra({ nullable: true }), anyOf: [{ pattern: TIMESTAMP_PATTERN, type: 'string' }, NULL] },
  director: { title: 'Director', extra: extra({ nullable: true, foreign_key: { to: 'person', target_column: 'id' } }), anyOf: [INT, NULL] },
  tags: { title: 'Tags', extra: extra({ dimensions: 1 }), type: 'array', items: { maxLength: 20, type: 'string' } },
  contact: { title: 'Contact', extra: extra({ secret: true, nullable: true }), anyOf: [{ format: 'email', type: 'string' }, NULL] },
  genre: {
    title: 'Genre',
    extra: extra({ choices: { action: { display_name: 'Action', value: 'Action' }, drama: { display_name: 'Serious drama', value: 'Drama' } } }),
    enum: ['Action', 'Drama'],
    maxLength: 20,
    type: 'string'
  },
  synopsis: { title: 'Synopsis', extra: extra({ widget: 'text-area' }), type: 'string' },
  seen: { title: 'Seen', extra: extra(), type: 'boolean' },
  grid: { title: 'Grid', extra: extra({ dimensions: 2 }), type: 'array', items: { type: 'array', items: INT } }
}
const idReplace = { title: 'Id', extra: extra({ unique: true }), ...INT }

t.test('createSchema, replaceSchema, patchSchema: a Serial key', async (t) => {
  t.strictSame(plain(createSchema(movie)), {
    title: 'MovieIn', additionalProperties: false, type: 'object', required: ['name'], properties: createProperties
  })
  t.strictSame(plain(replaceSchema(movie)), {
    title: 'MovieReplace', additionalProperties: false, type: 'object', required: ['name'], properties: { ...createProperties, id: idReplace }
  })
  t.strictSame(plain(patchSchema(movie)), {
    title: 'MoviePatch', additionalProperties: false, type: 'object', properties: { ...createProperties, id: idReplace }
  })
})

t.test('createSchema, replaceSchema, patchSchema: a custom varchar key, a key to it, a secret', async (t) => {
  const code = { title: 'Code', extra: extra({ unique: true }), maxLength: 2, type: 'string' }
  const name = { title: 'Name', extra: extra({ unique: true }), maxLength: 100, type: 'string' }
  t.strictSame(plain(createSchema(country)), {
    title: 'CountryIn', additionalProperties: false, type: 'object', required: ['code', 'name'], properties: { code, name }
  })
  t.strictSame(plain(replaceSchema(country)).required, ['name'])
  t.equal(plain(patchSchema(country)).required, undefined)
  t.strictSame(plain(createSchema(person)), {
    title: 'PersonIn',
    additionalProperties: false,
    type: 'object',
    required: ['name', 'password'],
    properties: {
      id: { title: 'Id', extra: extra({ unique: true }), type: 'null' },
      name: { title: 'Name', extra: extra(), maxLength: 50, type: 'string' },
      boss: { title: 'Boss', extra: extra({ nullable: true, foreign_key: { to: 'person', target_column: 'id' } }), anyOf: [INT, NULL] },
      country: { title: 'Country', extra: extra({ foreign_key: { to: 'country', target_column: 'code' } }), maxLength: 2, type: 'string' },
      password: { title: 'Password', extra: extra({ secret: true }), maxLength: 128, type: 'string' }
    }
  })
})

function check (t: Test, validate: ValidateFunction, body: unknown, ok: boolean): void {
  t.equal(validate(body), ok, `${JSON.stringify(body)} ${ok ? 'passes' : 'fails'}`)
}

t.test('POST bodies', async (t) => {
  const validate = bodyAjv.compile(createSchema(movie))
  const passes: unknown[] = [
    { name: 'Star Wars' },
    { id: null, name: 'x', rating: null, box_office: null, released: null, director: null, contact: null },
    { name: 'x', rating: 8.5, box_office: 12.5, released: '2024-01-02', director: 1, tags: ['a', 'b'], contact: 'a@example.com' },
    { name: 'x', box_office: '123.45', released: '2024-01-02T03:04:05Z', genre: 'Drama', synopsis: 'Long', seen: true, grid: [[1, 2], [3]] },
    { name: '🎬'.repeat(100) },
    { name: 'x', tags: [] }
  ]
  const fails: unknown[] = [
    {},
    { name: 95 },
    { name: 'x', rating: '95' },
    { name: 'x', unknown: 1 },
    { name: 'x', constructor: 1 },
    { name: null },
    { name: 'x', tags: null },
    { name: 'x', seen: null },
    { name: 'x'.repeat(101) },
    { name: 'x', contact: 'not an email' },
    { name: 'x', genre: 'Comedy' },
    { name: 'x', genre: 'drama' },
    { id: 1, name: 'x' },
    { name: 'x', box_office: '1e5' },
    { name: 'x', box_office: true },
    { name: 'x', released: 'yesterday' },
    { name: 'x', released: 1700000000 },
    { name: 'x', seen: 'true' },
    { name: 'x', director: 1.5 },
    { name: 'x', director: 2147483648 },
    { name: 'x', director: '1' },
    { name: 'x', tags: ['x'.repeat(21)] },
    { name: 'x', tags: 'a' },
    { name: 'x', grid: [1, 2] },
    { name: 'x', grid: [[null]] },
    [],
    null,
    'x'
  ]
  for (const body of passes) check(t, validate, body, true)
  for (const body of fails) check(t, validate, body, false)
})

t.test('POST, PUT and PATCH bodies with a custom key', async (t) => {
  const ajv = bodyAjv
  const create = ajv.compile(createSchema(country))
  check(t, create, { code: 'FR', name: 'France' }, true)
  check(t, create, { name: 'France' }, false)
  check(t, create, { code: 'FRA', name: 'France' }, false)
  check(t, create, { code: null, name: 'France' }, false)
  const personCreate = ajv.compile(createSchema(person))
  check(t, personCreate, { name: 'Ann', password: 'secret', country: 'FR', boss: null }, true)
  check(t, personCreate, { name: 'Ann', password: 'secret', country: 1 }, false)
  check(t, personCreate, { name: 'Ann', password: 'secret', country: null }, false)
  check(t, personCreate, { name: 'Ann' }, false)
})

t.test('PUT and PATCH bodies', async (t) => {
  const ajv = bodyAjv
  const replace = ajv.compile(replaceSchema(movie))
  check(t, replace, { name: 'x' }, true)
  check(t, replace, { id: 3, name: 'x' }, true)
  check(t, replace, { id: null, name: 'x' }, false)
  check(t, replace, { id: 'a', name: 'x' }, false)
  check(t, replace, { rating: 5 }, false)
  check(t, replace, { name: 'x', extra: 1 }, false)
  const patch = ajv.compile(patchSchema(movie))
  check(t, patch, {}, true)
  check(t, patch, { rating: 5 }, true)
  check(t, patch, { id: 3 }, true)
  check(t, patch, { rating: null }, true)
  check(t, patch, { name: null }, false)
  check(t, patch, { name: 95 }, false)
  check(t, patch, { rating: '95' }, false)
  check(t, patch, { nope: 1 }, false)
  const countryReplace = ajv.compile(replaceSchema(country))
  check(t, countryReplace, { name: 'France' }, true)
  check(t, countryReplace, { code: 'FR', name: 'France' }, true)
})

t.test('the body errors name each failing field', async (t) => {
  const validate = bodyAjv.compile(createSchema(movie))
  validate({ name: 95, rating: '95', nope: 1 })
  t.strictSame(validate.errors!.map((e) => [e.instancePath, e.keyword]).sort(), [
    ['', 'additionalProperties'], ['/name', 'type'], ['/rating', 'anyOf'], ['/rating', 'type'], ['/rating', 'type']
  ])
})

t.test('schemaDocument: the shape of SPEC §2.8', async (t) => {
  const { id: _, ...properties } = createProperties
  t.strictSame(schemaDocument(movie, { excludeSecrets: true, maxJoins: 1 }), {
    title: 'MovieIn',
    type: 'object',
    properties,
    required: ['name'],
    extra: {
      help_text: 'Feature films',
      primary_key_name: 'id',
      visible_fields_options: ['id', 'name', 'rating', 'box_office', 'released', 'director', 'director.id', 'director.name',
        'director.boss', 'director.country', 'tags', 'genre', 'synopsis', 'seen', 'grid']
    }
  })
  t.strictSame(schemaDocument(country, { excludeSecrets: true, maxJoins: 0, schemaExtra: { ui: { layout: 'grid' } } }), {
    title: 'CountryIn',
    type: 'object',
    properties: {
      code: { title: 'Code', extra: extra({ unique: true }), maxLength: 2, type: 'string' },
      name: { title: 'Name', extra: extra({ unique: true }), maxLength: 100, type: 'string' }
    },
    required: ['code', 'name'],
    extra: { help_text: null, primary_key_name: 'code', visible_fields_options: ['code', 'name'], ui: { layout: 'grid' } }
  }, 'a custom key is a required property; schemaExtra is merged into extra')
  t.strictSame(schemaDocument(movieRole, { excludeSecrets: true, maxJoins: 0 }), {
    title: 'MovieRoleIn',
    type: 'object',
    properties: { body: { title: 'Body', extra: extra({ nullable: true, widget: 'text-area' }), anyOf: [{ type: 'string' }, NULL] } },
    extra: { help_text: null, primary_key_name: 'id', visible_fields_options: ['id', 'body'] }
  }, 'required is left out when empty')
})

t.test('schemaDocument: visible_fields_options follow maxJoins and excludeSecrets', async (t) => {
  const all = (maxJoins: number, excludeSecrets: boolean): string[] =>
    (schemaDocument(movie, { excludeSecrets, maxJoins }).extra as { visible_fields_options: string[] }).visible_fields_options
  // The paths through ForeignKeys; those through the relations other tables of this file give person come after them.
  const FOREIGN_KEYS = new Set(['director', 'boss', 'country'])
  const options = (maxJoins: number, excludeSecrets: boolean): string[] =>
    all(maxJoins, excludeSecrets).filter((name) => name.split('.').slice(0, -1).every((part) => FOREIGN_KEYS.has(part)))
  t.ok(all(2, true).includes('director.movie.name'), 'a path through a reverse relation is listed (SPEC §8.1)')
  t.notOk(all(2, true).includes('director.movie.contact'), 'not to a secret column')
  t.notOk(all(1, true).some((name) => name.startsWith('director.movie.')), 'nor past maxJoins')
  const tail = ['tags', 'genre', 'synopsis', 'seen', 'grid']
  const head = ['id', 'name', 'rating', 'box_office', 'released', 'director']
  t.strictSame(options(0, true), [...head, ...tail])
  t.strictSame(options(0, false), [...head, 'tags', 'contact', 'genre', 'synopsis', 'seen', 'grid'])
  t.strictSame(options(2, true), [...head,
    'director.id', 'director.name', 'director.boss', 'director.boss.id', 'director.boss.name', 'director.boss.boss', 'director.boss.country',
    'director.country', 'director.country.code', 'director.country.name', ...tail])
  t.strictSame(options(1, false), [...head, 'director.id', 'director.name', 'director.boss', 'director.country', 'director.password',
    'tags', 'contact', 'genre', 'synopsis', 'seen', 'grid'])
  const properties = schemaDocument(movie, { excludeSecrets: true, maxJoins: 0 }).properties as Record<string, { extra: { secret: boolean } }>
  t.equal(properties.contact!.extra.secret, true, 'secret columns stay in properties: a client may write them')
})

t.test('schemaDocument is valid JSON Schema 2020-12 (Ajv strict)', async (t) => {
  const ajv = new Ajv2020({ strict: true })
  addFormats(ajv)
  ajv.addKeyword({ keyword: 'extra', schemaType: 'object' })
  for (const table of [movie, person, country, movieRole]) {
    const document = schemaDocument(table, { excludeSecrets: false, maxJoins: 2, schemaExtra: { x: 1 } })
    const validate = ajv.compile(document)
    t.equal(typeof validate, 'function', table.name)
  }
  const validate = ajv.compile(schemaDocument(movie, { excludeSecrets: true, maxJoins: 0 }))
  t.equal(validate({ name: 'x', genre: 'Action' }), true)
  t.equal(validate({ name: 'x', genre: 'Comedy' }), false)
})

const WIRE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/

function isNow (t: Test, value: unknown, name: string): void {
  t.match(value, WIRE_TIME, `${name} is a wire timestamp`)
  t.ok(Math.abs(Date.parse(`${String(value)}Z`) - Date.now()) < 5000, `${name} is the current time in UTC`)
}

const defaults = defineTable('defaults', {
  label: column.varchar({ length: 20, default: 'untitled' }),
  body: column.text(),
  note: column.text({ null: true }),
  count: column.integer({ default: 7 }),
  ratio: column.real({ null: true }),
  price: column.numeric({ digits: [8, 2] }),
  whole: column.numeric({ digits: [8, 0], default: '3' }),
  fee: column.numeric({ digits: [8, 2], default: 1.5 }),
  flag: column.boolean({ default: true }),
  off: column.boolean(),
  at: column.timestamp(),
  fixed: column.timestamp({ default: '2024-01-02T03:04:05+01:00' }),
  fraction: column.timestamp({ default: '2024-01-02 03:04:05.25' }),
  stamped: column.timestamp({ default: 'now', null: true }),
  owner: column.foreignKey(person),
  tags: column.array(column.varchar({ length: 10 })),
  prices: column.array(column.numeric({ digits: [5, 1] }), { default: [1, '2.5', null] }),
  mail: column.email(),
  nothing: column.varchar({ length: 5, null: true, default: null }),
  counter: column.serial(),
  pick: column.varchar({ length: 5, choices: { a: 'a' } }),
  maybe: column.text({ null: true, choices: { a: 'a' } }),
  picked: column.integer({ choices: { one: 1 }, default: 1 }),
  code: column.varchar({ length: 10, secret: true })
})

t.test('newRow: a default for every column (SPEC §6.5)', async (t) => {
  const row = newRow(defaults, true)
  isNow(t, row.at, 'at')
  isNow(t, row.stamped, 'stamped')
  t.strictSame({ ...row, at: 'now', stamped: 'now' }, {
    id: null,
    label: 'untitled',
    body: '',
    note: '',
    count: 7,
    ratio: 0,
    price: '0.00',
    whole: '3',
    fee: '1.50',
    flag: true,
    off: false,
    at: 'now',
    fixed: '2024-01-02T02:04:05',
    fraction: '2024-01-02T03:04:05.250000',
    stamped: 'now',
    owner: null,
    tags: [],
    prices: ['1.0', '2.5', null],
    mail: null,
    nothing: null,
    counter: null,
    pick: null,
    maybe: null,
    picked: 1
  })
  t.equal(newRow(defaults, false).code, '', 'a secret column is given when secrets are not excluded')
  t.strictSame(newRow(country, true), { code: null, name: '' }, 'the primary key is null, whatever its type')
})

t.test('newRow: a default it cannot format is passed on as declared (createTables refuses it)', async (t) => {
  const odd = defineTable('odd', {
    fine: column.numeric({ digits: [4, 2], default: '1.234' }),
    soon: column.timestamp({ default: 'soon' }),
    epoch: column.timestamp({ default: 0 }),
    list: column.array(column.integer(), { default: 'x' })
  })
  t.strictSame(newRow(odd, true), { id: null, fine: '1.234', soon: 'soon', epoch: 0, list: 'x' })
})

t.test('newRowSchema: every key, null where the default is', async (t) => {
  t.strictSame(plain(newRowSchema(defaults, true)), {
    title: 'DefaultsNew',
    type: 'object',
    required: ['id', 'label', 'body', 'note', 'count', 'ratio', 'price', 'whole', 'fee', 'flag', 'off', 'at', 'fixed', 'fraction',
      'stamped', 'owner', 'tags', 'prices', 'mail', 'nothing', 'counter', 'pick', 'maybe', 'picked'],
    properties: {
      id: orNull(INT),
      label: { maxLength: 20, type: 'string' },
      body: { type: 'string' },
      note: orNull({ type: 'string' }),
      count: INT,
      ratio: orNull({ type: 'number' }),
      price: { type: 'string' },
      whole: { type: 'string' },
      fee: { type: 'string' },
      flag: { type: 'boolean' },
      off: { type: 'boolean' },
      at: { type: 'string' },
      fixed: { type: 'string' },
      fraction: { type: 'string' },
      stamped: orNull({ type: 'string' }),
      owner: orNull(INT),
      tags: { type: 'array', items: { maxLength: 10, type: 'string' } },
      prices: { type: 'array', items: { type: 'string' } },
      mail: orNull({ type: 'string' }),
      nothing: orNull({ maxLength: 5, type: 'string' }),
      counter: orNull(INT),
      pick: orNull({ maxLength: 5, type: 'string' }),
      maybe: orNull({ type: 'string' }),
      picked: INT
    }
  })
  t.ok('code' in (plain(newRowSchema(defaults, false)) as { properties: object }).properties)
})

t.test('the row and /new/ schemas serialise through Fastify', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const route = (url: string, schema: TSchema, body: unknown): void => {
    app.get(url, { schema: { response: { 200: schema } } }, async () => body)
  }
  route('/new', newRowSchema(movie, true), newRow(movie, true))
  route('/row', rowSchema(movie, true, 1), {
    id: 1,
    name: 'Star Wars',
    box_office: '775000000.00',
    released: 'infinity',
    director: { name: 'George Lucas', boss: null },
    director_readable: 'George Lucas',
    contact: 'leaked@example.com',
    grid: [[1], [2, 3]]
  })
  route('/plain', rowSchema(movie, true, 1), { id: 2, director: 7, director_readable: null })
  const get = async (url: string): Promise<unknown> => (await app.inject(url)).json()
  const fresh = await get('/new') as Record<string, unknown>
  isNow(t, fresh.released, 'released')
  t.strictSame({ ...fresh, released: 'now' }, {
    id: null, name: '', rating: 0, box_office: '0.00', released: 'now', director: null, tags: [], genre: null, synopsis: '', seen: false, grid: []
  })
  t.strictSame(await get('/row'), {
    id: 1,
    name: 'Star Wars',
    box_office: '775000000.00',
    released: 'infinity',
    director: { name: 'George Lucas', boss: null },
    grid: [[1], [2, 3]],
    director_readable: 'George Lucas'
  }, 'joined fields nested, a key the schema does not have (a secret) dropped')
  t.strictSame(await get('/plain'), { id: 2, director: 7, director_readable: null })
})

t.test('filterValueSchema: one filter value, typed as its column, a choice among the choices', async (t) => {
  const rated = defineTable('rated', {
    genre: column.varchar({ length: 20, choices: { drama: 'drama', sci_fi: { value: 'sci_fi', displayName: 'Science fiction' } } }),
    stars: column.integer({ choices: { one: 1, two: 2 } }),
    moods: column.array(column.varchar({ length: 10, choices: { calm: 'calm' } })),
    mail: column.email({ null: true }),
    day: column.date({ null: true })
  })
  const value = (name: string): unknown => plain(filterValueSchema(rated, rated.columnMap.get(name)!))
  t.strictSame(value('genre'), { enum: ['drama', 'sci_fi'], type: 'string' }, 'text with choices: one of them')
  t.strictSame(value('stars'), { ...INT, enum: [1, 2] })
  t.strictSame(value('moods'), { enum: ['calm'], type: 'string' }, "an array: its element's")
  t.strictSame(value('mail'), { type: 'string', pattern: '^[^\\u0000]*$' }, 'text compared as __match says is any text but NUL, not null')
  t.strictSame(value('day'), { format: 'date', type: 'string', pattern: '^(?!0000-)' }, 'a date: no year 0')
})

t.test('OPENAPI_RULES: what the server checks in code, stated for the document only', async (t) => {
  const priced = defineTable('priced', {
    price: column.numeric({ digits: [6, 2], null: true }),
    huge: column.numeric({ digits: [400, 0] }),
    score: column.real(),
    label: column.varchar({ length: 10 }),
    at: column.timestamp(),
    owner: column.foreignKey(movie, { null: false }),
    mail: column.email(),
    kind: column.varchar({ length: 5, choices: { a: 'a' } }),
    note: column.text({ null: true }),
    clock: column.time({ null: true }),
    span: column.interval({ null: true }),
    big: column.bigInt({ null: true }),
    token: column.uuid({ null: true }),
    day: column.date({ null: true }),
    zoned: column.timestamptz({ null: true })
  })
  const create = createSchema(priced) as TSchema & { [OPENAPI_RULES]?: { required: string[] } }
  t.notOk('required' in plain(create), 'the validating schema requires nothing: a left-out column is the database\'s 422 (SPEC §6.2)')
  t.strictSame(create[OPENAPI_RULES], { required: ['owner', 'mail', 'kind'] }, 'the document requires the NOT NULL columns with no default')
  t.strictSame((patchSchema(priced) as { [OPENAPI_RULES]?: unknown })[OPENAPI_RULES], undefined, 'PATCH requires nothing')
  t.strictSame(plain(valueSchema(priced, priced.columnMap.get('price')!, 'in')), { anyOf: [{ type: 'number' }, { pattern: DECIMAL_PATTERN, type: 'string' }, NULL] }, 'validation keeps its own rules')

  const rules = (name: string): unknown => {
    const schema = valueSchema(priced, priced.columnMap.get(name)!, 'in') as TSchema & { anyOf?: TSchema[] }
    return (schema.anyOf ?? [schema]).map((branch) => (branch as { [OPENAPI_RULES]?: unknown })[OPENAPI_RULES] ?? null)
  }
  const [number, text] = rules('price') as Array<{ pattern: string, exclusiveMaximum: number }>
  t.strictSame(number, { exclusiveMinimum: -10000, exclusiveMaximum: 10000, description: 'At most 4 digits before the point and 2 after it.' })
  const digits = new RegExp(text!.pattern)
  for (const value of ['1', '-1', '+1.5', '9999.99', '0009999.9900', '.5', '5.', '0', '-0.00']) t.ok(digits.test(value), value)
  for (const value of ['12345', '1.234', '.', '', '1e3', 'abc', '-']) t.notOk(digits.test(value), value)
  t.strictSame(rules('huge'), [{ description: 'At most 400 digits before the point and 0 after it.' }, { pattern: '^[+-]?(?=\\.?\\d)0*\\d{0,400}(\\.\\d{0,0}0*)?$', description: 'At most 400 digits before the point and 0 after it.' }], 'no bound past a double')
  t.strictSame(rules('score'), [{ minimum: -3.4028234663852886e38, maximum: 3.4028234663852886e38, description: 'A 4-byte float: at most 3.4028235e38 in magnitude and, unless 0, at least 1.4e-45.' }])
  t.strictSame(rules('label'), [{ pattern: '^[^\\u0000]*$' }])
  const noNul = new RegExp((rules('label') as Array<{ pattern: string }>)[0]!.pattern)
  t.ok(noNul.test('text') && !noNul.test('a\0b'), 'the pattern refuses NUL')
  t.strictSame(rules('note'), [{ pattern: '^[^\\u0000]*$' }, null])
  t.match(rules('at'), [{ description: /a day that exists/ }])
  // A time and an interval are read by a pattern alone (lib/values): a value the document takes, the server takes.
  const [clock] = rules('clock') as Array<{ pattern: string }>
  for (const value of ['00:00:00', '23:59:59.123456', '12:30:00.5']) t.ok(new RegExp(clock!.pattern, 'u').test(value), value)
  for (const value of ['24:00:00', '12:30', '12:30:00Z', 'a', '']) t.notOk(new RegExp(clock!.pattern, 'u').test(value), value)
  const [span] = rules('span') as Array<{ pattern: string }>
  for (const value of ['P1D', 'PT2H', 'P1Y2M3DT4H5M6.5S', 'P-1D']) t.ok(new RegExp(span!.pattern, 'u').test(value), value)
  for (const value of ['P', 'PT', 'Widget', '1 day', '']) t.notOk(new RegExp(span!.pattern, 'u').test(value), value)
  // A BigInt: an exact JSON integer, or a string of digits (not any string).
  t.strictSame(rules('big'), [{ minimum: -9007199254740991, maximum: 9007199254740991 }, { pattern: '^[+-]?\\d+$' }, null])
  // A UUID in its hex form only: `format: uuid` validators may take a `urn:uuid:` prefix, which the server refuses.
  const [token] = rules('token') as Array<{ pattern: string }>
  t.ok(new RegExp(token!.pattern).test('A0EEBC99-9c0b-4ef8-bb6d-6bb9bd380a11'))
  t.notOk(new RegExp(token!.pattern).test('urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'))
  // RFC 3339 (format date, date-time) has a year 0 and a leap second; PostgreSQL and the server have neither.
  const [day] = rules('day') as Array<{ pattern: string }>
  t.ok(new RegExp(day!.pattern).test('0001-01-01'))
  t.notOk(new RegExp(day!.pattern).test('0000-01-01'))
  const [zoned] = rules('zoned') as Array<{ pattern: string }>
  for (const value of ['0001-01-01T00:00:00Z', '2016-12-31T23:59:59.5+01:00']) t.ok(new RegExp(zoned!.pattern).test(value), value)
  for (const value of ['0000-01-01T00:00:00Z', '2016-12-31T23:59:60Z', '2016-12-31t23:59:60z']) t.notOk(new RegExp(zoned!.pattern).test(value), value)
})

t.test('examples the API accepts, for Swagger UI\'s "Try it out": a column\'s own, else one per type where the generated one is refused', async (t) => {
  const examples = (schema: unknown): Record<string, unknown> =>
    Object.fromEntries(Object.entries((schema as { properties: Record<string, { examples?: unknown[] }> }).properties).map(([name, p]) => [name, p.examples?.[0]]))
  const studio = defineTable('ex_studio', { code: column.varchar({ length: 8, primaryKey: true }) })
  const film: Table = defineTable('ex_film', {
    year: column.integer({ example: 1999 }),
    votes: column.array(column.smallInt()),
    at: column.timestamp(),
    at_tz: column.timestamptz(),
    day: column.date(),
    name: column.varchar({ length: 10 }),
    contact: column.email({ null: true }),
    studio: column.foreignKey(studio, { example: 'WB' }),
    any_studio: column.foreignKey(studio),
    sequel_of: column.foreignKey((): Table => film)
  })
  t.strictSame(examples(createSchema(film)), {
    id: undefined, year: 1999, votes: [1], at: '2024-05-17T20:00:00', at_tz: '2024-05-17T20:00:00Z', day: '2024-05-17', name: undefined, contact: 'user@example.com', studio: 'WB', any_studio: undefined, sequel_of: 1
  })
  t.equal(examples(replaceSchema(film)).id, 1, 'a key in a PUT body')
  const validate = bodyAjv.compile(createSchema(film))
  t.ok(validate({ year: 1999, votes: [1], at: '2024-05-17T20:00:00', at_tz: '2024-05-17T20:00:00Z', day: '2024-05-17', contact: 'user@example.com', studio: 'WB', sequel_of: 1 }), 'the examples pass validation')
  t.notMatch(JSON.stringify(schemaDocument(film, { excludeSecrets: true, maxJoins: 0 })), 'examples', 'not in /schema/')
})
