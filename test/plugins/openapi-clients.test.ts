import t from 'tap'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'
import openapiTS, { astToString } from 'openapi-typescript'
import { createClient } from '@hey-api/openapi-ts'
import { buildDemo, DEMO_USER } from '../../examples/movies/app.js'
import { appPool, testDatabase } from '../helpers/db.js'

/*
 * Two clients generated from the demo's document by tools nobody here wrote, making typed
 * calls against the running demo (issue 30): openapi-fetch over openapi-typescript's `paths`,
 * and @hey-api/openapi-ts's SDK. Each generator runs once; one TypeScript program checks both
 * clients (a call the document does not allow would not compile), and then they run. `in`
 * filters are arrays the clients write as the repeated parameter, which the server reads.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** A loopback port of this test's range (COMMON: 15480-15499). */
const PORT = 15481

const db = await testDatabase(t)
const app = await buildDemo(appPool(db))
t.teardown(async () => await app.close())
const base = await app.listen({ host: '127.0.0.1', port: PORT })
// Inside the repository, so the generated code resolves openapi-fetch from its node_modules (.gitignore).
const dir = await mkdtemp(join(ROOT, '.clients-'))
t.teardown(async () => await rm(dir, { recursive: true, force: true }))

const document = (await app.inject('/docs/json')).json()
await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
await writeFile(join(dir, 'schema.ts'), astToString(await openapiTS(document)))
await createClient({
  input: document,
  output: { path: join(dir, 'hey'), importFileExtension: '.js' },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
  logs: { level: 'silent' }
})

const CLIENTS = `import createFetchClient from 'openapi-fetch'
import type { paths } from './schema.js'
import { client } from './hey/client.gen.js'
import { adminMoviePatch, jwtLogin, movieCount, movieGet, movieList } from './hey/sdk.gen.js'
import type { ErrorResponse, MovieRow } from './hey/types.gen.js'

/** A joined studio is a row of nullable fields: a movie without a studio answers {"name": null}. */
function studioName (row: MovieRow): string | null | undefined {
  return typeof row.studio === 'object' && row.studio !== null ? row.studio.name : undefined
}

export async function withOpenapiFetch (base: string) {
  // JSON answers: GET / also documents its CSV and NDJSON exports, which a typed call would otherwise have to tell apart.
  const api = createFetchClient<paths, 'application/json'>({ baseUrl: base })
  const inYears = await api.GET('/api/movies/', {
    params: { query: { year__operator: 'in', year: [1977, 1980], __order: 'year,name', __visible_fields: ['name', 'year', 'studio.name'] } }
  })
  if (inYears.data === undefined) throw new Error(inYears.error.message)
  const names: string[] = inYears.data.rows.map((row) => row.name ?? '')
  const studios: Array<string | null> = inYears.data.rows.map((row) => typeof row.studio === 'object' && row.studio !== null ? row.studio.name ?? null : null)
  const counted = await api.GET('/api/movies/count/', { params: { query: { genre__operator: 'in', genre: ['drama', 'sci_fi'] } } })
  const count: number = counted.data?.count ?? -1
  const missing = await api.GET('/api/movies/{id}/', { params: { path: { id: 999999 } } })
  const error: ErrorResponse | undefined = missing.error
  const login = await api.POST('/login/jwt/', { body: { username: '${DEMO_USER.username}', password: '${DEMO_USER.password}' } })
  const token: string = login.data?.token ?? ''
  const first = inYears.data.rows[0]
  // An embed (SPEC §8.1): DirectorRow's movie is an array of MovieEmbedded rows, its dotted controls typed parameters.
  const directors = await api.GET('/api/directors/', {
    params: { query: { __visible_fields: ['name', 'movie.name', 'movie.year'], 'movie.__order': '-year', 'movie.__page_size': 2, __order: 'name', __page_size: 1 } }
  })
  const embedded: Array<string | undefined> = directors.data?.rows[0]?.movie?.map((m) => m.name) ?? []
  return { names, studios, count, status: missing.response.status, code: error?.code, token: token.split('.').length, first: first?.name, embedded }
}

export async function withHeyApi (base: string) {
  client.setConfig({ baseUrl: base })
  const inYears = await movieList({ query: { year__operator: 'in', year: [1977, 1980], __order: 'year,name', __visible_fields: ['name', 'year', 'studio.name'] } })
  const rows: MovieRow[] = inYears.data?.rows ?? []
  const counted = await movieCount({ query: { genre__operator: 'in', genre: ['drama', 'sci_fi'] } })
  const login = await jwtLogin({ body: { username: '${DEMO_USER.username}', password: '${DEMO_USER.password}' } })
  const authorization = 'Bearer ' + (login.data?.token ?? '')
  const one = await movieGet({ path: { id: 1 } })
  const rating = one.data?.rating ?? null
  const patched = await adminMoviePatch({ path: { id: 1 }, body: { rating: rating === 9 ? 8.5 : 9 }, headers: { authorization } })
  const refused = await adminMoviePatch({ path: { id: 1 }, body: { rating: 9 } })
  return {
    names: rows.map((row) => row.name ?? ''),
    studios: rows.map((row) => studioName(row) ?? null),
    count: counted.data?.count ?? -1,
    patched: patched.data?.rating,
    refused: refused.response.status,
    refusal: refused.error?.message
  }
}
`

