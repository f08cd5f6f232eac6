import t from 'tap'
import Fastify, { type FastifyServerOptions } from 'fastify'
import { column, defineTable } from '../../../lib/table/index.js'
import { createTables } from '../../../lib/db/index.js'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { testDatabase } from '../../helpers/db.js'

// A router that takes both forms of a path (`ignoreTrailingSlash`) gets each TableCRUD route
// once, not twice, and every path still answers with and without its trailing slash (SPEC §2).

const db = await testDatabase(t)
const note = defineTable('slash_note', { title: column.varchar({ length: 50 }) })
await createTables(db.pool, [note])

async function appWith (options: FastifyServerOptions): Promise<{ app: ReturnType<typeof Fastify>, routes: number }> {
  const app = Fastify(options)
  let routes = 0
  app.addHook('onRoute', () => { routes++ })
  await app.register(tableCrud, { table: note, prefix: '/notes', readOnly: false, pool: db.pool })
  await app.ready()
  t.teardown(async () => await app.close())
  return { app, routes }
}

const warnings: string[] = []
const onWarning = (warning: Error & { code?: string }): void => { warnings.push(`${warning.code ?? warning.name}: ${warning.message}`) }
process.on('warning', onWarning)
t.teardown(() => { process.off('warning', onWarning) })

const plain = await appWith({})
// routerOptions first: Fastify warns once per process, and passing the old top-level option warns by itself.
for (const options of [{ routerOptions: { ignoreTrailingSlash: true } }, { ignoreTrailingSlash: true }]) {
  t.test(`with ${JSON.stringify(options)}`, async (t) => {
    const { app, routes } = await appWith(options)
    t.ok(routes < plain.routes * 0.6, `${routes} routes instead of ${plain.routes}`)
    const created = await app.inject({ method: 'POST', url: '/notes', payload: { title: 'first' } })
    t.equal(created.statusCode, 201)
    const id = created.json().id as number
    for (const slash of ['/', '']) {
      t.same((await app.inject(`/notes${slash}?id=${id}`)).json().rows, [{ id, title: 'first' }], `the list at /notes${slash}`)
      t.same((await app.inject(`/notes/${id}${slash}`)).json(), { id, title: 'first' }, `the row at /notes/${id}${slash}`)
      t.same((await app.inject(`/notes/count${slash}?id=${id}`)).json(), { count: 1, page_size: 15 })
      const refused = await app.inject({ method: 'PUT', url: `/notes${slash}`, payload: {} })
      t.equal(refused.statusCode, 405)
      t.equal(refused.headers.allow, 'GET, HEAD, POST')
      const options = await app.inject({ method: 'OPTIONS', url: `/notes/${id}${slash}` })
      t.equal(options.statusCode, 204)
      t.equal(options.headers.allow, 'GET, HEAD, PUT, PATCH, DELETE')
    }
    if ('routerOptions' in options) t.same(warnings, [], 'no deprecation warning from reading the router options')
  })
}
