import { column, defineTable } from '../../lib/table/index.js'

/**
 * The demo's tables: between them they use every column type and option of SPEC §2.2 and
 * §2.11, so the demo shows each one on the wire, in `/schema/` and in the docs.
 */

export const director = defineTable('director', {
  name: column.varchar({ length: 100, required: true, unique: true, helpText: 'Full name, as credited', example: 'Lana Wachowski' }),
  contact: column.email({ null: true, secret: true, helpText: "The agent's address; never returned, and not filterable" })
}, { readable: 'name', helpText: 'People who direct films' })

/** A studio is known by a short code: a varchar primary key, written by the client. */
export const studio = defineTable('studio', {
  code: column.varchar({ length: 8, primaryKey: true, helpText: 'A short code such as WB', example: 'NL' }),
  name: column.varchar({ length: 100, required: true, unique: true, example: 'New Line Cinema' }),
  founded: column.integer({ null: true, helpText: 'The year the studio was founded', example: 1967 })
}, { readable: 'name', helpText: 'Film studios' })

export const movie = defineTable('movie', {
  name: column.varchar({ length: 200, required: true, index: true, helpText: 'The title', example: 'The Matrix' }),
  year: column.integer({ required: true, index: true, helpText: 'The year of the first release', example: 1999 }),
  release_date: column.timestamp({ null: true, helpText: 'The first public screening, in UTC', example: '1999-03-31T00:00:00' }),
  genre: column.varchar({
    length: 20,
    default: 'drama',
    choices: {
      action: 'action',
      animation: { value: 'animation', displayName: 'Animated' },
      comedy: 'comedy',
      drama: 'drama',
      horror: 'horror',
      sci_fi: { value: 'sci_fi', displayName: 'Science fiction' },
      thriller: 'thriller'
    }
  }),
  synopsis: column.text({ helpText: 'A few sentences, without spoilers', example: 'A hacker learns what the world he lives in really is.' }),
  rating: column.real({ null: true, helpText: 'The average review score, 0 to 10; null until reviewed', example: 8.7 }),
  box_office: column.numeric({ digits: [12, 2], null: true, helpText: 'Worldwide gross in US dollars', example: 467222728 }),
  oscar_winner: column.boolean({ helpText: 'Won at least one Academy Award' }),
  director: column.foreignKey(director, { null: false, onDelete: 'restrict', helpText: 'A director with movies cannot be deleted' }),
  studio: column.foreignKey<string>(studio, { onDelete: 'set null', example: 'WB' }),
  tags: column.array(column.varchar({ length: 20 }), { example: ['cult'] }),
  star_votes: column.array(column.array(column.integer()), {
    helpText: 'Votes for 1 to 5 stars: one row for domestic audiences, one for international ones',
    example: [[12, 30, 210, 980, 2400], [8, 25, 190, 870, 2150]]
  }),
  poster: column.varchar({
    length: 255,
    null: true,
    helpText: 'A file key from POST /media/ (a png, jpg, gif or webp image); GET /media/url/ gives its URL',
    // None until a poster is uploaded: any other example would name a file that is not there.
    example: null
  })
}, { readable: { template: '%s (%s)', columns: ['name', 'year'] }, helpText: 'Feature films' })

export const role = defineTable('role', {
  movie: column.foreignKey(movie, { null: false, helpText: 'Deleting a movie deletes its cast (the default, cascade)' }),
  actor: column.varchar({ length: 100, required: true, index: true, example: 'Keanu Reeves' }),
  character: column.varchar({ length: 100, required: true, example: 'Neo' }),
  billing: column.integer({ default: 1, helpText: 'Position in the credits, from 1' })
}, { readable: { template: '%s as %s', columns: ['actor', 'character'] }, helpText: 'Who played whom' })

/** In foreign-key order, as `createTables` and the demo's mounts take them. */
export const tables = [director, studio, movie, role]
