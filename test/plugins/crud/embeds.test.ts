import t from 'tap'
import { tableCrud } from '../../../plugins/crud/table-crud.js'
import { requests } from '../../fixtures/movies.js'
import { film, genre, person, relationalApp } from '../../fixtures/relational.js'

const { app } = await relationalApp(t, async (app) => {
  await app.register(tableCrud, { table: person, prefix: '/people', maxJoins: 2 })
  await app.register(tableCrud, { table: film, prefix: '/films', maxJoins: 2 })
  await app.register(tableCrud, { table: genre, prefix: '/genres', maxJoins: 1 })
})
const { get } = requests(app)

t.test('smoke', async (t) => {
  for (const url of ['/people/?__visible_fields=name,films.title,films.year', '/people/?__visible_fields=name,films.title,films.director.name,films.genres.name&__readable=1', '/films/?__visible_fields=title,genres.name&genres.__order=name', '/people/1/?__visible_fields=name,films.title&films.__page_size=1', '/people/?__visible_fields=id,films.title&films.rating__operator=gte&films.rating=8', '/films/?__visible_fields=title,director.films.title&__format=csv']) {
    const r = await get(url)
    console.log(url, r.statusCode, r.body)
  }
})
