import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { openApi } from '../../../plugins/openapi.js'
import { requests } from '../../fixtures/movies.js'
import { film, genre, person, relationalApp, type Row } from '../../fixtures/relational.js'

/*
 * Embeds (SPEC §8.1) on the relational fixture: each kind (reverse ForeignKey, many-to-many
 * through a junction, a to-one inside a to-many, a to-many inside a to-one, nested to-many)
 * compared with answers of plain SQL written here, one query per parent row, independent of
 * the compiler; per-embed order and page size; path filters narrowing the embed (SPEC §8.2);
 * every place rows are served; the 400s, each naming its part; secrets absent.
 */

const { app, db } = await relationalApp(t, async (app) => {
  await app.register(openApi, { info: { title: 'Embeds', version: '1.0.0' } })
  await app.register(tableCrud, { table: person, prefix: '/people', maxJoins: 2 })
  await app.register(tableCrud, { table: film, prefix: '/films', maxJoins: 2 })
  await app.register(tableCrud, { table: genre, prefix: '/genres', maxJoins: 2 })
  await app.register(tableCrud, { table: person, prefix: '/shallow', maxJoins: 1, maxEmbedRows: 1 })
  await app.register(tableCrud, { table: person, prefix: '/flat' })
})
const { get, expectError } = requests(app)

async function sql (text: string, values: unknown[] = []): Promise<Row[]> {
  return (await db.pool.query(text, values)).rows
}

async function rowsOf (t: Test, url: string): Promise<Row[]> {
  const response = await get(url)
  t.equal(response.statusCode, 200, `${url} status`)
  return JSON.parse(response.body).rows
}

/** Each person's films by plain SQL, in the default embed order (the film's key descending). */
async function filmsByPerson (columns: string, where = 'TRUE', order = 'id DESC', limit = 100): Promise<Map<number, Row[]>> {
  const out = new Map<number, Row[]>()
  for (const { id } of await sql('SELECT id FROM rel_person')) {
    out.set(id as number, await sql(`SELECT ${columns} FROM rel_film WHERE director = $1 AND ${where} ORDER BY ${order} LIMIT ${limit}`, [id]))
  }
  return out
}

t.test('a reverse relation: each person with their films, [] for none', async (t) => {
  const films = await filmsByPerson('title, year')
  const people = await sql('SELECT id, name FROM rel_person ORDER BY id DESC')
  t.strictSame(await rowsOf(t, '/people/?__visible_fields=id,name,films.title,films.year'),
    people.map((p) => ({ id: p.id, name: p.name, films: films.get(p.id as number) })))
  t.strictSame((await rowsOf(t, '/people/?__visible_fields=films.title&id=4'))[0], { films: [] }, 'no related row: an empty array')
  t.strictSame(await rowsOf(t, '/people/?__visible_fields=id,pupils.name&__order=id'),
    await Promise.all((await sql('SELECT id FROM rel_person ORDER BY id')).map(async (p) => ({ id: p.id, pupils: await sql('SELECT name FROM rel_person WHERE mentor = $1 ORDER BY id DESC', [p.id]) }))),
    'a self-reference, by its related name')
})

t.test('a many-to-many relation through the junction, both ways', async (t) => {
  const genresOf = async (id: unknown): Promise<Row[]> => await sql('SELECT g.name FROM rel_film_genre fg JOIN rel_genre g ON g.id = fg.genre WHERE fg.film = $1 ORDER BY g.id DESC', [id])
  const films = await sql('SELECT id FROM rel_film ORDER BY id DESC')
  t.strictSame(await rowsOf(t, '/films/?__visible_fields=id,genres.name'), await Promise.all(films.map(async (f) => ({ id: f.id, genres: await genresOf(f.id) }))))
  const filmsOf = async (id: unknown): Promise<Row[]> => await sql('SELECT f.title FROM rel_film_genre fg JOIN rel_film f ON f.id = fg.film WHERE fg.genre = $1 ORDER BY f.title', [id])
  const genres = await sql('SELECT id FROM rel_genre ORDER BY id DESC')
  t.strictSame(await rowsOf(t, '/genres/?__visible_fields=id,films.title&films.__order=title'), await Promise.all(genres.map(async (g) => ({ id: g.id, films: await filmsOf(g.id) }))))
})

