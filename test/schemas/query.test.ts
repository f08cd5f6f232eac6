import t from 'tap'
import { Ajv } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { column, defineTable } from '../../lib/table/index.js'
import { BOOLEAN_SPELLINGS, idParamsSchema, idsQuerySchema, listQuerySchema, singleQuerySchema } from '../../schemas/query.js'
import { DECIMAL_PATTERN, TIMESTAMP_PATTERN } from '../../schemas/row.js'

const plain = (schema: unknown): any => JSON.parse(JSON.stringify(schema))

const owner = defineTable('owner', {
  name: column.varchar({ length: 50 }),
  token: column.text({ secret: true })
})

const item = defineTable('item', {
  title: column.varchar({ length: 50 }),
  price: column.numeric({ digits: [8, 2] }),
  rating: column.real({ null: true }),
  count: column.integer(),
  active: column.boolean(),
  at: column.timestamp(),
  body: column.text(),
  mail: column.email({ secret: true }),
  owner: column.foreignKey(owner),
  tags: column.array(column.array(column.integer()))
})

const ORDERED = ['e', 'ne', 'lt', 'lte', 'gt', 'gte', 'is_null', 'not_null', 'in', 'not_in']
const UNORDERED = ['e', 'ne', 'is_null', 'not_null', 'in', 'not_in']
/** A text column's operators: full-text `search` too (SPEC §8.4). */
const TEXT = [...UNORDERED, 'search']
const CONTAINS = ['e', 'ne', 'is_null', 'not_null']
const INT = { minimum: -2147483648, maximum: 2147483647, type: 'integer' }
const STRING = { type: 'string' }
const once = (name: string): string => ` Repeated only with ${name}__operator in or not_in, one value each.`
const BOOLEANS = ['true', 'false', '1', '0', 't', 'f', 'yes', 'no']

const operator = (name: string, operators: string[]): object => ({
  type: 'string',
  enum: operators,
  description: `Comparison for ${name}; default e. is_null and not_null need no value.` +
    (operators.includes('in') ? ` in and not_in take the ${name} parameter repeated, one value each.` : '')
})
const match = (name: string): object => ({
  type: 'string',
  enum: ['contains', 'exact', 'starts', 'ends'],
  description: `How ${name} matches its value; default contains, case-insensitive (exact is case-sensitive).`
})
/** A filter: its values typed as the column's, the parameter repeatable (an array, exploded: docs/openapi.md). */
const scalar = (name: string, form: string, items: object, operators = ORDERED, through = ''): Record<string, object> => ({
  [name]: { description: `Filter on ${name}: ${form}.${once(name)}${through}`, type: 'array', items },
  [`${name}__operator`]: operator(name, operators)
})
const text = (name: string, through = ''): Record<string, object> => ({
  // Any text but NUL, which the server refuses.
  [name]: { description: `Filter on ${name} (text), compared as ${name}__match says.${once(name)}${through}`, type: 'array', items: { ...STRING, pattern: '^[^\\u0000]*$' } },
  [`${name}__operator`]: operator(name, TEXT),
  [`${name}__match`]: match(name)
})
const visibleFields = (names: string[]): object => ({
  description: `Comma-separated fields to return, or the parameter repeated. Fields: ${names.join(', ')}.`,
  anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string', enum: names, description: 'A field name.' } }]
})
const readable = {
  type: 'string', enum: BOOLEANS, description: 'Add `<fk>_readable` beside each ForeignKey: the referenced row as text. Any case.'
}

const FIELDS = ['id', 'title', 'price', 'rating', 'count', 'active', 'at', 'body', 'owner', 'owner.id', 'owner.name', 'tags']

t.test('the boolean spellings are those of SPEC §2.2', async (t) => {
  t.strictSame(BOOLEAN_SPELLINGS, BOOLEANS)
})

