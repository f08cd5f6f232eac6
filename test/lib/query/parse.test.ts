import t from 'tap'
import { bodyOf } from '../../../lib/errors.js'
import { OPERATOR_NAMES as OPERATORS, MATCH_TYPES } from '../../../lib/query/fields.js'
import {
  listBinding, parseFilterQuery, parseId, parseIdsQuery, parseListQuery, parseSingleQuery, queryContext,
  type Filter, type ListQuery, type RawQuery
} from '../../../lib/query/parse.js'
import { column, defineTable, type Table } from '../../../lib/table/index.js'

const director = defineTable('pq_director', {
  name: column.varchar({ length: 50 }),
  code: column.text({ secret: true }),
  mentor: column.foreignKey((): Table => director)
})
const studio = defineTable('pq_studio', {
  code: column.varchar({ length: 5, primaryKey: true }),
  title: column.text()
})
const movie = defineTable('pq_movie', {
  name: column.varchar({ length: 100 }),
  synopsis: column.text({ null: true }),
  contact: column.email({ null: true }),
  rating: column.real(),
  duration: column.integer(),
  budget: column.numeric({ digits: [10, 2] }),
  released: column.boolean(),
  premiere: column.timestamp(),
  director: column.foreignKey(director),
  studio: column.foreignKey<string>(studio),
  tags: column.array(column.varchar({ length: 20 })),
  scores: column.array(column.array(column.integer())),
  password: column.text({ secret: true })
})

const ctx = queryContext(movie, { pageSize: 15, maxPageSize: 100, maxJoins: 1, excludeSecrets: true })
const ctx0 = queryContext(movie, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })

const FILTERABLE = ['id', 'name', 'synopsis', 'contact', 'rating', 'duration', 'budget', 'released', 'premiere', 'director', 'studio', 'tags', 'scores']
const FIELDS = [
  'id', 'name', 'synopsis', 'contact', 'rating', 'duration', 'budget', 'released', 'premiere',
  'director', 'director.id', 'director.name', 'director.mentor',
  'studio', 'studio.code', 'studio.title', 'tags', 'scores'
]
const FIELDS0 = ['id', 'name', 'synopsis', 'contact', 'rating', 'duration', 'budget', 'released', 'premiere', 'director', 'studio', 'tags', 'scores']
const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'valueOf', 'toString', 'hasOwnProperty']

interface Failure {
  code: unknown
  message: unknown
  statusCode: unknown
  validFields: unknown
}

/** The error a call throws, as the wire shows it; `validFields` undefined when the body has none. */
function caught (fn: () => unknown): Failure | 'no error' {
  try {
    fn()
  } catch (error) {
    const e = error as { code?: unknown, message?: unknown, statusCode?: unknown }
    return { code: e.code, message: e.message, statusCode: e.statusCode, validFields: bodyOf(error)?.validFields }
  }
  return 'no error'
}

const bad = (code: string, message: string, validFields?: readonly string[]): Failure =>
  ({ code: `TABLECRUD_ERR_${code}`, message, statusCode: 400, validFields })
const unknown = (name: string, validFields: readonly string[] = FILTERABLE): Failure =>
  bad('QS_UNKNOWN_FIELD', `${name} isn't a valid field name.`, validFields)
/** `__visible_fields` and `__order` errors list the accepted names in the message too (SPEC §2.3). */
const unknownPath = (name: string, fields: readonly string[]): Failure =>
  bad('QS_UNKNOWN_FIELD', `${name} isn't a valid field name. Valid names: ${fields.join(', ')}.`, fields)
const TOO_DEEP = bad('QS_MAX_JOIN_DEPTH', 'Max join depth exceeded')

/** A query string as Fastify's parser gives it: an object without a prototype. */
function raw (query: Record<string, string | string[]>): RawQuery {
  return Object.assign(Object.create(null), query)
}

type FilterSummary = [string, string, string, unknown[]]
const summary = (filters: readonly Filter[]): FilterSummary[] =>
  filters.map((f) => f.kind === 'tree' ? ['tree', f.logic, '', []] : [f.column.name, f.operator, f.match, [...f.values]])
const filters = (query: Record<string, string | string[]>): FilterSummary[] => summary(parseListQuery(ctx, raw(query)).filters)
const orderOf = (q: ListQuery): Array<[string, boolean]> => q.order.map((o) => [o.field.name, o.descending])

interface ColumnCase {
  name: string
  type: string
  /** A valid query-string value and what it parses to. */
  text: string
  value: unknown
  ordered: boolean
  isText: boolean
  isArray: boolean
}
const COLUMNS: ColumnCase[] = [
  { name: 'id', type: 'serial', text: '7', value: 7, ordered: true, isText: false, isArray: false },
  { name: 'name', type: 'varchar', text: 'Star', value: 'Star', ordered: false, isText: true, isArray: false },
  { name: 'synopsis', type: 'text', text: 'space', value: 'space', ordered: false, isText: true, isArray: false },
  { name: 'contact', type: 'email', text: 'a@b.c', value: 'a@b.c', ordered: false, isText: true, isArray: false },
  { name: 'rating', type: 'real', text: '2.5', value: 2.5, ordered: true, isText: false, isArray: false },
  { name: 'duration', type: 'integer', text: '-5', value: -5, ordered: true, isText: false, isArray: false },
  { name: 'budget', type: 'numeric', text: '12.50', value: '12.50', ordered: true, isText: false, isArray: false },
  { name: 'released', type: 'boolean', text: 'yes', value: true, ordered: false, isText: false, isArray: false },
  { name: 'premiere', type: 'timestamp', text: '2024-02-29T10:11:12', value: '2024-02-29 10:11:12.000000', ordered: true, isText: false, isArray: false },
  { name: 'director', type: 'foreignKey', text: '3', value: 3, ordered: true, isText: false, isArray: false },
  { name: 'studio', type: 'foreignKey', text: 'ABC', value: 'ABC', ordered: true, isText: false, isArray: false },
  { name: 'tags', type: 'array', text: 'x', value: 'x', ordered: false, isText: false, isArray: true },
  { name: 'scores', type: 'array', text: '4', value: 4, ordered: false, isText: false, isArray: true }
]