const program = async (): Promise<ts.Program> => {
  await writeFile(join(dir, 'clients.ts'), CLIENTS)
  return ts.createProgram([join(dir, 'clients.ts')], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: []
  })
}

/** Every .ts file under `folder`, turned into the .js beside it, so Node runs the clients. */
async function transpile (folder: string): Promise<void> {
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue
    const file = join(entry.parentPath, entry.name)
    const js = ts.transpileModule(await readFile(file, 'utf8'), { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText
    await writeFile(file.replace(/\.ts$/, '.js'), js)
  }
}

t.test('both generated clients type-check against the document', async (t) => {
  const checked = await program()
  const problems = ts.getPreEmitDiagnostics(checked).filter((d) => d.file === undefined || !relative(dir, d.file.fileName).startsWith('..')).map((d) => {
    const where = d.file === undefined ? '' : `${relative(dir, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1} `
    return `${where}TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`
  })
  t.strictSame(problems, [], 'the generated code and both clients compile')
})

t.test('both clients call the demo: in filters, joins through a NULL ForeignKey, typed errors, a write with a JWT', async (t) => {
  await transpile(dir)
  const clients = await import(pathToFileURL(join(dir, 'clients.js')).href) as {
    withOpenapiFetch: (base: string) => Promise<Record<string, unknown>>
    withHeyApi: (base: string) => Promise<Record<string, unknown>>
  }
  const expected = (await app.inject('/api/movies/?year__operator=in&year=1977&year=1980&__order=year,name&__visible_fields=name,year,studio.name')).json() as { rows: Array<{ name: string, studio: { name: string | null } }> }
  t.ok(expected.rows.length >= 2, 'the seed has movies of both years')
  const names = expected.rows.map((row) => row.name)
  const studios = expected.rows.map((row) => row.studio.name)
  const count = (await app.inject('/api/movies/count/?genre__operator=in&genre=drama&genre=sci_fi')).json().count as number
  t.ok(count > 0)

  const director = (await app.inject('/api/directors/?__visible_fields=name,movie.name,movie.year&movie.__order=-year&movie.__page_size=2&__order=name&__page_size=1')).json() as { rows: Array<{ movie: Array<{ name: string }> }> }
  const embedded = director.rows[0]!.movie.map((m) => m.name)
  t.ok(embedded.length > 0, 'the first director has movies')

  const fetched = await clients.withOpenapiFetch(base)
  t.strictSame(fetched, { names, studios, count, status: 404, code: 'TABLECRUD_ERR_ROW_NOT_FOUND', token: 3, first: names[0], embedded }, 'openapi-fetch')
  const hey = await clients.withHeyApi(base)
  t.strictSame(hey.names, names, '@hey-api: the in filter sent as the repeated parameter')
  t.strictSame(hey.studios, studios)
  t.equal(hey.count, count)
  t.ok(hey.patched === 9 || hey.patched === 8.5, 'a typed write with the JWT from a typed login')
  t.equal(hey.refused, 401)
  t.equal(hey.refusal, 'Token not found')
})
