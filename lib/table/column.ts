import type { Table } from './table.js'

export type ColumnType =
  | 'serial' | 'varchar' | 'text' | 'integer' | 'real' | 'numeric'
  | 'boolean' | 'timestamp' | 'foreignKey' | 'array' | 'email'
  | 'smallInt' | 'bigInt' | 'doublePrecision' | 'uuid' | 'date' | 'time' | 'timestamptz' | 'interval' | 'jsonb'

/**
 * A JSON value: what a JSONB column holds, in `RowOf`.
 * @example
 * const tags: Json = { tags: ['space', 'opera'], rank: 1 }
 */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json }

export type OnDelete = 'cascade' | 'restrict' | 'set null' | 'set default' | 'no action'

/** A choice is a bare value, or a value with the label a form shows for it. */
export type Choice = string | number | boolean | { value: string | number | boolean, displayName?: string }

export interface ColumnOptions {
  /** Nullable; default false (ForeignKey: true). */
  null?: boolean
  default?: unknown
  unique?: boolean
  index?: boolean
  /** Never selected, returned or filtered on while `excludeSecrets` holds. */
  secret?: boolean
  /** Must be given on POST and PUT. */
  required?: boolean
  choices?: Record<string, Choice>
  helpText?: string
  primaryKey?: boolean
  /**
   * A value the API accepts, shown in the OpenAPI document (`examples`) and prefilled by Swagger
   * UI's "Try it out": an existing key for a ForeignKey, a plausible number. Default one per
   * type where the generated one would be refused (docs/openapi.md, "Examples").
   */
  example?: unknown
}

export interface NormalizedChoice { value: string | number | boolean, displayName: string }

/** What every column carries once built; `name` and `table` are set by `defineTable`. */
export interface ColumnSpec {
  readonly type: ColumnType
  readonly nullable: boolean
  readonly hasDefault: boolean
  readonly default: unknown
  readonly unique: boolean
  readonly index: boolean
  readonly secret: boolean
  readonly required: boolean
  readonly choices: ReadonlyMap<string, NormalizedChoice> | null
  readonly helpText: string | null
  readonly primaryKey: boolean
  /** The `example` option: undefined when none was given. */
  readonly example?: unknown
  /** Varchar only. */
  readonly length?: number
  /** Numeric only: [precision, scale]. */
  readonly digits?: readonly [number, number]
  /** ForeignKey only. */
  readonly target?: () => Table
  /** ForeignKey only: `target` is the caller's thunk, which cannot be called before every table exists. */
  readonly thunk?: boolean
  readonly onDelete?: OnDelete
  /** ForeignKey only: the name of the reverse relation it gives its target (SPEC §8.1), or null for the default. */
  readonly related?: string | null
  /** Array only: the element column (itself possibly an array). */
  readonly element?: ColumnSpec
}

/**
 * A column builder's result. `T` is the value type, `N` whether it is nullable, `P` whether
 * it is the primary key and `W` the value a write hook sees (`WriteOf`): they exist for
 * `RowOf` and `WriteRowOf` only.
 */
export interface Column<T = unknown, N extends boolean = boolean, P extends boolean = boolean, W = T> extends ColumnSpec {
  readonly __value?: T
  readonly __nullable?: N
  readonly __primary?: P
  readonly __write?: W
}

export type AnyColumn = Column<any, boolean, boolean, any>

type Nullable<O, Default extends boolean> = O extends { null: true } ? true : O extends { null: false } ? false : Default
type Primary<O> = O extends { primaryKey: true } ? true : false
/**
 * Whether a write leaving the column out gives it null (SPEC §6.2): no declared default, and
 * no type default (`Blank` false: Email, ForeignKey, UUID, JSONB, Serial) or `choices`.
 */
type LeftOutNull<O, Blank extends boolean> = O extends { default: {} } ? false : O extends { choices: {} } ? true : Blank extends true ? false : true