t.test('the context: filterable columns and field options, secrets left out', async (t) => {
  t.strictSame(ctx.filterNames, FILTERABLE)
  t.strictSame([...ctx.filterable.keys()].filter((name) => !name.includes('.')), FILTERABLE)
  t.ok(ctx.filterable.has('director.name'), 'within maxJoins, filters take paths (SPEC §8.2)')
  t.strictSame(ctx.fieldNames, FIELDS)
  t.strictSame([...ctx.fields.keys()], FIELDS)
  t.strictSame(ctx0.fieldNames, FIELDS0)
  t.equal(ctx.filterable.get('rating')!.column, movie.columnMap.get('rating'))
  t.strictSame([ctx.table, ctx.pageSize, ctx.maxPageSize, ctx.maxJoins], [movie, 15, 100, 1])
  const open = queryContext(movie, { pageSize: 15, maxPageSize: 100, maxJoins: 1, excludeSecrets: false })
  t.strictSame(open.filterNames, [...FILTERABLE, 'password'])
  t.strictSame(open.fieldNames, [
    'id', 'name', 'synopsis', 'contact', 'rating', 'duration', 'budget', 'released', 'premiere',
    'director', 'director.id', 'director.name', 'director.code', 'director.mentor',
    'studio', 'studio.code', 'studio.title', 'tags', 'scores', 'password'
  ])
})

t.test('the defaults of GET /', async (t) => {
  const parsed = parseListQuery(ctx, raw({}))
  const { cursor, format, ...q } = parsed
  // The members of SPEC §7.1 and §7.5: no cursor, no format, bound to table, order and no filter.
  t.strictSame({ binding: listBinding(ctx, parsed), cursor, format }, { binding: 'pq_movie\0-id\0[]', cursor: null, format: null })
  t.strictSame(
    { ...q, order: orderOf(parsed) },
    { filters: [], order: [['id', true]], fields: null, readable: false, page: 1, pageSize: 15, rangeHeader: false, rangeHeaderName: 'pq_movie', embeds: new Map() }
  )
  t.equal(q.order[0]!.field, ctx.fields.get('id'))
})

t.test('every operator on every column type, with a value', async (t) => {
  for (const c of COLUMNS) {
    for (const op of OPERATORS) {
      const label = `${c.name}__operator=${op}`
      // in and not_in (SPEC §7.6) apply to every column but arrays.
      // search (SPEC §8.4) applies to text columns only.
      const applicable = op === 'search' ? c.isText : c.ordered || ['e', 'ne', 'is_null', 'not_null'].includes(op) || (c.type !== 'array' && ['in', 'not_in'].includes(op))
      const nullCheck = op === 'is_null' || op === 'not_null'
      const run = (): FilterSummary[] => filters({ [c.name]: c.text, [`${c.name}__operator`]: op })
      if (applicable) {
        t.strictSame(run(), [[c.name, op, 'contains', nullCheck ? [] : [c.value]]], label)
      } else {
        t.strictSame(caught(run), bad('QS_OPERATOR_NOT_APPLICABLE', `The operator ${op} does not apply to ${c.name} (type ${c.type}).`), label)
      }
    }
  }
})

t.test('an operator without a value: a 400, except is_null and not_null', async (t) => {
  for (const c of COLUMNS) {
    for (const op of OPERATORS) {
      const label = `${c.name}__operator=${op} alone`
      // in and not_in (SPEC §7.6) apply to every column but arrays.
      // search (SPEC §8.4) applies to text columns only.
      const applicable = op === 'search' ? c.isText : c.ordered || ['e', 'ne', 'is_null', 'not_null'].includes(op) || (c.type !== 'array' && ['in', 'not_in'].includes(op))
      const run = (): FilterSummary[] => filters({ [`${c.name}__operator`]: op })
      if (!applicable) {
        t.strictSame(caught(run), bad('QS_OPERATOR_NOT_APPLICABLE', `The operator ${op} does not apply to ${c.name} (type ${c.type}).`), label)
      } else if (op === 'is_null' || op === 'not_null') {
        t.strictSame(run(), [[c.name, op, 'contains', []]], label)
      } else {
        t.strictSame(caught(run), bad('QS_MISSING_VALUE', `${c.name}__operator=${op} needs a value for ${c.name}.`), label)
      }
    }
  }
  // An empty value is no value.
  t.strictSame(caught(() => filters({ rating: '', rating__operator: 'lt' })), bad('QS_MISSING_VALUE', 'rating__operator=lt needs a value for rating.'))
})

t.test('is_null and not_null ignore any value, even one of the wrong type', async (t) => {
  t.strictSame(filters({ rating: 'abc', rating__operator: 'is_null' }), [['rating', 'is_null', 'contains', []]])
  t.strictSame(filters({ released: 'maybe', released__operator: 'not_null' }), [['released', 'not_null', 'contains', []]])
  t.strictSame(filters({ tags: ['a', 'b'], tags__operator: 'is_null' }), [['tags', 'is_null', 'contains', []]])
})

t.test('the default comparison of each column type', async (t) => {
  for (const c of COLUMNS) {
    t.strictSame(filters({ [c.name]: c.text }), [[c.name, 'e', 'contains', [c.value]]], c.name)
  }
})

