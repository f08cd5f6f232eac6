import createError, { type FastifyErrorConstructor } from '@fastify/error'

/**
 * Every error a client can see, in one place (SPEC §1). Each constant's name is its code; each
 * declares its status. `docs/errors.md` lists every code (a test checks it).
 */

/** One argument per `%s` of a message: a constructor takes exactly as many as its message shows, then an optional `{ cause }`. */
type Placeholders<M extends string> = M extends `${string}%s${infer Rest}` ? [unknown, ...Placeholders<Rest>] : []
type ArgsOf<M extends string> = [...Placeholders<M>, { cause: unknown }?]

const make = <C extends string, M extends string, S extends number> (code: C, message: M, status: S): FastifyErrorConstructor<{ code: C, statusCode: S }, ArgsOf<M>> =>
  createError<C, S, ArgsOf<M>>(code, message, status)

// Query string (400)
export const TABLECRUD_ERR_QS_UNKNOWN_FIELD = make('TABLECRUD_ERR_QS_UNKNOWN_FIELD', "%s isn't a valid field name.%s", 400)
export const TABLECRUD_ERR_QS_UNKNOWN_OPERATOR = make('TABLECRUD_ERR_QS_UNKNOWN_OPERATOR', '%s is not an operator: use one of %s.', 400)
export const TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE = make('TABLECRUD_ERR_QS_OPERATOR_NOT_APPLICABLE', 'The operator %s does not apply to %s (type %s).', 400)
export const TABLECRUD_ERR_QS_UNKNOWN_MATCH = make('TABLECRUD_ERR_QS_UNKNOWN_MATCH', '%s is not a match type: use one of contains, exact, starts, ends.', 400)
export const TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE = make('TABLECRUD_ERR_QS_MATCH_NOT_APPLICABLE', '%s__match applies to text columns only.', 400)
export const TABLECRUD_ERR_QS_INVALID_VALUE = make('TABLECRUD_ERR_QS_INVALID_VALUE', 'The value %s of %s is not a valid %s.', 400)
export const TABLECRUD_ERR_QS_MISSING_VALUE = make('TABLECRUD_ERR_QS_MISSING_VALUE', '%s__operator=%s needs a value for %s.', 400)
export const TABLECRUD_ERR_QS_REPEATED = make('TABLECRUD_ERR_QS_REPEATED', '%s is given more than once.', 400)
export const TABLECRUD_ERR_QS_TOO_MANY_VALUES = make('TABLECRUD_ERR_QS_TOO_MANY_VALUES', '%s is given more than %s times.', 400)
export const TABLECRUD_ERR_QS_INVALID_PAGE = make('TABLECRUD_ERR_QS_INVALID_PAGE', '__page must be an integer of 1 or more.', 400)
export const TABLECRUD_ERR_QS_INVALID_PAGE_SIZE = make('TABLECRUD_ERR_QS_INVALID_PAGE_SIZE', '__page_size must be an integer from 1 to %s.', 400)
export const TABLECRUD_ERR_QS_INVALID_BOOLEAN = make('TABLECRUD_ERR_QS_INVALID_BOOLEAN', '%s must be true or false.', 400)
export const TABLECRUD_ERR_QS_MAX_JOIN_DEPTH = make('TABLECRUD_ERR_QS_MAX_JOIN_DEPTH', 'Max join depth exceeded', 400)
export const TABLECRUD_ERR_QS_INVALID_NUMBER = make('TABLECRUD_ERR_QS_INVALID_NUMBER', '%s must be a non-negative integer.', 400)
export const TABLECRUD_ERR_QS_MISSING_FILTER = make('TABLECRUD_ERR_QS_MISSING_FILTER', 'A bulk delete needs at least one filter; to delete every row, filter on the primary key with not_null.', 400)
export const TABLECRUD_ERR_QS_INVALID_STRING = make('TABLECRUD_ERR_QS_INVALID_STRING', '%s must be a string without NUL characters.', 400)
export const TABLECRUD_ERR_QS_INVALID_CURSOR = make('TABLECRUD_ERR_QS_INVALID_CURSOR', "The cursor doesn't match this query.", 400)
export const TABLECRUD_ERR_QS_CURSOR_WITH_PAGE = make('TABLECRUD_ERR_QS_CURSOR_WITH_PAGE', '__cursor and __page cannot be used together.', 400)
export const TABLECRUD_ERR_QS_INVALID_TREE = make('TABLECRUD_ERR_QS_INVALID_TREE', '%s: %s at %s.', 400)
export const TABLECRUD_ERR_QS_SEARCH_UNAVAILABLE = make('TABLECRUD_ERR_QS_SEARCH_UNAVAILABLE', '__search needs full-text search, and the table %s has none (its search option).', 400)
export const TABLECRUD_ERR_QS_INVALID_AGGREGATE = make('TABLECRUD_ERR_QS_INVALID_AGGREGATE', '__aggregate item %s: %s.', 400)
export const TABLECRUD_ERR_QS_INVALID_GROUP_BY = make('TABLECRUD_ERR_QS_INVALID_GROUP_BY', '__group_by item %s: %s.', 400)
export const TABLECRUD_ERR_QS_OUTPUT_CLASH = make('TABLECRUD_ERR_QS_OUTPUT_CLASH', 'Two outputs of __group_by, __aggregate and __readable are named %s.', 400)
export const TABLECRUD_ERR_QS_INVALID_EMBED_PAGE_SIZE = make('TABLECRUD_ERR_QS_INVALID_EMBED_PAGE_SIZE', '%s must be an integer from 1 to %s.', 400)
export const TABLECRUD_ERR_QS_ORDER_TO_MANY = make('TABLECRUD_ERR_QS_ORDER_TO_MANY', "%s goes through the to-many relation %s: rows can't be sorted by it; sort the embedded rows with %s.__order.", 400)
export const TABLECRUD_ERR_QS_INVALID_FORMAT = make('TABLECRUD_ERR_QS_INVALID_FORMAT', '__format must be json, ndjson or csv.', 400)
export const TABLECRUD_ERR_QS_INVALID_CONFLICT = make('TABLECRUD_ERR_QS_INVALID_CONFLICT', '__on_conflict must name the primary key or a unique column of %s (%s), not %s.', 400)
export const TABLECRUD_ERR_QS_INVALID_MAX_AFFECTED = make('TABLECRUD_ERR_QS_INVALID_MAX_AFFECTED', '__max_affected must be an integer from 1 to %s.', 400)

