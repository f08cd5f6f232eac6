import t, { type Test } from 'tap'
import fc from 'fast-check'
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest, LightMyRequestResponse } from 'fastify'
import { HttpError } from '../../../lib/errors.js'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { contractProblem } from '../../helpers/contract.js'
import { testDatabase } from '../../helpers/db.js'
import { freshApp } from './write-fixtures.js'

/*
 * Property test of row scopes (SPEC §8.6): users 1 to 3 (the `x-user` header, as an auth plugin
 * would set it; `root` is scoped to nothing) send sequences of every read and write a scoped
 * client can send, on folders and the docs in them, each table scoped by its definition to the
 * rows its user owns. The truth is read from the tables directly after each request. Every
 * answer keeps the contract; no answer holds a row out of the caller's scope (its name anywhere
 * in the body or headers, its id in a row); a read answers the same after other users' rows
 * change (nothing out of scope is counted, aggregated or filtered on); an `/:id/` request on a
 * row out of scope answers as on a row that does not exist; no write changes a row out of the
 * caller's scope, and a refused write changes nothing.
 */

const db = await testDatabase(t)

/** Runs per property; FUZZ_RUNS raises it for a longer hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 40)

const USERS = [1, 2, 3] as const

/** The rows a request may see: its user's own; `root` sees every row; no user is a 401. */
function ownRows (request: FastifyRequest): Record<string, unknown> | string {
  const user = request.headers['x-user']
  if (user === undefined) throw new HttpError(401, 'Log in first')
  return user === 'root' ? '' : { owner: Number(user) }
}

/**
 * How rows are scoped: `scope`, each table by its definition to the rows its user owns, and the
 * folders mount also to folders of a rank of 0 or more; `shared` the same, but through relations
 * too: a doc is also in the scope of the owner of its folder, a folder in the scope of the owner
 * of a doc in it; `claims` by the database's policies alone, each table to the rows its user owns.
 */
type Mode = 'scope' | 'shared' | 'claims'
const inMountScope = (mode: Mode, rank: number): boolean => mode === 'claims' || rank >= 0

/** Under `shared`, the rows a request may see: its user's own, and those `path` reaches from them. */
const shared = (path: string) => (request: FastifyRequest): Record<string, unknown> | string => {
  const own = ownRows(request)
  return typeof own === 'string' ? own : `(or(owner.e.${Number(own.owner)},${path}.owner.e.${Number(own.owner)}))`
}

/** The two tables, scoped by their definitions as `mode` says (under `claims`, not at all: the policies decide). */
function tables (mode: Mode): { folder: Table, doc: Table } {
  const scoped = <T>(scope: T): { scope?: T } => mode === 'claims' ? {} : { scope }
  const folder = defineTable('fs_folder', {
    name: column.varchar({ length: 12, required: true, unique: true }),
    owner: column.integer(),
    rank: column.integer()
  }, { readable: 'name', ...scoped(mode === 'shared' ? shared('docs') : ownRows) })
  // A doc may sit in another user's folder: what embeds, joins and relation filters must hide.
  const doc = defineTable('fs_doc', {
    title: column.varchar({ length: 12, required: true }),
    code: column.varchar({ length: 12, unique: true, null: true }),
    owner: column.integer(),
    rank: column.integer(),
    folder: column.foreignKey(folder, { null: true, onDelete: 'restrict', related: 'docs' })
  }, { readable: 'title', search: { columns: ['title'], config: 'simple' }, ...scoped(mode === 'shared' ? shared('folder') : ownRows) })
  return { folder, doc }
}

const WRITABLE = { readOnly: false, allowBulkDelete: true, allowBulkUpdate: true, aggregates: true, maxJoins: 1, maxAffected: 4, maxPageSize: 100 }

async function scopeApp (t: Test, mode: Mode): Promise<FastifyInstance> {
  const { folder, doc } = tables(mode)
  return await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { ...WRITABLE, table: folder, prefix: '/folders', nestedWrites: ['docs'], scope: () => '(rank.gte.0)' })
    await app.register(tableCrud, { ...WRITABLE, table: doc, prefix: '/docs' })
    await app.register(tableCrud, { table: doc, prefix: '/estimated', countMode: 'estimated', maxJoins: 1, maxPageSize: 100 })
  }, [folder, doc])
}

/** The claims of a request (SPEC §8.6): its user, for the policies below; no user is a 401. */
function claimsOf (request: FastifyRequest): Record<string, unknown> {
  const user = request.headers['x-user']
  if (user === undefined) throw new HttpError(401, 'Log in first')
  return { sub: user }
}

/**
 * The same mounts with row-level security instead: `claims` and a role that does not own the
 * tables, and a policy per table that lets a user's claims reach their own rows (root's, all).
 * Null when the server cannot make a role (PGlite is one user), with the reason.
 */