t.test('unknown operators and match types', async (t) => {
  const cases: Array<[Record<string, string>, Failure]> = [
    [{ rating__operator: 'eq' }, bad('QS_UNKNOWN_OPERATOR', '"eq" is not an operator: use one of e, ne, lt, lte, gt, gte, is_null, not_null, in, not_in, search.')],
    [{ rating__operator: 'LT' }, bad('QS_UNKNOWN_OPERATOR', '"LT" is not an operator: use one of e, ne, lt, lte, gt, gte, is_null, not_null, in, not_in, search.')],
    [{ rating__operator: '' }, bad('QS_UNKNOWN_OPERATOR', '"" is not an operator: use one of e, ne, lt, lte, gt, gte, is_null, not_null, in, not_in, search.')],
    [{ name: 'x', name__match: 'regex' }, bad('QS_UNKNOWN_MATCH', '"regex" is not a match type: use one of contains, exact, starts, ends.')],
    [{ name: 'x', name__match: 'EXACT' }, bad('QS_UNKNOWN_MATCH', '"EXACT" is not a match type: use one of contains, exact, starts, ends.')],
    [{ name: 'x', name__match: '' }, bad('QS_UNKNOWN_MATCH', '"" is not a match type: use one of contains, exact, starts, ends.')]
  ]
  for (const [query, expected] of cases) t.strictSame(caught(() => filters(query)), expected, JSON.stringify(query))
  // A parameter with no value at all (an empty list) is no operator or match type either.
  t.strictSame(caught(() => filters({ rating__operator: [] })), bad('QS_UNKNOWN_OPERATOR', '"" is not an operator: use one of e, ne, lt, lte, gt, gte, is_null, not_null, in, not_in, search.'))
  t.strictSame(caught(() => filters({ name: 'x', name__match: [] })), bad('QS_UNKNOWN_MATCH', '"" is not a match type: use one of contains, exact, starts, ends.'))
  t.strictSame(filters({ name: [] }), [], 'nor a filter value')
})

t.test('match types apply to text columns only', async (t) => {
  for (const c of COLUMNS) {
    for (const m of MATCH_TYPES) {
      const run = (): FilterSummary[] => filters({ [c.name]: c.text, [`${c.name}__match`]: m })
      if (c.isText) {
        t.strictSame(run(), [[c.name, 'e', m, [c.value]]], `${c.name}__match=${m}`)
      } else {
        t.strictSame(caught(run), bad('QS_MATCH_NOT_APPLICABLE', `${c.name}__match applies to text columns only.`), `${c.name}__match=${m}`)
      }
    }
  }
  // A match type with ne or a null check is carried along; the compiler decides what it means.
  t.strictSame(filters({ name: 'x', name__match: 'starts', name__operator: 'ne' }), [['name', 'ne', 'starts', ['x']]])
  // A match type alone is no filter.
  t.strictSame(filters({ name__match: 'exact' }), [])
})

t.test('<name>__operator and <name>__match for an unknown or secret name', async (t) => {
  for (const name of ['nope', 'password', 'director.nope', 'Name', 'name__operator', 'name__match', 'name_']) {
    t.strictSame(caught(() => filters({ [`${name}__operator`]: 'e' })), unknown(name), `${name}__operator`)
    t.strictSame(caught(() => filters({ [`${name}__match`]: 'exact' })), unknown(name), `${name}__match`)
  }
  for (const name of ['nope', 'password', 'director.nope', 'Name', 'name_', 'name__', 'name__op', 'name__e']) {
    t.strictSame(caught(() => filters({ [name]: 'x' })), unknown(name), name)
  }
  // Without a name the key is a control parameter, and not a known one.
  t.strictSame(caught(() => filters({ __operator: 'e' })), unknown('__operator'))
  t.strictSame(caught(() => filters({ __match: 'exact' })), unknown('__match'))
  t.strictSame(caught(() => filters({ password__operator: 'is_null' })), unknown('password'))
  // A secret column is filterable once secrets are not excluded.
  const open = queryContext(movie, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: false })
  t.strictSame(summary(parseListQuery(open, raw({ password: 'x' })).filters), [['password', 'e', 'contains', ['x']]])
})

t.test('repeating a filter: a 400 on scalar columns, every value wanted on arrays', async (t) => {
  for (const c of COLUMNS) {
    const run = (): FilterSummary[] => filters({ [c.name]: [c.text, c.text] })
    if (c.isArray) {
      t.strictSame(run(), [[c.name, 'e', 'contains', [c.value, c.value]]], c.name)
    } else {
      t.strictSame(caught(run), bad('QS_REPEATED', `${c.name} is given more than once.`), c.name)
    }
  }
  t.strictSame(filters({ tags: ['a', 'b', 'c'] }), [['tags', 'e', 'contains', ['a', 'b', 'c']]])
  t.strictSame(filters({ scores: ['1', '-2'], scores__operator: 'ne' }), [['scores', 'ne', 'contains', [1, -2]]])
  t.strictSame(caught(() => filters({ rating: '1', rating__operator: ['lt', 'gt'] })), bad('QS_REPEATED', 'rating__operator is given more than once.'))
  t.strictSame(caught(() => filters({ name: 'x', name__match: ['exact', 'exact'] })), bad('QS_REPEATED', 'name__match is given more than once.'))
})

t.test('an empty value is no filter (docs: an HTML form sends its empty fields)', async (t) => {
  for (const c of COLUMNS) t.strictSame(filters({ [c.name]: '' }), [], c.name)
  // SPEC §6.8 as amended (issue 10): repeated empty values are a repeat, a 400.
  t.strictSame(caught(() => filters({ name: ['', ''] })), bad('QS_REPEATED', 'name is given more than once.'), 'repeated empties are a repeat')
  t.strictSame(caught(() => filters({ rating: ['', '3'] })), bad('QS_REPEATED', 'rating is given more than once.'), 'name=&name=x is a repeat (SPEC §6.8 as amended)')
  t.strictSame(filters({ tags: ['a', '', 'b'] }), [['tags', 'e', 'contains', ['a', 'b']]])
  t.strictSame(filters({ name: '', rating: '1' }), [['rating', 'e', 'contains', [1]]])
})

