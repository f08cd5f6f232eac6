import type { FastifyRequest } from 'fastify'
import { optionError } from '../../lib/errors.js'
import type { MediaStorage } from '../../lib/media/storage.js'
import type { ScopeFunction } from '../../lib/query/scope.js'
import { isTable, type KeyValueOf, type PatchOf, type Table, type WriteRowOf } from '../../lib/table/table.js'
import type { PoolOptions } from '../database.js'
import { checkMediaStorage, MEDIA_MAX_BYTES } from './media.js'
import type { ValidatorQuery } from './validator-query.js'
import type { Claims } from './claims.js'

/** The options of `tableCrud`, their types and their checks at registration (SPEC §2.1). */

export type Row = Record<string, unknown>

/** What validators get as their first argument: the table and the options in force. */
export interface Crud<T extends Table = Table> {
  readonly table: T
  readonly readOnly: boolean
  readonly allowBulkDelete: boolean
  readonly pageSize: number
  readonly maxPageSize: number
  readonly excludeSecrets: boolean
  readonly maxJoins: number
}

/** A validator's request: `request.query` is the query string as sent, for every operation (`ValidatorQuery`). */
export type ValidatorRequest = FastifyRequest<{ Querystring: ValidatorQuery }>

export type Validator<T extends Table = Table> = (crud: Crud<T>, request: ValidatorRequest, extraContext: Record<string, unknown>) => void | Promise<void>

export const OPERATIONS = [
  'every', 'getSingle', 'putSingle', 'patchSingle', 'deleteSingle', 'postSingle', 'getAll',
  'deleteAll', 'patchAll', 'getReferences', 'getIds', 'getNew', 'getSchema', 'getCount', 'storeFile', 'getFileUrl', 'getAggregate'
] as const
export type Operation = Exclude<typeof OPERATIONS[number], 'every'>

export type Validators<T extends Table = Table> = { [K in typeof OPERATIONS[number]]?: Array<Validator<T>> } & { extraContext?: Record<string, unknown> }

export interface HookContext { request: FastifyRequest }
/**
 * A write hook of table `T` (SPEC §2.10), typed by its columns: `preSave` gets and returns
 * `WriteRowOf<T>`, `prePatch` the key and `PatchOf<T>`, `preDelete` the key.
 */
export type Hook<T extends Table = Table> =
  | { hookType: 'preSave', callable: (row: WriteRowOf<T>, context: HookContext) => WriteRowOf<T> | Promise<WriteRowOf<T>> }
  | { hookType: 'prePatch', callable: (id: KeyValueOf<T>, values: PatchOf<T>, context: HookContext) => PatchOf<T> | Promise<PatchOf<T>> }
  | { hookType: 'preDelete', callable: (id: KeyValueOf<T>, context: HookContext) => void | Promise<void> }

/**
 * The database (`pg`, `pool`; default `fastify.pg`) is checked where it is used, in plugins/database.ts.
 * `T` is the table, inferred from `table` at `register`: validators and hooks are typed by its columns.
 */
