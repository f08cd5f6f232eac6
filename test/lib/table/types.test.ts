// The assertions of this file are checked by `npx tsc --noEmit`: a `@ts-expect-error` line
// that compiles fails the type-check, as does an assignment of the wrong type.
import t from 'tap'
import { column, defineTable, type RowOf, type Table } from '../../../lib/table/index.js'

type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends (<X>() => X extends B ? 1 : 2) ? true : false
const exact = <A, B>(equal: Equal<A, B>): Equal<A, B> => equal

const person = defineTable('types_person', {
  name: column.varchar({ length: 50 })
})

const movie = defineTable('types_movie', {
  name: column.varchar({ length: 100, required: true }),
  synopsis: column.text({ null: true }),
  year: column.integer(),
  rating: column.real({ null: true }),
  box_office: column.numeric({ digits: [12, 2], null: true }),
  oscar: column.boolean({ null: false }),
  released: column.timestamp(),
  director: column.foreignKey(person, { onDelete: 'restrict' }),
  producer: column.foreignKey((): Table => person, { null: false }),
  tags: column.array(column.varchar({ length: 20 })),
  grid: column.array(column.array(column.integer({ null: true }))),
  contact: column.email({ null: true, secret: true })
})

const studio = defineTable('types_studio', {
  code: column.varchar({ length: 8, primaryKey: true }),
  founded: column.integer({ null: true })
})

type Movie = RowOf<typeof movie>
type Studio = RowOf<typeof studio>

const star: Movie = {
  id: 1,
  name: 'Star Wars',
  synopsis: null,
  year: 1977,
  rating: null,
  box_office: '775398007.00',
  oscar: true,
  released: '1977-05-25T00:00:00',
  director: null,
  producer: 2,
  tags: ['space'],
  grid: [[1, null], [3, 4]],
  contact: null
}

const wb: Studio = { code: 'WB', founded: null }

// @ts-expect-error a non-nullable column is not null
const noName: Movie['name'] = null
// @ts-expect-error Numeric is a string on the wire
const numericNumber: Movie['box_office'] = 12.5
// @ts-expect-error a foreign key given `null: false` is not nullable
const noProducer: Movie['producer'] = null
// @ts-expect-error Array elements keep their type
const wrongTags: Movie['tags'] = [1]
// @ts-expect-error a custom primary key means no added id
const studioId: Studio['id'] = 1
// @ts-expect-error unknown columns are not part of the row
const unknown: Movie['nope'] = 1
// @ts-expect-error a varchar primary key is a string
const numericCode: Studio['code'] = 1

t.test('RowOf gives each column its wire type', async (t) => {
  t.equal(exact<Movie['id'], number>(true), true)
  t.equal(exact<Movie['name'], string>(true), true)
  t.equal(exact<Movie['synopsis'], string | null>(true), true)
  t.equal(exact<Movie['year'], number>(true), true)
  t.equal(exact<Movie['rating'], number | null>(true), true)
  t.equal(exact<Movie['box_office'], string | null>(true), true)
  t.equal(exact<Movie['oscar'], boolean>(true), true)
  t.equal(exact<Movie['released'], string>(true), true)
  t.equal(exact<Movie['director'], number | null>(true), true, 'a foreign key is nullable by default')
  t.equal(exact<Movie['producer'], number>(true), true)
  t.equal(exact<Movie['tags'], string[]>(true), true)
  t.equal(exact<Movie['grid'], Array<Array<number | null>>>(true), true)
  t.equal(exact<Movie['contact'], string | null>(true), true)
  t.equal(exact<keyof Studio, 'code' | 'founded'>(true), true)
  t.equal(exact<Studio['code'], string>(true), true)
  // @ts-expect-error exact() refuses a type that is not the same
  t.equal(exact<Movie['rating'], number>(true), true)
  t.same([star.name, wb.code, movie.primaryKey.name, studio.primaryKey.name], ['Star Wars', 'WB', 'id', 'code'])
  t.same([noName, numericNumber, noProducer, wrongTags, studioId, unknown, numericCode],
    [null, 12.5, null, [1], 1, 1, 1], 'the refused assignments still run')
})
