import t, { type Test } from 'tap'
import type { FastifyInstance, FastifyRequest, InjectOptions, LightMyRequestResponse } from 'fastify'
import { column, defineTable, type Table } from '../../../lib/table/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'
import { errorOf, freshApp, json, rowsOf } from './write-fixtures.js'

/*
 * Row scopes (SPEC §8.6). A project belongs to a user (`owner`): the table's definition scopes
 * it to the user of the request (async, column → value), and its mount also hides archived
 * ones (a tree string). The user is the `x-user` header, as an auth plugin would set it.
 */

const userOf = (request: FastifyRequest): number => Number(request.headers['x-user'] ?? 0)

const team = defineTable('sc_team', {
  name: column.varchar({ length: 30, required: true })
}, { readable: 'name' })

const project = defineTable('sc_project', {
  name: column.varchar({ length: 30, required: true, unique: true }),
  owner: column.integer(),
  archived: column.boolean(),
  rank: column.integer(),
  team: column.foreignKey(team, { null: true, onDelete: 'set null', related: 'projects' })
}, { readable: 'name', scope: async (request: FastifyRequest) => await Promise.resolve({ owner: userOf(request) }) })

const task = defineTable('sc_task', {
  title: column.varchar({ length: 30, required: true }),
  project: column.foreignKey(project, { null: true, onDelete: 'cascade', related: 'tasks' })
}, { readable: 'title' })

const TABLES = [team, project, task]

/** p1 is user 1's, p2 user 2's, p3 user 1's but archived (out of the mount's scope). */
async function seed (app: FastifyInstance): Promise<void> {
  await app.pg.query("INSERT INTO sc_team (id, name) VALUES (1, 'red')")
  await app.pg.query(`INSERT INTO sc_project (id, name, owner, archived, rank, team) VALUES
    (1, 'p1', 1, false, 0, 1), (2, 'p2', 2, false, 0, 1), (3, 'p3', 1, true, 0, 1)`)
  await app.pg.query("SELECT setval(pg_get_serial_sequence('sc_project', 'id'), 3)")
  await app.pg.query("INSERT INTO sc_task (title, project) VALUES ('t1', 1), ('t2', 2), ('t3', 3)")
}

async function scopedApp (tt: Test, routes: string[] = []): Promise<FastifyInstance> {
  const db = await testDatabase(tt)
  const app = await freshApp(tt, db, async (app) => {
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.push(`${method} ${route.url}`)
      const responses = Object.keys((route.schema as { response?: object } | undefined)?.response ?? {})
      if (route.url.startsWith('/projects') && responses.includes('403')) routes.push(`403 ${[route.method].flat().join(',')} ${route.url}`)
    })
    await app.register(tableCrud, {
      table: project,
      prefix: '/projects',
      readOnly: false,
      allowBulkDelete: true,
      allowBulkUpdate: true,
      aggregates: true,
      maxJoins: 1,
      scope: () => '(archived.e.false)'
    })
    await app.register(tableCrud, { table: team, prefix: '/teams', maxJoins: 1 })
    await app.register(tableCrud, { table: task, prefix: '/tasks', maxJoins: 1 })
  }, TABLES)
  await seed(app)
  return app
}

const as = (user: number, options: InjectOptions): InjectOptions => ({ ...options, headers: { ...options.headers, 'x-user': String(user) } })

const OUT_OF_SCOPE = errorOf(403, 'TABLECRUD_ERR_OUT_OF_SCOPE', 'Forbidden', 'The row is outside your scope.')

/** What the table holds, read directly: the proof that nothing out of scope was written. */
async function stored (app: FastifyInstance): Promise<unknown[]> {
  return (await rowsOf(app, project)).map((r) => [r.id, r.name, r.owner, r.archived, r.rank])
}

const BEFORE = [[1, 'p1', 1, false, 0], [2, 'p2', 2, false, 0], [3, 'p3', 1, true, 0]]

/**
 * Every route of the scoped mount, with a request for each and what it must answer: reads see
 * p1 only, writes to p2 or p3 are 404s, writes that would leave the scope 403s.
 */
type Check = (res: LightMyRequestResponse, app: FastifyInstance) => Promise<void> | void

