import { CloneType, KindGuard, Type, type TArray, type TObject, type TProperties, type TSchema, type TUnion } from '@sinclair/typebox'
import { dimensions, displayName, scalarOf, type ColumnSpec, type ColumnType, type NormalizedChoice } from '../lib/table/column.js'
import { targetOf, visibleColumns, type Table, type TableColumn } from '../lib/table/table.js'
import { fieldPaths, visibleRelation } from '../lib/query/fields.js'
import { relationsOf } from '../lib/table/relations.js'
import { typeDefault } from '../lib/table/defaults.js'
import { BIGINT_PATTERN, typeOf } from '../lib/table/column-types.js'
import { DECIMAL_TEXT, INTERVAL_IN, TIME_IN, TIMESTAMP_IN, UUID_IN } from '../lib/values/index.js'

export type Mode = 'in' | 'out'

/** What a Numeric body string may look like; precision and scale are checked in code. */
export const DECIMAL_PATTERN = DECIMAL_TEXT.source

/** An ISO 8601 date or date-time: the pattern `parseTimestamp` reads, which also checks the calendar. */
export const TIMESTAMP_PATTERN = TIMESTAMP_IN.source

/** `movie_role` -> `MovieRole`: schema titles stand in for `$id`s (SPEC: no `$id`). */
export function pascalName (table: Table): string {
  return displayName(table.name).replaceAll(' ', '')
}

function withChoices (schema: TSchema, choices: ReadonlyMap<string, NormalizedChoice> | null, mode: Mode): TSchema {
  if (mode === 'out' || choices === null) return schema
  return CloneType(schema, { enum: [...choices.values()].map((c) => c.value) })
}

/**
 * Rules the server enforces in code, with messages that name them, and that JSON Schema can
 * state: written into the OpenAPI document only (the `openApi` plugin reads this key). Under a
 * symbol, body validation (Ajv) and `/schema/` (a JSON round trip) never see them, so a value
 * breaking one keeps its 400 with the server's own message (SPEC §2.2, §6.2).
 */
export const OPENAPI_RULES = Symbol.for('fastify-tablecrud.openapi-rules')

/** A schema with rules for the document (`OPENAPI_RULES`): keywords the document adds to its own, or shows instead. */
export function withOpenApiRules<T extends object> (schema: T, rules: Record<string, unknown>): T {
  return { ...schema, [OPENAPI_RULES]: rules }
}

/** PostgreSQL text cannot hold U+0000 (lib/values/limits.ts). */
export const NO_NUL = { pattern: '^[^\\u0000]*$' }
/** The largest float a `real` holds; a non-zero one that rounds to 0 is refused too (lib/values/limits.ts). */
const REAL_MAX = 3.4028234663852886e38

/** A Numeric(p, s) body value: a number or decimal string with at most p - s digits before the point and s after it. */
function numericRules (column: ColumnSpec, schema: TSchema): TSchema {
  const [precision, scale] = column.digits!
  const whole = precision - scale
  const description = `At most ${whole} digits before the point and ${scale} after it.`
  const [number, text] = (schema as TUnion).anyOf
  // A bound past a double's range says nothing a client can send.
  const bounds = whole <= 300 ? { exclusiveMinimum: -(10 ** whole), exclusiveMaximum: 10 ** whole } : {}
  const digits = `^[+-]?(?=\\.?\\d)0*\\d{0,${whole}}(\\.\\d{0,${scale}}0*)?$`
  // The union's own keywords (an enum of choices) stay.
  return { ...schema, anyOf: [withOpenApiRules(number!, { ...bounds, description }), withOpenApiRules(text!, { pattern: digits, description })] }
}

/** A BigInt body value: a JSON integer while it is exact, else a string of digits (64 bits, checked in code). */
function bigIntRules (_column: ColumnSpec, schema: TSchema): TSchema {
  const [number, text] = (schema as TUnion).anyOf
  const exact = { minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }
  return { ...schema, anyOf: [withOpenApiRules(number!, exact), withOpenApiRules(text!, { pattern: BIGINT_PATTERN })] }
}