/**
 * The type of a built column: `T` as a row holds it, `W` as a body may give it (a Numeric:
 * a number or a decimal string), `Blank` whether its type has a default of its own.
 */
export type Built<T, O, DefaultNull extends boolean = false, W = T, Blank extends boolean = true> =
  Column<T, Nullable<O, DefaultNull>, Primary<O>, LeftOutNull<O, Blank> extends true ? W | null : W>

/** Turns `{ choice_name: 'Label' }`-style input into one shape: value and display name. */
export function displayName (name: string): string {
  return name.split('_').filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join(' ')
}

function normalizeChoices (choices: Record<string, Choice> | undefined): ReadonlyMap<string, NormalizedChoice> | null {
  if (choices === undefined) return null
  const map = new Map<string, NormalizedChoice>()
  for (const [name, choice] of Object.entries(choices)) {
    map.set(name, typeof choice === 'object' && choice !== null
      ? { value: choice.value, displayName: choice.displayName ?? displayName(name) }
      : { value: choice, displayName: displayName(name) })
  }
  return map
}

function build (type: ColumnType, options: ColumnOptions, extra: Partial<ColumnSpec> = {}, defaultNull = false): ColumnSpec {
  return Object.freeze({
    type,
    nullable: options.null ?? defaultNull,
    hasDefault: Object.hasOwn(options, 'default') && options.default !== undefined,
    default: options.default,
    unique: options.unique ?? false,
    index: options.index ?? false,
    secret: options.secret ?? false,
    required: options.required ?? false,
    choices: normalizeChoices(options.choices),
    helpText: options.helpText ?? null,
    primaryKey: options.primaryKey ?? false,
    ...(options.example === undefined ? {} : { example: options.example }),
    ...extra
  })
}

type Bare = Omit<ColumnOptions, 'choices'>

/**
 * Column builders, one per type of SPEC §2.2 (the type's name in lower camel case).
 * @example
 * column.varchar({ length: 100, required: true, unique: true })
 * column.numeric({ digits: [12, 2], null: true })
 * column.foreignKey((): Table => director, { onDelete: 'restrict', related: 'movies' })
 * column.array(column.array(column.integer()))
 * column.uuid({ primaryKey: true }) // defaults to gen_random_uuid()
 * column.bigInt() // "9007199254740993" on the wire: exact past 2^53
 * column.timestamptz({ default: 'now' }) // "2024-01-02T03:04:05Z", always UTC
 * column.interval() // "P1DT2H"
 * column.jsonb({ null: true }) // any JSON value
 */