async function claimsApp (t: Test): Promise<FastifyInstance | string> {
  const { folder, doc } = tables('claims')
  const role = `fs_rls_${process.pid}_${randomBytes(3).toString('hex')}`
  const made = await db.pool.query(`CREATE ROLE ${role} NOLOGIN`).then(() => null, (error: Error) => error.message)
  if (made !== null) return made
  t.teardown(async () => {
    await db.pool.query(`DROP OWNED BY ${role}`)
    await db.pool.query(`DROP ROLE ${role}`)
  })
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { ...WRITABLE, table: folder, prefix: '/folders', nestedWrites: ['docs'], claims: claimsOf, role })
    await app.register(tableCrud, { ...WRITABLE, table: doc, prefix: '/docs', claims: claimsOf, role })
    await app.register(tableCrud, { table: doc, prefix: '/estimated', countMode: 'estimated', maxJoins: 1, maxPageSize: 100, claims: claimsOf, role })
  }, [folder, doc])
  const sub = "(current_setting('request.claims', true)::json->>'sub')"
  const mine = `(owner::text = ${sub} OR ${sub} = 'root')`
  const schema = String((await app.pg.query('SELECT current_schema() AS s')).rows[0].s)
  for (const statement of [
    `GRANT USAGE ON SCHEMA ${schema} TO ${role}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON fs_folder, fs_doc TO ${role}`,
    `GRANT USAGE ON SEQUENCE fs_folder_id_seq, fs_doc_id_seq TO ${role}`,
    'ALTER TABLE fs_folder ENABLE ROW LEVEL SECURITY',
    'ALTER TABLE fs_doc ENABLE ROW LEVEL SECURITY',
    `CREATE POLICY own_folders ON fs_folder USING ${mine} WITH CHECK ${mine}`,
    `CREATE POLICY own_docs ON fs_doc USING ${mine} WITH CHECK ${mine}`
  ]) await app.pg.query(statement)
  return app
}

/*
 * Names. Every name and title is a token of four characters (`Fa01`, `Db07`, `Nw03`), so one
 * found in an answer names its row: a token of a row out of scope that the request did not
 * send itself is a leak.
 */
const token = (prefix: string, n: number): string => `${prefix}${String(n).padStart(2, '0')}`
const NAMES = Array.from({ length: 12 }, (_, i) => token('Nw', i))

interface Folder { id: number, name: string, owner: number, rank: number }
interface Doc { id: number, title: string, code: string | null, owner: number, rank: number, folder: number | null }
interface Truth { mode: Mode, folders: Map<number, Folder>, docs: Map<number, Doc> }

/** Nine folders and eighteen docs, each user's docs spread over their own and others' folders. */
async function seed (app: FastifyInstance): Promise<void> {
  await app.pg.query('DELETE FROM fs_doc')
  await app.pg.query('DELETE FROM fs_folder')
  const folders = Array.from({ length: 9 }, (_, i) => ({ id: i + 1, name: token('Fa', i + 1), owner: USERS[i % 3], rank: i % 4 === 3 ? -1 : i % 3 }))
  const docs = Array.from({ length: 18 }, (_, i) => ({ id: i + 1, title: token('Db', i + 1), code: token('Cd', i + 1), owner: USERS[i % 3], rank: i % 5, folder: i % 7 === 6 ? null : 1 + (i * 5) % 9 }))
  await app.pg.query('INSERT INTO fs_folder SELECT * FROM json_populate_recordset(null::fs_folder, $1)', [JSON.stringify(folders)])
  await app.pg.query('INSERT INTO fs_doc SELECT * FROM json_populate_recordset(null::fs_doc, $1)', [JSON.stringify(docs)])
  await app.pg.query("SELECT setval(pg_get_serial_sequence('fs_folder', 'id'), 100), setval(pg_get_serial_sequence('fs_doc', 'id'), 100)")
  // Statistics of tables of this size, each time (dead rows pile up): without them PostgreSQL
  // guesses thousands of rows, and the statements of scopes through relations cost enough to be
  // JIT-compiled, half a second each.
  await app.pg.query('ANALYZE fs_folder, fs_doc')
}

/** What the tables hold, read directly, past every scope and policy. */
async function truth (app: FastifyInstance, mode: Mode): Promise<Truth> {
  const folders = (await app.pg.query('SELECT id, name, owner, rank FROM fs_folder ORDER BY id')).rows as Folder[]
  const docs = (await app.pg.query('SELECT id, title, code, owner, rank, folder FROM fs_doc ORDER BY id')).rows as Doc[]
  return { mode, folders: new Map(folders.map((f) => [f.id, f])), docs: new Map(docs.map((d) => [d.id, d])) }
}

/** Whether the tables held the same rows both times. */
const unchanged = (a: Truth, b: Truth): boolean => JSON.stringify([[...a.folders], [...a.docs]]) === JSON.stringify([[...b.folders], [...b.docs]])

// ---------------------------------------------------------------------------------------------
// Requests

