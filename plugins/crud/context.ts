import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify'
import type { Ajv } from 'ajv'
import { HttpError, TABLECRUD_ERR_HOOK, TABLECRUD_ERR_VALIDATION } from '../../lib/errors.js'
import { queryContext, withScopes, type Filter, type QueryContext } from '../../lib/query/parse.js'
import { NO_SCOPES, parseScope, scopesOf, UNRESOLVED_SCOPES, type ScopeFunction } from '../../lib/query/scope.js'
import { hopsOf } from '../../lib/table/relations.js'
import { tablesDefined, type Table } from '../../lib/table/table.js'
import { byStatus, errorResponses, type ErrorStatus } from '../../schemas/responses.js'
import { rowSchema } from '../../schemas/row.js'
import type { Database } from '../../lib/db/port.js'
import { databaseHelper } from '../database.js'
import { claimOperationIds } from '../operation-ids.js'
import { bodyAjv } from './compilers.js'
import { withValidatorQuery } from './validator-query.js'
import { claimsDatabase } from './claims.js'
import { OPERATIONS, type CheckedOptions, type Crud, type Hook, type Operation, type ValidatorRequest } from './options.js'

type RouteSchema = FastifySchema & { response: Record<number, unknown> }

type HooksOf<T extends Hook['hookType']> = ReadonlyArray<Extract<Hook, { hookType: T }>>

/** What every route file of one TableCRUD registration shares, built once at registration. */
export interface CrudContext {
  readonly fastify: FastifyInstance
  readonly table: Table
  readonly options: CheckedOptions
  /** What validators get (SPEC §2.9). */
  readonly crud: Crud
  /**
   * What the query parser gets. Its row scopes are unresolved: a statement compiled with it
   * throws, so every route compiles with `scoped(request)`'s.
   */
  readonly query: QueryContext
  /**
   * What the SQL compilers get: the context under the request's row scopes (SPEC §8.6); a route
   * asks once per request. Without a scoped table, the one context itself, not a promise of it.
   */
  readonly scoped: (request: FastifyRequest) => QueryContext | Promise<QueryContext>
  readonly db: Database
  /** The one Ajv bodies are checked by (compilers.ts). */
  readonly ajv: Ajv
  readonly hooks: { readonly preSave: HooksOf<'preSave'>, readonly prePatch: HooksOf<'prePatch'>, readonly preDelete: HooksOf<'preDelete'> }
  /** Runs the validators of an operation, then `every`; undefined, not a promise, where there are none. */
  readonly validate: (operation: Operation, request: FastifyRequest) => Promise<void> | undefined
  /** Whether any validator runs for `operation` (its own or `every`). */
  readonly validated: (operation: Operation) => boolean
  /** The response schema of a row. */
  readonly schemas: { readonly row: ReturnType<typeof rowSchema> }
  /**
   * The schema of the route of `operation`, with the table's tag, a stable `operationId`
   * (`<table>.<name>`, docs/openapi.md) and an error response for each of `statuses`, and for
   * a 400 and a 403 when validators guard the operation (SPEC §2.9).
   */
  readonly routeSchema: (operation: Operation, name: string, statuses: readonly ErrorStatus[], schema: RouteSchema) => RouteSchema
  readonly queryOptions: { excludeSecrets: boolean, maxJoins: number, maxPageSize: number, maxEmbedRows: number }
}

export function crudContext (fastify: FastifyInstance, options: CheckedOptions): CrudContext {
  const { table, excludeSecrets, maxJoins } = options
  const crud: Crud = Object.freeze({
    table,
    readOnly: options.readOnly,
    allowBulkDelete: options.allowBulkDelete,
    pageSize: options.pageSize,
    maxPageSize: options.maxPageSize,
    excludeSecrets,
    maxJoins
  })
  const operationIds = claimOperationIds(fastify, 'tableCrud', table.name, options.operationIdPrefix)
  // A write that a row scope may refuse (SPEC §8.6): its 403 is documented.
  const scopedWrite = (operation: Operation): boolean => (options.scope !== undefined || table.scope !== null) && SCOPED_WRITES.has(operation)
  // A validator may refuse any operation (403); with claims, a row-level security policy a write.
  const validated = (operation: Operation): boolean => (options.validators?.[operation]?.length ?? 0) + (options.validators?.every?.length ?? 0) > 0
  const guardedBy = (operation: Operation): boolean => validated(operation) || (options.claims !== undefined && POLICY_CHECKED.has(operation))
  const hooksOf = <T extends Hook['hookType']>(type: T): HooksOf<T> => options.hooks.filter((h): h is Extract<Hook, { hookType: T }> => h.hookType === type)
  const query = queryContext(table, { ...options, scopes: UNRESOLVED_SCOPES })
  return {
    fastify,
    table,
    options,
    crud,
    query,
    scoped: scopedContexts(query, options.scope),
    db: claimed(fastify, databaseHelper(fastify, 'tableCrud', { queryTimeout: options.queryTimeout, pg: options.pg, pool: options.pool }), options),
    ajv: bodyAjv,
    hooks: { preSave: hooksOf('preSave'), prePatch: hooksOf('prePatch'), preDelete: hooksOf('preDelete') },
    validate: validatorsOf(crud, options),
    validated,
    schemas: {
      row: rowSchema(table, excludeSecrets, maxJoins)
    },
    routeSchema: (operation, name, statuses, schema) => ({
      tags: [table.name],
      operationId: `${operationIds}.${name}`,
      ...schema,
      response: byStatus({ ...schema.response, ...errorResponses([...statuses, ...(guardedBy(operation) ? [400, 403] as const : []), ...(scopedWrite(operation) ? [403] as const : [])]) })
    }),
    queryOptions: { excludeSecrets, maxJoins, maxPageSize: options.maxPageSize, maxEmbedRows: options.maxEmbedRows }
  }
}

