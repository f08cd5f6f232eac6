import t from 'tap'
import { readFile } from 'node:fs/promises'
import * as errors from '../../lib/errors.js'
import { bodyOf, DYNAMIC_CODES, fromDatabaseError, httpCode, HttpError, isStalePlan, REFUSED_CODE, withBody } from '../../lib/errors.js'

/** An error shaped as pg's DatabaseError (or a socket error) is shaped. */
const pgError = (message: string, fields: Record<string, string>): Error => Object.assign(new Error(message), fields)

const UNAVAILABLE = { code: 'TABLECRUD_ERR_DB_UNAVAILABLE', statusCode: 503, message: 'The database is unavailable; try again shortly.', body: undefined }

t.test('fromDatabaseError maps each SQLSTATE class', async (t) => {
  const cases: Array<[string, Error, unknown]> = [
    ['23505 unique, two columns', pgError('duplicate key value violates unique constraint "movie_name_year_key"', {
      code: '23505', constraint: 'movie_name_year_key', detail: 'Key (a, b)=(1, 2) already exists.'
    }), {
      code: 'TABLECRUD_ERR_DB_UNIQUE',
      statusCode: 422,
      message: 'duplicate key value violates unique constraint "movie_name_year_key"',
      body: { details: { constraint: 'movie_name_year_key', columns: ['a', 'b'], detail: 'Key (a, b)=(1, 2) already exists.' } }
    }],
    ['23505 unique, a quoted column', pgError('duplicate key value violates unique constraint "t_Name_key"', {
      code: '23505', constraint: 't_Name_key', detail: 'Key ("Name")=(x) already exists.'
    }), {
      code: 'TABLECRUD_ERR_DB_UNIQUE',
      statusCode: 422,
      message: 'duplicate key value violates unique constraint "t_Name_key"',
      body: { details: { constraint: 't_Name_key', columns: ['Name'], detail: 'Key ("Name")=(x) already exists.' } }
    }],
    ['23503 foreign key', pgError('insert or update on table "movie" violates foreign key constraint "movie_director_fkey"', {
      code: '23503', constraint: 'movie_director_fkey', detail: 'Key (director)=(99) is not present in table "director".'
    }), {
      code: 'TABLECRUD_ERR_DB_FOREIGN_KEY',
      statusCode: 422,
      message: 'insert or update on table "movie" violates foreign key constraint "movie_director_fkey"',
      body: { details: { constraint: 'movie_director_fkey', columns: ['director'], detail: 'Key (director)=(99) is not present in table "director".' } }
    }],
    ['23001 restrict', pgError('update or delete on table "director" violates RESTRICT setting of foreign key constraint "movie_director_fkey" on table "movie"', {
      code: '23001', constraint: 'movie_director_fkey', detail: 'Key (id)=(1) is referenced from table "movie".'
    }), {
      code: 'TABLECRUD_ERR_DB_FOREIGN_KEY',
      statusCode: 422,
      message: 'update or delete on table "director" violates RESTRICT setting of foreign key constraint "movie_director_fkey" on table "movie"',
      body: { details: { constraint: 'movie_director_fkey', columns: ['id'], detail: 'Key (id)=(1) is referenced from table "movie".' } }
    }],
    ['23502 not null: the column, and no row values', pgError('null value in column "director" of relation "movie" violates not-null constraint', {
      code: '23502', column: 'director', detail: 'Failing row contains (1, Alien, null, secret@example.com).'
    }), {
      code: 'TABLECRUD_ERR_DB_NOT_NULL',
      statusCode: 422,
      message: 'null value in column "director" of relation "movie" violates not-null constraint',
      body: { details: { constraint: null, columns: ['director'], detail: null } }
    }],
    ['23514 check', pgError('new row for relation "movie" violates check constraint "movie_rating_check"', {
      code: '23514', constraint: 'movie_rating_check', detail: 'Failing row contains (1, Alien, 11).'
    }), {
      code: 'TABLECRUD_ERR_DB_CHECK',
      statusCode: 422,
      message: 'new row for relation "movie" violates check constraint "movie_rating_check"',
      body: { details: { constraint: 'movie_rating_check', columns: [], detail: null } }
    }],
    ['23P01 exclusion', pgError('conflicting key value violates exclusion constraint "booking_during_excl"', {
      code: '23P01', constraint: 'booking_during_excl', detail: 'Key (during)=([1,3)) conflicts with existing key (during)=([2,4)).'
    }), {
      code: 'TABLECRUD_ERR_DB_CHECK',
      statusCode: 422,
      message: 'conflicting key value violates exclusion constraint "booking_during_excl"',
      body: { details: { constraint: 'booking_during_excl', columns: ['during'], detail: 'Key (during)=([1,3)) conflicts with existing key (during)=([2,4)).' } }
    }],
    ['a constraint error without constraint or detail', pgError('duplicate key', { code: '23505' }), {
      code: 'TABLECRUD_ERR_DB_UNIQUE', statusCode: 422, message: 'duplicate key', body: { details: { constraint: null, columns: [], detail: null } }
    }],
    ['22P02 bad syntax', pgError('invalid input syntax for type integer: "x"', { code: '22P02' }), {
      code: 'TABLECRUD_ERR_DB_DATA', statusCode: 400, message: 'invalid input syntax for type integer: "x"', body: undefined
    }],
    ['22003 out of range', pgError('numeric field overflow', { code: '22003', detail: 'A field with precision 5, scale 2 must round to an absolute value less than 10^3.' }), {
      code: 'TABLECRUD_ERR_DB_DATA', statusCode: 400, message: 'numeric field overflow', body: undefined
    }],
    ['22001 too long', pgError('value too long for type character varying(5)', { code: '22001' }), {
      code: 'TABLECRUD_ERR_DB_DATA', statusCode: 400, message: 'value too long for type character varying(5)', body: undefined
    }],
    ['54000 over a limit', pgError('index row size 4016 exceeds btree version 4 maximum 2704 for index "tag_slug_key"', { code: '54000', constraint: 'tag_slug_key' }), {
      code: 'TABLECRUD_ERR_DB_DATA', statusCode: 400, message: 'index row size 4016 exceeds btree version 4 maximum 2704 for index "tag_slug_key"', body: undefined
    }],
    ['08006 connection failure', pgError('connection failure', { code: '08006' }), UNAVAILABLE],
    ['57P01 admin shutdown', pgError('terminating connection due to administrator command', { code: '57P01' }), UNAVAILABLE],
    ['57014 statement timeout', pgError('canceling statement due to statement timeout', { code: '57014' }), UNAVAILABLE],
    ['53300 too many connections', pgError('sorry, too many clients already', { code: '53300' }), UNAVAILABLE],
    ['40001 serialization failure', pgError('could not serialize access due to concurrent update', { code: '40001' }), UNAVAILABLE],
    ['40P01 deadlock', pgError('deadlock detected', { code: '40P01' }), UNAVAILABLE],
    ['0A000 a plan made stale by a migration (inside a transaction: no retry)', pgError('cached plan must not change result type', { code: '0A000' }), UNAVAILABLE],
    ['ECONNREFUSED', pgError('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' }), UNAVAILABLE],
    ['ECONNRESET', pgError('read ECONNRESET', { code: 'ECONNRESET' }), UNAVAILABLE],
    ['a dropped connection', new Error('Connection terminated unexpectedly'), UNAVAILABLE],
    ['a connect timeout', new Error('timeout exceeded when trying to connect'), UNAVAILABLE],
    ['a query timeout', new Error('Query read timeout'), UNAVAILABLE],
    ['an ended pool', new Error('Cannot use a pool after calling end on the pool'), UNAVAILABLE]
  ]
  for (const [what, error, expected] of cases) {
    const mapped = fromDatabaseError(error) as Error & { code: string, statusCode: number }
    t.strictSame({ code: mapped.code, statusCode: mapped.statusCode, message: mapped.message, body: bodyOf(mapped) }, expected, what)
  }
})