t.test('a to-one inside a to-many, a to-many inside a to-one, and a to-many inside a to-many', async (t) => {
  const genres = await sql('SELECT id FROM rel_genre ORDER BY id DESC')
  const inner = async (id: unknown): Promise<Row[]> => (await sql(
    'SELECT f.title, p.name FROM rel_film_genre fg JOIN rel_film f ON f.id = fg.film LEFT JOIN rel_person p ON p.id = f.director WHERE fg.genre = $1 ORDER BY f.id DESC', [id]))
    .map((r) => ({ title: r.title, director: { name: r.name } }))
  t.strictSame(await rowsOf(t, '/genres/?__visible_fields=id,films.title,films.director.name'), await Promise.all(genres.map(async (g) => ({ id: g.id, films: await inner(g.id) }))),
    'a film without a director has every joined field null, as at the top level')
  t.strictSame(await rowsOf(t, '/genres/?__visible_fields=films.director,films.director.name&id=3'), [{ films: [{ director: { id: 3, name: 'Francis Coppola' } }] }],
    'a ForeignKey asked for with its joined fields: the key goes inside the object')
  const films = await sql('SELECT f.id, f.director FROM rel_film f ORDER BY f.id DESC')
  const siblings = async (director: unknown): Promise<Row[]> => director === null ? [] : await sql('SELECT title FROM rel_film WHERE director = $1 ORDER BY id DESC', [director])
  t.strictSame(await rowsOf(t, '/films/?__visible_fields=id,director.name,director.films.title'), await Promise.all(films.map(async (f) => ({
    id: f.id,
    director: { name: (await sql('SELECT name FROM rel_person WHERE id = $1', [f.director]))[0]?.name ?? null, films: await siblings(f.director) }
  }))), 'the director object holds the embed; no director: an empty array')
  const people = await sql('SELECT id FROM rel_person ORDER BY id DESC')
  const nested = async (id: unknown): Promise<Row[]> => await Promise.all((await sql('SELECT id, title FROM rel_film WHERE director = $1 ORDER BY id DESC', [id]))
    .map(async (f) => ({ title: f.title, awards: await sql('SELECT name FROM rel_award WHERE film = $1 ORDER BY id DESC', [f.id]) })))
  t.strictSame(await rowsOf(t, '/people/?__visible_fields=id,films.title,films.awards.name'), await Promise.all(people.map(async (p) => ({ id: p.id, films: await nested(p.id) }))))
})

t.test('<path>.__order and <path>.__page_size', async (t) => {
  const check = async (query: string, order: string, limit = 100): Promise<void> => {
    const films = await filmsByPerson('title', 'TRUE', order, limit)
    const rows = await rowsOf(t, `/people/?__visible_fields=id,films.title&${query}`)
    t.strictSame(rows, rows.map((r) => ({ id: r.id, films: films.get(r.id as number) })), query)
  }
  await check('films.__order=-year', 'year DESC, id')
  await check('films.__order=rating', 'rating, id', 100)
  await check('films.__order=-rating,title&films.__page_size=1', 'rating DESC, title, id', 1)
  await check('films.__order=rating&films.__order=-id', 'rating, id DESC')
  await check('films.__page_size=1', 'id DESC', 1)
  // The default and the cap of a mount with maxEmbedRows: 1.
  t.strictSame((await rowsOf(t, '/shallow/?__visible_fields=films.title&id=1'))[0], { films: [{ title: 'THX 1138' }] })
  await expectError(t, '/shallow/?__visible_fields=films.title&films.__page_size=2', 400, 'TABLECRUD_ERR_QS_INVALID_EMBED_PAGE_SIZE', 'films.__page_size must be an integer from 1 to 1.')
})

