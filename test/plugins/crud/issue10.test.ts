import t from 'tap'
import { column, defineTable } from '../../../lib/table/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { buildApp } from '../../helpers/app.js'
import { testDatabase } from '../../helpers/db.js'

// Issue 10, items 9 and 10: a choices column without a default, and repeated filters with empty values.

const db = await testDatabase(t)
const dish = defineTable('i10_dish', {
  name: column.varchar({ length: 50 }),
  course: column.varchar({ length: 10, choices: { starter: 'starter', main: 'main' } }),
  size: column.varchar({ length: 10, default: 'large', choices: { small: 'small', large: 'large' } })
})

t.test('a NOT NULL column with choices and no declared default: leaving it out is a 422, never a stored ""', async (t) => {
  const app = await buildApp(t, db, [dish], async (app) => { await app.register(tableCrud, { table: dish, prefix: '/dishes', readOnly: false }) })
  const missing = await app.inject({ method: 'POST', url: '/dishes/', payload: { name: 'soup' } })
  t.equal(missing.statusCode, 422)
  t.match(missing.json(), { statusCode: 422, code: 'TABLECRUD_ERR_DB_NOT_NULL', details: { columns: ['course'] } })
  t.same((await db.pool.query('SELECT count(*)::int AS n FROM i10_dish')).rows[0].n, 0, 'nothing written')
  const given = await app.inject({ method: 'POST', url: '/dishes/', payload: { name: 'soup', course: 'starter' } })
  t.equal(given.statusCode, 201)
  t.match(given.json(), { name: 'soup', course: 'starter', size: 'large' }, 'a declared default still applies')
})

t.test('a repeated non-array filter is a 400, empty values included', async (t) => {
  const app = await buildApp(t, db, [dish], async (app) => { await app.register(tableCrud, { table: dish, prefix: '/dishes' }) })
  for (const url of ['/dishes/?name=&name=soup', '/dishes/?name=soup&name=', `/dishes/?${'name=&'.repeat(300)}`, '/dishes/?course=&course=']) {
    const response = await app.inject(url)
    t.equal(response.statusCode, 400, url.slice(0, 40))
    t.match(response.json(), { code: 'TABLECRUD_ERR_QS_REPEATED', message: /name|course/ })
  }
  t.equal((await app.inject('/dishes/?name=')).statusCode, 200, 'one empty value is no filter, as before')
})