function routeChecks (tt: Test): Map<string, Array<{ request: InjectOptions, check: Check }>> {
  const status = (code: number, body?: unknown) => (res: LightMyRequestResponse): void => {
    tt.equal(res.statusCode, code, res.body)
    if (body !== undefined) tt.strictSame(json(res), body)
  }
  const refused: Check = async (res, app) => {
    tt.strictSame(json(res), OUT_OF_SCOPE)
    tt.strictSame(await stored(app), BEFORE, 'nothing written')
  }
  const p1 = { id: 1, name: 'p1', owner: 1, archived: false, rank: 0, team: 1 }
  return new Map<string, Array<{ request: InjectOptions, check: Check }>>([
    ['GET /projects/', [
      { request: { method: 'GET', url: '/projects/?__range_header=true' }, check: (res) => { status(200, { rows: [p1] })(res); tt.equal(res.headers['content-range'], 'sc_project 0-0/1') } },
      { request: { method: 'GET', url: '/projects/?__cursor=&__page_size=1' }, check: status(200, { rows: [p1], next_cursor: null }) },
      { request: { method: 'GET', url: '/projects/?__format=ndjson' }, check: (res) => tt.equal(res.body, JSON.stringify(p1) + '\n') },
      { request: { method: 'GET', url: '/projects/?__format=csv&__visible_fields=id,name' }, check: (res) => tt.equal(res.body, 'id,name\r\n1,p1\r\n') },
      { request: { method: 'GET', url: '/projects/?name=p&__readable=true&__visible_fields=name,team' }, check: status(200, { rows: [{ name: 'p1', team: 1, team_readable: 'red' }] }) }
    ]],
    ['GET /projects/:id/', [
      { request: { method: 'GET', url: '/projects/1/' }, check: status(200, p1) },
      { request: { method: 'GET', url: '/projects/2/' }, check: status(404) },
      { request: { method: 'GET', url: '/projects/3/' }, check: status(404) }
    ]],
    ['GET /projects/count/', [{ request: { method: 'GET', url: '/projects/count/' }, check: status(200, { count: 1, page_size: 15 }) }]],
    ['GET /projects/ids/', [{ request: { method: 'GET', url: '/projects/ids/' }, check: status(200, { 1: 'p1' }) }]],
    ['GET /projects/references/', [{ request: { method: 'GET', url: '/projects/references/' }, check: status(200, { references: [{ tableName: 'sc_task', columnName: 'project' }] }) }]],
    ['GET /projects/new/', [{ request: { method: 'GET', url: '/projects/new/' }, check: (res) => { status(200)(res); tt.equal(json(res).id, null, 'no row read') } }]],
    ['GET /projects/schema/', [{ request: { method: 'GET', url: '/projects/schema/' }, check: (res) => { status(200)(res); tt.equal(json(res).type, 'object') } }]],
    ['GET /projects/aggregate/', [{ request: { method: 'GET', url: '/projects/aggregate/?__aggregate=count,sum(rank)&__group_by=owner' }, check: status(200, { rows: [{ owner: 1, count: 1, sum_rank: 0 }] }) }]],
    ['POST /projects/', [
      { request: { method: 'POST', url: '/projects/', payload: { name: 'mine', owner: 2 } }, check: refused },
      { request: { method: 'POST', url: '/projects/', payload: { name: 'mine', owner: 1, archived: true } }, check: refused },
      { request: { method: 'POST', url: '/projects/', payload: [{ name: 'a', owner: 1 }, { name: 'b', owner: 2 }] }, check: refused },
      { request: { method: 'POST', url: '/projects/?__on_conflict=name', payload: { name: 'p2', owner: 1 } }, check: refused },
      { request: { method: 'POST', url: '/projects/?__on_conflict=name', payload: [{ name: 'p1', owner: 1 }, { name: 'p2', owner: 1 }] }, check: refused },
      { request: { method: 'POST', url: '/projects/?__on_conflict=name', payload: { name: 'p1', owner: 2 } }, check: refused }
    ]],
    ['PUT /projects/:id/', [
      { request: { method: 'PUT', url: '/projects/2/', payload: { name: 'p2', owner: 1 } }, check: status(404) },
      { request: { method: 'PUT', url: '/projects/1/', payload: { name: 'p1', owner: 2 } }, check: refused }
    ]],
    ['PATCH /projects/:id/', [
      { request: { method: 'PATCH', url: '/projects/2/', payload: { rank: 9 } }, check: status(404) },
      { request: { method: 'PATCH', url: '/projects/3/', payload: { archived: false } }, check: status(404) },
      { request: { method: 'PATCH', url: '/projects/2/', headers: { 'if-match': '*' }, payload: { rank: 9 } }, check: status(404) },
      { request: { method: 'PATCH', url: '/projects/1/', payload: { archived: true } }, check: refused }
    ]],
    ['PATCH /projects/', [
      { request: { method: 'PATCH', url: '/projects/?id__operator=not_null', payload: { owner: 2 } }, check: refused },
      { request: { method: 'PATCH', url: '/projects/?id__operator=not_null', payload: { rank: 0 } }, check: status(200, { count: 1 }) }
    ]],
    ['DELETE /projects/:id/', [{ request: { method: 'DELETE', url: '/projects/2/' }, check: async (res, app) => { status(404)(res); tt.strictSame(await stored(app), BEFORE) } }]],
    ['DELETE /projects/', [{
      request: { method: 'DELETE', url: '/projects/?id__operator=not_null' },
      check: async (res, app) => {
        status(204)(res)
        tt.equal(res.headers['x-deleted-count'], '1')
        tt.strictSame(await stored(app), BEFORE.slice(1), 'only p1 deleted')
      }
    }]]
  ])
}

