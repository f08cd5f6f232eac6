import t from 'tap'
import { parseIdsQuery, parseListQuery, parseSingleQuery, queryContext, type RawQuery } from '../../../lib/query/parse.js'
import {
  compileCount, compileIds, compileKeyset, compileList, compileSingle, readableSql, returningList, shapeRow, TOTAL, whereClause
} from '../../../lib/sql/select.js'
import type { SelectStatement, Shape, Statement } from '../../../lib/table/statement.js'
import { statementName } from '../../../lib/sql/statements.js'
import { column, defineTable, type Table, type TableColumn } from '../../../lib/table/index.js'

const person = defineTable('person', {
  first_name: column.varchar({ length: 50 }),
  last_name: column.varchar({ length: 50, null: true }),
  mentor: column.foreignKey((): Table => person),
  pin: column.text({ secret: true })
}, { readable: { template: "%s %s (100%, it's)", columns: ['first_name', 'last_name'] } })

const film = defineTable('film', {
  title: column.varchar({ length: 100 }),
  plot: column.text(),
  mail: column.email({ null: true }),
  rating: column.real(),
  runtime: column.integer(),
  budget: column.numeric({ digits: [10, 2] }),
  color: column.boolean(),
  shown: column.timestamp(),
  director: column.foreignKey(person),
  writer: column.foreignKey(person, { related: 'written' }),
  tags: column.array(column.text()),
  grid: column.array(column.array(column.integer())),
  secret_note: column.text({ secret: true })
}, { readable: 'title' })

const ctx = queryContext(film, { pageSize: 15, maxPageSize: 100, maxJoins: 2, excludeSecrets: true })
const personCtx = queryContext(person, { pageSize: 15, maxPageSize: 100, maxJoins: 1, excludeSecrets: true })

/** Every visible column of film, as the select list writes it. */
const FILM = 't0."id" AS "id", t0."title" AS "title", t0."plot" AS "plot", t0."mail" AS "mail", t0."rating" AS "rating", ' +
  't0."runtime" AS "runtime", t0."budget" AS "budget", t0."color" AS "color", t0."shown" AS "shown", ' +
  't0."director" AS "director", t0."writer" AS "writer", t0."tags" AS "tags", t0."grid" AS "grid"'
const READABLE_1 = 'CASE WHEN t1."id" IS NULL THEN NULL ELSE format(\'%s %s (100%%, it\'\'s)\', t1."first_name", t1."last_name") END'
const READABLE_2 = 'CASE WHEN t2."id" IS NULL THEN NULL ELSE format(\'%s %s (100%%, it\'\'s)\', t2."first_name", t2."last_name") END'

const raw = (query: Record<string, string | string[]>): RawQuery => Object.assign(Object.create(null), query)
const list = (query: Record<string, string | string[]>, withTotal = false): SelectStatement =>
  compileList(ctx, parseListQuery(ctx, raw(query)), withTotal)
const plain = (s: Statement): { text: string, values: unknown[] } => ({ text: s.text, values: [...s.values] })
const col = (table: Table, name: string): TableColumn => table.columnMap.get(name)!