// Writes of many rows (SPEC §8.5)
export const TABLECRUD_ERR_TOO_MANY_ROWS = make('TABLECRUD_ERR_TOO_MANY_ROWS', 'Too many rows would change.', 400)

// Path and route
export const TABLECRUD_ERR_ID_INVALID = make('TABLECRUD_ERR_ID_INVALID', 'The ID is invalid', 400)
export const TABLECRUD_ERR_ROW_NOT_FOUND = make('TABLECRUD_ERR_ROW_NOT_FOUND', 'No %s row has the id %s.', 404)
export const TABLECRUD_ERR_ROUTE_NOT_FOUND = make('TABLECRUD_ERR_ROUTE_NOT_FOUND', 'Route %s:%s not found', 404)
export const TABLECRUD_ERR_METHOD_NOT_ALLOWED = make('TABLECRUD_ERR_METHOD_NOT_ALLOWED', '%s is not allowed on %s.', 405)

// Conditional requests (SPEC §7.3)
export const TABLECRUD_ERR_PRECONDITION_FAILED = make('TABLECRUD_ERR_PRECONDITION_FAILED', 'The row has changed since it was read.', 412)
export const TABLECRUD_ERR_PRECONDITION_REQUIRED = make('TABLECRUD_ERR_PRECONDITION_REQUIRED', 'This write needs an If-Match header holding the ETag of the row.', 428)
// HTTP the server could not parse, answered on the socket (errorShape's clientError handling)
export const TABLECRUD_ERR_BAD_REQUEST = make('TABLECRUD_ERR_BAD_REQUEST', 'The request is not valid HTTP: %s.', 400)
export const TABLECRUD_ERR_HEADERS_TOO_LARGE = make('TABLECRUD_ERR_HEADERS_TOO_LARGE', 'The request line and headers are over the limit of %s bytes.', 431)
export const TABLECRUD_ERR_REQUEST_TIMEOUT = make('TABLECRUD_ERR_REQUEST_TIMEOUT', 'The request was not received in time.', 408)