/** Filters of a docs list, count, export, aggregate, bulk PATCH and DELETE: own columns, the folder's, trees through it. */
const DOC_FILTERS = [
  '', 'rank=1', 'rank__operator=gte&rank=2', 'owner=2', 'owner=1', 'owner__operator=ne&owner=3', 'title=Db0', 'title__match=exact&title=Db04',
  'folder=2', 'folder__operator=is_null', 'folder.name=Fa0', 'folder.name__match=exact&folder.name=Fa02', 'folder.owner=2', 'folder.owner=1',
  'folder.rank__operator=lt&folder.rank=1', 'id__operator=in&id=1&id=2&id=3&id=4', 'id__operator=not_null', '__search=db04', '__search=db01 or db02 or db03',
  '__or=(owner.e.2,folder.owner.e.2)', '__or=(folder.is_null,not.folder.owner.e.2)', '__and=(not.folder.name.starts.Fa)', '__or=(folder.not_null,rank.gt.2)',
  '__and=(not.folder.rank.gte.0)', '__or=(not.folder.id.not_null)', '__or=(folder.name.search.fa02,title.search.db05)', '__or=(and(rank.lt.3,not.owner.e.1),folder.rank.lt.0)',
  'bogus=1', 'folder.bogus=1', '__or=(folder.owner.e.2'
]
/** Filters of a folders list and its kin: own columns, the docs in it (EXISTS), trees through them. */
const FOLDER_FILTERS = [
  '', 'rank=0', 'rank__operator=gte&rank=1', 'owner=2', 'name=Fa0', 'docs.owner=2', 'docs.owner=1', 'docs.title=Db0', 'docs.title__match=exact&docs.title=Db05',
  'docs.rank__operator=gte&docs.rank=3', 'id__operator=not_null', '__or=(docs.owner.e.2,rank.lt.0)', '__and=(not.docs.id.not_null)', '__or=(not.docs.owner.e.3)',
  '__or=(docs.title.starts.Db,name.e.Fa04)', '__and=(docs.rank.gte.0,not.docs.owner.e.1)', 'id__operator=in&id=1&id=2&id=4&id=5', 'docs.bogus=1'
]
const DOC_FIELDS = ['', '&__visible_fields=id,title,owner,folder', '&__visible_fields=id,title,folder.id,folder.name,folder.owner,folder.rank', '&__readable=true', '&__visible_fields=id,folder&__readable=true']
const FOLDER_FIELDS = ['', '&__visible_fields=id,name,docs.id,docs.title,docs.owner', '&__visible_fields=id,docs.id,docs.folder&docs.__page_size=2&docs.__order=-rank', '&__visible_fields=id,docs.title&__readable=true']
const ORDERS = ['', '&__order=rank', '&__order=-rank,id', '&__order=folder.name', '&__order=-folder.rank']
const FOLDER_ORDERS = ['', '&__order=rank', '&__order=-name']
const AGGREGATES = ['count', 'count,sum(rank),max(id),min(folder.rank)', 'count,count(folder),count_distinct(folder)', 'avg(rank),max(folder)']
const GROUPS = ['', '&__group_by=owner', '&__group_by=folder', '&__group_by=folder.name', '&__group_by=folder.owner&__readable=true', '&__group_by=rank']
const HAVING = ['', '&__having=(count.gte.2)', '&__having=(count.lt.2)']

type Kind = 'doc' | 'folder'
/** A request as sent, but for its user's header. */
interface Request {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  readonly url: string
  readonly payload?: unknown
  readonly headers?: Readonly<Record<string, string>>
}

/** One request of a user, and what its answer is checked against. */
interface Sent {
  readonly user: number | 'root' | null
  readonly options: Request
  /** A read: it must answer the same after other users' rows change. */
  readonly read: boolean
  /** The statuses the request may answer. */
  readonly allowed: readonly number[]
  /** Which table the rows of `rows` (or the row answered) are. */
  readonly kind: Kind
  /** An `/:id/` request: the id of its path, whose row out of scope must answer as a missing one. */
  readonly id?: number
  /** A list whose query has no filter: it must hold exactly the rows in scope. */
  readonly whole?: 'rows' | 'count' | 'ids'
}

/** `If-None-Match` on a GET `/:id/`: none, or the row's current ETag (read as root just before it is sent). */
const ifNoneMatch = fc.constantFrom<Record<string, string>>({}, {}, { 'if-none-match': 'current' }, { 'if-none-match': '*' })

const user = fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...USERS) }, { weight: 1, arbitrary: fc.constantFrom(null) })
const pick = <T>(values: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...values)
const READS = [200, 400]