t.test('a path filter keeps the parents with a match, and their embed lists only the matches (SPEC §8.2)', async (t) => {
  const films = await filmsByPerson('title, rating', 'rating >= 8')
  const rows = await rowsOf(t, '/people/?__visible_fields=id,films.title,films.rating&films.rating__operator=gte&films.rating=8')
  t.strictSame(rows.map((r) => r.id), [3, 1])
  t.strictSame(rows, rows.map((r) => ({ id: r.id, films: films.get(r.id as number) })))
  // Through two hops: the films embed keeps the films with an Oscar, their awards embed the Oscars only.
  const oscars = await rowsOf(t, '/people/?__visible_fields=id,films.title,films.awards.name&films.awards.name=Oscar&films.awards.name__match=exact')
  t.strictSame(oscars, [
    { id: 3, films: [{ title: 'The Godfather', awards: [{ name: 'Oscar' }] }] },
    { id: 2, films: [{ title: 'Lost in Translation', awards: [{ name: 'Oscar' }] }] },
    { id: 1, films: [{ title: 'Star Wars', awards: [{ name: 'Oscar' }] }] }
  ])
  // A tree filters the parents only.
  t.strictSame(await rowsOf(t, '/people/?__visible_fields=id,films.title&__or=(films.year.lt.1972)'), [{ id: 1, films: [{ title: 'THX 1138' }, { title: 'Star Wars' }] }])
})

t.test('__readable inside an embed', async (t) => {
  t.strictSame(await rowsOf(t, '/genres/?__visible_fields=films.title,films.director&__readable=true&id=1'), [
    { films: [{ title: 'THX 1138', director: 1, director_readable: 'George Lucas' }, { title: 'Star Wars', director: 1, director_readable: 'George Lucas' }] }
  ])
  t.strictSame(await rowsOf(t, '/films/?__visible_fields=director.films.title&__readable=1&id=6'), [{ director: { films: [] }, director_readable: null }],
    'a ForeignKey holding an embed is a top-level ForeignKey too (SPEC §6.9)')
})

