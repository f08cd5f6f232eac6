import type { FastifyRequest } from 'fastify'
import { isTable, type Table } from '../lib/table/table.js'

/** The options of `tableCrud`, their types and their checks at registration (SPEC §2.1). */

export type Row = Record<string, unknown>

/** What validators get as their first argument: the table and the options in force. */
export interface Crud {
  readonly table: Table
  readonly readOnly: boolean
  readonly allowBulkDelete: boolean
  readonly pageSize: number
  readonly maxPageSize: number
  readonly excludeSecrets: boolean
  readonly maxJoins: number
}

export type Validator = (crud: Crud, request: FastifyRequest, extraContext: Record<string, unknown>) => void | Promise<void>

export const OPERATIONS = [
  'every', 'getSingle', 'putSingle', 'patchSingle', 'deleteSingle', 'postSingle', 'getAll',
  'deleteAll', 'getReferences', 'getIds', 'getNew', 'getSchema', 'getCount'
] as const
export type Operation = Exclude<typeof OPERATIONS[number], 'every'>

export type Validators = { [K in typeof OPERATIONS[number]]?: Validator[] } & { extraContext?: Record<string, unknown> }

export interface HookContext { request: FastifyRequest }
export type Hook =
  | { hookType: 'preSave', callable: (row: Row, context: HookContext) => Row | Promise<Row> }
  | { hookType: 'prePatch', callable: (id: unknown, values: Row, context: HookContext) => Row | Promise<Row> }
  | { hookType: 'preDelete', callable: (id: unknown, context: HookContext) => void | Promise<void> }

export interface TableCrudOptions {
  /** The table to expose. */
  table: Table
  /** Only GET and HEAD; other methods answer 405. Default true. */
  readOnly?: boolean
  /** DELETE `/` deletes the rows matching the filters. Default false. */
  allowBulkDelete?: boolean
  /** Rows per page by default. Default 15. */
  pageSize?: number
  /** Largest `__page_size` (and `/ids/` limit). Default 1000. */
  maxPageSize?: number
  /** Secret columns are never selected, returned or filtered on. Default true. */
  excludeSecrets?: boolean
  validators?: Validators
  /** Merged into the `extra` member of `/schema/`. */
  schemaExtra?: Record<string, unknown>
  /** Join depth allowed in `__visible_fields` and `__order`. Default 0. */
  maxJoins?: number
  hooks?: Hook[]
  /** Milliseconds a statement may take before the request is a 503. Default 30000. */
  queryTimeout?: number
}

const HOOK_TYPES = new Set(['preSave', 'prePatch', 'preDelete'])

function fail (message: string): never {
  throw new Error(`tableCrud: ${message}`)
}

export function checkOptions (options: TableCrudOptions): Required<Omit<TableCrudOptions, 'schemaExtra' | 'validators'>> & Pick<TableCrudOptions, 'schemaExtra' | 'validators'> {
  if (!isTable(options.table)) fail('`table` must be a table made by defineTable')
  const bool = (name: keyof TableCrudOptions, fallback: boolean): boolean => {
    const value = options[name] ?? fallback
    if (typeof value !== 'boolean') fail(`\`${name}\` must be a boolean`)
    return value
  }
  const int = (name: keyof TableCrudOptions, fallback: number, min: number): number => {
    const value = options[name] ?? fallback
    if (!Number.isInteger(value) || (value as number) < min) fail(`\`${name}\` must be an integer of ${min} or more`)
    return value as number
  }
  const checked = {
    table: options.table,
    readOnly: bool('readOnly', true),
    allowBulkDelete: bool('allowBulkDelete', false),
    excludeSecrets: bool('excludeSecrets', true),
    pageSize: int('pageSize', 15, 1),
    maxPageSize: int('maxPageSize', 1000, 1),
    maxJoins: int('maxJoins', 0, 0),
    queryTimeout: int('queryTimeout', 30000, 1),
    hooks: options.hooks ?? [],
    validators: options.validators,
    schemaExtra: options.schemaExtra
  }
  if (checked.pageSize > checked.maxPageSize) fail('`pageSize` must not exceed `maxPageSize`')
  if (!Array.isArray(checked.hooks)) fail('`hooks` must be an array')
  for (const hook of checked.hooks) {
    if (!HOOK_TYPES.has(hook?.hookType) || typeof hook.callable !== 'function') fail('each hook must be { hookType: preSave | prePatch | preDelete, callable: function }')
  }
  const validators = options.validators ?? {}
  if (typeof validators !== 'object' || validators === null) fail('`validators` must be an object')
  for (const [name, list] of Object.entries(validators)) {
    if (name === 'extraContext') {
      if (typeof list !== 'object' || list === null) fail('`validators.extraContext` must be an object')
    } else if (!(OPERATIONS as readonly string[]).includes(name)) {
      fail(`\`validators.${name}\` is not a validator list: use ${OPERATIONS.join(', ')}`)
    } else if (!Array.isArray(list) || !list.every((v) => typeof v === 'function')) {
      fail(`\`validators.${name}\` must be an array of functions`)
    }
  }
  const extra = options.schemaExtra
  if (extra !== undefined && (typeof extra !== 'object' || extra === null || Array.isArray(extra))) fail('`schemaExtra` must be an object')
  return checked
}