t.test('listQuerySchema: every filter and control parameter', async (t) => {
  t.strictSame(plain(listQuerySchema(item, { excludeSecrets: true, maxJoins: 1, maxPageSize: 500, pageSize: 20 })), {
    additionalProperties: false,
    style: 'form',
    explode: true,
    type: 'object',
    properties: {
      ...scalar('id', 'an integer', INT),
      ...text('title'),
      ...scalar('price', 'a decimal number', { anyOf: [{ type: 'number' }, { pattern: DECIMAL_PATTERN, type: 'string' }] }),
      ...scalar('rating', 'a number', { type: 'number' }),
      ...scalar('count', 'an integer', INT),
      ...scalar('active', 'true, false, 1, 0, t, f, yes or no', { type: 'boolean' }, UNORDERED),
      ...scalar('at', 'an ISO 8601 date or date-time', { pattern: TIMESTAMP_PATTERN, type: 'string' }),
      ...text('body'),
      ...scalar('owner', 'an integer', INT),
      // Paths within maxJoins (SPEC §8.2), secret columns left out.
      ...scalar('owner.id', 'an integer', INT, ORDERED, ' Through owner: rows with a related row that matches.'),
      ...text('owner.name', ' Through owner: rows with a related row that matches.'),
      tags: {
        description: 'Rows whose tags holds this element (an integer); repeat to require several.',
        type: 'array',
        items: INT
      },
      tags__operator: operator('tags', CONTAINS),
      __order: {
        description: 'Comma-separated fields to sort by, or the parameter repeated; a - prefix sorts descending. Default: -id.',
        anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }]
      },
      __visible_fields: visibleFields(FIELDS),
      __page: { minimum: 1, maximum: 2147483647, description: 'Page number, from 1; default 1.', type: 'integer' },
      __page_size: { minimum: 1, maximum: 500, description: 'Rows per page, 1 to 500; default 20.', type: 'integer' },
      __readable: readable,
      __range_header: { type: 'string', enum: BOOLEANS, description: 'Send `Content-Range: <name> <first>-<last>/<total>`. Any case.' },
      // No NUL, which the server refuses (as in text filters).
      __range_header_name: { description: 'The `<name>` of Content-Range; default item.', type: 'string', pattern: '^[^\\u0000]*$' }
    }
  })
})

t.test('listQuerySchema: secrets, joins and a key that is not a Serial', async (t) => {
  const withSecrets = plain(listQuerySchema(item, { excludeSecrets: false, maxJoins: 0, maxPageSize: 1000 }))
  t.strictSame(Object.keys(withSecrets.properties).filter((k: string) => k.startsWith('mail')), ['mail', 'mail__operator', 'mail__match'])
  t.strictSame(withSecrets.properties.__visible_fields.anyOf[1].items.enum,
    ['id', 'title', 'price', 'rating', 'count', 'active', 'at', 'body', 'mail', 'owner', 'tags'])
  t.equal(withSecrets.properties.__page_size.description, 'Rows per page, 1 to 1000.')
  const joined = plain(listQuerySchema(item, { excludeSecrets: false, maxJoins: 1, maxPageSize: 1000 }))
  t.strictSame(joined.properties.__visible_fields.anyOf[1].items.enum.filter((n: string) => n.startsWith('owner.')),
    ['owner.id', 'owner.name', 'owner.token'])

  const country = defineTable('country', { code: column.varchar({ length: 2, primaryKey: true }) })
  const city = defineTable('city', { country: column.foreignKey(country) })
  const schema = plain(listQuerySchema(city, { excludeSecrets: true, maxJoins: 0, maxPageSize: 10 }))
  t.strictSame(schema.properties.country, { description: `Filter on country: text.${once('country')}`, type: 'array', items: { maxLength: 2, type: 'string' } },
    'a ForeignKey is filtered by its target key, with = and no match type')
  t.strictSame(schema.properties.country__operator, operator('country', ORDERED))
  t.notOk('country__match' in schema.properties)
  t.match(plain(listQuerySchema(country, { excludeSecrets: true, maxJoins: 0, maxPageSize: 10 })).properties.__order.description, /Default: -code\.$/)
})

t.test('singleQuerySchema, idsQuerySchema', async (t) => {
  t.strictSame(plain(singleQuerySchema(item, { excludeSecrets: true, maxJoins: 1 })), {
    type: 'object',
    properties: { __visible_fields: visibleFields(FIELDS), __readable: readable }
  })
  t.strictSame(plain(idsQuerySchema(20)), {
    additionalProperties: false,
    type: 'object',
    properties: {
      search: { description: 'Case-insensitive substring of the readable representation.', type: 'string', pattern: '^[^\\u0000]*$' },
      limit: { minimum: 0, maximum: 20, description: 'At most this many ids, 0 to 20; default 20.', type: 'integer' },
      offset: { minimum: 0, maximum: 2147483647, description: 'Skip this many ids; default 0.', type: 'integer' }
    }
  })
})