/** The writes whose new row a `WITH CHECK` policy may refuse (403 TABLECRUD_ERR_DB_ROW_POLICY). */
const POLICY_CHECKED: ReadonlySet<Operation> = new Set(['postSingle', 'putSingle', 'patchSingle'])

/** The mount's database, through its claims (SPEC §8.6) when it has them. */
function claimed (fastify: FastifyInstance, db: Database, { claims, role }: CheckedOptions): Database {
  return claims === undefined ? db : claimsDatabase(fastify, db, claims, role ?? null)
}

/**
 * The tables a statement of a mount of `table` may read, with a scope: the table (when the
 * mount or the definition scopes it) and every table its relations reach whose definition
 * does. Kept until another table is defined, as relations are.
 */
function scopedTables (table: Table, mountScope: boolean): () => readonly Table[] {
  let known = -1
  let found: readonly Table[] = []
  return () => {
    if (known === tablesDefined()) return found
    const seen = new Set<Table>([table])
    const queue = [table]
    for (let current = queue.shift(); current !== undefined; current = queue.shift()) {
      for (const relation of hopsOf(current)) {
        const next = [relation.to, relation.junction?.table].filter((t): t is Table => t !== undefined && !seen.has(t))
        next.forEach((t) => seen.add(t))
        queue.push(...next)
      }
    }
    known = tablesDefined()
    found = [...seen].filter((t) => t.scope !== null || (t === table && mountScope))
    return found
  }
}

/**
 * The request's context for the SQL compilers: each scoped table's scope function called (the
 * mount's ANDed with its table's), its answer read as filters. A route asks once per request.
 */
function scopedContexts (query: QueryContext, mountScope: ScopeFunction<FastifyRequest> | undefined): CrudContext['scoped'] {
  const tables = scopedTables(query.table, mountScope !== undefined)
  const call = async (scope: (request: FastifyRequest) => unknown, table: Table, request: FastifyRequest): Promise<Filter[]> =>
    parseScope(table, await guarded(async () => await scope(request), (error) => error as Error))
  // Without a scoped table, every request's context is the same one: built once, not per request.
  const unscoped = withScopes(query, NO_SCOPES)
  const scopedBy = async (scoped: readonly Table[], request: FastifyRequest): Promise<QueryContext> => {
    const byTable = new Map<Table, Filter[]>()
    for (const table of scoped) {
      const own = table.scope === null ? [] : await call(table.scope, table, request)
      const mount = table === query.table && mountScope !== undefined ? await call(mountScope, table, request) : []
      byTable.set(table, [...own, ...mount])
    }
    return withScopes(query, scopesOf(byTable))
  }
  // Not async: an unscoped request (most) gets its context without a promise made and awaited.
  return (request) => {
    const scoped = tables()
    return scoped.length === 0 ? unscoped : scopedBy(scoped, request)
  }
}

const SCOPED_WRITES: ReadonlySet<Operation> = new Set<Operation>(['postSingle', 'putSingle', 'patchSingle', 'patchAll'])

function validatorsOf (crud: Crud, options: CheckedOptions): CrudContext['validate'] {
  const validators = options.validators ?? {}
  const extraContext = validators.extraContext ?? {}
  // Each operation's own validators, then `every` (SPEC §2.9), listed once here rather than per request.
  const lists = new Map(OPERATIONS.map((op) => [op, [...(op === 'every' ? [] : validators[op] ?? []), ...(validators.every ?? [])]]))
  // Not async: an operation without validators (most) costs no promise.
  return (operation, request) => {
    const list = lists.get(operation)!
    if (list.length === 0) return undefined
    // One shape of request.query for every operation (issue 27): the query string as sent.
    return withValidatorQuery(request, async () => {
      for (const validator of list) await guarded(async () => await validator(crud, request as ValidatorRequest, extraContext), () => new TABLECRUD_ERR_VALIDATION())
    })
  }
}

/**
 * Runs a validator or hook: an error carrying `statusCode` answers with that status and its
 * message (SPEC §2.9, §2.10); any other becomes `otherwise`.
 */
export async function guarded<T> (fn: () => Promise<T>, otherwise: (error: unknown) => Error): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    const { statusCode: status, code, message } = error as { statusCode?: unknown, code?: unknown, message?: unknown }
    if (typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 600) {
      throw new HttpError(status, String(message), typeof code === 'string' ? code : undefined)
    }
    throw otherwise(error)
  }
}

/** A hook's error without a status: a 400 carrying its message (SPEC §2.10). */
export const hookError = (error: unknown): Error => new TABLECRUD_ERR_HOOK(error instanceof Error ? error.message : String(error))