t.test('every route of a scoped mount reads and writes only the rows in its scope', async (t) => {
  const routes: string[] = []
  const app = await scopedApp(t, routes)
  const checks = routeChecks(t)
  // Each route the mount registered, under the path and method it answers: every one that does
  // not answer 405 (a method the route lacks) or serve only OPTIONS/HEAD must be checked here.
  const mounted = [...new Set(routes.filter((r) => r.includes(' /projects') && !/^(HEAD|OPTIONS|TRACE|403) /.test(r)).map((r) => r.replace(/([^/])$/, '$1/')))]
  for (const route of mounted) {
    if (checks.has(route)) continue
    const [method, url] = route.split(' ') as [InjectOptions['method'], string]
    const res = await app.inject(as(1, { method, url: url.replace(':id', '1').replace('*', 'no/such/path'), payload: method === 'GET' || method === 'DELETE' ? undefined : {} }))
    // A method the path lacks (405), or no path at all under the prefix (404): nothing read.
    t.ok([404, 405].includes(res.statusCode), `${route} answers ${res.statusCode}: a route that reads or writes must be checked for scopes here`)
  }
  t.equal(checks.size, 14, 'every route that reads or writes listed')
  t.strictSame([...new Set(routes.filter((r) => r.startsWith('403 ')).map((r) => r.replace(/([^/])$/, '$1/')))].sort(), ['403 PATCH /projects/', '403 PATCH /projects/:id/', '403 POST /projects/', '403 PUT /projects/:id/'],
    'OpenAPI documents the 403 of each write a scope may refuse')
  for (const [route, cases] of checks) {
    t.ok(mounted.includes(route), `${route} is a route of the mount`)
    for (const { request, check } of cases) {
      const res = await app.inject(as(1, request))
      await check(res, app)
    }
  }
})

t.test('a scoped table read from other mounts: join, embed, path filter and __readable', async (t) => {
  const app = await scopedApp(t)
  const get = async (url: string, user = 1): Promise<unknown> => json(await app.inject(as(user, { method: 'GET', url })))
  // Only the definition's scope applies there (the archived filter is the projects mount's own).
  t.strictSame(await get('/tasks/?__visible_fields=title,project.name&__order=id'), {
    rows: [
      { title: 't1', project: { name: 'p1' } }, { title: 't2', project: { name: null } }, { title: 't3', project: { name: 'p3' } }
    ]
  }, 'a join: p2 is not user 1\'s')
  t.strictSame(await get('/tasks/?__readable=true&__visible_fields=title,project&__order=id'), {
    rows: [
      { title: 't1', project: 1, project_readable: 'p1' }, { title: 't2', project: 2, project_readable: null }, { title: 't3', project: 3, project_readable: 'p3' }
    ]
  }, '__readable')
  t.strictSame(await get('/tasks/?project.name=p&__visible_fields=title&__order=id'), { rows: [{ title: 't1' }, { title: 't3' }] }, 'a path filter')
  t.strictSame(await get('/tasks/?project.name=p2&__visible_fields=title', 2), { rows: [{ title: 't2' }] }, 'user 2 sees their own')
  t.strictSame(await get('/teams/1/?__visible_fields=name,projects.name'), { name: 'red', projects: [{ name: 'p3' }, { name: 'p1' }] }, 'an embed')
  t.strictSame(await get('/teams/'), { rows: [{ id: 1, name: 'red' }] }, 'a table without scope is read whole')
  t.strictSame(await get('/tasks/count/?__or=(project.name.e.p2)'), { count: 0, page_size: 15 }, 'a tree through the relation')
})

