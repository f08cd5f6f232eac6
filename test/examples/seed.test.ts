import t from 'tap'
import { createTables } from '../../lib/db/index.js'
import { wireTypes } from '../../lib/db/types.js'
import { director, movie, role, studio, tables } from '../../examples/movies/tables.js'
import { seed } from '../../examples/movies/seed.js'
import { testDatabase } from '../helpers/db.js'

const db = await testDatabase(t)

const select = async (text: string): Promise<any[]> => (await db.pool.query({ text, types: wireTypes })).rows

const COUNTS = 'SELECT (SELECT count(*) FROM director)::integer AS director, (SELECT count(*) FROM studio)::integer AS studio, ' +
  '(SELECT count(*) FROM movie)::integer AS movie, (SELECT count(*) FROM role)::integer AS role'

t.test('the tables use every column type and the options the demo shows', async (t) => {
  const types = new Set(tables.flatMap((table) => table.columns.map((c) => c.type)))
  t.strictSame([...types].sort(), ['array', 'boolean', 'email', 'foreignKey', 'integer', 'numeric', 'real', 'serial', 'text', 'timestamp', 'varchar'])
  t.equal(studio.primaryKey.name, 'code')
  t.equal(director.columnMap.get('contact')!.secret, true)
  t.equal(movie.columnMap.get('director')!.onDelete, 'restrict')
  t.equal(role.columnMap.get('movie')!.onDelete, 'cascade')
  t.strictSame(movie.readable, { template: '%s (%s)', columns: ['name', 'year'] })
  t.strictSame(role.readable, { template: '%s as %s', columns: ['actor', 'character'] })
  t.strictSame([...movie.columnMap.get('genre')!.choices!.keys()], ['action', 'animation', 'comedy', 'drama', 'horror', 'sci_fi', 'thriller'])
})

t.test('seeds once, deterministically', async (t) => {
  await createTables(db.pool, tables)
  await seed(db.pool)
  await seed(db.pool)
  t.strictSame(await select(COUNTS), [{ director: 20, studio: 9, movie: 200, role: 400 }], 'the second run adds nothing')

  t.strictSame(await select('SELECT * FROM director WHERE id IN (1, 2, 3) ORDER BY id'), [
    { id: 1, name: 'Akira Kurosawa', contact: 'akira.kurosawa@agents.example.com' },
    { id: 2, name: 'Agnès Varda', contact: 'agnes.varda@agents.example.com' },
    { id: 3, name: 'Alfred Hitchcock', contact: null }
  ])
  t.strictSame(await select("SELECT * FROM studio WHERE code IN ('WB', 'IND') ORDER BY code"), [
    { code: 'IND', name: 'Independent', founded: null },
    { code: 'WB', name: 'Warner Bros.', founded: 1923 }
  ])
  t.strictSame(await select('SELECT * FROM movie WHERE id IN (1, 8, 20, 200) ORDER BY id'), [
    {
      id: 1,
      name: 'The Silent River',
      year: 1960,
      release_date: '1960-01-01T00:00:00',
      genre: 'action',
      synopsis: 'A retired detective searches for the silent river.',
      rating: 3,
      box_office: '100000.00',
      oscar_winner: true,
      director: 1,
      studio: 'WB',
      tags: [],
      star_votes: [[17, 34, 51, 68, 85], [29, 58, 87, 116, 145]],
      poster: null
    },
    {
      id: 8,
      name: 'The Distant River',
      year: 2009,
      release_date: '2009-08-08T00:00:00',
      genre: 'action',
      synopsis: 'A disgraced pilot falls for the distant river.',
      rating: 4.5,
      box_office: '55539951.59',
      oscar_winner: false,
      director: 8,
      studio: 'A24',
      tags: ['black-and-white', 'festival'],
      star_votes: [[234, 251, 268, 285, 302], [330, 359, 388, 417, 446]],
      poster: null
    },
    {
      id: 20,
      name: 'The Frozen Empire',
      year: 1965,
      release_date: '1965-08-12T00:00:00',
      genre: 'sci_fi',
      synopsis: 'An exiled prince must defend the frozen empire.',
      rating: null,
      box_office: null,
      oscar_winner: false,
      director: 20,
      studio: 'UNI',
      tags: ['restored', 'remake'],
      star_votes: [[106, 123, 140, 157, 174], [146, 175, 204, 233, 262]],
      poster: null
    },
    {
      id: 200,
      name: 'The Frozen Winter',
      year: 2009,
      release_date: null,
      genre: 'drama',
      synopsis: 'A disgraced pilot falls for the frozen winter.',
      rating: null,
      box_office: null,
      oscar_winner: false,
      director: 20,
      studio: 'UNI',
      tags: ['black-and-white', 'festival'],
      star_votes: [[186, 203, 220, 237, 254], [186, 215, 244, 273, 302]],
      poster: null
    }
  ])
  t.strictSame(await select('SELECT * FROM role WHERE id IN (1, 2, 400) ORDER BY id'), [
    { id: 1, movie: 1, actor: 'Ada Moreno', character: 'The Stranger', billing: 1 },
    { id: 2, movie: 1, actor: 'Bruno Novak', character: 'Young Ines', billing: 2 },
    { id: 400, movie: 200, actor: 'Jonas Petrov', character: 'Agent Reyes', billing: 2 }
  ])
  t.strictSame(await select(`SELECT
      count(*) FILTER (WHERE rating IS NULL)::integer AS no_rating,
      count(*) FILTER (WHERE box_office IS NULL)::integer AS no_box_office,
      count(*) FILTER (WHERE release_date IS NULL)::integer AS no_release_date,
      count(*) FILTER (WHERE studio IS NULL)::integer AS no_studio,
      count(*) FILTER (WHERE oscar_winner)::integer AS oscar_winners,
      count(*) FILTER (WHERE tags = '{}')::integer AS untagged,
      count(DISTINCT name)::integer AS names,
      count(DISTINCT director)::integer AS directors
    FROM movie`), [{
    no_rating: 10, no_box_office: 20, no_release_date: 8, no_studio: 18, oscar_winners: 16, untagged: 50, names: 200, directors: 20
  }])
  t.strictSame(await select('SELECT count(DISTINCT movie)::integer AS movies FROM role'), [{ movies: 200 }], 'every movie has a cast')
})

t.test('a kept database with any rows is left alone', async (t) => {
  await db.pool.query('DELETE FROM role')
  await db.pool.query('DELETE FROM movie')
  await seed(db.pool)
  t.strictSame(await select(COUNTS), [{ director: 20, studio: 9, movie: 0, role: 0 }])
})