t.test('values of the wrong type', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['id', 'abc', '32-bit integer'],
    ['id', '2147483648', '32-bit integer'],
    ['duration', '2147483648', '32-bit integer'],
    ['duration', '-2147483649', '32-bit integer'],
    ['duration', '99999999999999999999', '32-bit integer'],
    ['duration', '1.5', '32-bit integer'],
    ['duration', '1e3', '32-bit integer'],
    ['duration', ' 1', '32-bit integer'],
    ['duration', '0x10', '32-bit integer'],
    ['duration', 'abc', '32-bit integer'],
    ['rating', 'abc', 'number'],
    ['rating', 'NaN', 'number'],
    ['rating', 'Infinity', 'number'],
    ['rating', '1e999', 'number'],
    ['rating', '1,5', 'number'],
    ['budget', 'abc', 'decimal number'],
    ['budget', '1e5', 'decimal number'],
    ['budget', '1,5', 'decimal number'],
    ['budget', 'NaN', 'decimal number'],
    ['budget', '.', 'decimal number'],
    ['released', 'maybe', 'boolean (true, false, 1, 0, t, f, yes, no)'],
    ['released', '2', 'boolean (true, false, 1, 0, t, f, yes, no)'],
    ['released', 'on', 'boolean (true, false, 1, 0, t, f, yes, no)'],
    ['released', 'truee', 'boolean (true, false, 1, 0, t, f, yes, no)'],
    ['released', 'y', 'boolean (true, false, 1, 0, t, f, yes, no)'],
    ['premiere', 'yesterday', 'ISO 8601 date or date-time'],
    ['premiere', '2024-02-30', 'ISO 8601 date or date-time'],
    ['premiere', '2023-02-29T00:00:00', 'ISO 8601 date or date-time'],
    ['premiere', '2024-13-01', 'ISO 8601 date or date-time'],
    ['premiere', '2024-01-01T24:00:00', 'ISO 8601 date or date-time'],
    ['premiere', '2024-01-01T10:60:00', 'ISO 8601 date or date-time'],
    ['premiere', '0000-01-01', 'ISO 8601 date or date-time'],
    ['premiere', '2024-1-1', 'ISO 8601 date or date-time'],
    ['premiere', '1704067200', 'ISO 8601 date or date-time'],
    ['director', 'abc', '32-bit integer'],
    ['director', '2147483648', '32-bit integer'],
    ['studio', 'A\0', 'string without NUL characters'],
    ['name', 'a\0b', 'string without NUL characters'],
    ['synopsis', '\0', 'string without NUL characters'],
    ['contact', 'x\0', 'string without NUL characters'],
    ['tags', 'a\0', 'string without NUL characters'],
    ['scores', 'x', '32-bit integer'],
    ['scores', '2147483648', '32-bit integer']
  ]
  for (const [name, text, type] of cases) {
    t.strictSame(
      caught(() => filters({ [name]: text })),
      bad('QS_INVALID_VALUE', `The value ${JSON.stringify(text)} of ${name} is not a valid ${type}.`),
      `${name}=${JSON.stringify(text)}`
    )
  }
  t.strictSame(caught(() => filters({ scores: ['1', 'x'] })), bad('QS_INVALID_VALUE', 'The value "x" of scores is not a valid 32-bit integer.'))
})

t.test('values of the right type, at the edges', async (t) => {
  const cases: Array<[string, string, unknown]> = [
    ['duration', '2147483647', 2147483647],
    ['duration', '-2147483648', -2147483648],
    ['duration', '+12', 12],
    ['duration', '007', 7],
    ['id', '0', 0],
    ['rating', '-0.5', -0.5],
    ['rating', '1e3', 1000],
    ['rating', '.5', 0.5],
    ['budget', '-1.', '-1.'],
    ['budget', '.5', '.5'],
    ['budget', '123456789012345678901234567890', '123456789012345678901234567890'],
    ['premiere', '2024-01-02', '2024-01-02 00:00:00.000000'],
    ['premiere', '2024-01-02T03:04:05.123456', '2024-01-02 03:04:05.123456'],
    ['premiere', '2024-01-02T03:04:05+02:00', '2024-01-02 01:04:05.000000'],
    ['premiere', '2024-01-02 03:04:05Z', '2024-01-02 03:04:05.000000'],
    ['name', 'null', 'null'],
    ['name', ' spaced ', ' spaced '],
    ['name', "'; drop table x; --", "'; drop table x; --"],
    ['name', '%_\\', '%_\\'],
    ['synopsis', 'ünï😀', 'ünï😀'],
    ['studio', 'a'.repeat(50), 'a'.repeat(50)],
    ['director', '-1', -1]
  ]
  for (const [name, text, value] of cases) {
    t.strictSame(filters({ [name]: text }), [[name, 'e', 'contains', [value]]], `${name}=${JSON.stringify(text)}`)
  }
})

t.test('booleans: true false 1 0 t f yes no, any case', async (t) => {
  const spellings: Array<[string, boolean]> = [
    ['true', true], ['false', false], ['1', true], ['0', false], ['t', true], ['f', false], ['yes', true], ['no', false],
    ['TRUE', true], ['False', false], ['T', true], ['F', false], ['YES', true], ['No', false], ['yEs', true], ['nO', false]
  ]
  for (const [text, value] of spellings) {
    t.strictSame(filters({ released: text }), [['released', 'e', 'contains', [value]]], `released=${text}`)
    const q = parseListQuery(ctx, raw({ __readable: text, __range_header: text }))
    t.strictSame([q.readable, q.rangeHeader], [value, value], `__readable=${text}, __range_header=${text}`)
  }
})

t.test('filters combine, in the order they were given', async (t) => {
  t.strictSame(filters({ rating__operator: 'gte', name: 'Star', rating: '3', released: 'f', name__match: 'starts' }), [
    ['name', 'e', 'starts', ['Star']],
    ['rating', 'gte', 'contains', [3]],
    ['released', 'e', 'contains', [false]]
  ])
  const [filter] = parseListQuery(ctx, raw({ director: '2' })).filters
  t.equal(filter!.kind !== 'tree' && filter!.column, movie.columnMap.get('director'))
})

