import t from 'tap'
import { resultTypes } from '../../../lib/db/types.js'
import { column, defineTable } from '../../../lib/table/index.js'

const member = defineTable('types_result_member', {
  name: column.varchar({ length: 40 }),
  pin: column.text({ secret: true }),
  rating: column.numeric({ digits: [4, 1], null: true })
})

t.test('resultTypes: the OIDs a write returns, secrets in or out, an upsert\'s flag last; one array each', async (t) => {
  // int4 (the Serial key), varchar, text, numeric; an upsert's `(xmax = 0)` is a boolean.
  t.strictSame(resultTypes(member, false), [23, 1043, 25, 1700])
  t.strictSame(resultTypes(member, true), [23, 1043, 1700], 'the secret column is not returned')
  t.strictSame(resultTypes(member, false, true), [23, 1043, 25, 1700, 16])
  t.strictSame(resultTypes(member, true, true), [23, 1043, 1700, 16])
  // The port trusts the very array it was shown (plugins/database.ts `single`).
  t.equal(resultTypes(member, true, true), resultTypes(member, true, true))
  t.not(resultTypes(member, true, true), resultTypes(member, false, true))
})