// Bodies
export const TABLECRUD_ERR_BODY_INVALID = make('TABLECRUD_ERR_BODY_INVALID', 'The body is invalid: %s', 400)
export const TABLECRUD_ERR_BODY_NOT_JSON = make('TABLECRUD_ERR_BODY_NOT_JSON', 'The body is not valid JSON.', 400)
export const TABLECRUD_ERR_BODY_MEDIA_TYPE = make('TABLECRUD_ERR_BODY_MEDIA_TYPE', 'The body must be application/json, not %s.', 415)
export const TABLECRUD_ERR_BODY_TOO_LARGE = make('TABLECRUD_ERR_BODY_TOO_LARGE', 'The body is too large.', 413)
export const TABLECRUD_ERR_BODY_ID_MISMATCH = make('TABLECRUD_ERR_BODY_ID_MISMATCH', 'The body %s differs from the id in the path.', 400)
export const TABLECRUD_ERR_BODY_ROW_COUNT = make('TABLECRUD_ERR_BODY_ROW_COUNT', 'An array body must hold 1 to %s rows, not %s.', 400)

// Registration: a bad plugin option, thrown by register(), never answered to a client
export const TABLECRUD_ERR_OPTIONS = make('TABLECRUD_ERR_OPTIONS', '%s', 500)

export const TABLECRUD_ERR_PEER_MISSING = make('TABLECRUD_ERR_PEER_MISSING', '%s needs the package %s: npm install %s', 500)

/** The error a plugin throws at registration for a bad option, naming the plugin and the option. */
export function optionError (plugin: string, option: string, problem: string): Error {
  return new TABLECRUD_ERR_OPTIONS(`${plugin}: the option ${option} ${problem}`)
}

/**
 * The same code for a set-up mistake that is not one option of a plugin: a helper's argument
 * (`createUser`'s username, `createSession`'s expiry), a missing @fastify/postgres, an
 * environment variable. The message says what and where.
 */
export function setupError (message: string): Error {
  return new TABLECRUD_ERR_OPTIONS(message)
}

// Row scopes (SPEC §8.6)
export const TABLECRUD_ERR_OUT_OF_SCOPE = make('TABLECRUD_ERR_OUT_OF_SCOPE', 'The row is outside your scope.', 403)
// A scope function's answer that names no column or holds a bad value: a set-up mistake, a 500 whose detail goes to the log
export const TABLECRUD_ERR_SCOPE_INVALID = make('TABLECRUD_ERR_SCOPE_INVALID', 'The scope of %s is invalid: %s', 500)

// Validators and hooks
export const TABLECRUD_ERR_VALIDATION = make('TABLECRUD_ERR_VALIDATION', 'Validation error', 400)
export const TABLECRUD_ERR_HOOK = make('TABLECRUD_ERR_HOOK', '%s', 400)

// Media storage (SPEC §5.8)
export const TABLECRUD_ERR_MEDIA = make('TABLECRUD_ERR_MEDIA', '%s', 400)
export const TABLECRUD_ERR_MEDIA_BODY_TYPE = make('TABLECRUD_ERR_MEDIA_BODY_TYPE', 'The body must be multipart/form-data, not %s.', 415)
export const TABLECRUD_ERR_MEDIA_TOO_LARGE = make('TABLECRUD_ERR_MEDIA_TOO_LARGE', 'The file is larger than %s bytes.', 413)
export const TABLECRUD_ERR_MEDIA_NOT_FOUND = make('TABLECRUD_ERR_MEDIA_NOT_FOUND', 'No file has the key %s.', 404)
export const TABLECRUD_ERR_MEDIA_EXISTS = make('TABLECRUD_ERR_MEDIA_EXISTS', 'A file with the key %s already exists.', 409)
export const TABLECRUD_ERR_MEDIA_UNAVAILABLE = make('TABLECRUD_ERR_MEDIA_UNAVAILABLE', 'The media storage is unavailable; try again shortly.', 503)
// Registration, like TABLECRUD_ERR_OPTIONS, with the sentence SPEC §5.8 gives word for word
export const TABLECRUD_ERR_MEDIA_COLUMN = make('TABLECRUD_ERR_MEDIA_COLUMN', 'The column must be a Varchar, Text, or Array.', 500)