t.test('a bad scope fails clearly: a 500 whose log names the column', async (t) => {
  const db = await testDatabase(t)
  const logs: string[] = []
  const app = await freshApp(t, db, async (app) => {
    app.addHook('onError', async (_request, _reply, error) => { logs.push(error.message) })
    await app.register(tableCrud, { table: team, prefix: '/teams', scope: () => ({ colour: 'red' }) })
    await app.register(tableCrud, { table: task, prefix: '/tasks', scope: () => '(title.nope.1)' })
    await app.register(tableCrud, { table: task, prefix: '/tasks2', scope: () => ({ project: 'x' }) })
    await app.register(tableCrud, { table: task, prefix: '/tasks3', scope: () => 42 as never })
  }, TABLES)
  const res = await app.inject({ method: 'GET', url: '/teams/' })
  t.equal(res.statusCode, 500)
  t.notMatch(res.body, 'colour', 'the column is not shown to the client')
  t.equal((await app.inject({ method: 'GET', url: '/tasks/' })).statusCode, 500)
  t.equal((await app.inject({ method: 'GET', url: '/tasks2/' })).statusCode, 500)
  t.equal((await app.inject({ method: 'GET', url: '/tasks3/' })).statusCode, 500)
  t.strictSame(logs, [
    'The scope of sc_team is invalid: "colour" is not a column; the columns are id, name',
    'The scope of sc_task is invalid: __and: unknown field "title.nope" at 7.',
    'The scope of sc_task is invalid: "x" is not a value of the column project (type foreignKey)',
    'The scope of sc_task is invalid: a scope function must answer an object of column → value or a tree string'
  ])
})

t.test('a scope function may refuse with a status, and null means IS NULL', async (t) => {
  const db = await testDatabase(t)
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, {
      table: task,
      prefix: '/tasks',
      scope: (request: FastifyRequest) => {
        if (request.headers['x-user'] === undefined) throw Object.assign(new Error('Log in first'), { statusCode: 401 })
        return { project: null }
      }
    })
  }, TABLES)
  await seed(app)
  await app.pg.query("INSERT INTO sc_task (title, project) VALUES ('loose', NULL)")
  const refused = await app.inject({ method: 'GET', url: '/tasks/' })
  t.equal(refused.statusCode, 401)
  t.equal(json(refused).message, 'Log in first')
  t.strictSame(json(await app.inject(as(1, { method: 'GET', url: '/tasks/?__visible_fields=title' }))), { rows: [{ title: 'loose' }] })
})

t.test('a bulk PATCH with nothing to set asks the scope too: a refusing one answers, not {"count": 0}', async (t) => {
  const db = await testDatabase(t)
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, {
      table: task,
      prefix: '/tasks',
      readOnly: false,
      allowBulkUpdate: true,
      scope: (request: FastifyRequest) => {
        if (request.headers['x-user'] === undefined) throw Object.assign(new Error('Log in first'), { statusCode: 401 })
        return { project: null }
      }
    })
  }, TABLES)
  const refused = await app.inject({ method: 'PATCH', url: '/tasks/?id__operator=not_null', payload: {} })
  t.strictSame([refused.statusCode, json(refused).message], [401, 'Log in first'])
  t.strictSame(json(await app.inject(as(1, { method: 'PATCH', url: '/tasks/?id__operator=not_null', payload: {} }))), { count: 0 }, 'a user in scope: nothing to set')
})

