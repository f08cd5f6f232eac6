import t from 'tap'
import { compileFileKeys } from '../../../lib/sql/media.js'
import { column, defineTable } from '../../../lib/table/index.js'

const gallery = defineTable('gallery', {
  cover: column.varchar({ length: 200, null: true }),
  photos: column.array(column.text())
})
const other = defineTable('other', { cover: column.varchar({ length: 200 }) })

t.test('a scalar column: its distinct non-null keys, quoted identifiers, no values', async (t) => {
  const statement = compileFileKeys(gallery, gallery.columnMap.get('cover')!)
  t.same({ text: statement.text, values: [...statement.values] }, {
    text: 'SELECT DISTINCT "cover" AS key FROM "gallery" WHERE "cover" IS NOT NULL ORDER BY key',
    values: []
  })
  t.ok(Object.isFrozen(statement))
})

t.test('an array column is unnested', async (t) => {
  t.equal(compileFileKeys(gallery, gallery.columnMap.get('photos')!).text,
    'SELECT DISTINCT k AS key FROM "gallery" CROSS JOIN LATERAL unnest("gallery"."photos") AS k WHERE k IS NOT NULL ORDER BY key')
})

t.test("another table's column is refused", async (t) => {
  t.throws(() => compileFileKeys(gallery, other.columnMap.get('cover')!), /cover is not a column of gallery/)
})