t.test('idParamsSchema: the primary key type', async (t) => {
  const cases: Array<[string, Parameters<typeof defineTable>[1], object]> = [
    // Each with the example id Swagger UI's "Try it out" starts with.
    ['serial', {}, { minimum: 1, maximum: 2147483647, type: 'integer', examples: [1] }],
    ['integer', { n: column.integer({ primaryKey: true }) }, { minimum: -2147483648, maximum: 2147483647, type: 'integer', examples: [1] }],
    ['smallint', { n: column.smallInt({ primaryKey: true }) }, { minimum: -32768, maximum: 32767, type: 'integer', examples: [1] }],
    ['bigint', { n: column.bigInt({ primaryKey: true }) }, { pattern: '^[+-]?\\d+$', type: 'string', examples: ['1'] }],
    ['varchar', { n: column.varchar({ length: 8, primaryKey: true }) }, { minLength: 1, maxLength: 8, type: 'string', examples: ['WB'] }],
    ['text', { n: column.text({ primaryKey: true }) }, { minLength: 1, type: 'string', examples: ['WB'] }]
  ]
  for (const [name, columns, expected] of cases) {
    const table = defineTable(`key_${name}`, columns)
    const key = table.primaryKey.name
    t.strictSame(plain(idParamsSchema(table)), {
      type: 'object',
      required: ['id'],
      properties: { id: { ...expected, description: `The ${key} of a key_${name} row.` } }
    }, name)
  }
})

t.test('the query schemas are valid JSON Schema 2020-12 (OpenAPI 3.1) and accept the queries they describe', async (t) => {
  // `style` and `explode` are OpenAPI's, read by @fastify/swagger on the query string's schema.
  const strict = new Ajv2020({ strict: true, keywords: ['style', 'explode'] })
  const list = listQuerySchema(item, { excludeSecrets: true, maxJoins: 1, maxPageSize: 500 })
  for (const schema of [list, singleQuerySchema(item, { excludeSecrets: true, maxJoins: 1 }), idsQuerySchema(20), idParamsSchema(item)]) {
    t.equal(typeof strict.compile(schema), 'function')
  }
  const validate = new Ajv({ strict: false }).compile(list)
  const passes = [
    {},
    { title: ['x'], title__match: 'starts', price: ['10.5'], price__operator: 'gte', tags: [1, 2], __page: 2, __page_size: 500 },
    { count: [1, 2], count__operator: 'in', active: [true], at: ['2024-01-02T03:04'], price: [10.5] },
    { tags: [1], owner__operator: 'is_null', __visible_fields: ['title', 'owner.name'], __order: ['-title', 'id'], __readable: 'yes' },
    { __visible_fields: 'title,owner.name', __order: '-title', __range_header: '1', __range_header_name: 'items' }
  ]
  const fails = [
    { nope: '1' },
    { mail: ['a@b.c'] },
    { count: ['abc'] },
    { count: [2147483648] },
    { price: ['1e5'] },
    // The server refuses NUL in a text filter (PostgreSQL text cannot hold it): the document says so.
    { title: ['a\u0000b'] },
    { active: ['maybe'] },
    { at: ['yesterday'] },
    { title__operator: 'lt' },
    { tags__match: 'exact' },
    { price__match: 'exact' },
    { __page: 0 },
    { __page_size: 501 },
    { __visible_fields: ['nope'] },
    { __readable: 'maybe' }
  ]
  for (const query of passes) t.equal(validate(query), true, JSON.stringify(query))
  for (const query of fails) t.equal(validate(query), false, JSON.stringify(query))
})

t.test('listQuerySchema: a to-many path filters on at least one related row', async (t) => {
  const properties = plain(listQuerySchema(owner, { excludeSecrets: true, maxJoins: 1, maxPageSize: 10 })).properties
  t.strictSame(Object.keys(properties).filter((k) => k.startsWith('item.title')), ['item.title', 'item.title__operator', 'item.title__match'])
  t.equal(properties['item.title'].description, 'Filter on item.title (text), compared as item.title__match says. Repeated only with item.title__operator in or not_in, one value each. Through item: rows with at least one related row that matches.')
  t.notOk('item.mail' in properties, 'a secret column of the related table is no filter')
})

t.test('listQuerySchema: one object per table and options, built again once another table is defined', async (t) => {
  const options = { excludeSecrets: true, maxJoins: 1, maxPageSize: 10 }
  const first = listQuerySchema(owner, options)
  t.equal(listQuerySchema(owner, { ...options }), first, 'the same options: the same object, which routes share')
  t.not(listQuerySchema(owner, { ...options, maxPageSize: 20 }), first, 'other options: another')
  t.notOk('pet.name' in first.properties)
  defineTable('pet', { name: column.varchar({ length: 50 }), owner: column.foreignKey(owner) })
  const after = listQuerySchema(owner, options)
  t.not(after, first, 'a table defined since may add paths')
  t.ok('pet.name' in after.properties, 'and does: the new relation is a filter path')
})