/** [query string, WHERE clause (with its leading space), its values]. */
const FILTERS: Array<[Record<string, string | string[]>, string, unknown[]]> = [
  [{}, '', []],
  [{ title: 'Star' }, ' WHERE t0."title" ILIKE $1', ['%Star%']],
  [{ title: 'Star', title__match: 'contains' }, ' WHERE t0."title" ILIKE $1', ['%Star%']],
  [{ title: 'Star', title__match: 'starts' }, ' WHERE t0."title" ILIKE $1', ['Star%']],
  [{ title: 'Star', title__match: 'ends' }, ' WHERE t0."title" ILIKE $1', ['%Star']],
  [{ title: 'Star', title__match: 'exact' }, ' WHERE t0."title" = $1', ['Star']],
  [{ title: 'Star', title__operator: 'e', title__match: 'starts' }, ' WHERE t0."title" ILIKE $1', ['Star%']],
  [{ title: '50%_off\\' }, ' WHERE t0."title" ILIKE $1', ['%50\\%\\_off\\\\%']],
  [{ title: '50%_off\\', title__match: 'starts' }, ' WHERE t0."title" ILIKE $1', ['50\\%\\_off\\\\%']],
  [{ title: '50%_off\\', title__match: 'ends' }, ' WHERE t0."title" ILIKE $1', ['%50\\%\\_off\\\\']],
  [{ title: '50%_off\\', title__match: 'exact' }, ' WHERE t0."title" = $1', ['50%_off\\']],
  [{ title: '%%' }, ' WHERE t0."title" ILIKE $1', ['%\\%\\%%']],
  [{ plot: 'a_b' }, ' WHERE t0."plot" ILIKE $1', ['%a\\_b%']],
  [{ mail: '@x.org', mail__match: 'ends' }, ' WHERE t0."mail" ILIKE $1', ['%@x.org']],
  [{ title: 'Star', title__operator: 'ne' }, ' WHERE t0."title" <> $1', ['Star']],
  [{ title: 'St%', title__operator: 'ne', title__match: 'starts' }, ' WHERE t0."title" <> $1', ['St%']],
  [{ title__operator: 'is_null' }, ' WHERE t0."title" IS NULL', []],
  [{ title__operator: 'not_null', title: 'ignored' }, ' WHERE t0."title" IS NOT NULL', []],
  [{ rating: '2.5' }, ' WHERE t0."rating" = $1', [2.5]],
  [{ rating: '2.5', rating__operator: 'e' }, ' WHERE t0."rating" = $1', [2.5]],
  [{ rating: '2.5', rating__operator: 'ne' }, ' WHERE t0."rating" <> $1', [2.5]],
  [{ rating: '2.5', rating__operator: 'lt' }, ' WHERE t0."rating" < $1', [2.5]],
  [{ rating: '2.5', rating__operator: 'lte' }, ' WHERE t0."rating" <= $1', [2.5]],
  [{ rating: '2.5', rating__operator: 'gt' }, ' WHERE t0."rating" > $1', [2.5]],
  [{ rating: '2.5', rating__operator: 'gte' }, ' WHERE t0."rating" >= $1', [2.5]],
  [{ rating__operator: 'is_null' }, ' WHERE t0."rating" IS NULL', []],
  [{ rating__operator: 'not_null' }, ' WHERE t0."rating" IS NOT NULL', []],
  [{ runtime: '90' }, ' WHERE t0."runtime" = $1', [90]],
  [{ budget: '12.50', budget__operator: 'gt' }, ' WHERE t0."budget" > $1', ['12.50']],
  [{ color: 'T' }, ' WHERE t0."color" = $1', [true]],
  [{ color: 'no', color__operator: 'ne' }, ' WHERE t0."color" <> $1', [false]],
  [{ shown: '2024-01-01', shown__operator: 'gte' }, ' WHERE t0."shown" >= $1', ['2024-01-01 00:00:00.000000']],
  [{ director: '3' }, ' WHERE t0."director" = $1', [3]],
  [{ director: '3', director__operator: 'lte' }, ' WHERE t0."director" <= $1', [3]],
  [{ id: '7', id__operator: 'gt' }, ' WHERE t0."id" > $1', [7]],
  [{ tags: 'a' }, ' WHERE t0."tags" @> $1', [['a']]],
  [{ tags: ['a', 'b%'] }, ' WHERE t0."tags" @> $1', [['a', 'b%']]],
  [{ tags: ['a', 'b'], tags__operator: 'ne' }, ' WHERE NOT (t0."tags" @> $1)', [['a', 'b']]],
  [{ tags__operator: 'is_null' }, ' WHERE t0."tags" IS NULL', []],
  [{ tags__operator: 'not_null' }, ' WHERE t0."tags" IS NOT NULL', []],
  [{ grid: ['1', '2'] }, ' WHERE t0."grid" @> $1', [[1, 2]]],
  [
    { title: 'x', rating: '3', rating__operator: 'gt', director__operator: 'not_null', tags: ['a', 'b'] },
    ' WHERE t0."title" ILIKE $1 AND t0."rating" > $2 AND t0."tags" @> $3 AND t0."director" IS NOT NULL',
    ['%x%', 3, ['a', 'b']]
  ]
]

