import { STATUS_CODES } from 'node:http'
import { schemaDriftHint } from '../lib/db/check.js'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import {
  bodyInvalid, bodyOf, fromDatabaseError, httpCode, RETRY_AFTER_SECONDS, retryAfterOf, TABLECRUD_ERR_BODY_MEDIA_TYPE,
  TABLECRUD_ERR_BODY_NOT_JSON, TABLECRUD_ERR_BODY_TOO_LARGE, TABLECRUD_ERR_DB_UNAVAILABLE, TABLECRUD_ERR_INTERNAL, type FieldError
} from '../lib/errors.js'
import { databaseHealth } from './database.js'

export interface ErrorBody {
  statusCode: number
  code: string
  error: string
  message: string
  [member: string]: unknown
}

interface AjvError { instancePath: string, keyword: string, message?: string, params: Record<string, unknown> }

/** Names each failing field of a body, from Ajv's errors; `whole` names the value itself (a body, an element of one). */
export function fieldErrors (errors: readonly AjvError[], whole = '(body)'): FieldError[] {
  const seen = new Set<string>()
  const typeErrors = new Map<string, FieldError>()
  const out: FieldError[] = []
  for (const e of errors) {
    const path = e.instancePath.replace(/^\//, '').replaceAll('/', '.')
    const field = e.keyword === 'additionalProperties'
      ? [path, String(e.params.additionalProperty)].filter(Boolean).join('.')
      : e.keyword === 'required' ? [path, String(e.params.missingProperty)].filter(Boolean).join('.') : path
    const message = e.keyword === 'additionalProperties'
      ? 'is not a writable column'
      : e.keyword === 'required' ? 'is required' : String(e.message)
    const key = `${field} ${message}`
    // anyOf [type, null] reports the branch failures and then anyOf itself: one line per field,
    // "must be integer or null".
    if (e.keyword === 'anyOf' || seen.has(key)) continue
    seen.add(key)
    const sameField = e.keyword === 'type' ? typeErrors.get(field) : undefined
    if (sameField !== undefined) {
      sameField.message += ` or ${String(e.params.type)}`
      continue
    }
    const entry = { field: field === '' ? whole : field, message }
    if (e.keyword === 'type') typeErrors.set(field, entry)
    out.push(entry)
  }
  return out
}

/**
 * Turns any error into the coded error a client may see; unknown errors become a generic 500.
 * `contentType` is the request's, for the 415 message (Fastify's error does not name it).
 */
export function toClientError (error: unknown, contentType?: string): Error & { statusCode: number, code: string } {
  const e = (typeof error === 'object' && error !== null ? error : {}) as FastifyError & { validation?: AjvError[] }
  if (Array.isArray(e.validation)) {
    return bodyInvalid(fieldErrors(e.validation)) as Error & { statusCode: number, code: string }
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': return new TABLECRUD_ERR_BODY_MEDIA_TYPE(contentType === undefined ? 'none' : JSON.stringify(contentType))
    case 'FST_ERR_CTP_EMPTY_JSON_BODY': case 'FST_ERR_CTP_INVALID_JSON_BODY': case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new TABLECRUD_ERR_BODY_NOT_JSON()
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return new TABLECRUD_ERR_BODY_TOO_LARGE()
  }
  const fromDb = fromDatabaseError(error)
  if (fromDb !== undefined) return fromDb as Error & { statusCode: number, code: string }
  if (Number.isInteger(e.statusCode) && e.statusCode! >= 400 && e.statusCode! < 500 && typeof e.message === 'string') {
    return Object.assign(e, { code: typeof e.code === 'string' ? e.code : httpCode(e.statusCode!) }) as Error & { statusCode: number, code: string }
  }
  if (e.statusCode === 503 && typeof e.code === 'string' && e.code.startsWith('TABLECRUD_')) return e as Error & { statusCode: number, code: string }
  return new TABLECRUD_ERR_INTERNAL()
}

export function errorBody (error: Error & { statusCode: number, code: string }): ErrorBody {
  return {
    statusCode: error.statusCode,
    code: error.code,
    error: STATUS_CODES[error.statusCode] ?? 'Error',
    message: error.message,
    ...bodyOf(error)
  }
}

/** The request's path, without its query string: what 404 and 405 messages name. */
export function pathOf (request: FastifyRequest): string {
  const end = request.url.indexOf('?')
  return end === -1 ? request.url : request.url.slice(0, end)
}

/** Sends an error in the SPEC §1 shape (what hooks that answer early use). */
export function sendError (reply: FastifyReply, error: unknown): FastifyReply {
  const clientError = toClientError(error, reply.request?.headers['content-type'])
  if (clientError.statusCode === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS))
  const retryAfter = retryAfterOf(clientError)
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter))
  return reply.code(clientError.statusCode).type('application/json; charset=utf-8').send(errorBody(clientError))
}

const DB_UNAVAILABLE = new TABLECRUD_ERR_DB_UNAVAILABLE().code

/** The table of each TableCRUD context, for the log line of a missing column (its SQL names tables by alias). */
const contextTables = new WeakMap<object, string>()

export function recordContextTable (context: object, table: string): void {
  contextTables.set(context, table)
}

/**
 * The error handler of every context this library owns: coded errors pass through, Fastify's
 * body errors and database errors are mapped, anything else is a generic 500 whose detail
 * goes to the log only. A 503 is expected while the database is away: it is counted by the
 * application's DatabaseHealth (a few warn lines per outage), not logged one by one. A media
 * store's outage (a 503 too) is logged at error with its cause: it is not the database's.
 */
export function errorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const clientError = toClientError(error, request.headers['content-type'])
  // A table or column missing in the database (42P01, 42703) is named, with the command that lists the differences.
  if (clientError.code === DB_UNAVAILABLE) databaseHealth(request.server).failed(error)
  else if (clientError.statusCode >= 500) request.log.error({ err: error }, schemaDriftHint(error, contextTables.get(request.server)) ?? 'request failed')
  sendError(reply, clientError)
}
