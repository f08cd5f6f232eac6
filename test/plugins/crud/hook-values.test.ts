import t from 'tap'
import { column, defineTable } from '../../../lib/table/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { buildApp } from '../../helpers/app.js'
import { testDatabase } from '../../helpers/db.js'
import { errorOf } from './write-fixtures.js'

/** What hooks hand back is checked like a body: they are code, but the database must not see garbage. */
const note = defineTable('hook_note', {
  title: column.varchar({ length: 20 }),
  tags: column.array(column.varchar({ length: 10 }))
})

const db = await testDatabase(t)

t.test('a key a hook adds that is not a column is not written', async (t) => {
  const app = await buildApp(t, db, [note], async (app) => {
    await app.register(tableCrud, {
      table: note,
      prefix: '/notes',
      readOnly: false,
      hooks: [{ hookType: 'preSave', callable: (row) => ({ ...row, not_a_column: 1 }) }]
    })
  })
  const response = await app.inject({ method: 'POST', url: '/notes/', payload: { title: 'a' } })
  t.equal(response.statusCode, 201)
  t.same(response.json(), { id: 1, title: 'a', tags: [] })
})

t.test('a value a hook returns that does not fit its column is a 400 naming it, and nothing is written', async (t) => {
  const app = await buildApp(t, db, [note], async (app) => {
    await app.register(tableCrud, {
      table: note,
      prefix: '/notes',
      readOnly: false,
      // The types refuse it: a JavaScript hook, or one that casts, can still do it.
      hooks: [{ hookType: 'prePatch', callable: (_id, values) => ({ ...values, tags: 'oops' as unknown as string[] }) }]
    })
  })
  const before = (await app.inject('/notes/1/')).json()
  const response = await app.inject({ method: 'PATCH', url: '/notes/1/', payload: { title: 'b' } })
  t.equal(response.statusCode, 400)
  t.same(response.json(), {
    statusCode: 400,
    code: 'TABLECRUD_ERR_BODY_INVALID',
    error: 'Bad Request',
    message: 'The body is invalid: tags must be an array',
    errors: [{ field: 'tags', message: 'must be an array' }]
  })
  t.same((await app.inject('/notes/1/')).json(), before)
})

/** POST converts a body's scalars once (issue 17): what validators and hooks change is still what is written. */
const event = defineTable('hook_event', {
  title: column.varchar({ length: 20 }),
  at: column.timestamp(),
  tags: column.array(column.varchar({ length: 10 }))
})

t.test('POST writes what validators and preSave hooks leave, each value converted as the column wants', async (t) => {
  const app = await buildApp(t, db, [event], async (app) => {
    await app.register(tableCrud, {
      table: event,
      prefix: '/events',
      readOnly: false,
      // A validator changing the body in place after it was checked: its value is the one written.
      validators: { postSingle: [(_crud, request) => { (request.body as Record<string, unknown>).title = 'by validator' }] },
      hooks: [{
        hookType: 'preSave',
        callable: (row) => {
          // An array changed in place keeps its reference: it is converted again.
          (row.tags as string[]).push('hook')
          return { ...row, at: '2024-06-01T10:00:00+02:00' }
        }
      }]
    })
  })
  const response = await app.inject({ method: 'POST', url: '/events/', payload: { title: 'given', at: '2024-01-01T00:00:00', tags: ['a'] } })
  t.equal(response.statusCode, 201)
  t.same(response.json(), { id: 1, title: 'by validator', at: '2024-06-01T08:00:00', tags: ['a', 'hook'] })
})

t.test('POST without hooks writes the body as converted when it was checked', async (t) => {
  const app = await buildApp(t, db, [event], async (app) => {
    await app.register(tableCrud, { table: event, prefix: '/events', readOnly: false })
  })
  const response = await app.inject({ method: 'POST', url: '/events/', payload: { title: 'given', at: '2024-01-01T12:30:00.5+01:00', tags: ['a'] } })
  t.equal(response.statusCode, 201)
  // The table is the previous test's: only the id differs.
  t.same({ ...response.json(), id: 0 }, { id: 0, title: 'given', at: '2024-01-01T11:30:00.500000', tags: ['a'] })
})