export const column = {
  serial: <O extends Bare = {}>(options?: O): Built<number, O, false, number, false> => build('serial', options ?? {}),
  integer: <O extends ColumnOptions = {}>(options?: O): Built<number, O> => build('integer', options ?? {}),
  real: <O extends ColumnOptions = {}>(options?: O): Built<number, O> => build('real', options ?? {}),
  /** Exact decimal; its JSON value is a string such as `"12.50"`. */
  numeric: <O extends ColumnOptions & { digits: readonly [number, number] }>(options: O): Built<string, O, false, string | number> =>
    build('numeric', options, options.digits === undefined ? {} : { digits: [options.digits[0], options.digits[1]] }),
  boolean: <O extends ColumnOptions = {}>(options?: O): Built<boolean, O> => build('boolean', options ?? {}),
  varchar: <O extends ColumnOptions & { length: number }>(options: O): Built<string, O> =>
    build('varchar', options, { length: options.length }),
  text: <O extends ColumnOptions = {}>(options?: O): Built<string, O> => build('text', options ?? {}),
  email: <O extends ColumnOptions = {}>(options?: O): Built<string, O, false, string, false> => build('email', options ?? {}),
  /** A timestamp without zone, on the wire `YYYY-MM-DDTHH:MM:SS[.ffffff]`. */
  timestamp: <O extends ColumnOptions = {}>(options?: O): Built<string, O> => build('timestamp', options ?? {}),
  /** A 16-bit integer (-32768 to 32767). */
  smallInt: <O extends ColumnOptions = {}>(options?: O): Built<number, O> => build('smallInt', options ?? {}),
  /**
   * A 64-bit integer. On the wire a string of digits, exact past 2^53; a body may give a digit
   * string or a JSON number that is a safe integer.
   */
  bigInt: <O extends ColumnOptions = {}>(options?: O): Built<string, O, false, string | number> => build('bigInt', options ?? {}),
  /** An 8-byte float. */
  doublePrecision: <O extends ColumnOptions = {}>(options?: O): Built<number, O> => build('doublePrecision', options ?? {}),
  /** A UUID: lower case out, any case in. As the primary key it defaults to `gen_random_uuid()`. */
  uuid: <O extends ColumnOptions = {}>(options?: O): Built<string, O, false, string, false> => build('uuid', options ?? {}),
  /** A calendar date, `YYYY-MM-DD`; `default: 'now'` is today in UTC. */
  date: <O extends ColumnOptions = {}>(options?: O): Built<string, O> => build('date', options ?? {}),
  /** A time of day without zone, `HH:MM:SS[.ffffff]`; `default: 'now'` is the time in UTC. */
  time: <O extends ColumnOptions = {}>(options?: O): Built<string, O> => build('time', options ?? {}),
  /** An instant: in with `Z` or an offset, out in UTC as `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`. */
  timestamptz: <O extends ColumnOptions = {}>(options?: O): Built<string, O> => build('timestamptz', options ?? {}),
  /** A duration, on the wire an ISO 8601 duration such as `P1DT2H`. */
  interval: <O extends ColumnOptions = {}>(options?: O): Built<string, O> => build('interval', options ?? {}),
  /** Any JSON value; a top-level JSON null is SQL NULL (so NOT NULL refuses it). Filters take `is_null`/`not_null` only. */
  jsonb: <O extends ColumnOptions = {}>(options?: O): Built<NonNullable<Json>, O, false, NonNullable<Json>, false> => build('jsonb', options ?? {}),
  /**
   * A reference to another table's primary key. Pass the table, or a thunk returning it for
   * cycles and self-references. `K` is the referenced key's type (a number unless given).
   */
  foreignKey: <K extends number | string = number, O extends ColumnOptions & { onDelete?: OnDelete, related?: string } = {}>(
    target: Table | (() => Table), options?: O
  ): Built<NoInfer<K>, O, true, NoInfer<K>, false> => {
    const thunk = typeof target === 'function'
    return build('foreignKey', options ?? {}, { target: thunk ? target : () => target, thunk, onDelete: options?.onDelete ?? 'cascade', related: options?.related ?? null }, true)
  },
  /** An array of any column type, nested arrays for more dimensions. */
  array: <E extends AnyColumn, O extends ColumnOptions = {}>(element: E, options?: O): Built<Array<ValueOf<E>>, O, false, Array<WriteOf<E>>> =>
    build('array', options ?? {}, { element })
}

/** A column's value in a row: `RowOf`. */
export type ValueOf<C> = C extends Column<infer T, infer N, any, any> ? (N extends true ? T | null : T) : never
/** A column's value as a write hook sees it: as the body gave it, or its default; `WriteRowOf`. */
export type WriteOf<C> = C extends Column<any, infer N, any, infer W> ? (N extends true ? W | null : W) : never

/** Array nesting depth: 0 for scalars. */
export function dimensions (col: ColumnSpec): number {
  let depth = 0
  for (let c: ColumnSpec | undefined = col; c?.type === 'array'; c = c.element) depth++
  return depth
}

/** The innermost element column of an array, or the column itself. */
export function scalarOf (col: ColumnSpec): ColumnSpec {
  let c = col
  while (c.type === 'array') c = c.element!
  return c
}