/** Every read a scoped client sends: lists, keyset pages, counts, exports, aggregates, helpers, `/:id/`. */
const reads: fc.Arbitrary<Sent> = fc.oneof(
  fc.tuple(user, pick(DOC_FILTERS), pick(DOC_FIELDS), pick(ORDERS), fc.constantFrom('', '&__range_header=true&__page_size=100', '&__cursor=&__page_size=3', '&__page=2&__page_size=4'))
    .map(([user, filter, fields, order, page]): Sent => ({ user, options: { url: `/docs/?${filter}${fields}${order}${page}` }, read: true, allowed: READS, kind: 'doc', whole: filter === '' && page.includes('100') ? 'rows' : undefined })),
  fc.tuple(user, pick(FOLDER_FILTERS), pick(FOLDER_FIELDS), pick(FOLDER_ORDERS), fc.constantFrom('', '&__range_header=true&__page_size=100', '&__cursor=&__page_size=2'))
    .map(([user, filter, fields, order, page]): Sent => ({ user, options: { url: `/folders/?${filter}${fields}${order}${page}` }, read: true, allowed: READS, kind: 'folder', whole: filter === '' && page.includes('100') ? 'rows' : undefined })),
  fc.tuple(user, fc.constantFrom('/docs', '/estimated'), pick(DOC_FILTERS)).map(([user, prefix, filter]): Sent =>
    ({ user, options: { url: `${prefix}/count/?${filter}` }, read: true, allowed: READS, kind: 'doc', whole: filter === '' ? 'count' : undefined })),
  fc.tuple(user, pick(FOLDER_FILTERS)).map(([user, filter]): Sent => ({ user, options: { url: `/folders/count/?${filter}` }, read: true, allowed: READS, kind: 'folder', whole: filter === '' ? 'count' : undefined })),
  fc.tuple(user, pick(DOC_FILTERS), fc.constantFrom('ndjson', 'csv'), pick(DOC_FIELDS)).map(([user, filter, format, fields]): Sent =>
    ({ user, options: { url: `/docs/?${filter}&__format=${format}${fields}` }, read: true, allowed: READS, kind: 'doc' })),
  fc.tuple(user, pick(DOC_FILTERS), pick(AGGREGATES), pick(GROUPS), pick(HAVING)).map(([user, filter, aggregate, group, having]): Sent =>
    ({ user, options: { url: `/docs/aggregate/?${filter}&__aggregate=${aggregate}${group}${having}` }, read: true, allowed: READS, kind: 'doc' })),
  fc.tuple(user, pick(FOLDER_FILTERS), fc.constantFrom('&__group_by=owner', '&__group_by=rank', '')).map(([user, filter, group]): Sent =>
    ({ user, options: { url: `/folders/aggregate/?${filter}&__aggregate=count,max(id),sum(rank),count_distinct(name)${group}` }, read: true, allowed: READS, kind: 'folder' })),
  fc.tuple(user, fc.constantFrom('/docs', '/folders'), fc.constantFrom('', 'search=a', 'search=Fa0', 'search=db1&limit=2', 'offset=1&limit=3')).map(([user, prefix, query]): Sent =>
    ({ user, options: { url: `${prefix}/ids/?${query}` }, read: true, allowed: READS, kind: prefix === '/docs' ? 'doc' : 'folder', whole: query === '' ? 'ids' : undefined })),
  fc.tuple(user, fc.constantFrom('/docs', '/folders'), fc.constantFrom('references', 'new', 'schema')).map(([user, prefix, helper]): Sent =>
    ({ user, options: { url: `${prefix}/${helper}/` }, read: true, allowed: [200], kind: prefix === '/docs' ? 'doc' : 'folder' })),
  fc.tuple(user, fc.integer({ min: 1, max: 20 }), pick(DOC_FIELDS), ifNoneMatch).map(([user, id, fields, etag]): Sent =>
    ({ user, options: { url: `/docs/${id}/?${fields}`, headers: etag }, read: true, allowed: [200, 304, 404], kind: 'doc', id })),
  fc.tuple(user, fc.integer({ min: 1, max: 11 }), pick(FOLDER_FIELDS), ifNoneMatch).map(([user, id, fields, etag]): Sent =>
    ({ user, options: { url: `/folders/${id}/?${fields}`, headers: etag }, read: true, allowed: [200, 304, 404], kind: 'folder', id }))
)

/** Stands for the caller's own user in a body. */
const ME = 'ME'

/** A doc as a client writes it: mostly its own, now and then another user's or in another's folder. */
const owner = fc.oneof({ weight: 8, arbitrary: fc.constant(ME) }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: fc.constantFrom(...USERS) })
/** A doc's unique code: another's, one's own, or a new one. */
const code = fc.oneof(fc.integer({ min: 1, max: 20 }).map((n) => token('Cd', n)), pick(NAMES.map((name) => name.replace('Nw', 'Nc'))))
const docBody = fc.record({ title: pick(NAMES), code, owner, rank: fc.integer({ min: -1, max: 4 }), folder: fc.option(fc.integer({ min: 1, max: 11 })) }, { requiredKeys: ['title'] })
const folderBody = fc.record({ name: fc.oneof(pick(NAMES), fc.integer({ min: 1, max: 9 }).map((n) => token('Fa', n))), owner, rank: fc.integer({ min: -1, max: 3 }) }, { requiredKeys: ['name'] })
const childBody = fc.record({ title: pick(NAMES), owner, rank: fc.integer({ min: 0, max: 4 }) }, { requiredKeys: ['title'] })

/** `If-Match`: none, any, a wrong one, or the row's current ETag (read as root just before it is sent). */
const ifMatch = fc.constantFrom(undefined, undefined, '*', '"nope"', 'current')
const WRITES = [200, 201, 204, 400, 403, 404, 412, 422]

