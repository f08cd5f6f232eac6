/**
 * The demo's data: 20 directors, 9 studios, 200 movies and 400 roles. Every value is derived
 * from its row's index, so each run writes the same rows (and tests can name them).
 */

interface Db {
  query: (text: string, values?: unknown[]) => Promise<unknown>
}

type Row = Record<string, unknown>

const DIRECTORS = [
  'Akira Kurosawa', 'Agnès Varda', 'Alfred Hitchcock', 'Ang Lee', 'Bong Joon-ho', 'Céline Sciamma', 'Chantal Akerman',
  'Christopher Nolan', 'Federico Fellini', 'Greta Gerwig', 'Hayao Miyazaki', 'Ingmar Bergman', 'Jane Campion',
  'Kathryn Bigelow', 'Martin Scorsese', 'Satyajit Ray', 'Sofia Coppola', 'Spike Lee', 'Stanley Kubrick', 'Wong Kar-wai'
]

const STUDIOS: Array<[code: string, name: string, founded: number | null]> = [
  ['WB', 'Warner Bros.', 1923], ['UNI', 'Universal Pictures', 1912], ['PAR', 'Paramount Pictures', 1912],
  ['COL', 'Columbia Pictures', 1918], ['FOX', '20th Century Studios', 1935], ['DIS', 'Walt Disney Pictures', 1923],
  ['LGF', 'Lionsgate', 1997], ['A24', 'A24', 2012], ['IND', 'Independent', null]
]

const ADJECTIVES = ['Silent', 'Crimson', 'Last', 'Hidden', 'Broken', 'Golden', 'Midnight', 'Distant', 'Wild', 'Frozen']
const NOUNS = [
  'River', 'Empire', 'Garden', 'Horizon', 'Station', 'Harbor', 'Kingdom', 'Letter', 'Mirror', 'Orchard',
  'Planet', 'Promise', 'Road', 'Shadow', 'Signal', 'Summer', 'Tide', 'Tower', 'Voyage', 'Winter'
]
const GENRES = ['action', 'animation', 'comedy', 'drama', 'horror', 'sci_fi', 'thriller']
const PEOPLE = [
  'A retired detective', 'Two estranged sisters', 'A young engineer', 'An exiled prince',
  'A night-shift nurse', 'A travelling musician', 'A stubborn farmer', 'A disgraced pilot'
]
const PLOTS = [
  'searches for', 'must defend', 'stumbles upon', 'returns to', 'tries to escape', 'falls for', 'uncovers the secret of', 'races against'
]
const TAGS = ['classic', 'cult', 'festival', 'restored', 'debut', 'sequel', 'remake', 'black-and-white']

const FIRST_NAMES = ['Ada', 'Bruno', 'Chiara', 'Dev', 'Elena', 'Farid', 'Greta', 'Hugo', 'Ines', 'Jonas', 'Kemi', 'Luca', 'Mira', 'Nils', 'Oona']
const LAST_NAMES = [
  'Moreno', 'Okafor', 'Lindqvist', 'Tanaka', 'Dubois', 'Novak', 'Haddad', 'Kowalski',
  'Silva', 'Byrne', 'Petrov', 'Ahmed', 'Rossi', 'Nakamura', 'Fischer', 'Quinn'
]
const CHARACTERS = [
  'The Stranger', 'Captain Vale', 'Detective Mora', 'The Widow', 'Young Ines', 'Doctor Kell',
  'The Mayor', 'Sergeant Pike', 'The Pilot', 'Old Tom', 'The Narrator', 'Agent Reyes'
]

const pad = (n: number): string => String(n).padStart(2, '0')

/** "Agnès Varda" -> "agnes.varda": an address that is clearly made up. */
const slug = (name: string): string =>
  name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z]+/g, '.')

/** One INSERT of many rows, every value a bind parameter. `columns` are constants of this file. */
async function insert (db: Db, table: string, columns: readonly string[], rows: readonly unknown[][], returning: string): Promise<Row[]> {
  const tuples = rows.map((row, r) => `(${row.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`)
  const text = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')} RETURNING ${returning}`
  const result = await db.query(text, rows.flat()) as { rows: Row[] }
  return result.rows
}