// Database
export const TABLECRUD_ERR_DB_UNIQUE = make('TABLECRUD_ERR_DB_UNIQUE', '%s', 422)
export const TABLECRUD_ERR_DB_FOREIGN_KEY = make('TABLECRUD_ERR_DB_FOREIGN_KEY', '%s', 422)
export const TABLECRUD_ERR_DB_NOT_NULL = make('TABLECRUD_ERR_DB_NOT_NULL', '%s', 422)
export const TABLECRUD_ERR_DB_CHECK = make('TABLECRUD_ERR_DB_CHECK', '%s', 422)
export const TABLECRUD_ERR_DB_DATA = make('TABLECRUD_ERR_DB_DATA', '%s', 400)
export const TABLECRUD_ERR_DB_UNAVAILABLE = make('TABLECRUD_ERR_DB_UNAVAILABLE', 'The database is unavailable; try again shortly.', 503)
export const TABLECRUD_ERR_INTERNAL = make('TABLECRUD_ERR_INTERNAL', 'Internal Server Error', 500)

/**
 * The codes made at run time rather than by a constant above, with the status docs/errors.md
 * gives each: the registry's other half, checked against the docs like the constants.
 */
export const DYNAMIC_CODES = Object.freeze({
  /** `HttpError`'s default: validators and hooks refusing with a status of their choosing. */
  TABLECRUD_ERR_REFUSED: "the thrower's",
  /** A 4xx error from elsewhere (another plugin, Fastify) without a code of its own. */
  'TABLECRUD_ERR_HTTP_<status>': '4xx'
} as const)

export const REFUSED_CODE = 'TABLECRUD_ERR_REFUSED' satisfies keyof typeof DYNAMIC_CODES

/** The code of an uncoded 4xx error: `TABLECRUD_ERR_HTTP_<status>`. */
export function httpCode (status: number): string {
  return `TABLECRUD_ERR_HTTP_${status}`
}

/** Seconds a client is asked to wait after a 503. */
export const RETRY_AFTER_SECONDS = 5

/**
 * What validators and hooks throw to answer with a status of their choosing.
 * @example throw new HttpError(403, 'Superusers only')
 */
export class HttpError extends Error {
  readonly statusCode: number
  readonly code: string
  constructor (statusCode: number, message: string, code: string = REFUSED_CODE) {
    super(message)
    this.name = 'HttpError'
    this.statusCode = statusCode
    this.code = code
  }
}

/** Attaches extra members of the error body (`validFields`, `details`, ...), replacing any attached before. */
export function withBody<E extends Error> (error: E, body: Record<string, unknown>): E {
  Object.defineProperty(error, 'body', { value: body, enumerable: false, configurable: true })
  return error
}

/**
 * The 429 of an account whose wrong MFA codes reached the limit (issue 27), carrying when to try
 * again for `Retry-After`.
 */
export function mfaLocked (seconds: number): Error {
  return Object.assign(new TABLECRUD_ERR_MFA_LOCKED(seconds), { retryAfter: seconds })
}

/** The seconds an error says to wait (its `Retry-After`), or undefined. */
export function retryAfterOf (error: unknown): number | undefined {
  const seconds = (error as { retryAfter?: unknown }).retryAfter
  return typeof seconds === 'number' ? seconds : undefined
}

/** A failing field of a body; `index` is the element's in an array body (SPEC §7.4). */
export interface FieldError {
  index?: number
  field: string
  message: string
}