t.test('POST without hooks writes what a validator leaves in the body: a value it changes is converted again, one the column cannot take is a 400', async (t) => {
  const app = await buildApp(t, db, [event], async (app) => {
    await app.register(tableCrud, {
      table: event,
      prefix: '/events',
      readOnly: false,
      validators: {
        postSingle: [(_crud, request) => {
          const body = request.body as Record<string, unknown>
          body.at = body.title === 'bad' ? 'not a time' : '2024-06-01T10:00:00+02:00'
        }]
      }
    })
  })
  const before = (await app.inject({ method: 'GET', url: '/events/count/' })).json().count as number
  const written = await app.inject({ method: 'POST', url: '/events/', payload: { title: 'given', at: '2024-01-01T00:00:00', tags: ['a'] } })
  t.equal(written.statusCode, 201)
  t.same({ ...written.json(), id: 0 }, { id: 0, title: 'given', at: '2024-06-01T08:00:00', tags: ['a'] })
  const refused = await app.inject({ method: 'POST', url: '/events/', payload: { title: 'bad', at: '2024-01-01T00:00:00' } })
  t.equal(refused.statusCode, 400)
  t.strictSame(refused.json(), errorOf(400, 'TABLECRUD_ERR_BODY_INVALID', 'Bad Request', 'The body is invalid: at must be an ISO 8601 date or date-time',
    { errors: [{ field: 'at', message: 'must be an ISO 8601 date or date-time' }] }))
  t.equal((await app.inject({ method: 'GET', url: '/events/count/' })).json().count, before + 1, 'the refused row is not written')
})

t.test('PUT, PATCH and bulk PATCH write what validators and hooks leave, each value converted as the column wants', async (t) => {
  // Each validator changes the body in place after it was checked; each hook changes an array in place and a scalar.
  const byValidator = (_crud: unknown, request: { body: unknown }): void => { (request.body as Record<string, unknown>).title = 'by validator' }
  const hooked = (row: Record<string, unknown>): Record<string, unknown> => {
    (row.tags as string[]).push('hook')
    return { ...row, at: '2024-06-01T10:00:00+02:00' }
  }
  const app = await buildApp(t, db, [event], async (app) => {
    await app.register(tableCrud, {
      table: event,
      prefix: '/events',
      readOnly: false,
      allowBulkUpdate: true,
      validators: { putSingle: [byValidator], patchSingle: [byValidator], patchAll: [byValidator] },
      hooks: [
        { hookType: 'preSave', callable: hooked },
        { hookType: 'prePatch', callable: (_id, values) => hooked(values) }
      ]
    })
  })
  const { id } = (await app.inject({ method: 'POST', url: '/events/', payload: { title: 'new', tags: [] } })).json()
  const written = { id, title: 'by validator', at: '2024-06-01T08:00:00' }
  const put = await app.inject({ method: 'PUT', url: `/events/${id}/`, payload: { title: 'given', at: '2024-01-01T00:00:00', tags: ['a'] } })
  t.equal(put.statusCode, 200)
  t.same(put.json(), { ...written, tags: ['a', 'hook'] })
  const patch = await app.inject({ method: 'PATCH', url: `/events/${id}/`, payload: { title: 'given', at: '2024-01-01T00:00:00', tags: ['b'] } })
  t.equal(patch.statusCode, 200)
  t.same(patch.json(), { ...written, tags: ['b', 'hook'] })
  const bulk = await app.inject({ method: 'PATCH', url: `/events/?id=${id}`, payload: { title: 'given', at: '2024-01-01T00:00:00', tags: ['c'] } })
  t.equal(bulk.statusCode, 200)
  t.same(bulk.json(), { count: 1 })
  t.same((await app.inject(`/events/${id}/`)).json(), { ...written, tags: ['c', 'hook'] })
})