t.test('GET /:id/, keyset pages and exports embed alike', async (t) => {
  const one = await get('/people/2/?__visible_fields=name,films.title&films.__page_size=1&films.__order=year&name=ignored')
  t.strictSame(JSON.parse(one.body), { name: 'Sofia Coppola', films: [{ title: 'Lost in Translation' }] })
  t.match(one.headers.etag, /^"/)
  const first = JSON.parse((await get('/people/?__visible_fields=id,films.title&__cursor=&__page_size=2&films.__page_size=1')).body)
  t.strictSame(first.rows, [{ id: 4, films: [] }, { id: 3, films: [{ title: 'The Godfather' }] }])
  const next = JSON.parse((await get(`/people/?__visible_fields=id,films.title&__cursor=${String(first.next_cursor)}&__page_size=2&films.__page_size=1`)).body)
  t.strictSame(next.rows, [{ id: 2, films: [{ title: 'Marie Antoinette' }] }, { id: 1, films: [{ title: 'THX 1138' }] }])
  const ndjson = await get('/people/?__visible_fields=id,films.title&__format=ndjson&__order=id&id__operator=lte&id=2')
  t.equal(ndjson.body, '{"id":1,"films":[{"title":"THX 1138"},{"title":"Star Wars"}]}\n{"id":2,"films":[{"title":"Marie Antoinette"},{"title":"Lost in Translation"}]}\n')
  const csv = await get('/people/?__visible_fields=id,films.title&__format=csv&__order=id&id__operator=lte&id=2')
  t.equal(csv.body, 'id,films\r\n1,"[{""title"":""THX 1138""},{""title"":""Star Wars""}]"\r\n2,"[{""title"":""Marie Antoinette""},{""title"":""Lost in Translation""}]"\r\n', 'CSV: an embed is its JSON text')
})

t.test('secrets are never selected: not as a field, not as an order, not through a secret key', async (t) => {
  const response = await get('/people/?__visible_fields=films.id,films.title,films.tags')
  t.notMatch(response.body, /budget_note|secret/)
  const valid = JSON.parse((await get('/people/?__visible_fields=nope')).body).validFields as string[]
  t.ok(valid.includes('films.title') && valid.includes('films.genres.name') && valid.includes('pupils.name'), 'visible_fields_options list embed paths')
  t.notOk(valid.some((v) => /budget_note|pin|hidden_awards|secret_film/.test(v)), 'but no secret')
  await expectError(t, '/people/?__visible_fields=films.budget_note', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', `films.budget_note isn't a valid field name. Valid names: ${valid.join(', ')}.`, { validFields: valid })
  const own = ['films.id', 'films.title', 'films.year', 'films.rating', 'films.director', 'films.tags']
  await expectError(t, '/people/?__visible_fields=films.title&films.__order=budget_note', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', `films.budget_note isn't a valid field name. Valid names: ${own.join(', ')}.`, { validFields: own })
  const films = JSON.parse((await get('/films/?__visible_fields=nope')).body).validFields as string[]
  t.notOk(films.some((v) => v.startsWith('hidden_awards')), 'a relation through a secret ForeignKey is no path')
})

t.test('every 400 names its part', async (t) => {
  const controls = ['pupils.__order', 'pupils.__page_size', 'films.__order', 'films.__page_size']
  await expectError(t, '/shallow/?films.__page_size=0', 400, 'TABLECRUD_ERR_QS_INVALID_EMBED_PAGE_SIZE', 'films.__page_size must be an integer from 1 to 1.')
  await expectError(t, '/people/?films.__page_size=101', 400, 'TABLECRUD_ERR_QS_INVALID_EMBED_PAGE_SIZE', 'films.__page_size must be an integer from 1 to 100.')
  await expectError(t, '/people/?films.genres.__page_size=x', 400, 'TABLECRUD_ERR_QS_INVALID_EMBED_PAGE_SIZE', 'films.genres.__page_size must be an integer from 1 to 100.')
  await expectError(t, '/people/?films.__page_size=1&films.__page_size=2', 400, 'TABLECRUD_ERR_QS_REPEATED', 'films.__page_size is given more than once.')
  await expectError(t, '/shallow/?nope.__order=id', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', `nope.__order isn't a valid field name. Valid names: ${controls.join(', ')}.`, { validFields: controls })
  await expectError(t, '/shallow/?mentor.__page_size=1', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', `mentor.__page_size isn't a valid field name. Valid names: ${controls.join(', ')}.`, { validFields: controls })
  await expectError(t, '/shallow/?films.genres.__order=name', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', `films.genres.__order isn't a valid field name. Valid names: ${controls.join(', ')}.`, { validFields: controls })
  await expectError(t, '/flat/1/?films.__order=title', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "films.__order isn't a valid field name. Valid names: .", { validFields: [] })
  const valid = JSON.parse((await get('/people/?__visible_fields=nope')).body).validFields as string[]
  await expectError(t, '/people/?__order=films.year', 400, 'TABLECRUD_ERR_QS_ORDER_TO_MANY',
    "films.year goes through the to-many relation films: rows can't be sorted by it; sort the embedded rows with films.__order.", { validFields: valid })
  await expectError(t, '/people/?__order=mentor.films.year', 400, 'TABLECRUD_ERR_QS_ORDER_TO_MANY',
    "mentor.films.year goes through the to-many relation films: rows can't be sorted by it; sort the embedded rows with mentor.films.__order.", { validFields: valid })
  // Each hop counts against maxJoins: two hops on a mount with maxJoins 1.
  await expectError(t, '/shallow/?__visible_fields=films.genres.name', 400, 'TABLECRUD_ERR_QS_MAX_JOIN_DEPTH', 'Max join depth exceeded')
  await expectError(t, '/flat/?__visible_fields=films.title', 400, 'TABLECRUD_ERR_QS_MAX_JOIN_DEPTH', 'Max join depth exceeded')
  await expectError(t, '/flat/?__visible_fields=films.nope', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "films.nope isn't a valid field name. Valid names: id, name, born, mentor.", { validFields: ['id', 'name', 'born', 'mentor'] })
  await expectError(t, '/flat/?__visible_fields=hidden.x.y', 400, 'TABLECRUD_ERR_QS_UNKNOWN_FIELD', "hidden.x.y isn't a valid field name. Valid names: id, name, born, mentor.", { validFields: ['id', 'name', 'born', 'mentor'] })
  // /count/ and the filters' parser pass the controls over, as the other control parameters.
  t.equal((await get('/people/count/?films.__page_size=x')).statusCode, 200)
})

t.test('/schema/ lists embed paths; OpenAPI documents the embedded rows and the dotted parameters', async (t) => {
  const options = JSON.parse((await get('/people/schema/')).body).extra.visible_fields_options as string[]
  t.ok(['films.title', 'films.director.name', 'films.genres.name', 'films.awards.name', 'pupils.name'].every((name) => options.includes(name)), 'relation paths within maxJoins')
  t.notOk(options.includes('films.genres.films.title'), 'not past maxJoins')
  const document = JSON.parse((await get('/docs/json')).body)
  const resolve = (schema: any): any => schema.$ref === undefined ? schema : document.components.schemas[String(schema.$ref).split('/').pop()!]
  // RelPersonRow is mounted thrice with different joins, so the document writes each in place.
  const row = resolve(resolve(document.paths['/people/{id}/'].get.responses['200'].content['application/json'].schema))
  t.equal(row.title, 'RelPersonRow')
  const films = row.properties.films
  t.equal(films.type, 'array')
  t.equal(films.items.title, 'RelFilmEmbeddedDepth1', 'a film embedded with one join left')
  t.same(Object.keys(films.items.properties), ['id', 'title', 'year', 'rating', 'director', 'tags', 'director_readable', 'rel_film_genre', 'genres', 'awards'])
  t.notOk('budget_note' in films.items.properties, 'no secret column in an embedded row')
  t.notOk('hidden_awards' in films.items.properties, 'nor a relation through a secret key')
  t.equal(films.items.properties.genres.items.title, 'RelGenreEmbedded', 'two hops: no relation left inside')
  t.same(films.items.properties.director.anyOf[1], { $ref: '#/components/schemas/RelPersonJoined' }, 'a ForeignKey inside an embed may hold its joined row')
  const list = document.paths['/people/'].get.parameters as Array<{ name: string, schema: Record<string, unknown> }>
  const byName = new Map(list.map((p) => [p.name, p.schema]))
  t.match(list.find((p) => p.name === 'films.__order'), { description: /^Sorts the embedded films rows: comma-separated columns of theirs \(id, title, year, rating, director, tags\)/ })
  t.match(byName.get('films.__page_size'), { type: 'integer', minimum: 1, maximum: 100 })
  t.match(byName.get('films.genres.__page_size'), { maximum: 100 })
  t.ok(byName.has('pupils.__order'))
  const single = (document.paths['/people/{id}/'].get.parameters as Array<{ name: string }>).map((p) => p.name)
  t.ok(single.includes('films.__order') && single.includes('films.__page_size'), 'GET /:id/ takes them too')
  const shallow = new Map((document.paths['/shallow/'].get.parameters as Array<{ name: string, schema: Record<string, unknown> }>).map((p) => [p.name, p.schema]))
  t.match(shallow.get('films.__page_size'), { maximum: 1 }, 'capped by the mount\'s maxEmbedRows')
  t.notOk(shallow.has('films.genres.__order'), 'no embed past maxJoins')
})

t.test('the examples of docs/table-crud.md answer as written', async (t) => {
  const page = readFileSync(new URL('../../../docs/table-crud.md', import.meta.url), 'utf8')
  const section = page.slice(page.indexOf('## Embeds'), page.indexOf('## Filters across relations'))
  const examples = [...section.matchAll(/```text\nGET (\S+)\n```\n\n```json\n([\s\S]*?)```/g)]
  t.equal(examples.length, 7, 'every example of the section')
  for (const [, url = '', answer = ''] of examples) {
    const response = await get(url)
    t.equal(response.statusCode, 200, url)
    t.strictSame(JSON.parse(response.body), JSON.parse(answer), url)
  }
})
