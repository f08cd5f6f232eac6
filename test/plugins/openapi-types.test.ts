import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import openapiTS, { astToString } from 'openapi-typescript'
import { buildDemo } from '../../examples/movies/app.js'
import { appPool, testDatabase } from '../helpers/db.js'

/*
 * A client typed by the demo's OpenAPI document: openapi-typescript turns the document into
 * `paths`, a small client uses them, and the TypeScript compiler checks it. A client that
 * gets a route, a parameter or a field wrong must not type-check.
 */

const db = await testDatabase(t)
const app = await buildDemo(appPool(db))
t.teardown(async () => await app.close())
const base = await app.listen({ host: '127.0.0.1', port: 0 })
const dir = await mkdtemp(join(tmpdir(), 'tablecrud-openapi-types-'))
t.teardown(async () => await rm(dir, { recursive: true, force: true }))

const document = (await app.inject('/docs/json')).json()
await writeFile(join(dir, 'schema.ts'), astToString(await openapiTS(document)))
await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))

const CLIENT = `import type { paths } from './schema.js'

type ListMovies = paths['/api/movies/']['get']
type GetMovie = paths['/api/movies/{id}/']['get']
export type MovieQuery = NonNullable<ListMovies['parameters']['query']>
export type MovieList = ListMovies['responses'][200]['content']['application/json']
export type MovieId = GetMovie['parameters']['path']['id']
export type Movie = GetMovie['responses'][200]['content']['application/json']
// One response per status (docs/openapi.md): the error of a list and of a login are typed, not never.
export type ApiError = ListMovies['responses'][400]['content']['application/json']
export type LoginError = paths['/login/jwt/']['post']['responses'][401]['content']['application/json']
export function loginMessage (error: LoginError): string { return error.message }

function search (query: Record<string, string | number | boolean | ReadonlyArray<string | number | boolean> | undefined>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    for (const one of value === undefined ? [] : Array.isArray(value) ? value : [value]) params.append(name, String(one))
  }
  const text = params.toString()
  return text === '' ? '' : '?' + text
}

async function get<T> (url: string): Promise<T> {
  const response = await fetch(url)
  if (!response.ok) throw new Error(((await response.json()) as ApiError).message)
  return (await response.json()) as T
}

export async function listMovies (base: string, query: MovieQuery = {}): Promise<MovieList> {
  return await get<MovieList>(base + '/api/movies/' + search(query))
}

export async function getMovie (base: string, id: MovieId, query: NonNullable<GetMovie['parameters']['query']> = {}): Promise<Movie> {
  return await get<Movie>(base + '/api/movies/' + String(id) + '/' + search(query))
}

export const QUERY: MovieQuery = {
  year: [2000],
  year__operator: 'gte',
  genre: ['drama'],
  genre__match: 'exact',
  __order: '-year,name',
  __page_size: 3,
  __visible_fields: ['id', 'name', 'year', 'director.name']
}

export async function run (base: string): Promise<{ list: MovieList, movie: Movie, names: string[] }> {
  const list = await listMovies(base, QUERY)
  const first = list.rows[0]
  if (first?.id === undefined) throw new Error('no movie')
  const movie = await getMovie(base, first.id, { __readable: 'true' })
  const names: string[] = list.rows.map((row) => row.name ?? '')
  return { list, movie, names }
}
`

/** Each line marked \`// TSnnnn\` must give that error, and nothing else may fail. */
const WRONG = `import type { paths } from './schema.js'

type ListMovies = paths['/api/movies/']['get']
type GetMovie = paths['/api/movies/{id}/']['get']
type Query = NonNullable<ListMovies['parameters']['query']>
type Movie = GetMovie['responses'][200]['content']['application/json']
declare function getMovie (id: GetMovie['parameters']['path']['id']): Promise<Movie>

type Films = paths['/api/films/'] // TS2339
export const match: Query = { name: ['Alien'], name__match: 'fuzzy' } // TS2322
export const fields: Query = { __visible_fields: ['nme'] } // TS2820
export const size: Query = { __page_size: '5' } // TS2322
export const operator: Query = { oscar_winner__operator: 'gt' } // TS2322
export const movie = await getMovie('seven') // TS2345
export const title: string = movie.title // TS2339
export type { Films }
`

t.test('the types generated from the demo\'s document type-check a client of its movies routes', async (t) => {
  await writeFile(join(dir, 'client.ts'), CLIENT)
  await writeFile(join(dir, 'wrong.ts'), WRONG)
  const program = ts.createProgram([join(dir, 'client.ts'), join(dir, 'wrong.ts')], {
    strict: true,
    noEmit: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: []
  })
  const problems = (file: string): string[] => ts.getPreEmitDiagnostics(program, program.getSourceFile(join(dir, file))).map((d) => {
    const line = d.file === undefined ? 0 : d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1
    return `${file}:${line} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`
  })
  t.strictSame(problems('schema.ts'), [], 'the generated types compile')
  t.strictSame(problems('client.ts'), [], 'the client type-checks')

  const expected = WRONG.split('\n').flatMap((text, i) => {
    const code = /\/\/ (TS\d+)$/.exec(text)?.[1]
    return code === undefined ? [] : [`wrong.ts:${i + 1} ${code}`]
  })
  t.equal(expected.length, 7)
  const found = problems('wrong.ts')
  t.strictSame(found.map((p) => p.split(' ').slice(0, 2).join(' ')), expected, found.join('\n'))
  t.match(found.join('\n'), /Property '\/api\/films\/' does not exist on type 'paths'/)
  t.match(found.join('\n'), /"fuzzy"/)
  // The order of a union's members is the compiler's (the operationIds reorder the generated types).
  t.match(found.join('\n'), /"nme"' is not assignable to type '("[a-z_.]+" \| )*"id" \| "name" \| "year"/)
})

t.test('the typed client works against the running demo', async (t) => {
  const js = ts.transpileModule(CLIENT, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText
  await writeFile(join(dir, 'client.mjs'), js)
  const client = await import(pathToFileURL(join(dir, 'client.mjs')).href) as {
    run: (base: string) => Promise<{ list: { rows: Array<Record<string, unknown>> }, movie: Record<string, unknown>, names: string[] }>
  }
  const { list, movie, names } = await client.run(base)
  const expected = await app.inject('/api/movies/?year=2000&year__operator=gte&genre=drama&genre__match=exact&__order=-year,name&__page_size=3&__visible_fields=id,name,year,director.name')
  t.equal(expected.statusCode, 200)
  t.strictSame(list, expected.json())
  t.equal(list.rows.length, 3)
  t.strictSame(Object.keys(list.rows[0]!), ['id', 'name', 'year', 'director'])
  t.strictSame(names, list.rows.map((row) => row.name))
  t.strictSame(movie, (await app.inject(`/api/movies/${String(list.rows[0]!.id)}/?__readable=true`)).json())
  t.equal(movie.name, list.rows[0]!.name)
})