t.test('__order', async (t) => {
  const cases: Array<[string | string[], Array<[string, boolean]>]> = [
    ['name', [['name', false], ['id', false]]],
    ['-name', [['name', true], ['id', false]]],
    ['name,-rating', [['name', false], ['rating', true], ['id', false]]],
    [['name', '-rating'], [['name', false], ['rating', true], ['id', false]]],
    [['name,-rating', 'duration'], [['name', false], ['rating', true], ['duration', false], ['id', false]]],
    [' name , -rating ', [['name', false], ['rating', true], ['id', false]]],
    ['name,,', [['name', false], ['id', false]]],
    ['', [['id', true]]],
    [',', [['id', true]]],
    [['', ''], [['id', true]]],
    ['id', [['id', false]]],
    ['-id', [['id', true]]],
    ['-id,name', [['id', true], ['name', false]]],
    ['name,id', [['name', false], ['id', false]]],
    ['director', [['director', false], ['id', false]]],
    ['director.name', [['director.name', false], ['id', false]]],
    ['-director.id', [['director.id', true], ['id', false]]],
    ['studio.title,-director.mentor', [['studio.title', false], ['director.mentor', true], ['id', false]]],
    ['tags,released,premiere,budget', [['tags', false], ['released', false], ['premiere', false], ['budget', false], ['id', false]]]
  ]
  for (const [order, expected] of cases) {
    t.strictSame(orderOf(parseListQuery(ctx, raw({ __order: order }))), expected, JSON.stringify(order))
  }
  const q = parseListQuery(ctx, raw({ __order: 'director.name' }))
  t.equal(q.order[0]!.field, ctx.fields.get('director.name'))
  t.equal(q.order[1]!.field, ctx.fields.get('id'))
})

t.test('__order and __visible_fields refuse unknown, secret and too deep names', async (t) => {
  const cases: Array<[typeof ctx, string, Failure]> = [
    [ctx, 'nope', unknownPath('nope', FIELDS)],
    [ctx, 'password', unknownPath('password', FIELDS)],
    [ctx, 'director.code', unknownPath('director.code', FIELDS)],
    [ctx, 'director.nope', unknownPath('director.nope', FIELDS)],
    [ctx, 'name.length', unknownPath('name.length', FIELDS)],
    [ctx, 'Name', unknownPath('Name', FIELDS)],
    [ctx, 'director.', unknownPath('director.', FIELDS)],
    [ctx, '.name', unknownPath('.name', FIELDS)],
    [ctx, 'director.mentor.name', TOO_DEEP],
    [ctx, 'director.mentor.mentor.name', TOO_DEEP],
    [ctx, 'director.mentor.nope', TOO_DEEP],
    [ctx0, 'director.name', TOO_DEEP],
    [ctx0, 'director.id', TOO_DEEP],
    [ctx0, 'studio.title', TOO_DEEP],
    [ctx0, 'name.x', unknownPath('name.x', FIELDS0)],
    [ctx0, 'nope.name', unknownPath('nope.name', FIELDS0)],
    [ctx0, 'password.x', unknownPath('password.x', FIELDS0)]
  ]
  for (const [context, name, expected] of cases) {
    const label = `${context.maxJoins} joins: ${name}`
    t.strictSame(caught(() => parseListQuery(context, raw({ __order: name }))), expected, `__order ${label}`)
    t.strictSame(caught(() => parseListQuery(context, raw({ __order: `-${name}` }))), expected, `__order -${label}`)
    t.strictSame(caught(() => parseListQuery(context, raw({ __visible_fields: `name,${name}` }))), expected, `__visible_fields ${label}`)
    t.strictSame(caught(() => parseSingleQuery(context, raw({ __visible_fields: ['id', name] }))), expected, `single ${label}`)
  }
  // A lone `-` names nothing.
  t.strictSame(caught(() => parseListQuery(ctx, raw({ __order: '-' }))), unknownPath('', FIELDS))
  t.strictSame(caught(() => parseListQuery(ctx, raw({ __order: '--name' }))), unknownPath('-name', FIELDS))
  // The first bad name is the one named.
  t.strictSame(caught(() => parseListQuery(ctx, raw({ __order: 'name,bad1,bad2' }))), unknownPath('bad1', FIELDS))
})