/**
 * The 400 of a body failing validation: every failing field in `errors` and in the message. In
 * an array body each names its element (`[3] name is required`), and `details.indexes` lists
 * the failing elements.
 */
export function bodyInvalid (errors: readonly FieldError[]): Error {
  const text = errors.map((e) => `${e.index === undefined ? '' : `[${e.index}] `}${e.field} ${e.message}`).join('; ')
  const indexes = [...new Set(errors.flatMap((e) => e.index === undefined ? [] : [e.index]))]
  return withBody(new TABLECRUD_ERR_BODY_INVALID(text), indexes.length === 0 ? { errors } : { errors, details: { indexes } })
}

export function bodyOf (error: unknown): Record<string, unknown> | undefined {
  return (error as { body?: Record<string, unknown> }).body
}

/**
 * What an error from pg (or any thrown value) says of itself, read once with its types checked:
 * `code` is a SQLSTATE for an error the server answered, a Node code (`ECONNREFUSED`) for a
 * socket's, a library's own (`FAST_JWT_EXPIRED`, `ERR_PARSE_ARGS_...`), or null.
 */
export interface DatabaseErrorFacts {
  readonly code: string | null
  readonly message: string
  /** The server's severity (`ERROR`, `FATAL`, `PANIC`); null when the server did not answer. */
  readonly severity: string | null
  readonly constraint: string | null
  readonly column: string | null
  readonly detail: string | null
}

/** The facts of any thrown value: the one place an unknown error's `code` and friends are read. */
export function errorFacts (error: unknown): DatabaseErrorFacts {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>
  const text = (key: string): string | null => typeof fields[key] === 'string' ? fields[key] : null
  return {
    code: text('code'),
    message: text('message') ?? String(error),
    severity: text('severity'),
    constraint: text('constraint'),
    column: text('column'),
    detail: text('detail')
  }
}

/** The code of any thrown value (a SQLSTATE, a Node or library code), or null. */
export function errorCode (error: unknown): string | null {
  return errorFacts(error).code
}

/** Error codes of a server that cannot be reached (the database's, or a media store's). */
export const CONNECTION_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN'])
const CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection terminated unexpectedly|Cannot use a pool after calling end)/

/**
 * SQLSTATE 0A000 `cached plan must not change result type`: a named prepared statement whose
 * result type an online migration changed. Nothing was executed; the statement, prepared
 * afresh, succeeds.
 */
export function isStalePlan (error: unknown): boolean {
  const { code, message } = errorFacts(error)
  return code === '0A000' && message.startsWith('cached plan must not change result type')
}

const KEY_DETAIL = /^Key \((.+?)\)=/

function columnsOf (error: DatabaseErrorFacts): string[] | undefined {
  if (error.column !== null) return [error.column]
  const key = KEY_DETAIL.exec(error.detail ?? '')
  return key === null ? undefined : key[1]!.split(', ').map((c) => c.replace(/^"|"$/g, ''))
}

/**
 * Maps an error from pg to a coded HTTP error, or returns undefined when it is not one:
 * constraint violations are 422s naming the constraint and columns, data errors 400s, and
 * anything that says the database cannot answer now a 503.
 */