/** Every write a scoped client sends, with the owner column set to the caller's, another's, or left to the user. */
const writes: fc.Arbitrary<Sent> = fc.oneof(
  fc.tuple(user, fc.oneof(docBody, fc.array(docBody, { minLength: 1, maxLength: 3 }))).map(([user, payload]): Sent =>
    ({ user, options: { method: 'POST', url: '/docs/', payload }, read: false, allowed: WRITES, kind: 'doc' })),
  fc.tuple(user, fc.oneof(folderBody, fc.array(folderBody, { minLength: 1, maxLength: 3 })), fc.constantFrom('', '?__on_conflict=name')).map(([user, payload, query]): Sent =>
    ({ user, options: { method: 'POST', url: `/folders/${query}`, payload }, read: false, allowed: WRITES, kind: 'folder' })),
  // Upsert on a doc's unique code: another user's is a conflicting row out of scope.
  fc.tuple(user, fc.oneof(docBody, fc.array(docBody, { minLength: 1, maxLength: 3 }))).map(([user, payload]): Sent =>
    ({ user, options: { method: 'POST', url: '/docs/?__on_conflict=code', payload }, read: false, allowed: WRITES, kind: 'doc' })),
  // Nested insert: the folder and its docs, each of whose owner may be another's.
  fc.tuple(user, folderBody, fc.array(childBody, { minLength: 1, maxLength: 3 })).map(([user, body, docs]): Sent =>
    ({ user, options: { method: 'POST', url: '/folders/', payload: { ...body, docs } }, read: false, allowed: WRITES, kind: 'folder' })),
  fc.tuple(user, fc.constantFrom('PUT', 'PATCH') as fc.Arbitrary<'PUT' | 'PATCH'>, fc.integer({ min: 1, max: 20 }), docBody, ifMatch).map(([user, method, id, payload, etag]): Sent =>
    ({ user, options: { method, url: `/docs/${id}/`, payload, headers: etag === undefined ? {} : { 'if-match': etag } }, read: false, allowed: WRITES, kind: 'doc', id })),
  fc.tuple(user, fc.constantFrom('PUT', 'PATCH') as fc.Arbitrary<'PUT' | 'PATCH'>, fc.integer({ min: 1, max: 11 }), folderBody, ifMatch).map(([user, method, id, payload, etag]): Sent =>
    ({ user, options: { method, url: `/folders/${id}/`, payload, headers: etag === undefined ? {} : { 'if-match': etag } }, read: false, allowed: WRITES, kind: 'folder', id })),
  fc.tuple(user, fc.constantFrom('docs', 'folders'), fc.integer({ min: 1, max: 20 }), ifMatch).map(([user, table, id, etag]): Sent =>
    ({ user, options: { method: 'DELETE', url: `/${table}/${id}/`, headers: etag === undefined ? {} : { 'if-match': etag } }, read: false, allowed: WRITES, kind: table === 'docs' ? 'doc' : 'folder', id })),
  fc.tuple(user, pick(DOC_FILTERS), fc.record({ rank: fc.integer({ min: 0, max: 4 }), owner, folder: fc.option(fc.integer({ min: 1, max: 9 })) }, { requiredKeys: [] }), fc.constantFrom('', '&__max_affected=2')).map(([user, filter, payload, max]): Sent =>
    ({ user, options: { method: 'PATCH', url: `/docs/?${filter}${max}`, payload }, read: false, allowed: WRITES, kind: 'doc' })),
  fc.tuple(user, pick(FOLDER_FILTERS), fc.record({ rank: fc.integer({ min: -1, max: 3 }), owner }, { requiredKeys: [] })).map(([user, filter, payload]): Sent =>
    ({ user, options: { method: 'PATCH', url: `/folders/?${filter}`, payload }, read: false, allowed: WRITES, kind: 'folder' })),
  fc.tuple(user, fc.oneof(fc.tuple(fc.constant('docs'), pick(DOC_FILTERS)), fc.tuple(fc.constant('folders'), pick(FOLDER_FILTERS))), fc.constantFrom('', '&__max_affected=1')).map(([user, [table, filter], max]): Sent =>
    ({ user, options: { method: 'DELETE', url: `/${table}/?${filter}${max}` }, read: false, allowed: [...WRITES, 405], kind: table === 'docs' ? 'doc' : 'folder' }))
)

/** Another user's activity between two reads: rows out of the reader's scope renamed, moved, given away, added or deleted. */
const elsewhere = fc.tuple(fc.integer({ min: 0, max: 4 }), fc.nat(), fc.nat(), fc.integer({ min: -1, max: 4 }))

// ---------------------------------------------------------------------------------------------
// Checks

const isObject = (value: unknown): value is Record<string, any> => typeof value === 'object' && value !== null && !Array.isArray(value)
const headersOf = (res: LightMyRequestResponse): string => ['content-range', 'etag', 'location', 'link', 'x-deleted-count'].map((h) => `${h}: ${String(res.headers[h])}`).join('\n')

function inScope (truthNow: Truth, who: number | 'root', kind: Kind, id: number, mount: boolean): boolean {
  const row = kind === 'doc' ? truthNow.docs.get(id) : truthNow.folders.get(id)
  if (row === undefined) return false
  if (who === 'root') return true
  if (kind === 'doc') return row.owner === who || (truthNow.mode === 'shared' && truthNow.folders.get((row as Doc).folder ?? 0)?.owner === who)
  const reached = truthNow.mode === 'shared' && [...truthNow.docs.values()].some((d) => d.folder === id && d.owner === who)
  return (row.owner === who || reached) && (!mount || inMountScope(truthNow.mode, (row as Folder).rank))
}

