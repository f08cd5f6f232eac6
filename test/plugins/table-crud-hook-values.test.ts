import t from 'tap'
import { column, defineTable } from '../../lib/table/index.js'
import { tableCrud } from '../../plugins/table-crud.js'
import { buildApp } from '../helpers/app.js'
import { testDatabase } from '../helpers/db.js'

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
      hooks: [{ hookType: 'prePatch', callable: (_id, values) => ({ ...values, tags: 'oops' }) }]
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