t.test('fromDatabaseError leaves other errors alone', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['42P01 undefined table', pgError('relation "nope" does not exist', { code: '42P01' })],
    ['42703 undefined column', pgError('column "nope" does not exist', { code: '42703' })],
    ['0A000 another unsupported feature', pgError('cannot alter type of a column used by a view or rule', { code: '0A000' })],
    ['a plain error', new Error('boom')],
    ['an error with another code', pgError('x', { code: 'ERR_SOMETHING' })],
    ['an object with neither code nor message', {}],
    ['a coded error of ours', new HttpError(403, 'Superusers only')],
    ['a string', 'Connection terminated unexpectedly'],
    ['null', null],
    ['undefined', undefined],
    ['a number', 23505]
  ]
  for (const [what, error] of cases) t.equal(fromDatabaseError(error), undefined, what)
})

t.test('isStalePlan: SQLSTATE 0A000 with the stale-plan message only', async (t) => {
  t.equal(isStalePlan(pgError('cached plan must not change result type', { code: '0A000' })), true)
  const cases: Array<[string, unknown]> = [
    ['another 0A000', pgError('cannot alter type of a column used by a view or rule', { code: '0A000' })],
    ['the message under another code', pgError('cached plan must not change result type', { code: 'XX000' })],
    ['a code without a message', { code: '0A000' }],
    ['a string', 'cached plan must not change result type'],
    ['null', null],
    ['undefined', undefined]
  ]
  for (const [what, error] of cases) t.equal(isStalePlan(error), false, what)
})