/** Why the answer names a row out of the scope of `who` (its token, not sent by the request and not a token of a row in scope), or null. */
function leak (text: string, request: string, truthNow: Truth, who: number): string | null {
  const tokens: Array<{ kind: Kind, id: number, names: string[] }> = [...truthNow.folders.values()].map((f) => ({ kind: 'folder' as const, id: f.id, names: [f.name] }))
  for (const d of truthNow.docs.values()) tokens.push({ kind: 'doc', id: d.id, names: [d.title, d.code ?? ''] })
  const visible = (one: typeof tokens[number]): boolean => inScope(truthNow, who, one.kind, one.id, false)
  const own = new Set(tokens.filter(visible).flatMap((one) => one.names))
  for (const one of tokens.filter((one) => !visible(one))) {
    const found = one.names.find((name) => name !== '' && !own.has(name) && !request.includes(name) && text.includes(name))
    if (found !== undefined) return `the answer names ${found}, of the ${one.kind} ${one.id} out of scope`
  }
  return null
}

/** Why a row (or an embedded one, at any depth) answered is not in the scope of `who`, or null. */
function rowsOutOfScope (value: unknown, kind: Kind, truthNow: Truth, who: number, top: boolean): string | null {
  if (Array.isArray(value)) {
    for (const one of value) {
      const found = rowsOutOfScope(one, kind, truthNow, who, top)
      if (found !== null) return found
    }
    return null
  }
  if (!isObject(value)) return null
  if (typeof value.id === 'number' && !inScope(truthNow, who, kind, value.id, top)) return `a ${kind} ${value.id} out of scope`
  if (kind === 'doc' && isObject(value.folder)) return rowsOutOfScope(value.folder, 'folder', truthNow, who, false)
  if (kind === 'folder' && Array.isArray(value.docs)) return rowsOutOfScope(value.docs, 'doc', truthNow, who, false)
  return null
}

/** The ids of every row in the scope of `who` on the mount of `kind`. */
function scopeIds (truthNow: Truth, who: number, kind: Kind): number[] {
  const rows = kind === 'doc' ? [...truthNow.docs.keys()] : [...truthNow.folders.keys()]
  return rows.filter((id) => inScope(truthNow, who, kind, id, true)).sort((a, b) => a - b)
}

/** Why a 2xx read is not exactly the rows in scope, when its query has no filter; or null. */
function whole (sent: Sent, body: any, truthNow: Truth, who: number): string | null {
  const expected = scopeIds(truthNow, who, sent.kind)
  let got: number[] = []
  if (sent.whole === 'rows') got = (body.rows as Array<{ id: number }>).map((r) => r.id).sort((a, b) => a - b)
  if (sent.whole === 'ids') got = Object.keys(body).map(Number)
  if (sent.whole === 'count') return body.count === expected.length ? null : `counted ${String(body.count)}, ${expected.length} rows in scope`
  return JSON.stringify(got) === JSON.stringify(expected) ? null : `answered the rows ${got.join()}, in scope ${expected.join()}`
}

/** Why the tables changed out of the scope of `who` between `before` and `after`, or null. */
function changedOutOfScope (before: Truth, after: Truth, who: number, sent: Sent): string | null {
  for (const kind of ['doc', 'folder'] as const) {
    const [was, now] = kind === 'doc' ? [before.docs, after.docs] : [before.folders, after.folders]
    for (const id of new Set([...was.keys(), ...now.keys()])) {
      const a = was.get(id)
      const b = now.get(id)
      if (JSON.stringify(a) === JSON.stringify(b)) continue
      // A write to the folders mount touches folders in its own scope only; nested docs are created.
      const mount = kind === 'folder' && sent.kind === 'folder'
      const allowed = (truthThen: Truth): boolean => !truthThen[kind === 'doc' ? 'docs' : 'folders'].has(id) || inScope(truthThen, who, kind, id, mount)
      if (!allowed(before) || !allowed(after)) return `the ${kind} ${id} changed out of scope: ${JSON.stringify(a)} → ${JSON.stringify(b)}`
    }
  }
  return null
}