export interface TableCrudOptions<T extends Table = Table> extends PoolOptions {
  /** The table to expose. */
  table: T
  /** Only GET and HEAD; other methods answer 405. Default true. */
  readOnly?: boolean
  /** DELETE `/` deletes the rows matching the filters. Default false. */
  allowBulkDelete?: boolean
  /** PATCH `/` changes the rows matching the filters (SPEC §8.5). Default false. */
  allowBulkUpdate?: boolean
  /** At most this many rows a bulk PATCH or DELETE `/` may change; `__max_affected` may lower it (SPEC §8.5). Default 1000. */
  maxAffected?: number
  /** To-many relations a POST body may hold, inserted with the row in one transaction (SPEC §8.5), e.g. `['movies']`. Default none. */
  nestedWrites?: readonly string[]
  /** Rows per page by default. Default 15. */
  pageSize?: number
  /** Largest `__page_size` (and `/ids/` limit). Default 1000. */
  maxPageSize?: number
  /** Secret columns are never selected, returned or filtered on. Default true. */
  excludeSecrets?: boolean
  validators?: Validators<NoInfer<T>>
  /** Merged into the `extra` member of `/schema/`. */
  schemaExtra?: Record<string, unknown>
  /** Join depth allowed in `__visible_fields` and `__order`. Default 0. */
  maxJoins?: number
  /** Default and largest `<path>.__page_size`: rows an embed holds per parent row (SPEC §8.1). Default 100. */
  maxEmbedRows?: number
  hooks?: Array<Hook<NoInfer<T>>>
  /** Milliseconds a statement may take before the request is a 503. Default 30000. */
  queryTimeout?: number
  /** PUT, PATCH and DELETE `/:id/` without `If-Match` answer 428 (SPEC §7.3). Default false. */
  requireIfMatch?: boolean
  /**
   * How totals are counted (SPEC §7.2): `'exact'`, or `'estimated'`: a total the planner
   * estimates above `exactCountLimit` is that estimate. Default 'exact'.
   */
  countMode?: 'exact' | 'estimated'
  /** With countMode 'estimated', estimates up to this many rows are counted exactly. Default 100000. */
  exactCountLimit?: number
  /** At most this many rows per streaming export (SPEC §7.5). Default: unlimited. */
  maxExportRows?: number
  /**
   * The secret keyset cursors are sealed with (SPEC §7.1). Default: a random key per process,
   * so cursors do not survive a restart nor cross instances; set it when several share traffic.
   */
  cursorSecret?: string
  /** Storages of this table's media columns: adds POST `/media/` and GET `/media/url/` (SPEC §5.8). */
  mediaStorage?: readonly MediaStorage[]
  /**
   * GET `/aggregate/`: counts, sums, averages, minima and maxima of groups (SPEC §8.3). Default
   * false, since an aggregate may scan the whole table: `/aggregate/` then answers 405 with an
   * empty `Allow`.
   */
  aggregates?: boolean
  /** Largest file POST `/media/` takes, in bytes; larger is a 413. Default 10485760 (10 MiB). */
  mediaMaxBytes?: number
  /**
   * What the OpenAPI operationIds of this mount start with: `admin` gives `admin.list`,
   * `admin.get`... Default the table's name (`movie.list`); for a table mounted again in the
   * application, the mount's path (`api.admin.movies.list`). See docs/openapi.md.
   */
  operationIdPrefix?: string
  /**
   * Database-enforced row security (SPEC §8.6): each statement of a request runs in a
   * transaction that first does `SELECT set_config('request.claims', <JSON of this>, true)`, so
   * PostgreSQL's row-level security policies decide (`current_setting('request.claims', true)`).
   */
  claims?: Claims
  /** With `claims`, the role each transaction takes (`SET LOCAL ROLE`): one the policies apply to, not the table's owner. */
  role?: string
  /**
   * Row scope (SPEC §8.6): the conditions every row this mount reads or writes must meet, for
   * this request: `{ owner: request.user.id }` (column → value, ANDed) or a tree string of SPEC
   * §8.2. ANDed with the table definition's own `scope`. Out of it: 404 on `/:id/`, 403
   * `TABLECRUD_ERR_OUT_OF_SCOPE` for a write whose row would leave it.
   */
  scope?: ScopeFunction<FastifyRequest>
}

const HOOK_TYPES = new Set(['preSave', 'prePatch', 'preDelete'])

/** The options with their defaults filled in, as checked at registration. */
type Optional = 'schemaExtra' | 'validators' | 'maxExportRows' | 'cursorSecret' | 'operationIdPrefix' | 'claims' | 'role' | 'scope' | keyof PoolOptions
export type CheckedOptions = Required<Omit<TableCrudOptions, Optional>> & Pick<TableCrudOptions, Optional>

function fail (option: string, problem: string): never {
  throw optionError('tableCrud', option, problem)
}