t.test('withBody attaches members that JSON.stringify of the error does not show', async (t) => {
  const error = withBody(new Error('x'), { validFields: ['id'] })
  t.strictSame(bodyOf(error), { validFields: ['id'] })
  t.notOk(Object.keys(error).includes('body'))
  t.equal(bodyOf(new Error('y')), undefined)
})

t.test('HttpError carries its status and a code', async (t) => {
  const refused = new HttpError(403, 'Superusers only')
  t.match(refused, { name: 'HttpError', statusCode: 403, code: 'TABLECRUD_ERR_REFUSED', message: 'Superusers only' })
  t.ok(refused instanceof Error)
  t.equal(new HttpError(409, 'Taken', 'APP_TAKEN').code, 'APP_TAKEN')
})

/** Every `TABLECRUD_ERR_*` constant the module exports, read at run time so new codes are checked too. */
const codes = Object.entries(errors).filter(([name]) => name.startsWith('TABLECRUD_ERR_')) as
  Array<[string, new (...args: unknown[]) => Error & { code: string, statusCode: number }]>

t.test('each code constant is named after its code and declares a status', async (t) => {
  t.ok(codes.length > 30)
  for (const [name, Ctor] of codes) {
    const error = new Ctor('a', 'b', 'c')
    t.equal(error.code, name)
    t.ok(Number.isInteger(error.statusCode) && error.statusCode >= 400 && error.statusCode <= 599, `${name} has an error status`)
  }
})

/** Every table row of docs/errors.md: code -> status column. */
async function documentedCodes (): Promise<Map<string, string>> {
  const doc = await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8')
  const rows = new Map<string, string>()
  for (const [, code, status] of doc.matchAll(/^\| `([A-Z0-9_<>a-z]+)` \| ([^|]+) \|/gm)) rows.set(code!, status!.trim())
  return rows
}

t.test('every code is listed in docs/errors.md with its status', async (t) => {
  const rows = await documentedCodes()
  for (const [name, Ctor] of codes) {
    t.equal(rows.get(name), String(new Ctor().statusCode), `${name} is in docs/errors.md`)
  }
  for (const [code, status] of Object.entries(DYNAMIC_CODES)) t.equal(rows.get(code), status, `${code} is in docs/errors.md`)
})

t.test('every code docs/errors.md lists is in the registry', async (t) => {
  const registry = new Set([...codes.map(([name]) => name), ...Object.keys(DYNAMIC_CODES)])
  const rows = await documentedCodes()
  t.ok(rows.size > 30)
  for (const code of rows.keys()) t.ok(registry.has(code), `${code} of docs/errors.md is in lib/errors.ts`)
})

t.test('the dynamic codes are the ones the code makes', async (t) => {
  t.equal(new HttpError(403, 'x').code, REFUSED_CODE)
  t.ok(Object.hasOwn(DYNAMIC_CODES, REFUSED_CODE))
  t.equal(httpCode(409), 'TABLECRUD_ERR_HTTP_409')
  t.ok(Object.hasOwn(DYNAMIC_CODES, httpCode(409).replace(/\d+$/, '<status>')))
})