/** Applies another user's activity to rows out of the scope of `who`, which stay out of it. */
async function actElsewhere (app: FastifyInstance, mode: Mode, who: number, [what, a, b, rank]: [number, number, number, number], counter: { n: number }): Promise<void> {
  const others = USERS.filter((u) => u !== who)
  const other = others[a % others.length]!
  // Under `shared` a doc in a folder of the reader's is in their scope, and a folder that holds a
  // doc of theirs: such rows stay as they are, and no doc moves into a folder of theirs.
  const shared = mode === 'shared'
  const folders = (await app.pg.query('SELECT id FROM fs_folder WHERE NOT ($1 AND owner = $2) ORDER BY id', [shared, who])).rows.map((r: { id: number }) => r.id)
  const target = folders[b % folders.length] ?? null
  const name = token('Zz', counter.n++ % 100)
  const outOfScope = 'owner <> $1 AND NOT ($2 AND folder IN (SELECT id FROM fs_folder WHERE owner = $1))'
  const statements: Array<[string, unknown[]]> = [
    [`UPDATE fs_doc SET title = $3, rank = $4, folder = $5 WHERE id = (SELECT id FROM fs_doc WHERE ${outOfScope} ORDER BY id OFFSET $6 LIMIT 1)`, [who, shared, name, rank, target, a % 12]],
    ['UPDATE fs_folder SET name = $3, rank = $4 WHERE id = (SELECT id FROM fs_folder WHERE owner <> $1 AND NOT ($2 AND id IN (SELECT folder FROM fs_doc WHERE owner = $1 AND folder IS NOT NULL)) ORDER BY id OFFSET $5 LIMIT 1)', [who, shared, name, rank, a % 6]],
    [`UPDATE fs_doc SET owner = $3 WHERE ${outOfScope} AND id % 3 = $4`, [who, shared, other, b % 3]],
    ['INSERT INTO fs_doc (title, code, owner, rank, folder) VALUES ($1, $1, $2, $3, $4)', [name, other, rank, target]],
    [`DELETE FROM fs_doc WHERE id = (SELECT id FROM fs_doc WHERE ${outOfScope} ORDER BY id OFFSET $3 LIMIT 1)`, [who, shared, a % 12]]
  ]
  const [text, values] = statements[what]!
  await app.pg.query(text, values)
}

async function send (app: FastifyInstance, sent: Sent, id = sent.id): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...sent.options.headers }
  if (sent.user !== null) headers['x-user'] = String(sent.user)
  const url = id === sent.id ? sent.options.url : sent.options.url.replace(`/${String(sent.id)}/`, `/${id ?? ''}/`)
  for (const header of ['if-match', 'if-none-match']) {
    if (headers[header] !== 'current') continue
    const current = await app.inject({ url: url.replace(/\?.*$/, ''), headers: { 'x-user': 'root' } })
    headers[header] = String(current.headers.etag ?? '"gone"')
  }
  const payload = sent.options.payload === undefined ? undefined : JSON.parse(JSON.stringify(sent.options.payload).replaceAll(`"${ME}"`, String(sent.user ?? 1)))
  return await app.inject({ ...sent.options, url, headers, payload })
}

/** A request that never names another's row: its URL and body, as text. */
const requestText = (sent: Sent): string => `${decodeURIComponent(sent.options.url)} ${JSON.stringify(sent.options.payload ?? null)}`

/**
 * Why a write's answer breaks a property, or null: it changed a row out of scope, or anything when
 * refused; a bulk write (`matching`: what /count/ counted for it) changed or counted another number.
 */
function writeProblem (sent: Sent, res: LightMyRequestResponse, before: Truth, after: Truth, who: number, matching: unknown): string | null {
  if (res.statusCode >= 300 && !unchanged(before, after)) return `a refused write (${res.statusCode}) changed the tables`
  const changed = changedOutOfScope(before, after, who, sent)
  if (changed !== null) return changed
  const body = res.body === '' ? {} : JSON.parse(res.body)
  if (res.statusCode === 400 && body.code === 'TABLECRUD_ERR_TOO_MANY_ROWS' && body.details?.matched !== matching) return `details.matched ${String(body.details?.matched)}, /count/ ${String(matching)}`
  // A patch with nothing to set changes no row (docs/table-crud.md).
  const empty = JSON.stringify(sent.options.payload ?? {}) === '{}'
  if (matching !== undefined && res.statusCode === 200 && body.count !== (empty ? 0 : matching)) return `PATCHed ${String(body.count)} rows, /count/ ${String(matching)}`
  if (res.headers['x-deleted-count'] !== undefined) {
    const gone = (sent.kind === 'doc' ? before.docs.size - after.docs.size : before.folders.size - after.folders.size)
    if (Number(res.headers['x-deleted-count']) !== gone || gone !== matching) return `X-Deleted-Count ${String(res.headers['x-deleted-count'])}, ${gone} rows deleted, /count/ ${String(matching)}`
  }
  return null
}