function directorRow (i: number): unknown[] {
  const name = DIRECTORS[i]!
  return [name, i % 3 === 2 ? null : `${slug(name)}@agents.example.com`]
}

/** Titles are unique: ten adjectives times twenty nouns. */
function movieName (i: number): string {
  return `The ${ADJECTIVES[i % ADJECTIVES.length]} ${NOUNS[Math.floor(i / ADJECTIVES.length)]}`
}

function movieRow (i: number, directorIds: ReadonlyMap<string, unknown>): unknown[] {
  const [, adjective, noun] = movieName(i).toLowerCase().split(' ')
  const year = 1960 + (i * 7) % 64
  const stars = [1, 2, 3, 4, 5]
  return [
    movieName(i),
    year,
    i % 25 === 24 ? null : `${year}-${pad(1 + i % 12)}-${pad(1 + (i * 5) % 28)}`,
    GENRES[i % GENRES.length],
    `${PEOPLE[i % PEOPLE.length]} ${PLOTS[(i * 3) % PLOTS.length]} the ${adjective} ${noun}.`,
    i % 20 === 19 ? null : ((i * 37) % 61 + 30) / 10,
    i % 10 === 9 ? null : `${100000 + (i * 7919993) % 900000000}.${pad((i * 37) % 100)}`,
    i % 13 === 0,
    directorIds.get(DIRECTORS[i % DIRECTORS.length]!),
    i % 11 === 10 ? null : STUDIOS[i % STUDIOS.length]![0],
    i % 4 === 0 ? [] : [TAGS[i % TAGS.length], TAGS[(i + 3) % TAGS.length]],
    [stars.map((s) => (i * 31 + s * 17) % 500), stars.map((s) => (i * 43 + s * 29) % 700)]
  ]
}

function roleRow (i: number, billing: number, movieId: unknown): unknown[] {
  const j = billing - 1
  return [
    movieId,
    `${FIRST_NAMES[(2 * i + j) % FIRST_NAMES.length]} ${LAST_NAMES[(3 * i + 5 * j) % LAST_NAMES.length]}`,
    CHARACTERS[(i + 4 * j) % CHARACTERS.length],
    billing
  ]
}

const MOVIES = 200
const ROLES_PER_MOVIE = 2

/**
 * Fills the demo's tables when all four are empty; otherwise leaves them alone, so restarting
 * the demo on a kept database adds nothing. The tables must exist (`createTables`).
 * @example await seed(app.pg)
 */
export async function seed (db: Db): Promise<void> {
  const seeded = await db.query(
    'SELECT EXISTS (SELECT 1 FROM director) OR EXISTS (SELECT 1 FROM studio) OR EXISTS (SELECT 1 FROM movie) OR EXISTS (SELECT 1 FROM role) AS seeded'
  ) as { rows: Array<{ seeded: boolean }> }
  if (seeded.rows[0]!.seeded) return

  const directors = await insert(db, 'director', ['name', 'contact'], DIRECTORS.map((_, i) => directorRow(i)), 'id, name')
  const directorIds = new Map(directors.map((d) => [d.name as string, d.id]))
  await insert(db, 'studio', ['code', 'name', 'founded'], STUDIOS, 'code')

  const movieColumns = [
    'name', 'year', 'release_date', 'genre', 'synopsis', 'rating', 'box_office', 'oscar_winner', 'director', 'studio', 'tags', 'star_votes'
  ]
  const movies = await insert(db, 'movie', movieColumns, Array.from({ length: MOVIES }, (_, i) => movieRow(i, directorIds)), 'id, name')
  const movieIds = new Map(movies.map((m) => [m.name as string, m.id]))

  const roles = Array.from({ length: MOVIES * ROLES_PER_MOVIE }, (_, k) => {
    const i = Math.floor(k / ROLES_PER_MOVIE)
    return roleRow(i, 1 + k % ROLES_PER_MOVIE, movieIds.get(movieName(i)))
  })
  await insert(db, 'role', ['movie', 'actor', 'character', 'billing'], roles, 'id')
}
