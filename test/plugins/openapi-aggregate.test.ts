import t from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import SwaggerParser from '@apidevtools/swagger-parser'
import { openApi } from '../../plugins/openapi.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'
import { film, person } from '../fixtures/aggregates.js'

/*
 * OpenAPI documents GET `/aggregate/` and its parameters (SPEC §8.3) and `__search` (SPEC
 * §8.4), and only where the mount and the table enable them. No database is needed.
 */

const app = Fastify()
await app.register(fastifyPostgres, { connectionString: 'postgres://postgres@127.0.0.1:1/none' })
await app.register(openApi, { info: { title: 'Aggregates', version: '1.0.0' } })
await app.register(tableCrud, { table: film, prefix: '/films', aggregates: true, maxJoins: 1 })
await app.register(tableCrud, { table: person, prefix: '/people' })
await app.ready()
t.teardown(async () => await app.close())
const doc = JSON.parse(JSON.stringify(app.swagger())) as Record<string, any>

t.test('the aggregate route, its parameters and its answer', async (t) => {
  const op = doc.paths['/films/aggregate/'].get
  t.equal(op.operationId, 'agg_film.aggregate')
  t.strictSame(Object.keys(op.responses).sort(), ['200', '400', '503'])
  t.strictSame(op.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/AggregateResponse' })
  t.match(doc.components.schemas.AggregateResponse, { properties: { rows: { type: 'array', items: { type: 'object', additionalProperties: true } } } })
  const names = (op.parameters as Array<{ name: string, in: string }>).filter((p) => p.in === 'query').map((p) => p.name)
  for (const name of ['__aggregate', '__group_by', '__having', '__order', '__page', '__page_size', '__readable', '__range_header', '__range_header_name', '__search', 'year', 'year__operator', 'director.name']) {
    t.ok(names.includes(name), `${name} is documented`)
  }
  t.notOk(names.includes('__visible_fields'), 'no __visible_fields: outputs are named by __group_by and __aggregate')
  t.notOk(names.includes('secret_note'), 'no secret column')
  t.equal(doc.paths['/people/aggregate/'], undefined, 'a mount without aggregates documents no route')
  await SwaggerParser.validate(structuredClone(doc) as never)
})

t.test('__search is documented where the table searches', async (t) => {
  const search = (path: string): unknown => (doc.paths[path].get.parameters as Array<{ name: string }>).find((p) => p.name === '__search')
  t.match(search('/films/'), { schema: { type: 'string', pattern: '^[^\\u0000]*$' }, description: /Full-text search of title, overview/ }, 'no NUL, which the server refuses')
  t.ok(search('/films/count/'))
  t.equal(search('/people/'), undefined)
})