t.test('compileList: each kind of filter', async (t) => {
  for (const [query, where, values] of FILTERS) {
    const n = values.length
    t.strictSame(plain(list(query)), {
      text: `SELECT ${FILM} FROM "film" AS t0${where} ORDER BY t0."id" DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
      values: [...values, 15, 0]
    }, JSON.stringify(query))
    // A pattern's page is planned for its pattern; any other is left to PostgreSQL's plan cache.
    t.equal(list(query).plan, where.includes('ILIKE') ? 'custom' : undefined, `plan of ${JSON.stringify(query)}`)
  }
})

t.test('compileList and compileKeyset: a pattern on the table\'s own column, anywhere in a tree, is planned for its pattern', async (t) => {
  t.equal(list({ __or: '(rating.gt.2,title.starts.Star)' }).plan, 'custom', 'in an __or')
  t.equal(list({ __and: '(rating.gt.2,or(runtime.lt.90,plot.contains.x))' }).plan, 'custom', 'in a nested tree')
  t.equal(list({ __or: '(rating.gt.2,runtime.lt.90)' }).plan, undefined, 'a tree without one')
  t.equal(list({ 'director.first_name': 'Ann' }).plan, undefined, 'across a relation: left to the plan cache')
  const keyset = (query: Record<string, string>): Statement => compileKeyset(ctx, parseListQuery(ctx, raw(query)), null, 16)
  t.equal(keyset({ title: 'Star' }).plan, 'custom')
  t.equal(keyset({ runtime: '90' }).plan, undefined)
})

t.test('compileList: the whole statement, written out', async (t) => {
  const s = list({ title: 'Star', rating__operator: 'lt', rating: '4', __page: '3', __page_size: '10', __visible_fields: 'title,rating' })
  t.strictSame(plain(s), {
    text: 'SELECT t0."title" AS "title", t0."rating" AS "rating" FROM "film" AS t0 WHERE t0."title" ILIKE $1 AND t0."rating" < $2 ORDER BY t0."id" DESC LIMIT $3 OFFSET $4',
    values: ['%Star%', 4, 10, 20]
  })
  t.ok(Object.isFrozen(s))
})

t.test('compileCount and whereClause: the same WHERE as the list', async (t) => {
  for (const [query, where, values] of FILTERS) {
    const filters = parseListQuery(ctx, raw(query)).filters
    t.strictSame(plain(compileCount(ctx, filters)), { text: `SELECT count(*) AS count FROM "film" AS t0${where}`, values }, `count ${JSON.stringify(query)}`)
    t.strictSame(plain(whereClause(filters)), { text: where, values }, `where ${JSON.stringify(query)}`)
  }
  t.ok(Object.isFrozen(compileCount(ctx, [])))
})

t.test('compileList: the total window column', async (t) => {
  t.equal(TOTAL, '__total')
  t.strictSame(plain(list({ runtime: '90' }, true)), {
    text: `SELECT ${FILM}, count(*) OVER () AS __total FROM "film" AS t0 WHERE t0."runtime" = $1 ORDER BY t0."id" DESC LIMIT $2 OFFSET $3`,
    values: [90, 15, 0]
  })
})

t.test('compileList: limit and offset from the page', async (t) => {
  const cases: Array<[Record<string, string>, number, number]> = [
    [{}, 15, 0],
    [{ __page: '2' }, 15, 15],
    [{ __page_size: '1' }, 1, 0],
    [{ __page: '5', __page_size: '100' }, 100, 400],
    [{ __page: '2147483647', __page_size: '100' }, 100, 214748364600]
  ]
  for (const [query, limit, offset] of cases) {
    t.strictSame(list(query).values, [limit, offset], JSON.stringify(query))
  }
})

t.test('compileList: ordering, with LEFT JOINs one per path', async (t) => {
  const cases: Array<[Record<string, string | string[]>, string, unknown[]]> = [
    [{ __order: '-rating,title' }, `SELECT ${FILM} FROM "film" AS t0 ORDER BY t0."rating" DESC, t0."title" ASC, t0."id" ASC LIMIT $1 OFFSET $2`, [15, 0]],
    [{ __order: 'id' }, `SELECT ${FILM} FROM "film" AS t0 ORDER BY t0."id" ASC LIMIT $1 OFFSET $2`, [15, 0]],
    [{ __order: ['tags', '-id'] }, `SELECT ${FILM} FROM "film" AS t0 ORDER BY t0."tags" ASC, t0."id" DESC LIMIT $1 OFFSET $2`, [15, 0]],
    [
      { __order: 'director.first_name,-writer.last_name,director.mentor.first_name' },
      `SELECT ${FILM} FROM "film" AS t0` +
        ' LEFT JOIN "person" AS t1 ON t1."id" = t0."director"' +
        ' LEFT JOIN "person" AS t2 ON t2."id" = t0."writer"' +
        ' LEFT JOIN "person" AS t3 ON t3."id" = t1."mentor"' +
        ' ORDER BY t1."first_name" ASC, t2."last_name" DESC, t3."first_name" ASC, t0."id" ASC LIMIT $1 OFFSET $2',
      [15, 0]
    ],
    [
      { __order: 'director.first_name,-director.last_name' },
      `SELECT ${FILM} FROM "film" AS t0 LEFT JOIN "person" AS t1 ON t1."id" = t0."director" ORDER BY t1."first_name" ASC, t1."last_name" DESC, t0."id" ASC LIMIT $1 OFFSET $2`,
      [15, 0]
    ],
    [
      { __order: '-director.id' },
      `SELECT ${FILM} FROM "film" AS t0 LEFT JOIN "person" AS t1 ON t1."id" = t0."director" ORDER BY t1."id" DESC, t0."id" ASC LIMIT $1 OFFSET $2`,
      [15, 0]
    ],
    [
      { title: 'x', __order: 'director.mentor.last_name' },
      `SELECT ${FILM} FROM "film" AS t0 LEFT JOIN "person" AS t1 ON t1."id" = t0."director" LEFT JOIN "person" AS t2 ON t2."id" = t1."mentor" WHERE t0."title" ILIKE $1 ORDER BY t2."last_name" ASC, t0."id" ASC LIMIT $2 OFFSET $3`,
      ['%x%', 15, 0]
    ],
    [
      // The select list takes aliases first; the order reuses them.
      { __visible_fields: 'title,writer.first_name', __order: 'director.last_name,writer.last_name' },
      'SELECT t0."title" AS "c0", t1."first_name" AS "c1" FROM "film" AS t0' +
        ' LEFT JOIN "person" AS t1 ON t1."id" = t0."writer"' +
        ' LEFT JOIN "person" AS t2 ON t2."id" = t0."director"' +
        ' ORDER BY t2."last_name" ASC, t1."last_name" ASC, t0."id" ASC LIMIT $1 OFFSET $2',
      [15, 0]
    ]
  ]
  for (const [query, text, values] of cases) t.strictSame(plain(list(query)), { text, values }, JSON.stringify(query))
})

t.test('compileList: a secret primary key orders the rows without being selected', async (t) => {
  const vault = defineTable('vault', { token: column.varchar({ length: 40, primaryKey: true, secret: true }), label: column.text() })
  const vaultCtx = queryContext(vault, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
  const compile = (query: Record<string, string>): Statement => compileList(vaultCtx, parseListQuery(vaultCtx, raw(query)), false)
  t.strictSame(plain(compile({})), { text: 'SELECT t0."label" AS "label" FROM "vault" AS t0 ORDER BY t0."token" DESC LIMIT $1 OFFSET $2', values: [15, 0] })
  t.strictSame(plain(compile({ __order: 'label' })), {
    text: 'SELECT t0."label" AS "label" FROM "vault" AS t0 ORDER BY t0."label" ASC, t0."token" ASC LIMIT $1 OFFSET $2',
    values: [15, 0]
  })
})

interface ShapeSummary {
  paths: string[][]
  aliases: string[]
  sources: Array<string | null>
  flat: boolean
  key: string
}
const shapeOf = (shape: Shape): ShapeSummary => ({
  paths: shape.paths.map((p) => [...p]),
  aliases: [...shape.aliases],
  sources: shape.sources.map((s) => s === null ? null : `${s.table.name}.${s.column.name}`),
  flat: shape.flat,
  key: shape.key
})

t.test('__visible_fields: the select list and the shape of the rows', async (t) => {
  const cases: Array<[Record<string, string>, string, ShapeSummary]> = [
    [
      { __visible_fields: 'title,rating' },
      'SELECT t0."title" AS "title", t0."rating" AS "rating" FROM "film" AS t0 ORDER BY t0."id" DESC LIMIT $1 OFFSET $2',
      { paths: [['title'], ['rating']], aliases: ['title', 'rating'], sources: ['film.title', 'film.rating'], flat: true, key: 'title,rating' }
    ],
    [
      { __visible_fields: 'director' },
      'SELECT t0."director" AS "director" FROM "film" AS t0 ORDER BY t0."id" DESC LIMIT $1 OFFSET $2',
      { paths: [['director']], aliases: ['director'], sources: ['film.director'], flat: true, key: 'director' }
    ],
    [
      { __visible_fields: 'title,director,director.first_name,writer.last_name,director.mentor.last_name' },
      'SELECT t0."title" AS "c0", t0."director" AS "c1", t1."first_name" AS "c2", t2."last_name" AS "c3", t3."last_name" AS "c4" FROM "film" AS t0' +
        ' LEFT JOIN "person" AS t1 ON t1."id" = t0."director"' +
        ' LEFT JOIN "person" AS t2 ON t2."id" = t0."writer"' +
        ' LEFT JOIN "person" AS t3 ON t3."id" = t1."mentor"' +
        ' ORDER BY t0."id" DESC LIMIT $1 OFFSET $2',
      {
        paths: [['title'], ['director', 'id'], ['director', 'first_name'], ['writer', 'last_name'], ['director', 'mentor', 'last_name']],
        aliases: ['c0', 'c1', 'c2', 'c3', 'c4'],
        sources: ['film.title', 'person.id', 'person.first_name', 'person.last_name', 'person.last_name'],
        flat: false,
        key: 'title,director.id,director.first_name,writer.last_name,director.mentor.last_name'
      }
    ],
    [
      // A ForeignKey of a joined table, asked for with fields through it, becomes an object too.
      { __visible_fields: 'director.mentor,director.mentor.first_name' },
      'SELECT t1."mentor" AS "c0", t2."first_name" AS "c1" FROM "film" AS t0' +
        ' LEFT JOIN "person" AS t1 ON t1."id" = t0."director"' +
        ' LEFT JOIN "person" AS t2 ON t2."id" = t1."mentor"' +
        ' ORDER BY t0."id" DESC LIMIT $1 OFFSET $2',
      {
        paths: [['director', 'mentor', 'id'], ['director', 'mentor', 'first_name']],
        aliases: ['c0', 'c1'],
        sources: ['person.id', 'person.first_name'],
        flat: false,
        key: 'director.mentor.id,director.mentor.first_name'
      }
    ],
    [
      { __visible_fields: 'director.mentor.first_name,director.mentor,director.id' },
      'SELECT t2."first_name" AS "c0", t1."mentor" AS "c1", t1."id" AS "c2" FROM "film" AS t0' +
        ' LEFT JOIN "person" AS t1 ON t1."id" = t0."director"' +
        ' LEFT JOIN "person" AS t2 ON t2."id" = t1."mentor"' +
        ' ORDER BY t0."id" DESC LIMIT $1 OFFSET $2',
      {
        paths: [['director', 'mentor', 'first_name'], ['director', 'mentor', 'id'], ['director', 'id']],
        aliases: ['c0', 'c1', 'c2'],
        sources: ['person.first_name', 'person.id', 'person.id'],
        flat: false,
        key: 'director.mentor.first_name,director.mentor.id,director.id'
      }
    ]
  ]
  for (const [query, text, shape] of cases) {
    const s = list(query)
    t.strictSame(plain(s), { text, values: [15, 0] }, JSON.stringify(query))
    t.strictSame(shapeOf(s.shape), shape, `shape of ${JSON.stringify(query)}`)
  }
  const s = list({ __visible_fields: 'director.first_name' })
  t.equal(s.shape.sources[0]!.table, person)
  t.equal(s.shape.sources[0]!.column, col(person, 'first_name'))
})

t.test('the shape of all columns is flat', async (t) => {
  t.strictSame(shapeOf(list({}).shape), {
    paths: ['id', 'title', 'plot', 'mail', 'rating', 'runtime', 'budget', 'color', 'shown', 'director', 'writer', 'tags', 'grid'].map((n) => [n]),
    aliases: ['id', 'title', 'plot', 'mail', 'rating', 'runtime', 'budget', 'color', 'shown', 'director', 'writer', 'tags', 'grid'],
    sources: ['id', 'title', 'plot', 'mail', 'rating', 'runtime', 'budget', 'color', 'shown', 'director', 'writer', 'tags', 'grid'].map((n) => `film.${n}`),
    flat: true,
    key: 'id,title,plot,mail,rating,runtime,budget,color,shown,director,writer,tags,grid'
  })
})

t.test('__readable: <fk>_readable after each top-level ForeignKey', async (t) => {
  const cases: Array<[Record<string, string>, string, ShapeSummary | null]> = [
    [
      { __readable: 'true' },
      'SELECT t0."id" AS "id", t0."title" AS "title", t0."plot" AS "plot", t0."mail" AS "mail", t0."rating" AS "rating", ' +
        't0."runtime" AS "runtime", t0."budget" AS "budget", t0."color" AS "color", t0."shown" AS "shown", ' +
        `t0."director" AS "director", ${READABLE_1} AS "director_readable", t0."writer" AS "writer", ${READABLE_2} AS "writer_readable", ` +
        't0."tags" AS "tags", t0."grid" AS "grid" FROM "film" AS t0' +
        ' LEFT JOIN "person" AS t1 ON t1."id" = t0."director"' +
        ' LEFT JOIN "person" AS t2 ON t2."id" = t0."writer"' +
        ' ORDER BY t0."id" DESC LIMIT $1 OFFSET $2',
      null
    ],
    [
      { __readable: '1', __visible_fields: 'title' },
      'SELECT t0."title" AS "title" FROM "film" AS t0 ORDER BY t0."id" DESC LIMIT $1 OFFSET $2',
      { paths: [['title']], aliases: ['title'], sources: ['film.title'], flat: true, key: 'title' }
    ],
    [
      { __readable: 'yes', __visible_fields: 'title,director,writer.last_name,director.mentor.first_name' },
      `SELECT t0."title" AS "c0", t0."director" AS "c1", ${READABLE_1} AS "c2", t2."last_name" AS "c3", ${READABLE_2} AS "c4", t3."first_name" AS "c5" FROM "film" AS t0` +
        ' LEFT JOIN "person" AS t1 ON t1."id" = t0."director"' +
        ' LEFT JOIN "person" AS t2 ON t2."id" = t0."writer"' +
        ' LEFT JOIN "person" AS t3 ON t3."id" = t1."mentor"' +
        ' ORDER BY t0."id" DESC LIMIT $1 OFFSET $2',
      {
        paths: [['title'], ['director', 'id'], ['director_readable'], ['writer', 'last_name'], ['writer_readable'], ['director', 'mentor', 'first_name']],
        aliases: ['c0', 'c1', 'c2', 'c3', 'c4', 'c5'],
        sources: ['film.title', 'person.id', null, 'person.last_name', null, 'person.first_name'],
        flat: false,
        key: 'title,director.id,director_readable,writer.last_name,writer_readable,director.mentor.first_name'
      }
    ],
    [
      { __readable: 'true', __visible_fields: 'director', __order: 'director.last_name' },
      `SELECT t0."director" AS "director", ${READABLE_1} AS "director_readable" FROM "film" AS t0` +
        ' LEFT JOIN "person" AS t1 ON t1."id" = t0."director"' +
        ' ORDER BY t1."last_name" ASC, t0."id" ASC LIMIT $1 OFFSET $2',
      { paths: [['director'], ['director_readable']], aliases: ['director', 'director_readable'], sources: ['film.director', null], flat: true, key: 'director,director_readable' }
    ]
  ]
  for (const [query, text, shape] of cases) {
    const s = list(query)
    t.strictSame(plain(s), { text, values: [15, 0] }, JSON.stringify(query))
    if (shape !== null) t.strictSame(shapeOf(s.shape), shape, `shape of ${JSON.stringify(query)}`)
  }
  // A ForeignKey of a joined table gets none.
  const s = list({ __readable: 'true', __visible_fields: 'director.mentor' })
  t.strictSame(s.shape.paths, [['director', 'mentor'], ['director_readable']])
})

t.test('a <fk>_readable alias past 63 bytes makes the shape numbered', async (t) => {
  const fk = 'f'.repeat(55)
  const long = defineTable('long_names', { [fk]: column.foreignKey(film) })
  const longCtx = queryContext(long, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
  const s = compileList(longCtx, parseListQuery(longCtx, raw({ __readable: 'true' })), false)
  t.strictSame(plain(s), {
    text: `SELECT t0."id" AS "c0", t0."${fk}" AS "c1", CASE WHEN t1."id" IS NULL THEN NULL ELSE format('%s', t1."title") END AS "c2" FROM "long_names" AS t0` +
      ` LEFT JOIN "film" AS t1 ON t1."id" = t0."${fk}" ORDER BY t0."id" DESC LIMIT $1 OFFSET $2`,
    values: [15, 0]
  })
  t.strictSame(shapeOf(s.shape), {
    paths: [['id'], [fk], [`${fk}_readable`]],
    aliases: ['c0', 'c1', 'c2'],
    sources: ['long_names.id', `long_names.${fk}`, null],
    flat: false,
    key: `id,${fk},${fk}_readable`
  })
  const short = compileList(longCtx, parseListQuery(longCtx, raw({})), false)
  t.equal(short.shape.flat, true, 'without the readable alias every alias fits')
})

t.test('readableSql: the template as a format() literal', async (t) => {
  const cases: Array<[string, string[], string]> = [
    ['%s', ['id'], 'format(\'%s\', t0."id")'],
    ['%s %s', ['a', 'b'], 'format(\'%s %s\', t0."a", t0."b")'],
    ['100% %s', ['a'], 'format(\'100%% %s\', t0."a")'],
    ['%s%', ['a'], 'format(\'%s%%\', t0."a")'],
    ['%%s', ['a'], 'format(\'%%%s\', t0."a")'],
    ['%1$s %I %L %s', ['a'], 'format(\'%%1$s %%I %%L %s\', t0."a")'],
    ["it's %s", ['a'], 'format(\'it\'\'s %s\', t0."a")'],
    ['back\\slash %s', ['a'], 'format(\'back\\slash %s\', t0."a")'],
    ['%s', ['we"ird'], 'format(\'%s\', t0."we""ird")']
  ]
  for (const [template, columns, sql] of cases) t.equal(readableSql({ template, columns }, 't0'), sql, template)
  t.equal(readableSql({ template: '%s', columns: ['x'] }, 't7'), 'format(\'%s\', t7."x")')
  t.throws(() => readableSql({ template: '\0%s', columns: ['x'] }, 't0'), { message: 'a NUL byte cannot be written in SQL text' })
})

t.test('compileSingle', async (t) => {
  const single = (id: unknown, query: Record<string, string>): SelectStatement => compileSingle(ctx, id, parseSingleQuery(ctx, raw(query)))
  t.strictSame(plain(single(5, {})), { text: `SELECT ${FILM} FROM "film" AS t0 WHERE t0."id" = $1`, values: [5] })
  t.strictSame(plain(single(5, { __visible_fields: 'title,director.first_name', __readable: 'true' })), {
    text: `SELECT t0."title" AS "c0", t1."first_name" AS "c1", ${READABLE_1} AS "c2" FROM "film" AS t0 LEFT JOIN "person" AS t1 ON t1."id" = t0."director" WHERE t0."id" = $1`,
    values: [5]
  })
  const s = single(9, { __visible_fields: 'title,director.first_name' })
  t.strictSame(shapeOf(s.shape), {
    paths: [['title'], ['director', 'first_name']],
    aliases: ['c0', 'c1'],
    sources: ['film.title', 'person.first_name'],
    flat: false,
    key: 'title,director.first_name'
  })
  t.ok(Object.isFrozen(s))
  const keyed = defineTable('keyed_by_code', { code: column.varchar({ length: 5, primaryKey: true }), secret: column.text({ secret: true }) })
  const keyedCtx = queryContext(keyed, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
  t.strictSame(plain(compileSingle(keyedCtx, 'AB', { fields: null, readable: false })), {
    text: 'SELECT t0."code" AS "code" FROM "keyed_by_code" AS t0 WHERE t0."code" = $1',
    values: ['AB']
  })
  const open = queryContext(keyed, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: false })
  t.strictSame(plain(compileSingle(open, 'AB', { fields: null, readable: false })), {
    text: 'SELECT t0."code" AS "code", t0."secret" AS "secret" FROM "keyed_by_code" AS t0 WHERE t0."code" = $1',
    values: ['AB']
  })
})

t.test('compileIds, with and without search', async (t) => {
  const ids = (c: typeof ctx, query: Record<string, string>): Statement => compileIds(c, parseIdsQuery(c, raw(query)))
  const cases: Array<[typeof ctx, Record<string, string>, string, unknown[]]> = [
    [ctx, {}, 'SELECT t0."id" AS id, format(\'%s\', t0."title") AS readable FROM "film" AS t0 ORDER BY t0."id" LIMIT $1 OFFSET $2', [100, 0]],
    [ctx, { search: '' }, 'SELECT t0."id" AS id, format(\'%s\', t0."title") AS readable FROM "film" AS t0 ORDER BY t0."id" LIMIT $1 OFFSET $2', [100, 0]],
    [ctx, { limit: '10', offset: '5' }, 'SELECT t0."id" AS id, format(\'%s\', t0."title") AS readable FROM "film" AS t0 ORDER BY t0."id" LIMIT $1 OFFSET $2', [10, 5]],
    [
      ctx,
      { search: 'Star', limit: '10', offset: '5' },
      'SELECT t0."id" AS id, format(\'%s\', t0."title") AS readable FROM "film" AS t0 WHERE format(\'%s\', t0."title") ILIKE $1 ORDER BY t0."id" LIMIT $2 OFFSET $3',
      ['%Star%', 10, 5]
    ],
    [
      ctx,
      { search: '50%_off\\' },
      'SELECT t0."id" AS id, format(\'%s\', t0."title") AS readable FROM "film" AS t0 WHERE format(\'%s\', t0."title") ILIKE $1 ORDER BY t0."id" LIMIT $2 OFFSET $3',
      ['%50\\%\\_off\\\\%', 100, 0]
    ],
    [
      personCtx,
      { search: "o'b" },
      'SELECT t0."id" AS id, format(\'%s %s (100%%, it\'\'s)\', t0."first_name", t0."last_name") AS readable FROM "person" AS t0' +
        ' WHERE format(\'%s %s (100%%, it\'\'s)\', t0."first_name", t0."last_name") ILIKE $1 ORDER BY t0."id" LIMIT $2 OFFSET $3',
      ["%o'b%", 100, 0]
    ]
  ]
  for (const [c, query, text, values] of cases) {
    const s = ids(c, query)
    t.strictSame(plain(s), { text, values }, `${c.table.name} ${JSON.stringify(query)}`)
    t.ok(Object.isFrozen(s))
  }
})

t.test('returningList: the visible columns, quoted', async (t) => {
  t.equal(returningList(film, true), '"id", "title", "plot", "mail", "rating", "runtime", "budget", "color", "shown", "director", "writer", "tags", "grid"')
  t.equal(returningList(film, false), '"id", "title", "plot", "mail", "rating", "runtime", "budget", "color", "shown", "director", "writer", "tags", "grid", "secret_note"')
  t.equal(returningList(person, true), '"id", "first_name", "last_name", "mentor"')
})

t.test('shapeRow: flat aliases into nested rows', async (t) => {
  const s = list({ __visible_fields: 'title,director,director.first_name,writer.last_name,director.mentor.last_name' })
  t.strictSame(shapeRow({ c0: 'Alien', c1: 3, c2: 'Ridley', c3: null, c4: 'Mentor' }, s.shape), {
    title: 'Alien',
    director: { id: 3, first_name: 'Ridley', mentor: { last_name: 'Mentor' } },
    writer: { last_name: null }
  })
  const flat = list({ __visible_fields: 'title,rating' })
  t.strictSame(shapeRow({ title: 'Alien', rating: 4.5 }, flat.shape), { title: 'Alien', rating: 4.5 })
  t.strictSame(shapeRow({}, flat.shape), { title: undefined, rating: undefined }, 'a missing alias is undefined')
  const both = list({ __visible_fields: 'director.mentor.first_name,director.mentor' })
  t.strictSame(shapeRow({ c0: 'Ann', c1: 8 }, both.shape), { director: { mentor: { first_name: 'Ann', id: 8 } } })
  const handMade: Shape = {
    paths: [['a', 'b', 'c'], ['a', 'd'], ['e']],
    aliases: ['x', 'y', 'z'],
    sources: [null, null, null],
    flat: false,
    key: 'a.b.c,a.d,e'
  }
  t.strictSame(shapeRow({ x: 1, y: 2, z: 3 }, handMade), { a: { b: { c: 1 }, d: 2 }, e: 3 })
})

t.test('shapeRow: columns named like Object.prototype members', async (t) => {
  const odd = defineTable('odd_names', {
    constructor: column.foreignKey(person),
    toString: column.text(),
    valueOf: column.integer(),
    hasOwnProperty: column.boolean()
  })
  const oddCtx = queryContext(odd, { pageSize: 15, maxPageSize: 100, maxJoins: 1, excludeSecrets: true })
  const nested = compileList(oddCtx, parseListQuery(oddCtx, raw({ __visible_fields: 'constructor.first_name,constructor,toString,valueOf,hasOwnProperty' })), false)
  t.strictSame(shapeOf(nested.shape), {
    paths: [['constructor', 'first_name'], ['constructor', 'id'], ['toString'], ['valueOf'], ['hasOwnProperty']],
    aliases: ['c0', 'c1', 'c2', 'c3', 'c4'],
    sources: ['person.first_name', 'person.id', 'odd_names.toString', 'odd_names.valueOf', 'odd_names.hasOwnProperty'],
    flat: false,
    key: 'constructor.first_name,constructor.id,toString,valueOf,hasOwnProperty'
  })
  const row = shapeRow({ c0: 'Ann', c1: 1, c2: 'text', c3: 2, c4: true }, nested.shape)
  // Compared as entries: tap's strictSame reads `constructor` to compare prototypes.
  const entries = (o: Record<string, unknown>): unknown[] => Object.entries(o).map(([k, v]) => [k, typeof v === 'object' && v !== null ? entries(v as Record<string, unknown>) : v])
  t.strictSame(entries(row), [['constructor', [['first_name', 'Ann'], ['id', 1]]], ['toString', 'text'], ['valueOf', 2], ['hasOwnProperty', true]])
  t.ok(Object.hasOwn(row, 'constructor'), 'constructor is an own key')
  t.equal(Object.getPrototypeOf(row.constructor), Object.prototype, 'a fresh object, not Object')
  t.equal(JSON.stringify(row), '{"constructor":{"first_name":"Ann","id":1},"toString":"text","valueOf":2,"hasOwnProperty":true}')
  t.equal(Object.hasOwn(Object.prototype, 'first_name'), false, 'Object.prototype untouched')
  const flat = compileList(oddCtx, parseListQuery(oddCtx, raw({ __visible_fields: 'constructor,toString' })), false)
  t.strictSame(shapeOf(flat.shape).aliases, ['constructor', 'toString'])
  t.strictSame(entries(shapeRow({ constructor: 4, toString: 'x' }, flat.shape)), [['constructor', 4], ['toString', 'x']])
  t.equal(
    flat.text,
    'SELECT t0."constructor" AS "constructor", t0."toString" AS "toString" FROM "odd_names" AS t0 ORDER BY t0."id" DESC LIMIT $1 OFFSET $2'
  )
})

t.test('statementName: one name per distinct text, up to a cap', async (t) => {
  const a = statementName('SELECT 1')
  t.match(a, /^tablecrud_\d+$/)
  t.equal(statementName('SELECT 1'), a, 'the same text, the same name')
  const b = statementName('SELECT 2')
  t.match(b, /^tablecrud_\d+$/)
  t.not(b, a, 'another text, another name')
  t.equal(statementName(list({}).text), statementName(list({}).text), 'compiled twice, one name')
  t.not(statementName(list({}).text), statementName(list({ title: 'x' }).text))
  t.equal(statementName(list({ title: 'x' }).text), statementName(list({ title: 'y' }).text), 'values are not part of the text')
  // Past the cap texts run unnamed; those named before keep their names.
  const names = new Set<string | undefined>()
  for (let i = 0; i < 1000; i++) names.add(statementName(`SELECT ${i} AS cap`))
  t.equal(statementName('SELECT 1'), a)
  t.equal(statementName('SELECT never seen before'), undefined)
  t.ok(names.has(undefined), 'the cap was reached')
  t.equal([...names].filter((n) => n !== undefined).length, 1000 - 4, 'a thousand names in all, four of them given above')
})

t.test('compileKeyset: past NULLs in every ascending key nothing sorts after, so FALSE and no parameter', async (t) => {
  // Unreachable through a cursor (the last key is the primary key, never NULL); the compiler
  // still answers no rows rather than leave a parameter PostgreSQL cannot type.
  const note = defineTable('note', { body: column.text({ null: true }) })
  const noteCtx = queryContext(note, { pageSize: 15, maxPageSize: 100, maxJoins: 0, excludeSecrets: true })
  const keyset = (query: Record<string, string>, after: Array<string | null>): { text: string, values: unknown[] } =>
    plain(compileKeyset(noteCtx, parseListQuery(noteCtx, raw(query)), after, 11))
  const head = 'SELECT t0."id" AS "id", t0."body" AS "body", t0."body"::text AS __k0, t0."id"::text AS __k1 FROM "note" AS t0'
  const order = ' ORDER BY t0."body" ASC, t0."id" ASC'
  t.strictSame(keyset({ __order: 'body' }, [null, null]), { text: `${head} WHERE (FALSE)${order} LIMIT $1`, values: [11] })
  t.strictSame(keyset({ __order: 'body', body: 'x' }, [null, null]), { text: `${head} WHERE t0."body" ILIKE $1 AND (FALSE)${order} LIMIT $2`, values: ['%x%', 11] })
  t.strictSame(keyset({ __order: 'body' }, [null, '3']), {
    text: `${head} WHERE ((t0."body" IS NULL AND (t0."id" > $1 OR t0."id" IS NULL)))${order} LIMIT $2`,
    values: ['3', 11]
  }, 'a key after the NULL: its branch')
})