/** The rules of each column type's body values that only the document states (`OPENAPI_RULES`). */
const BODY_RULES: Partial<Record<ColumnType, (column: ColumnSpec, schema: TSchema) => TSchema>> = {
  numeric: numericRules,
  bigInt: bigIntRules,
  bigSerial: bigIntRules,
  real: (_column, schema) => withOpenApiRules(schema, { minimum: -REAL_MAX, maximum: REAL_MAX, description: 'A 4-byte float: at most 3.4028235e38 in magnitude and, unless 0, at least 1.4e-45.' }),
  varchar: (_column, schema) => withOpenApiRules(schema, NO_NUL),
  text: (_column, schema) => withOpenApiRules(schema, NO_NUL),
  email: (_column, schema) => withOpenApiRules(schema, NO_NUL),
  timestamp: (_column, schema) => withOpenApiRules(schema, { description: 'An ISO 8601 date or date-time of a day that exists: 2023-02-30 is a 400.' }),
  // Read by these patterns alone (lib/values): what the document takes, the server takes.
  time: (_column, schema) => withOpenApiRules(schema, { pattern: TIME_IN.source }),
  interval: (_column, schema) => withOpenApiRules(schema, { pattern: INTERVAL_IN.source }),
  // `format: uuid` alone: validators (ajv-formats) take a `urn:uuid:` prefix the server refuses.
  uuid: (_column, schema) => withOpenApiRules(schema, { pattern: UUID_IN.source }),
  // RFC 3339 has a year 0 and a leap second (:60), which PostgreSQL and the server refuse.
  date: (_column, schema) => withOpenApiRules(schema, { pattern: '^(?!0000-)' }),
  timestamptz: (_column, schema) => withOpenApiRules(schema, { pattern: '^(?!0000-)(?!.{11}\\d{2}:\\d{2}:60)' })
}

/** The types whose `BODY_RULES` hold for filter values too (a Numeric filter takes any decimal). */
const FILTER_RULES: ReadonlySet<ColumnType> = new Set(['bigInt', 'bigSerial', 'uuid', 'date', 'time', 'timestamptz', 'interval'])

/** A schema with its rules for the document written in (`OPENAPI_RULES`), a union's branches' too. */
function rulesWrittenIn (schema: TSchema): TSchema {
  const rules = (schema as { [OPENAPI_RULES]?: object })[OPENAPI_RULES]
  const own = KindGuard.IsUnion(schema) ? { ...schema, anyOf: schema.anyOf.map(rulesWrittenIn) } : schema
  return rules === undefined ? own : { ...own, ...rules }
}

/** Choices given on an array column constrain its innermost elements. */
function bareSchema (table: Table, column: ColumnSpec, mode: Mode, choices: ReadonlyMap<string, NormalizedChoice> | null): TSchema {
  if (column.type === 'array') {
    const element = column.element!
    return Type.Array(nullable(element, bareSchema(table, element, mode, element.choices ?? choices), mode))
  }
  const schema = withChoices(typeOf(column).schema(column, mode), choices, mode)
  const rules = mode === 'in' ? BODY_RULES[column.type] : undefined
  return rules === undefined ? schema : rules(column, schema)
}

/** `anyOf [<type>, null]` (SPEC §2.8); a plain union (Numeric in) gains the null branch rather than nesting. */
/**
 * A value or null, for serialising: `type: [t, 'null']` where the value has one plain type, which
 * fast-json-stringify writes about a third faster than anyOf.
 */
function orNullOut (schema: TSchema): TSchema {
  if (typeof schema.type !== 'string' || schema.type === 'array') return Type.Union([schema, Type.Null()])
  return Type.Unsafe({ ...JSON.parse(JSON.stringify(schema)), type: [schema.type, 'null'] })
}

/** In, nullable is anyOf with null: what /schema/ shows (SPEC §2.8). */
function nullable (column: ColumnSpec, schema: TSchema, mode: Mode): TSchema {
  if (!column.nullable) return schema
  if (mode === 'out') return orNullOut(schema)
  const branches = KindGuard.IsUnion(schema) && schema.enum === undefined ? schema.anyOf : [schema]
  return Type.Union([...branches, Type.Null()])
}