/** The answer to one request, checked; the reason it breaks a property, or null. */
async function step (app: FastifyInstance, mode: Mode, sent: Sent, counter: { n: number }, other: [number, number, number, number], statuses: Map<number, number>): Promise<string | null> {
  const before = await truth(app, mode)
  // What a bulk PATCH or DELETE matches, counted by /count/ for the same user just before it.
  const bulk = !sent.read && sent.id === undefined && ['PATCH', 'DELETE'].includes(sent.options.method ?? 'GET')
  const counted = bulk ? await send(app, { ...sent, options: { url: sent.options.url.replace('/?', '/count/?').replace(/&__max_affected=\d+/, '') } }) : null
  const matching: unknown = counted?.statusCode === 200 ? JSON.parse(counted.body).count : undefined
  const res = await send(app, sent)
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
  const format = /__format=(ndjson|csv)/.exec(sent.options.url)?.[1]
  // A request without a user is refused by the scope, unless its body or query is refused first.
  // The helpers that read no rows (SPEC §8.6) do not ask the scope; claims are asked by every route.
  const allowed = sent.user === null ? (/\/(references|new|schema)\/$/.test(sent.options.url) ? [200, 401] : [400, 401]) : sent.allowed
  // An export streams its own content type, a 204 has no body; errors are the usual JSON.
  const found = (format !== undefined && res.statusCode === 200) || ([204, 304].includes(res.statusCode) && res.body === '' && allowed.includes(res.statusCode)) ? null : contractProblem(res, allowed, () => null)
  if (found !== null) return found
  const after = await truth(app, mode)
  if (sent.user === null || sent.user === 'root') return unchanged(before, after) || res.statusCode < 300 ? null : 'a refused request changed the tables'
  const who = sent.user
  const leaked = leak(`${res.body}\n${headersOf(res)}`, requestText(sent), after, who) ?? (sent.read ? null : leak(res.body, requestText(sent), before, who))
  if (leaked !== null) return leaked
  if (res.statusCode === 200 && format === undefined) {
    const body = JSON.parse(res.body)
    const rows = sent.options.url.includes('/aggregate/') || sent.options.url.includes('/ids/') || !isObject(body) ? null : Array.isArray(body.rows) ? body.rows : body.count === undefined ? body : null
    const out = rows === null ? null : rowsOutOfScope(rows, sent.kind, after, who, true)
    if (out !== null) return out
    if (typeof body.next_cursor === 'string') {
      // The next keyset page, as the cursor's link gives it.
      const next = await send(app, { ...sent, options: { url: String(res.headers.link).replace(/^<(.*)>; rel="next"$/, '$1') } })
      const out = next.statusCode === 200 ? rowsOutOfScope(JSON.parse(next.body).rows, sent.kind, after, who, true) : `the next page: ${next.statusCode} ${next.body}`
      if (out !== null) return out
    }
    if (sent.whole !== undefined) {
      const wrong = whole(sent, body, after, who)
      if (wrong !== null) return wrong
    }
  }
  if (format !== undefined && res.statusCode === 200) {
    const ids = format === 'ndjson' ? res.body.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)) : []
    const out = rowsOutOfScope(ids, 'doc', after, who, true)
    if (out !== null) return out
  }
  if (sent.id !== undefined && !inScope(before, who, sent.kind, sent.id, true)) {
    // A row out of scope is a row that does not exist: the same answer as for an id never used.
    const missing = await send(app, sent, 9999)
    if (res.statusCode !== missing.statusCode || res.body.replace(/\b\d+\b/g, 'n') !== missing.body.replace(/\b\d+\b/g, 'n')) {
      return `the ${sent.kind} ${sent.id} out of scope answers ${res.statusCode} ${res.body}, a missing one ${missing.statusCode} ${missing.body}`
    }
  }
  if (!sent.read) return writeProblem(sent, res, before, after, who, bulk ? matching : undefined)
  if (!unchanged(before, after)) return 'a read changed the tables'
  // Non-interference: other users' rows change, the read answers the same.
  await actElsewhere(app, mode, who, other, counter)
  const again = await send(app, sent)
  // A cursor is sealed afresh each time: its text differs, what it pages does not (followed above).
  const same = (r: LightMyRequestResponse): string => `${r.statusCode}\n${headersOf(r).replace(/^link: .*$/m, '')}\n${r.body.replace(/"next_cursor":"[^"]*"/, '"next_cursor":"…"')}`
  if (same(res) !== same(again)) return `the answer changed when rows out of scope did:\n${same(res).slice(0, 600)}\n---\n${same(again).slice(0, 600)}`
  return null
}

async function hunt (t: Test, mode: Mode, name: string, command: fc.Arbitrary<Sent>): Promise<void> {
  const app = mode === 'claims' ? await claimsApp(t) : await scopeApp(t, mode)
  if (typeof app === 'string') {
    t.test(name, { skip: `this server cannot make a role (${app}): PGlite is one user` }, () => {})
    return
  }
  const counter = { n: 0 }
  const statuses = new Map<number, number>()
  let requests = 0
  await fc.assert(fc.asyncProperty(fc.array(fc.tuple(command, elsewhere), { minLength: 1, maxLength: 6 }), async (commands) => {
    await seed(app)
    for (const [sent, other] of commands) {
      requests++
      const found = await step(app, mode, sent, counter, other, statuses)
      if (found !== null) throw new Error(`${String(sent.user)} ${sent.options.method ?? 'GET'} ${sent.options.url} ${JSON.stringify(sent.options.payload ?? '')} ${JSON.stringify(sent.options.headers ?? {})}: ${found}`)
    }
  }), { numRuns: RUNS })
  t.ok(requests >= RUNS, `${name}: ${requests} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
}

const mixed = fc.oneof({ weight: 3, arbitrary: writes }, { weight: 1, arbitrary: reads })

t.test('reads of a scoped client see, count and aggregate only their rows', async (t) => {
  await hunt(t, 'scope', 'reads', reads)
})

t.test('writes of a scoped client change only their rows, and a refused one nothing', async (t) => {
  await hunt(t, 'scope', 'writes', mixed)
})

t.test('the same under scopes through relations: a doc is also its folder owner\'s, a folder its docs\' owners\'', async (t) => {
  await hunt(t, 'shared', 'shared', fc.oneof(reads, mixed))
})

t.test('the same reads and writes under row-level security (claims and a role)', async (t) => {
  await hunt(t, 'claims', 'claims', fc.oneof(reads, mixed))
})