t.test('the default order on a table keyed by a varchar', async (t) => {
  const studioCtx = queryContext(studio, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
  t.strictSame(orderOf(parseListQuery(studioCtx, raw({}))), [['code', true]])
  t.strictSame(orderOf(parseListQuery(studioCtx, raw({ __order: 'title' }))), [['title', false], ['code', false]])
})

t.test('a secret primary key still orders the rows, and cannot be named', async (t) => {
  const vault = defineTable('pq_vault', {
    token: column.varchar({ length: 40, primaryKey: true, secret: true }),
    label: column.text()
  })
  const vaultCtx = queryContext(vault, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
  const byKey = (q: ListQuery): Array<[string, boolean, string, number]> =>
    q.order.map((o) => [o.field.name, o.descending, o.field.column.name, o.field.joins.length])
  t.strictSame(byKey(parseListQuery(vaultCtx, raw({}))), [['token', true, 'token', 0]])
  t.strictSame(byKey(parseListQuery(vaultCtx, raw({ __order: '-label' }))), [['label', true, 'label', 0], ['token', false, 'token', 0]])
  t.equal(parseListQuery(vaultCtx, raw({})).order[0]!.field.column, vault.primaryKey)
  t.strictSame(caught(() => parseListQuery(vaultCtx, raw({ __order: 'token' }))), unknownPath('token', ['label']))
  t.strictSame(caught(() => parseListQuery(vaultCtx, raw({ token: 'x' }))), unknown('token', ['label']))
})

t.test('__visible_fields', async (t) => {
  const cases: Array<[string | string[], string[] | null]> = [
    ['name', ['name']],
    ['name,director.name', ['name', 'director.name']],
    [['name', 'rating'], ['name', 'rating']],
    [['name,rating', 'director'], ['name', 'rating', 'director']],
    ['name,name, name', ['name']],
    [['rating', 'name', 'rating'], ['rating', 'name']],
    [' director.id , studio.title ', ['director.id', 'studio.title']],
    ['', null],
    [',,', null],
    [['', ''], null]
  ]
  for (const [value, expected] of cases) {
    const fields = parseListQuery(ctx, raw({ __visible_fields: value })).fields
    t.strictSame(fields?.map((f) => f.name) ?? null, expected, JSON.stringify(value))
  }
  const fields = parseListQuery(ctx, raw({ __visible_fields: 'director.name' })).fields!
  t.equal(fields[0], ctx.fields.get('director.name'))
})

t.test('__page and __page_size', async (t) => {
  const good: Array<[Record<string, string>, number, number]> = [
    [{ __page: '1' }, 1, 15],
    [{ __page: '3' }, 3, 15],
    [{ __page: '+2' }, 2, 15],
    [{ __page: '2147483647' }, 2147483647, 15],
    [{ __page_size: '1' }, 1, 1],
    [{ __page_size: '100' }, 1, 100],
    [{ __page: '4', __page_size: '25' }, 4, 25]
  ]
  for (const [query, page, pageSize] of good) {
    const q = parseListQuery(ctx, raw(query))
    t.strictSame([q.page, q.pageSize], [page, pageSize], JSON.stringify(query))
  }
  const PAGE = bad('QS_INVALID_PAGE', '__page must be an integer of 1 or more.')
  const SIZE = bad('QS_INVALID_PAGE_SIZE', '__page_size must be an integer from 1 to 100.')
  for (const text of ['0', '-1', 'abc', '1.5', '', ' 1', '1e2', '2147483648', '0x1']) {
    t.strictSame(caught(() => parseListQuery(ctx, raw({ __page: text }))), PAGE, `__page=${JSON.stringify(text)}`)
  }
  for (const text of ['0', '-1', '101', '1000', 'abc', '1.5', '', '2147483648']) {
    t.strictSame(caught(() => parseListQuery(ctx, raw({ __page_size: text }))), SIZE, `__page_size=${JSON.stringify(text)}`)
  }
  t.strictSame(caught(() => parseListQuery(ctx, raw({ __page: ['1', '2'] }))), bad('QS_REPEATED', '__page is given more than once.'))
  t.strictSame(caught(() => parseListQuery(ctx, raw({ __page_size: ['5', '5'] }))), bad('QS_REPEATED', '__page_size is given more than once.'))
  const big = queryContext(movie, { pageSize: 50, maxPageSize: 1000, maxJoins: 0, excludeSecrets: true })
  t.equal(parseListQuery(big, raw({})).pageSize, 50)
  t.strictSame(caught(() => parseListQuery(big, raw({ __page_size: '1001' }))), bad('QS_INVALID_PAGE_SIZE', '__page_size must be an integer from 1 to 1000.'))
})

t.test('__readable and __range_header: boolean spellings, else a 400', async (t) => {
  for (const key of ['__readable', '__range_header']) {
    for (const text of ['', 'maybe', '2', 'on', 'off', 'y', 'n', 'truee', ' true', 'null']) {
      t.strictSame(caught(() => parseListQuery(ctx, raw({ [key]: text }))), bad('QS_INVALID_BOOLEAN', `${key} must be true or false.`), `${key}=${JSON.stringify(text)}`)
    }
    t.strictSame(caught(() => parseListQuery(ctx, raw({ [key]: ['1', '1'] }))), bad('QS_REPEATED', `${key} is given more than once.`))
  }
  t.strictSame(caught(() => parseSingleQuery(ctx, raw({ __readable: 'maybe' }))), bad('QS_INVALID_BOOLEAN', '__readable must be true or false.'))
  t.strictSame(caught(() => parseSingleQuery(ctx, raw({ __readable: ['0', '1'] }))), bad('QS_REPEATED', '__readable is given more than once.'))
})

t.test('__range_header_name', async (t) => {
  const names: Array<[string | undefined, string]> = [
    [undefined, 'pq_movie'],
    ['', 'pq_movie'],
    ['rows', 'rows'],
    ['my items', 'my items'],
    ['é\tx', 'é\tx']
  ]
  for (const [name, expected] of names) {
    const query: Record<string, string> = name === undefined ? {} : { __range_header_name: name, __range_header: 'true' }
    t.equal(parseListQuery(ctx, raw(query)).rangeHeaderName, expected, JSON.stringify(name))
  }
  t.strictSame(caught(() => parseListQuery(ctx, raw({ __range_header_name: ['a', 'b'] }))), bad('QS_REPEATED', '__range_header_name is given more than once.'))
  t.strictSame(caught(() => parseListQuery(ctx, raw({ __range_header_name: 'a\0' }))), bad('QS_INVALID_STRING', '__range_header_name must be a string without NUL characters.'))
  // What Node cannot send in a header would make the reply throw.
  for (const name of ['a\r\nSet-Cookie: x=1', 'a\nb', 'a\rb', '\x7f', '€', '😀', '\u0100']) {
    t.strictSame(
      caught(() => parseListQuery(ctx, raw({ __range_header_name: name }))),
      bad('QS_INVALID_VALUE', `The value ${JSON.stringify(name)} of __range_header_name is not a valid header value.`),
      JSON.stringify(name)
    )
  }
})

t.test('unknown control parameters', async (t) => {
  for (const key of ['__x', '__', '___order', '__order_by', '__ORDER', '__page__operator', '__limit', '__offset']) {
    t.strictSame(caught(() => parseListQuery(ctx, raw({ [key]: '1' }))), unknown(key), key)
    t.strictSame(caught(() => parseFilterQuery(ctx, raw({ [key]: '1' }))), unknown(key), `count: ${key}`)
  }
  for (const key of ['search', 'limit', 'offset', 'page']) {
    t.strictSame(caught(() => parseListQuery(ctx, raw({ [key]: '1' }))), unknown(key), key)
  }
})

t.test('prototype keys as field names and as values: a 400, never a crash', async (t) => {
  const forms = (key: string, value: string): Array<[string, RawQuery]> => [
    ['null prototype', Object.assign(Object.create(null), Object.fromEntries([[key, value]]))],
    ['plain object', Object.fromEntries([[key, value]])]
  ]
  for (const name of PROTOTYPE_KEYS) {
    for (const [form, query] of forms(name, 'x')) {
      t.strictSame(caught(() => parseListQuery(ctx, query)), unknown(name), `${form}: ${name}=x`)
      t.strictSame(caught(() => parseFilterQuery(ctx, query)), unknown(name), `${form}: count ${name}=x`)
      t.strictSame(caught(() => parseIdsQuery(ctx, query)), unknown(name, ['search', 'limit', 'offset']), `${form}: ids ${name}=x`)
    }
    // A key starting with `__` is a control parameter, named whole when unknown.
    const named = (key: string): string => name.startsWith('__') ? key : name
    for (const [form, query] of forms(`${name}__operator`, 'e')) {
      t.strictSame(caught(() => parseListQuery(ctx, query)), unknown(named(`${name}__operator`)), `${form}: ${name}__operator`)
    }
    for (const [form, query] of forms(`${name}__match`, 'exact')) {
      t.strictSame(caught(() => parseListQuery(ctx, query)), unknown(named(`${name}__match`)), `${form}: ${name}__match`)
    }
    for (const key of ['__order', '__visible_fields']) {
      for (const [form, query] of forms(key, name)) {
        t.strictSame(caught(() => parseListQuery(ctx, query)), unknownPath(name, FIELDS), `${form}: ${key}=${name}`)
      }
      for (const [form, query] of forms(key, `-${name}`)) {
        const expected = key === '__order' ? unknownPath(name, FIELDS) : unknownPath(`-${name}`, FIELDS)
        t.strictSame(caught(() => parseListQuery(ctx, query)), expected, `${form}: ${key}=-${name}`)
      }
      t.strictSame(caught(() => parseListQuery(ctx, raw({ [key]: `director.${name}` }))), unknownPath(`director.${name}`, FIELDS), `${key}=director.${name}`)
    }
    t.strictSame(caught(() => parseSingleQuery(ctx, raw({ __visible_fields: name }))), unknownPath(name, FIELDS), `single: __visible_fields=${name}`)
    t.strictSame(
      caught(() => filters({ rating__operator: name })),
      bad('QS_UNKNOWN_OPERATOR', `${JSON.stringify(name)} is not an operator: use one of e, ne, lt, lte, gt, gte, is_null, not_null, in, not_in, search.`),
      `rating__operator=${name}`
    )
    t.strictSame(
      caught(() => filters({ name: 'x', name__match: name })),
      bad('QS_UNKNOWN_MATCH', `${JSON.stringify(name)} is not a match type: use one of contains, exact, starts, ends.`),
      `name__match=${name}`
    )
    // As a filter value it is just a string, or a wrong value.
    t.strictSame(filters({ name }), [['name', 'e', 'contains', [name]]], `name=${name}`)
    t.strictSame(caught(() => filters({ rating: name })), bad('QS_INVALID_VALUE', `The value ${JSON.stringify(name)} of rating is not a valid number.`), `rating=${name}`)
    t.strictSame(caught(() => filters({ released: name })), bad('QS_INVALID_VALUE', `The value ${JSON.stringify(name)} of released is not a valid boolean (true, false, 1, 0, t, f, yes, no).`), `released=${name}`)
  }
  const parsed = JSON.parse('{"__proto__": "x"}') as RawQuery
  t.ok(Object.hasOwn(parsed, '__proto__'), 'JSON.parse makes __proto__ an own key')
  t.strictSame(caught(() => parseListQuery(ctx, parsed)), unknown('__proto__'))
  t.strictSame(caught(() => parseFilterQuery(ctx, parsed)), unknown('__proto__'))
  t.strictSame(caught(() => parseIdsQuery(ctx, parsed)), unknown('__proto__', ['search', 'limit', 'offset']))
  t.strictSame(caught(() => parseListQuery(ctx, JSON.parse('{"__order": "__proto__"}'))), unknownPath('__proto__', FIELDS))
  t.strictSame(caught(() => parseListQuery(ctx, JSON.parse('{"__proto__": {"name": "x"}}'))), unknown('__proto__'))
  // Inherited keys are never read as parameters.
  const inherited = Object.create({ name: 'x', __order: 'nope', __page: '0', search: 'y' }) as RawQuery
  const q = parseListQuery(ctx, inherited)
  t.strictSame([q.filters, orderOf(q), q.page], [[], [['id', true]], 1])
  t.strictSame(parseFilterQuery(ctx, inherited), [])
  t.strictSame(parseIdsQuery(ctx, Object.create({ limit: 'junk' })), { search: null, limit: 100, offset: 0 })
  t.strictSame(parseListQuery(ctx, {}).filters, [], 'a plain empty object')
  t.strictSame(parseIdsQuery(ctx, {}), { search: null, limit: 100, offset: 0 }, 'a plain empty object')
})

t.test('parseFilterQuery: the filters of GET /, control parameters not even read', async (t) => {
  const control = {
    __order: ['nope', '-password'],
    __visible_fields: 'director.mentor.name',
    __page: ['0', 'x'],
    __page_size: '99999',
    __readable: ['maybe', 'no'],
    __range_header: 'junk',
    __range_header_name: ['a\0', '\n']
  }
  t.strictSame(summary(parseFilterQuery(ctx, raw(control))), [])
  t.strictSame(summary(parseFilterQuery(ctx, raw({ ...control, name: 'x', rating: '2', rating__operator: 'lt' }))), [
    ['name', 'e', 'contains', ['x']],
    ['rating', 'lt', 'contains', [2]]
  ])
  t.strictSame(caught(() => parseFilterQuery(ctx, raw({ ...control, rating: 'abc' }))), bad('QS_INVALID_VALUE', 'The value "abc" of rating is not a valid number.'))
  t.strictSame(caught(() => parseFilterQuery(ctx, raw({ name: ['a', 'b'] }))), bad('QS_REPEATED', 'name is given more than once.'))
  t.strictSame(caught(() => parseFilterQuery(ctx, raw({ nope: '1' }))), unknown('nope'))
})

t.test('parseSingleQuery: __visible_fields and __readable; filters and the rest ignored', async (t) => {
  t.strictSame(parseSingleQuery(ctx, raw({})), { fields: null, readable: false, embeds: new Map() })
  const q = parseSingleQuery(ctx, raw({
    name: ['a', 'b'],
    rating: 'abc',
    rating__operator: 'bogus',
    nope: '1',
    __order: 'nope',
    __page: '0',
    __x: '1',
    __visible_fields: ['name', 'director.name,name'],
    __readable: 'YES'
  }))
  t.strictSame({ fields: q.fields?.map((f) => f.name), readable: q.readable }, { fields: ['name', 'director.name'], readable: true })
  t.equal(q.fields![1], ctx.fields.get('director.name'))
  t.strictSame(parseSingleQuery(ctx, raw({ __visible_fields: '' })), { fields: null, readable: false, embeds: new Map() })
})

t.test('parseIdsQuery: search, limit and offset only', async (t) => {
  const good: Array<[Record<string, string | string[]>, { search: string | null, limit: number, offset: number }]> = [
    [{}, { search: null, limit: 100, offset: 0 }],
    [{ search: '' }, { search: null, limit: 100, offset: 0 }],
    [{ search: 'Star %_' }, { search: 'Star %_', limit: 100, offset: 0 }],
    [{ search: ['x'] }, { search: 'x', limit: 100, offset: 0 }],
    [{ limit: '0' }, { search: null, limit: 0, offset: 0 }],
    [{ limit: '100' }, { search: null, limit: 100, offset: 0 }],
    [{ limit: '5', offset: '10' }, { search: null, limit: 5, offset: 10 }],
    [{ offset: '2147483647' }, { search: null, limit: 100, offset: 2147483647 }]
  ]
  for (const [query, expected] of good) t.strictSame(parseIdsQuery(ctx, raw(query)), expected, JSON.stringify(query))
  const LIMIT = bad('QS_INVALID_NUMBER', 'limit (at most 100) must be a non-negative integer.')
  const OFFSET = bad('QS_INVALID_NUMBER', 'offset must be a non-negative integer.')
  for (const text of ['-1', '101', 'abc', '1.5', '', ' 1', '1e2', '2147483648']) {
    t.strictSame(caught(() => parseIdsQuery(ctx, raw({ limit: text }))), LIMIT, `limit=${JSON.stringify(text)}`)
  }
  for (const text of ['-1', 'abc', '1.5', '', '2147483648']) {
    t.strictSame(caught(() => parseIdsQuery(ctx, raw({ offset: text }))), OFFSET, `offset=${JSON.stringify(text)}`)
  }
  for (const key of ['search', 'limit', 'offset']) {
    t.strictSame(caught(() => parseIdsQuery(ctx, raw({ [key]: ['1', '2'] }))), bad('QS_REPEATED', `${key} is given more than once.`), `${key} repeated`)
  }
  for (const key of ['name', '__page', '__readable', 'Search', 'search__operator', '']) {
    t.strictSame(caught(() => parseIdsQuery(ctx, raw({ [key]: '1' }))), unknown(key, ['search', 'limit', 'offset']), `ids: ${key}`)
  }
  t.strictSame(caught(() => parseIdsQuery(ctx, raw({ search: 'a\0' }))), bad('QS_INVALID_STRING', 'search must be a string without NUL characters.'))
})

t.test('parseId', async (t) => {
  const numbered = defineTable('pq_numbered', { n: column.integer({ primaryKey: true }) })
  const named = defineTable('pq_named', { slug: column.text({ primaryKey: true }) })
  const INVALID = bad('ID_INVALID', 'The ID is invalid')
  const cases: Array<[Table, string, number | string | null]> = [
    [movie, '1', 1],
    [movie, '42', 42],
    [movie, '+5', 5],
    [movie, '007', 7],
    [movie, '2147483647', 2147483647],
    [movie, '0', null],
    [movie, '-0', null],
    [movie, '-1', null],
    [movie, '2147483648', null],
    [movie, '99999999999999999999', null],
    [movie, '1.5', null],
    [movie, '1.0', null],
    [movie, ' 1', null],
    [movie, '1 ', null],
    [movie, '0x10', null],
    [movie, '1e3', null],
    [movie, 'abc', null],
    [movie, '', null],
    [movie, '+', null],
    [movie, 'constructor', null],
    [numbered, '0', 0],
    [numbered, '-1', -1],
    [numbered, '-2147483648', -2147483648],
    [numbered, '2147483647', 2147483647],
    [numbered, '2147483648', null],
    [numbered, '-2147483649', null],
    [numbered, '1.5', null],
    [numbered, 'x', null],
    [studio, 'ABCDE', 'ABCDE'],
    [studio, 'a', 'a'],
    [studio, 'éééé', 'éééé'],
    [studio, '😀😀😀😀😀', '😀😀😀😀😀'],
    [studio, '123', '123'],
    [studio, 'ABCDEF', null],
    [studio, '😀😀😀😀😀😀', null],
    [studio, '', null],
    [studio, 'a\0', null],
    [named, 'x'.repeat(10000), 'x'.repeat(10000)],
    [named, "'; drop table x; --", "'; drop table x; --"],
    [named, '__proto__', '__proto__'],
    [named, '', null],
    [named, '\0', null]
  ]
  for (const [table, text, expected] of cases) {
    const label = `${table.name}: ${JSON.stringify(text.slice(0, 20))}`
    if (expected === null) {
      t.strictSame(caught(() => parseId(table, text)), INVALID, label)
    } else {
      t.equal(parseId(table, text), expected, label)
    }
  }
})

t.test('each filter resolves to one kind: compare, like, contains or null', async (t) => {
  const kinds = (query: Record<string, string | string[]>): string[] => parseListQuery(ctx, raw(query)).filters.map((f) => f.kind)
  const cases: Array<[Record<string, string | string[]>, string]> = [
    [{ name: 'x' }, 'like'],
    [{ name: 'x', name__match: 'starts' }, 'like'],
    [{ name: 'x', name__match: 'ends' }, 'like'],
    [{ synopsis: 'x' }, 'like'],
    [{ contact: 'x', contact__operator: 'e' }, 'like'],
    [{ name: 'x', name__match: 'exact' }, 'compare'],
    [{ name: 'x', name__operator: 'ne', name__match: 'starts' }, 'compare'],
    [{ rating: '1', rating__operator: 'gt' }, 'compare'],
    [{ premiere: '2024-01-01' }, 'compare'],
    [{ studio: 'ab' }, 'compare'],
    [{ tags: ['a', 'b'] }, 'contains'],
    [{ scores: '1', scores__operator: 'ne' }, 'contains'],
    [{ name__operator: 'is_null' }, 'null'],
    [{ tags__operator: 'not_null' }, 'null']
  ]
  for (const [query, kind] of cases) t.strictSame(kinds(query), [kind], JSON.stringify(query))
})