/**
 * One value of a filter on `column`, as a query string carries it (SPEC §2.2, §2.3), for
 * OpenAPI: the body value's schema without null (the text `null` is a string), an array's
 * innermost element, a choice among `choices`. Text compared as `__match` says is any text
 * without NUL.
 */
export function filterValueSchema (table: Table, column: ColumnSpec): TSchema {
  const scalar = scalarOf(column)
  const choices = scalar.choices ?? column.choices
  // Any text but NUL, which the server refuses in a filter too; or one of the choices.
  if (typeOf(scalar).matches) return choices === null ? Type.String(NO_NUL) : withChoices(Type.String(), choices, 'in')
  const schema = bareSchema(table, scalar, 'in', choices)
  // The query's schemas are the document's only (the parser validates), so a rule that reads
  // filter values as it reads bodies is written in.
  return FILTER_RULES.has(scalar.type) ? rulesWrittenIn(schema) : schema
}

/** One column's value on the wire (SPEC §2.2); `in` validates request bodies, `out` serialises rows. */
export function valueSchema (table: Table, column: TableColumn | ColumnSpec, mode: Mode): TSchema {
  return nullable(column, bareSchema(table, column, mode, column.choices), mode)
}

function choicesOf (column: ColumnSpec): Record<string, { display_name: string, value: unknown }> | null {
  const choices = column.choices ?? scalarOf(column).choices
  if (choices === null) return null
  const out: Record<string, { display_name: string, value: unknown }> = {}
  for (const [name, choice] of choices) out[name] = { display_name: choice.displayName, value: choice.value }
  return out
}

/** The `extra` member of a property in `/schema/` (SPEC §2.8). */
export function columnExtra (table: Table, column: TableColumn): Record<string, unknown> {
  const extra: Record<string, unknown> = {
    help_text: column.helpText,
    choices: choicesOf(column),
    secret: column.secret,
    nullable: column.nullable,
    // A primary key is unique whether or not it says so.
    unique: column.unique || column.primaryKey
  }
  if (column.type === 'foreignKey') {
    const target = targetOf(table, column)
    extra.foreign_key = { to: target.name, target_column: target.primaryKey.name }
  }
  const widget = typeOf(column).widget
  if (widget !== null) extra.widget = widget
  if (column.type === 'array') extra.dimensions = dimensions(column)
  return extra
}

function annotate (table: Table, column: TableColumn, schema: TSchema, example?: unknown): TSchema {
  return CloneType(schema, { title: displayName(column.name), extra: columnExtra(table, column), ...(example === undefined ? {} : { examples: [example] }) })
}

/**
 * Examples the API accepts where Swagger UI's own would be refused: a date-time for a pattern it
 * fills with digits ("7811-83-08"), 1 (the first row of a Serial table) for a key or an integer
 * it would fill with its minimum, an address for an email (Swagger UI fills the no-NUL pattern
 * with random characters, not an address). A column's `example` option comes first.
 */
const EXAMPLES: Partial<Record<TableColumn['type'], unknown>> = {
  timestamp: '2024-05-17T20:00:00',
  timestamptz: '2024-05-17T20:00:00Z',
  date: '2024-05-17',
  email: 'user@example.com',
  integer: 1,
  smallInt: 1,
  serial: 1,
  bigSerial: '1'
}

function exampleOf (table: Table, column: ColumnSpec): unknown {
  if (column.example !== undefined) return column.example
  if (column.type === 'foreignKey') {
    const target = targetOf(table, column as TableColumn)
    return exampleOf(target, target.primaryKey)
  }
  if (column.type === 'array') {
    const element = exampleOf(table, column.element!)
    return element === undefined ? undefined : [element]
  }
  return EXAMPLES[column.type]
}

/**
 * A response row: every visible column, none required (`__visible_fields` picks). A ForeignKey
 * within `maxJoins` may also hold the nested object of its joined fields, and each top-level
 * ForeignKey may be followed by `<fk>_readable` (SPEC §6.9), so `__visible_fields` and
 * `__readable` answers serialise through the same schema.
 */
export function rowSchema (table: Table, excludeSecrets: boolean, maxJoins = 0): TObject {
  return rowObject(table, excludeSecrets, maxJoins, 'row')
}

