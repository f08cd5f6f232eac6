import t from 'tap'
import { column, defineTable } from '../../../lib/table/index.js'
import { BUILT_IN_CONFIGS, searchConfig } from '../../../lib/table/search.js'
import { createTablesSql } from '../../../lib/db/index.js'
import { documentSql, searchIndexSql, vectorSql } from '../../../lib/sql/search.js'
import { parseSearch } from '../../../lib/query/search.js'

/* The table option `search` (SPEC §8.4): checked when the table is defined, and its SQL. */

const columns = {
  title: column.varchar({ length: 50 }),
  body: column.text({ null: true }),
  mail: column.email({ null: true }),
  year: column.integer(),
  pin: column.text({ secret: true })
}

t.test('a good option: the columns in order, the configuration, default simple', async (t) => {
  const table = defineTable('ts_ok', columns, { search: { columns: ['body', 'title', 'mail'], config: 'german' } })
  t.strictSame(table.search, { columns: ['body', 'title', 'mail'], config: 'german' })
  t.ok(Object.isFrozen(table.search) && Object.isFrozen(table.search!.columns))
  t.strictSame(defineTable('ts_simple', columns, { search: { columns: ['title'] } }).search, { columns: ['title'], config: 'simple' })
  t.strictSame(defineTable('ts_custom', columns, { search: { columns: ['title'], config: 'public.my_english' } }).search!.config, 'public.my_english')
  t.equal(defineTable('ts_none', columns).search, null)
  t.equal(searchConfig(null), 'simple')
  t.equal(BUILT_IN_CONFIGS.size, 29)
})

t.test('a bad option throws, naming the table and the problem', async (t) => {
  const cases: Array<[unknown, string]> = [
    [null, 'search must be { columns: [...text columns], config }'],
    ['title', 'search must be { columns: [...text columns], config }'],
    [{}, 'search.columns must list at least one text column'],
    [{ columns: [] }, 'search.columns must list at least one text column'],
    [{ columns: ['nope'] }, 'search.columns names "nope", which is not a column'],
    [{ columns: [3] }, 'search.columns names 3, which is not a column'],
    [{ columns: ['year'] }, 'search.columns names year (type integer): only varchar, text and email columns are searched'],
    [{ columns: ['pin'] }, 'search.columns names pin, a secret column'],
    [{ columns: ['title', 'title'] }, 'search.columns names a column twice'],
    [{ columns: ['title'], config: 'englsh' }, 'search.config "englsh" is not a text search configuration PostgreSQL ships'],
    [{ columns: ['title'], config: 'public.Bad-Name' }, 'search.config "public.Bad-Name" is not'],
    [{ columns: ['title'], config: 3 }, 'search.config 3 is not']
  ]
  for (const [search, message] of cases) {
    t.throws(() => defineTable('ts_bad', columns, { search: search as never }), { name: 'TableDefinitionError', message: new RegExp(`^Table ts_bad: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) }, JSON.stringify(search))
  }
})

t.test('one expression for the index and the queries', async (t) => {
  const table = defineTable('ts_sql', columns, { search: { columns: ['title', 'body'], config: 'english' } })
  const document = "to_tsvector('english'::regconfig, coalesce(\"title\", '') || ' ' || coalesce(\"body\", ''))"
  t.equal(documentSql(table, null), document)
  t.equal(documentSql(table, 't0'), document.replace('"title"', 't0."title"').replace('"body"', 't0."body"'))
  t.equal(searchIndexSql(table), `CREATE INDEX IF NOT EXISTS "ts_sql_search_idx" ON "ts_sql" USING gin (${document})`)
  t.match(createTablesSql([table]), `CREATE INDEX IF NOT EXISTS "ts_sql_search_idx" ON "ts_sql" USING gin (${document});`)
  t.equal(searchIndexSql(defineTable('ts_plain', columns)), null)
  t.equal(vectorSql(defineTable('ts_one', columns), 't1."title"'), "to_tsvector('simple'::regconfig, coalesce(t1.\"title\", ''))")
})

t.test('__search as parsed: absent, empty (also an empty list) and blank are no search', async (t) => {
  const table = defineTable('ts_parse', columns, { search: { columns: ['title'] } })
  t.equal(parseSearch(table, undefined), null)
  t.equal(parseSearch(table, []), null)
  t.equal(parseSearch(table, ' '), null)
  t.strictSame(parseSearch(table, ['star'])?.values, ['star'])
})