export function fromDatabaseError (error: unknown): Error | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const e = errorFacts(error)
  const sqlstate = e.code ?? ''
  // "Failing row contains (...)" lists every value of the row, secret columns included: not for clients.
  const detail = e.detail !== null && KEY_DETAIL.test(e.detail) ? e.detail : null
  const constraintError = (Ctor: FastifyErrorConstructor<{ code: string }, ArgsOf<'%s'>>): Error => withBody(new Ctor(e.message), {
    details: { constraint: e.constraint, columns: columnsOf(e) ?? [], detail }
  })
  switch (sqlstate) {
    case '23505': return constraintError(TABLECRUD_ERR_DB_UNIQUE)
    case '23503': case '23001': return constraintError(TABLECRUD_ERR_DB_FOREIGN_KEY)
    case '23502': return constraintError(TABLECRUD_ERR_DB_NOT_NULL)
    case '23514': case '23P01': return constraintError(TABLECRUD_ERR_DB_CHECK)
  }
  // 21000: an upsert whose rows name one conflicting row twice (two spellings of one value).
  // 54000: a value over a limit of the database's, such as text too long for a unique
  // column's index (a limit on its compressed size, which no check before the query can know).
  if (sqlstate.startsWith('22') || sqlstate === '21000' || sqlstate === '54000') return new TABLECRUD_ERR_DB_DATA(e.message)
  // A write a row-level security policy refuses (a claims mount, SPEC §8.6); any other 42501 (a missing GRANT) is the integrator's bug.
  if (sqlstate === '42501' && e.message.startsWith('new row violates row-level security policy')) return new TABLECRUD_ERR_DB_ROW_POLICY()
  if (sqlstate.startsWith('08') || sqlstate.startsWith('53') || sqlstate.startsWith('57') ||
      sqlstate === '40001' || sqlstate === '40P01' || isStalePlan(e) || CONNECTION_CODES.has(sqlstate) ||
      CONNECTION_MESSAGES.test(e.message)) {
    return new TABLECRUD_ERR_DB_UNAVAILABLE()
  }
  return undefined
}

// Authentication (SPEC §3); the 401 messages are the wire contract, word for word
export const TABLECRUD_ERR_AUTH_NO_CREDENTIALS = make('TABLECRUD_ERR_AUTH_NO_CREDENTIALS', 'No credentials were found.', 401)
export const TABLECRUD_ERR_AUTH_BAD_CREDENTIALS = make('TABLECRUD_ERR_AUTH_BAD_CREDENTIALS', 'The credentials were incorrect', 401)
export const TABLECRUD_ERR_AUTH_LOGIN_FAILED = make('TABLECRUD_ERR_AUTH_LOGIN_FAILED', 'Login failed', 401)
export const TABLECRUD_ERR_AUTH_HEADER_MISSING = make('TABLECRUD_ERR_AUTH_HEADER_MISSING', 'The Authorization header is missing.', 401)
export const TABLECRUD_ERR_AUTH_HEADER_FORMAT = make('TABLECRUD_ERR_AUTH_HEADER_FORMAT', 'The header is in the wrong format.', 401)
export const TABLECRUD_ERR_AUTH_TOKEN_UNKNOWN = make('TABLECRUD_ERR_AUTH_TOKEN_UNKNOWN', 'Token not recognised', 401)
export const TABLECRUD_ERR_AUTH_TOKEN_NOT_FOUND = make('TABLECRUD_ERR_AUTH_TOKEN_NOT_FOUND', 'Token not found', 401)
export const TABLECRUD_ERR_AUTH_TOKEN_REVOKED = make('TABLECRUD_ERR_AUTH_TOKEN_REVOKED', 'Token revoked', 401)
export const TABLECRUD_ERR_AUTH_TOKEN_EXPIRED = make('TABLECRUD_ERR_AUTH_TOKEN_EXPIRED', 'Token has expired', 401)
export const TABLECRUD_ERR_AUTH_TOKEN_INVALID = make('TABLECRUD_ERR_AUTH_TOKEN_INVALID', 'Token is invalid', 401)
export const TABLECRUD_ERR_AUTH_USER_NOT_FOUND = make('TABLECRUD_ERR_AUTH_USER_NOT_FOUND', 'User not found', 401)
export const TABLECRUD_ERR_AUTH_PASSWORD_TOO_SHORT = make('TABLECRUD_ERR_AUTH_PASSWORD_TOO_SHORT', 'The password must have at least %s characters.', 400)
export const TABLECRUD_ERR_AUTH_PASSWORD_TOO_LONG = make('TABLECRUD_ERR_AUTH_PASSWORD_TOO_LONG', 'The password must have at most %s characters.', 400)