export function checkOptions (options: TableCrudOptions): CheckedOptions {
  if (!isTable(options.table)) fail('table', 'must be a table made by defineTable')
  const bool = (name: keyof TableCrudOptions, fallback: boolean): boolean => {
    const value = options[name] ?? fallback
    if (typeof value !== 'boolean') fail(name, 'must be a boolean')
    return value
  }
  const int = (name: keyof TableCrudOptions, fallback: number, min: number): number => {
    const value = options[name] ?? fallback
    if (!Number.isInteger(value) || (value as number) < min) fail(name, `must be an integer of ${min} or more`)
    return value as number
  }
  const checked = {
    table: options.table,
    readOnly: bool('readOnly', true),
    allowBulkDelete: bool('allowBulkDelete', false),
    allowBulkUpdate: bool('allowBulkUpdate', false),
    maxAffected: int('maxAffected', 1000, 1),
    nestedWrites: nestedWrites(options.nestedWrites),
    excludeSecrets: bool('excludeSecrets', true),
    requireIfMatch: bool('requireIfMatch', false),
    aggregates: bool('aggregates', false),
    pageSize: int('pageSize', 15, 1),
    maxPageSize: int('maxPageSize', 1000, 1),
    maxJoins: int('maxJoins', 0, 0),
    maxEmbedRows: int('maxEmbedRows', 100, 1),
    queryTimeout: int('queryTimeout', 30000, 1),
    mediaStorage: checkMediaStorage(options.table, options.mediaStorage),
    mediaMaxBytes: int('mediaMaxBytes', MEDIA_MAX_BYTES, 1),
    hooks: options.hooks ?? [],
    validators: options.validators,
    schemaExtra: options.schemaExtra,
    countMode: options.countMode ?? 'exact',
    exactCountLimit: int('exactCountLimit', 100000, 0),
    maxExportRows: options.maxExportRows === undefined ? undefined : int('maxExportRows', 0, 1),
    cursorSecret: options.cursorSecret,
    operationIdPrefix: options.operationIdPrefix,
    scope: options.scope,
    pg: options.pg,
    pool: options.pool,
    ...claimsOptions(options)
  }
  if (checked.scope !== undefined && typeof checked.scope !== 'function') fail('scope', 'must be a function (request) => conditions')
  if (checked.countMode !== 'exact' && checked.countMode !== 'estimated') fail('countMode', "must be 'exact' or 'estimated'")
  if (checked.cursorSecret !== undefined && (typeof checked.cursorSecret !== 'string' || checked.cursorSecret.length < 16)) fail('cursorSecret', 'must be a string of 16 characters or more')
  if (checked.pageSize > checked.maxPageSize) fail('pageSize', 'must not exceed maxPageSize')
  if (!Array.isArray(checked.hooks)) fail('hooks', 'must be an array')
  for (const hook of checked.hooks) {
    if (!HOOK_TYPES.has(hook?.hookType) || typeof hook.callable !== 'function') fail('hooks', 'must hold only { hookType: preSave | prePatch | preDelete, callable: function }')
  }
  checkValidators(options.validators)
  const extra = options.schemaExtra
  if (extra !== undefined && (typeof extra !== 'object' || extra === null || Array.isArray(extra))) fail('schemaExtra', 'must be an object')
  return checked
}

/** The names only; that each is a to-many relation is checked where relations are known (nested.ts). */
function nestedWrites (names: unknown): readonly string[] {
  if (names === undefined) return []
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) fail('nestedWrites', 'must be an array of relation names')
  return Object.freeze([...new Set(names as string[])])
}

/** `claims` and `role`, checked: a function, and a role only beside it. */
function claimsOptions ({ claims, role }: TableCrudOptions): Pick<TableCrudOptions, 'claims' | 'role'> {
  if (claims !== undefined && typeof claims !== 'function') fail('claims', 'must be a function (request) => object')
  if (role !== undefined && (typeof role !== 'string' || role === '')) fail('role', 'must be the name of a database role')
  if (role !== undefined && claims === undefined) fail('role', 'takes effect with claims only')
  return { claims, role }
}

function checkValidators (validators: Validators | undefined): void {
  if (validators === undefined) return
  if (typeof validators !== 'object' || validators === null) fail('validators', 'must be an object')
  for (const [name, list] of Object.entries(validators)) {
    if (name === 'extraContext') {
      if (typeof list !== 'object' || list === null) fail('validators.extraContext', 'must be an object')
    } else if (!(OPERATIONS as readonly string[]).includes(name)) {
      fail(`validators.${name}`, `is not a validator list: use ${OPERATIONS.join(', ')}`)
    } else if (!Array.isArray(list) || !list.every((v) => typeof v === 'function')) {
      fail(`validators.${name}`, 'must be an array of functions')
    }
  }
}