t.test('an upsert under a scope through a relation updates only a conflicting row in scope', async (t) => {
  // A scope whose tree follows a ForeignKey: a note is in scope when its project is the user's.
  const note = defineTable('sc_note', {
    code: column.varchar({ length: 10, unique: true, required: true }),
    rank: column.integer(),
    project: column.foreignKey(project, { null: true, related: 'notes' })
  }, { scope: (request: FastifyRequest) => `(project.owner.e.${userOf(request)})` })
  const db = await testDatabase(t)
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: note, prefix: '/notes', readOnly: false })
  }, [...TABLES, note])
  await seed(app)
  await app.pg.query("INSERT INTO sc_note (code, rank, project) VALUES ('mine', 0, 1), ('theirs', 0, 2)")
  const upsert = async (payload: object): Promise<LightMyRequestResponse> => await app.inject(as(1, { method: 'POST', url: '/notes/?__on_conflict=code', payload }))
  const updated = await upsert({ code: 'mine', rank: 5, project: 1 })
  t.strictSame([updated.statusCode, json(updated).rank], [200, 5])
  t.strictSame(json(await upsert({ code: 'theirs', rank: 5, project: 1 })), OUT_OF_SCOPE, 'the conflicting row is out of scope')
  t.strictSame(json(await upsert([{ code: 'new', project: 1 }, { code: 'theirs', rank: 6, project: 1 }])), OUT_OF_SCOPE)
  t.equal((await upsert({ code: 'new', project: 1 })).statusCode, 201)
  t.strictSame((await app.pg.query('SELECT code, rank, project FROM sc_note ORDER BY id')).rows,
    [{ code: 'mine', rank: 5, project: 1 }, { code: 'theirs', rank: 0, project: 2 }, { code: 'new', rank: 0, project: 1 }])
})

t.test('a nested insert is checked with its children: a scope may reach the row through them', async (t) => {
  // A board is in scope when one of its cards is the user's (a scope through a to-many relation).
  const board: Table = defineTable('sc_board', {
    name: column.varchar({ length: 10, required: true })
  }, { scope: (request: FastifyRequest) => `(cards.owner.e.${userOf(request)})` })
  const card = defineTable('sc_card', { owner: column.integer(), board: column.foreignKey(board, { related: 'cards' }) })
  const db = await testDatabase(t)
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: board, prefix: '/boards', readOnly: false, nestedWrites: ['cards'] })
  }, [board, card])
  const post = async (owner: number): Promise<LightMyRequestResponse> =>
    await app.inject(as(1, { method: 'POST', url: '/boards/', payload: { name: `b${owner}`, cards: [{ owner }] } }))
  t.strictSame(json(await post(2)), OUT_OF_SCOPE, 'another\'s card: the board is not the user\'s')
  t.strictSame([await rowsOf(app, board), await rowsOf(app, card)], [[], []], 'nothing written')
  const created = await post(1)
  t.equal(created.statusCode, 201, created.body)
  t.strictSame(json(created).cards.map((c: { owner: number }) => c.owner), [1])
})

t.test('scope is checked at registration and on the table definition', async (t) => {
  t.throws(() => defineTable('sc_bad', { name: column.text() }, { scope: 'owner' as never }), { message: 'Table sc_bad: scope must be a function (request) => conditions' })
  const db = await testDatabase(t)
  await t.rejects(freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: team, prefix: '/teams', scope: { owner: 1 } as never })
  }, TABLES), { code: 'TABLECRUD_ERR_OPTIONS', message: 'tableCrud: the option scope must be a function (request) => conditions' })
})

t.test('a scope through its own table reads that table unscoped there; estimated counts count the scope', async (t) => {
  const node: Table = defineTable('sc_node', {
    name: column.varchar({ length: 10 }),
    parent: column.foreignKey(() => node, { null: true, related: 'children' })
  }, { scope: () => '(or(parent.is_null,parent.name.starts.a))' })
  const db = await testDatabase(t)
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: node, prefix: '/nodes', maxJoins: 1 })
    await app.register(tableCrud, { table: project, prefix: '/estimated', countMode: 'estimated' })
  }, [node, team, project])
  await app.pg.query("INSERT INTO sc_node (id, name, parent) VALUES (1, 'a', NULL), (2, 'ab', 1), (3, 'b', NULL), (4, 'bx', 3)")
  t.strictSame(json(await app.inject({ method: 'GET', url: '/nodes/?__visible_fields=name&__order=id' })), { rows: [{ name: 'a' }, { name: 'ab' }, { name: 'b' }] })
  t.strictSame(json(await app.inject({ method: 'GET', url: '/nodes/?__visible_fields=name,parent.name&name=bx' })), { rows: [] })
  await app.pg.query("INSERT INTO sc_project (name, owner) VALUES ('mine', 1), ('theirs', 2), ('also', 2)")
  t.strictSame(json(await app.inject(as(1, { method: 'GET', url: '/estimated/count/' }))), { count: 1, page_size: 15, estimated: false }, 'not the table statistics')
  t.strictSame(json(await app.inject(as(2, { method: 'GET', url: '/estimated/count/?name=s' }))), { count: 2, page_size: 15, estimated: false })
})

