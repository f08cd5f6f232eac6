import t from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import SwaggerParser from '@apidevtools/swagger-parser'
import { column, defineTable, type Table } from '../../lib/table/index.js'
import { openApi } from '../../plugins/openapi.js'
import { tableCrud } from '../../plugins/crud/table-crud.js'

/** The writes of many rows in the OpenAPI document (SPEC §8.5): upsert's parameter, PATCH `/`, the nested body. */

type Doc = Record<string, any>
const NOWHERE = 'postgres://postgres@127.0.0.1:1/none'

const maker = defineTable('ow_maker', { name: column.varchar({ length: 50, required: true, unique: true }) })
// Defined for its ForeignKey: it gives ow_maker the relation pieces.
export const piece = defineTable('ow_piece', {
  title: column.varchar({ length: 50, required: true }),
  maker: column.foreignKey(maker, { null: false, related: 'pieces' })
})

const bare = defineTable('ow_bare', { label: column.text() })

async function documentOf (options: Record<string, unknown>, table: Table = maker): Promise<Doc> {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: NOWHERE })
  await app.register(openApi)
  await app.register(tableCrud, { table, prefix: table === maker ? '/makers' : '/bares', readOnly: false, ...options })
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  await app.close()
  return doc
}
const $ref = (name: string): Doc => ({ $ref: `#/components/schemas/${name}` })

t.test('POST / documents __on_conflict with the column sets it takes, and the 200 of an update', async (t) => {
  const doc = await documentOf({})
  await t.resolves(SwaggerParser.validate(structuredClone(doc) as never))
  const post = doc.paths['/makers/'].post
  const parameter = post.parameters.find((p: Doc) => p.name === '__on_conflict')
  t.match(parameter, { in: 'query', required: false, schema: { type: 'string', enum: ['name'] } })
  t.match(parameter.description, /Upsert/)
  // A rule JSON Schema cannot state, said in words: the server refuses it with a 400.
  t.match(parameter.description, /In an array, two elements with the same value in this column are a 400/)
  t.strictSame(post.responses['200'].content['application/json'].schema, { anyOf: [$ref('OwMakerRow'), $ref('OwMakerCreatedList')] })
  t.notOk('patch' in doc.paths['/makers/'], 'no PATCH / unless allowBulkUpdate')
  const none = await documentOf({}, bare)
  t.notOk(none.paths['/bares/'].post.parameters?.some((p: Doc) => p.name === '__on_conflict'), 'a table with nothing to upsert on does not offer it')
})

t.test('PATCH / with allowBulkUpdate: its filters and __max_affected, the PATCH body, {count}', async (t) => {
  const doc = await documentOf({ allowBulkUpdate: true, allowBulkDelete: true, maxAffected: 50 })
  await t.resolves(SwaggerParser.validate(structuredClone(doc) as never))
  const patch = doc.paths['/makers/'].patch
  t.equal(patch.operationId, 'ow_maker.bulkUpdate')
  t.match(patch.summary, /every ow_maker row matching the filters/)
  t.strictSame(patch.requestBody.content['application/json'].schema, $ref('OwMakerPatch'))
  t.strictSame(patch.responses['200'].content['application/json'].schema, $ref('UpdatedCountResponse'))
  t.strictSame(Object.keys(patch.responses).sort(), ['200', '400', '413', '415', '422', '503'])
  t.strictSame(doc.components.schemas.UpdatedCountResponse, {
    title: 'UpdatedCountResponse', type: 'object', required: ['count'], properties: { count: { type: 'integer', minimum: 0, description: 'How many rows were changed.' } }
  })
  for (const method of ['patch', 'delete']) {
    const limit = doc.paths['/makers/'][method].parameters.find((p: Doc) => p.name === '__max_affected')
    t.match(limit, { in: 'query', schema: { type: 'integer', minimum: 1, maximum: 50 } }, method)
  }
})

t.test('nestedWrites: the POST body with the children\'s schema, the ForeignKey left out; the answer with them embedded', async (t) => {
  const doc = await documentOf({ nestedWrites: ['pieces'] })
  await t.resolves(SwaggerParser.validate(structuredClone(doc) as never))
  const post = doc.paths['/makers/'].post
  t.strictSame(post.requestBody.content['application/json'].schema, { anyOf: [$ref('OwMakerInNested'), $ref('OwMakerInList')] })
  const nested = doc.components.schemas.OwMakerInNested
  t.strictSame(nested.required, ['name'])
  t.strictSame([nested.properties.pieces.type, nested.properties.pieces.maxItems], ['array', 1000])
  // Inline: the document hoists body schemas, not the items of their properties.
  const child = nested.properties.pieces.items
  t.equal(child.title, 'OwPieceInNestedOwMaker')
  t.strictSame(Object.keys(child.properties), ['id', 'title'], 'no maker: the insert sets it')
  t.strictSame(child.required, ['title'])
  t.equal(child.additionalProperties, false)
  t.strictSame(post.responses['201'].content['application/json'].schema.anyOf.at(-1), $ref('OwMakerRowNested'))
  const embedded = doc.components.schemas.OwMakerRowNested.properties.pieces
  t.strictSame([embedded.type, embedded.items.title, Object.keys(embedded.items.properties)], ['array', 'OwPieceRow', ['id', 'title', 'maker', 'maker_readable']])
})