/**
 * The title of a joined row: `StudioJoined`, or `MovieJoinedDepth1` when it holds joins of its
 * own. Not `StudioRow`: its fields differ (each may be null), and a typed client must see it.
 */
function joinedTitle (table: Table, joins: number): string {
  return `${pascalName(table)}Joined${joins > 0 ? `Depth${joins}` : ''}`
}

/**
 * What a row object is: a response row, a row embedded in one (SPEC §8.1: fields as a row's,
 * in an array), or a row joined through a ForeignKey (each field may be null).
 */
type RowKind = 'row' | 'embedded' | 'joined'

/** The title of a row embedded through a relation: `FilmEmbedded`, or `FilmEmbeddedDepth1` when it holds joins of its own. */
function embeddedTitle (table: Table, joins: number): string {
  return `${pascalName(table)}Embedded${joins > 0 ? `Depth${joins}` : ''}`
}

/** Each reverse and many-to-many relation within `maxJoins`, as an optional array of embedded rows (SPEC §8.1). */
function relationArrays (table: Table, excludeSecrets: boolean, maxJoins: number): TProperties {
  const properties: TProperties = {}
  if (maxJoins === 0) return properties
  for (const relation of relationsOf(table).values()) {
    if (!relation.many || !visibleRelation(relation, excludeSecrets)) continue
    properties[relation.name] = Type.Optional(Type.Array(rowObject(relation.to, excludeSecrets, maxJoins - 1, 'embedded'), {
      description: `The ${relation.to.name} rows of this row through ${relation.name}, when __visible_fields names them: at most <path>.__page_size.`
    }))
  }
  return properties
}

function rowObject (table: Table, excludeSecrets: boolean, maxJoins: number, kind: RowKind): TObject {
  const top = kind !== 'joined'
  const properties: TProperties = {}
  let joins = 0
  for (const column of visibleColumns(table, excludeSecrets)) {
    // A joined row through a NULL ForeignKey is served with every field null (schemas/shape.ts).
    let schema = top || column.nullable ? valueSchema(table, column, 'out') : orNullOut(valueSchema(table, column, 'out'))
    if (column.type === 'foreignKey' && maxJoins > 0) {
      const joined = rowObject(targetOf(table, column), excludeSecrets, maxJoins - 1, 'joined')
      joins = maxJoins
      schema = Type.Union([bareSchema(table, column, 'out', null), joined, ...(column.nullable || !top ? [Type.Null()] : [])])
    }
    properties[column.name] = Type.Optional(schema)
  }
  if (top) {
    for (const column of visibleColumns(table, excludeSecrets)) {
      const key = `${column.name}_readable`
      if (column.type === 'foreignKey' && !table.columnMap.has(key)) {
        properties[key] = Type.Optional(Type.Union([Type.String(), Type.Null()]))
      }
    }
  }
  const relations = relationArrays(table, excludeSecrets, maxJoins)
  if (Object.keys(relations).length > 0) joins = maxJoins
  Object.assign(properties, relations)
  const title = kind === 'row' ? `${pascalName(table)}Row` : kind === 'embedded' ? embeddedTitle(table, joins) : joinedTitle(table, joins)
  return Type.Object(properties, { title })
}

type Write = 'create' | 'replace' | 'patch'
const TITLES: Record<Write, string> = { create: 'In', replace: 'Replace', patch: 'Patch' }

function writeSchema (table: Table, kind: Write): TObject {
  const properties: TProperties = {}
  const needed: string[] = []
  for (const column of table.columns) {
    const key = column.primaryKey ? typeOf(column).key! : null
    const serialKey = key?.assigned === true
    // The database assigns a Serial key: a client may only say "none" (SPEC §2.5).
    const value = kind === 'create' && serialKey ? Type.Null() : valueSchema(table, column, 'in')
    const schema = annotate(table, column, value, kind === 'create' && serialKey ? undefined : exampleOf(table, column))
    const required = kind === 'create'
      // A key the database can make (a UUID's random default) may be left out.
      ? column.required || (key !== null && !serialKey && key.sqlDefault === null)
      : kind === 'replace' && column.required && !column.primaryKey
    properties[column.name] = required ? schema : Type.Optional(schema)
    // NOT NULL with no default of its own or of its type (a ForeignKey, an Email, choices): left
    // out, the database refuses the row with a 422 (SPEC §6.2). Required in the document only.
    if (required || (kind !== 'patch' && !column.primaryKey && !column.nullable && !column.hasDefault && typeDefault(column) === null)) needed.push(column.name)
  }
  const object = Type.Object(properties, { title: pascalName(table) + TITLES[kind], additionalProperties: false })
  return needed.length === (object.required ?? []).length ? object : withOpenApiRules(object, { required: needed })
}