t.test('writes that stay in the scope go through', async (t) => {
  const app = await scopedApp(t)
  const send = async (request: InjectOptions): Promise<LightMyRequestResponse> => await app.inject(as(1, request))
  const one = await send({ method: 'POST', url: '/projects/', payload: { name: 'new', owner: 1 } })
  t.equal(one.statusCode, 201)
  t.equal(one.headers.location, `/projects/${json(one).id as number}/`)
  const many = await send({ method: 'POST', url: '/projects/', payload: [{ name: 'n1', owner: 1 }, { name: 'n2', owner: 1, rank: 2 }] })
  t.strictSame(json(many).rows.map((r: { name: string }) => r.name), ['n1', 'n2'])
  const updated = await send({ method: 'POST', url: '/projects/?__on_conflict=name', payload: { name: 'p1', owner: 1, rank: 5 } })
  t.equal(updated.statusCode, 200)
  t.equal(json(updated).rank, 5)
  t.equal((await send({ method: 'POST', url: '/projects/?__on_conflict=name', payload: [{ name: 'p1', owner: 1, rank: 6 }, { name: 'n3', owner: 1 }] })).statusCode, 200)
  t.equal((await send({ method: 'PUT', url: '/projects/1/', payload: { name: 'p1', owner: 1, rank: 7 } })).statusCode, 200)
  const read = await send({ method: 'GET', url: '/projects/1/' })
  const patched = await send({ method: 'PATCH', url: '/projects/1/', headers: { 'if-match': read.headers.etag as string }, payload: { rank: 8 } })
  t.equal(json(patched).rank, 8)
  t.strictSame(json(await send({ method: 'PATCH', url: '/projects/?name=zzz', payload: { rank: 1 } })), { count: 0 }, 'nothing matched in the scope')
  t.strictSame((await rowsOf(app, project)).filter((r) => r.owner === 2).map((r) => [r.name, r.rank]), [['p2', 0]], 'user 2\'s row untouched')
})

t.test('a nested insert: children of a scoped table must be in its scope', async (t) => {
  const db = await testDatabase(t)
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: team, prefix: '/teams', readOnly: false, nestedWrites: ['projects'] })
  }, TABLES)
  const post = async (owner: number): Promise<LightMyRequestResponse> =>
    await app.inject(as(1, { method: 'POST', url: '/teams/', payload: { name: 'blue', projects: [{ name: `x${owner}`, owner }] } }))
  t.strictSame(json(await post(2)), OUT_OF_SCOPE)
  t.strictSame([await rowsOf(app, team), await rowsOf(app, project)], [[], []], 'nothing written')
  const created = await post(1)
  t.equal(created.statusCode, 201)
  t.strictSame(json(created).projects.map((p: { name: string }) => p.name), ['x1'])
})

t.test('relations whose names clash do not break a mount that walks none (maxJoins 0)', async (t) => {
  // Two ForeignKeys to one table without `related`, and a self-reference named like its table:
  // what `generate` used to write of an existing schema. Finding the scoped tables walked the
  // relations by name, so every write and read was a 500 (docs/table-crud.md promises they work).
  const db = await testDatabase(t)
  const language = defineTable('sc_language', { name: column.text() })
  const film = defineTable('sc_film', {
    language: column.foreignKey(language, { null: true }),
    original: column.foreignKey(language, { null: true })
  })
  const node: Table = defineTable('sc_node', { sc_node: column.foreignKey((): Table => node, { null: true }) })
  const app = await freshApp(t, db, async (app) => {
    await app.register(tableCrud, { table: language, prefix: '/languages', readOnly: false })
    await app.register(tableCrud, { table: film, prefix: '/films', readOnly: false })
    await app.register(tableCrud, { table: node, prefix: '/nodes', readOnly: false })
  }, [language, film, node])
  t.equal((await app.inject({ method: 'POST', url: '/languages/', payload: { name: 'en' } })).statusCode, 201)
  t.equal((await app.inject({ method: 'GET', url: '/languages/1/' })).statusCode, 200)
  t.strictSame(json(await app.inject({ method: 'POST', url: '/films/', payload: { language: 1, original: 1 } })), { id: 1, language: 1, original: 1 })
  t.strictSame(json(await app.inject({ method: 'POST', url: '/nodes/', payload: { sc_node: null } })), { id: 1, sc_node: null })
  t.strictSame(json(await app.inject({ method: 'GET', url: '/nodes/' })).rows, [{ id: 1, sc_node: null }])
})