// Sessions, login forms, CAPTCHA and MFA (SPEC §5.1, §5.2, §5.4)
export const TABLECRUD_ERR_AUTH_MISSING_FIELDS = make('TABLECRUD_ERR_AUTH_MISSING_FIELDS', 'Missing username or password', 422)
export const TABLECRUD_ERR_AUTH_LOGIN_REFUSED = make('TABLECRUD_ERR_AUTH_LOGIN_REFUSED', 'Login failed: %s', 401)
export const TABLECRUD_ERR_AUTH_CAPTCHA = make('TABLECRUD_ERR_AUTH_CAPTCHA', '%s', 401)
export const TABLECRUD_ERR_AUTH_NO_SESSION_COOKIE = make('TABLECRUD_ERR_AUTH_NO_SESSION_COOKIE', "The session cookie wasn't found.", 401)
export const TABLECRUD_ERR_AUTH_SESSION = make('TABLECRUD_ERR_AUTH_SESSION', '%s', 401)
export const TABLECRUD_ERR_AUTH_FORBIDDEN = make('TABLECRUD_ERR_AUTH_FORBIDDEN', '%s', 403)
export const TABLECRUD_ERR_MFA_REQUIRED = make('TABLECRUD_ERR_MFA_REQUIRED', 'MFA code required', 401)
export const TABLECRUD_ERR_MFA_FAILED = make('TABLECRUD_ERR_MFA_FAILED', 'MFA failed', 401)
export const TABLECRUD_ERR_DB_ROW_POLICY = make('TABLECRUD_ERR_DB_ROW_POLICY', 'The row is outside what a row-level security policy lets you write.', 403)
export const TABLECRUD_ERR_MFA_LOCKED = make('TABLECRUD_ERR_MFA_LOCKED', 'Too many wrong MFA codes: try again in %s seconds, or use a recovery code.', 429)
export const TABLECRUD_ERR_MFA_CODE_USED = make('TABLECRUD_ERR_MFA_CODE_USED', 'This code was just used; wait for the next one', 401)
export const TABLECRUD_ERR_MFA_PROVIDER = make('TABLECRUD_ERR_MFA_PROVIDER', '%s', 401)
export const TABLECRUD_ERR_FORM_MEDIA_TYPE = make('TABLECRUD_ERR_FORM_MEDIA_TYPE', 'The body must be application/json or application/x-www-form-urlencoded, not %s.', 415)
// Browser security and limits (SPEC §5.5, §5.7)
export const TABLECRUD_ERR_CSRF = make('TABLECRUD_ERR_CSRF', '%s', 403)
export const TABLECRUD_ERR_RATE_LIMITED = make('TABLECRUD_ERR_RATE_LIMITED', 'Too many requests', 429)

// Accounts (SPEC §5.2): forms, CAPTCHA; the messages are the wire contract, word for word
export const TABLECRUD_ERR_FORM_MISSING_FIELDS = make('TABLECRUD_ERR_FORM_MISSING_FIELDS', 'Form is invalid. Missing one or more fields.', 422)
export const TABLECRUD_ERR_FORM_INVALID = make('TABLECRUD_ERR_FORM_INVALID', '%s', 422)
export const TABLECRUD_ERR_FORM_READ_ONLY = make('TABLECRUD_ERR_FORM_READ_ONLY', 'Running in read only mode.', 405)
export const TABLECRUD_ERR_AUTH_NOT_LOGGED_IN = make('TABLECRUD_ERR_AUTH_NOT_LOGGED_IN', 'Not logged in', 401)
export const TABLECRUD_ERR_AUTH_BAD_PASSWORD = make('TABLECRUD_ERR_AUTH_BAD_PASSWORD', 'Incorrect password', 401)

// Multi-factor authentication (SPEC §5.4)
export const TABLECRUD_ERR_MFA_STATE = make('TABLECRUD_ERR_MFA_STATE', '%s', 409)
export const TABLECRUD_ERR_MFA_INVALID_CODE = make('TABLECRUD_ERR_MFA_INVALID_CODE', 'Invalid MFA code.', 422)
export const TABLECRUD_ERR_MFA_UNKNOWN_ACTION = make('TABLECRUD_ERR_MFA_UNKNOWN_ACTION', 'Unknown action.', 400)