/** The POST body (SPEC §2.5): required columns and a non-Serial key required; a Serial key only null. */
export function createSchema (table: Table): TObject {
  return writeSchema(table, 'create')
}

/**
 * The POST body as routes take it: one row, or an array of 1 to `maxRows` rows inserted
 * together (SPEC §7.4). Each element is the one-row schema.
 */
export function createBodySchema (table: Table, maxRows: number): TUnion<[TObject, TArray<TObject>]> {
  const one = createSchema(table)
  return Type.Union([one, Type.Array(one, { minItems: 1, maxItems: maxRows, title: `${pascalName(table)}InList` })])
}

/** The PUT body (SPEC §2.6): required columns required; the key optional, compared with the path in code. */
export function replaceSchema (table: Table): TObject {
  return writeSchema(table, 'replace')
}

/** The PATCH body (SPEC §2.6): any subset of the columns. */
export function patchSchema (table: Table): TObject {
  return writeSchema(table, 'patch')
}

export interface SchemaDocumentOptions {
  excludeSecrets: boolean
  maxJoins: number
  schemaExtra?: Record<string, unknown>
}

/**
 * The body of GET `/schema/` (SPEC §2.8), from the POST schema. A Serial primary key is left
 * out of `properties`: the database assigns it and `primary_key_name` names it. Any other
 * key is a property, and required.
 */
export function schemaDocument (table: Table, options: SchemaDocumentOptions): Record<string, unknown> {
  // A JSON round trip drops TypeBox's symbol members, leaving plain JSON Schema.
  // The OpenAPI `examples` are for Swagger UI's "Try it out", not part of the SPEC §2.8 document.
  const create = JSON.parse(JSON.stringify(createSchema(table), (name, value) => name === 'examples' ? undefined : value)) as { properties: Record<string, unknown>, required?: string[] }
  const key = table.primaryKey
  if (typeOf(key).key!.assigned) delete create.properties[key.name]
  const document: Record<string, unknown> = { title: `${pascalName(table)}In`, type: 'object', properties: create.properties }
  if (create.required !== undefined && create.required.length > 0) document.required = create.required
  document.extra = {
    help_text: table.helpText,
    primary_key_name: key.name,
    visible_fields_options: fieldPaths(table, options.maxJoins, options.excludeSecrets, true).map((f) => f.name),
    ...options.schemaExtra
  }
  return document
}

function wireDefault (column: ColumnSpec, value: unknown): unknown {
  return value === null ? null : typeOf(column).wire(column, value)
}

function newValue (column: TableColumn): unknown {
  if (column.primaryKey) return null
  // The type default even for a nullable column (SPEC §6.5), in the wire form: "0.00", not 0.
  return wireDefault(column, column.hasDefault ? column.default : typeDefault(column))
}

/** The body of GET `/new/` (SPEC §2.8, §6.5): a default for each column; the time is taken per call. */
export function newRow (table: Table, excludeSecrets: boolean): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  for (const column of visibleColumns(table, excludeSecrets)) row[column.name] = newValue(column)
  return row
}

/** Serialises `newRow`: every key present, null where the default can be null. */
export function newRowSchema (table: Table, excludeSecrets: boolean): TObject {
  const properties: TProperties = {}
  for (const column of visibleColumns(table, excludeSecrets)) {
    const schema = valueSchema(table, column, 'out')
    properties[column.name] = !column.nullable && newValue(column) === null ? orNullOut(schema) : schema
  }
  return Type.Object(properties, { title: `${pascalName(table)}New` })
}
