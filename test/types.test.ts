import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/*
 * A whole-program type check, like test/declarations.test.ts, which took 215 s at load 20 on 2
 * cores (seven test runs at once), past tap's default 180 s. The limit guards against a hang only.
 */
t.setTimeout(600_000)

/*
 * Types that flow (issue 10 item 5): an application's code against the library's sources,
 * compiled by `tsc --strict`. GOOD must compile: row types per column kind, typed hooks and
 * validators at `register(tableCrud, ...)`, the examples of docs/table-crud.md and docs/auth.md.
 * Each line of WRONG marked `// TSnnnn` must give that error, and nothing else may fail.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url))
// Under node_modules: the library's own type-check never sees it, and fastify resolves from it.
mkdirSync(join(ROOT, 'node_modules/.cache'), { recursive: true })
const dir = mkdtempSync(join(ROOT, 'node_modules/.cache/tablecrud-types-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

const HEAD = `import Fastify from 'fastify'
import type {} from '../../../user.js'
import {
  column, defineTable, HttpError, tableCrud,
  type Hook, type Json, type KeyValueOf, type PatchOf, type RowOf, type Table, type Validator, type WriteRowOf
} from '../../../index.js'

type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends (<X>() => X extends B ? 1 : 2) ? true : false
export function same<A, B> (check: Equal<A, B>): Equal<A, B> { return check }

export const director = defineTable('director', {
  name: column.varchar({ length: 100, required: true, unique: true })
}, { readable: 'name' })
export const movie = defineTable('movie', {
  name: column.varchar({ length: 100, required: true }),
  rating: column.real({ null: true }),
  box_office: column.numeric({ digits: [12, 2], null: true }),
  released: column.timestamp({ null: true }),
  director: column.foreignKey(() => director, { onDelete: 'restrict' }),
  owner: column.foreignKey(director, { null: false }),
  tags: column.array(column.varchar({ length: 20 })),
  contact: column.email({ null: true, secret: true }),
  mail: column.email(),
  genre: column.varchar({ length: 20, choices: { action: 'Action', drama: 'Drama' } }),
  views: column.bigInt({ default: 0 }),
  seen: column.boolean(),
  data: column.jsonb({ null: true })
})
export const country = defineTable('country', {
  code: column.varchar({ length: 2, primaryKey: true }),
  name: column.text()
})
export const app = Fastify()
`

const GOOD = `${HEAD}
type Movie = RowOf<typeof movie>
same<Movie, {
  id: number, name: string, rating: number | null, box_office: string | null, released: string | null,
  director: number | null, owner: number, tags: string[], contact: string | null, mail: string, genre: string,
  views: string, seen: boolean, data: NonNullable<Json> | null
}>(true)
// As a hook sees it: a Numeric or BigInt as the body gave it, null where a NOT NULL column left
// out has no default (owner, mail, genre), the key optional (absent on POST).
same<WriteRowOf<typeof movie>, {
  id?: number, name: string, rating: number | null, box_office: string | number | null, released: string | null,
  director: number | null, owner: number | null, tags: string[], contact: string | null, mail: string | null,
  genre: string | null, views: string | number, seen: boolean, data: NonNullable<Json> | null
}>(true)
same<keyof PatchOf<typeof movie>, Exclude<keyof Movie, 'id'>>(true)
same<KeyValueOf<typeof movie>, number>(true)
same<KeyValueOf<typeof country>, string>(true)
same<RowOf<typeof country>, { code: string, name: string }>(true)

// docs/table-crud.md, Validators
app.register(tableCrud, {
  table: movie, prefix: '/movies', readOnly: false,
  validators: {
    deleteSingle: [(crud, request) => { if (!request.user?.superuser) throw new HttpError(403, 'Superusers only') }],
    every: [async (crud, request, extra) => { /* ... */ }],
    extraContext: { tenant: 'acme' }
  }
})

// docs/table-crud.md, Hooks
app.register(tableCrud, {
  table: movie, prefix: '/movies', readOnly: false,
  hooks: [
    { hookType: 'preSave', callable: (row, { request }) => ({ ...row, name: row.name.trim() }) },
    { hookType: 'prePatch', callable: (id, values, { request }) => values },
    { hookType: 'preDelete', callable: async (id, { request }) => { /* throw to refuse */ } }
  ]
})

// docs/auth.md, request.user in validators and hooks
app.register(tableCrud, {
  table: movie, prefix: '/movies', readOnly: false,
  validators: { deleteSingle: [(crud, request) => {
    if (request.user?.superuser !== true) throw new HttpError(403, 'Superusers only')
  }] }
})

// Typed use: the columns' own types, the key's type, the table of the validator.
const owned: Hook<typeof movie> = {
  hookType: 'preSave',
  callable: (row, { request }) => ({ ...row, owner: row.owner ?? Number(request.user?.id), genre: row.genre ?? 'drama' })
}
const anyTable: Validator = (crud, request) => { if (request.user === null) throw new HttpError(401, crud.table.name) }
app.register(tableCrud, {
  table: movie,
  hooks: [owned, { hookType: 'prePatch', callable: (id, values) => ({ ...values, views: id * 2, tags: values.tags?.map((tag) => tag.toUpperCase()) }) }],
  validators: { every: [anyTable, (crud) => { if (crud.table.columnMap.size === 0) throw new Error('no columns') }] }
})
app.register(tableCrud, {
  table: country,
  hooks: [{ hookType: 'preDelete', callable: (code) => { if (code.toUpperCase() === 'FR') throw new HttpError(409, 'Kept') } }]
})
app.register(async (api) => {
  await api.register(tableCrud, { table: movie, prefix: '/movies', hooks: [{ hookType: 'preSave', callable: (row) => ({ ...row, rating: row.rating ?? 0 }) }] })
}, { prefix: '/api' })
app.register(tableCrud, () => ({ table: movie, hooks: [{ hookType: 'preSave', callable: (row) => ({ ...row, name: row.name.toUpperCase() }) }] }))

// docs/table-crud.md: a hook for any table
function logged<T extends Table> (): Hook<T> {
  return { hookType: 'preDelete', callable: (id, { request }) => { request.log.info({ id }, 'deleting') } }
}
app.register(tableCrud, { table: country, hooks: [logged()] })
app.register(tableCrud, { table: movie, hooks: [logged<typeof movie>(), { hookType: 'preSave', callable: (row) => ({ ...row, name: row.name.trim() }) }] })
app.register(tableCrud, { table: movie, hooks: [logged<typeof movie>(), owned] })
`

const WRONG = `${HEAD}
app.register(tableCrud, { table: movie, hooks: [{ hookType: 'preSave', callable: (row) => ({ ...row, name: row.nmae }) }] }) // TS2339
app.register(tableCrud, { table: movie, hooks: [{ hookType: 'preSave', callable: (row) => ({ ...row, rating: 'high' }) }] }) // TS2769
app.register(tableCrud, { table: movie, hooks: [{ hookType: 'preSave', callable: (row) => ({ ...row, name: (row.box_office ?? '').trim() }) }] }) // TS2339
app.register(tableCrud, { table: movie, hooks: [{ hookType: 'preSave', callable: (row) => ({ ...row, owner: row.owner + 1 }) }] }) // TS18047
app.register(tableCrud, { table: movie, hooks: [{ hookType: 'preDelete', callable: (id) => { id.toUpperCase() } }] }) // TS2339
app.register(tableCrud, { table: movie, validators: { every: [(crud, request) => { if (request.user.superuser) throw new Error('x') }] } }) // TS18047
app.register(tableCrud, { table: movie, validators: { every: [(crud) => { if (crud.table.__columns?.nme) throw new Error('x') }] } }) // TS2551
const directorHook: Hook<typeof director> = { hookType: 'preSave', callable: (row) => row }
app.register(tableCrud, { table: movie, hooks: [directorHook] }) // TS2769
export const row: RowOf<typeof movie> = { id: 1, name: 'Alien', rating: '8' } // TS2322
export const patch: PatchOf<typeof movie> = { id: 2 } // TS2353
`

t.test('typed application code compiles against the library, and wrong uses fail', async (t) => {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'good.ts'), GOOD)
  writeFileSync(join(dir, 'wrong.ts'), WRONG)
  const program = ts.createProgram([join(dir, 'good.ts'), join(dir, 'wrong.ts')], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')]
  })
  const problems = (file: string): string[] => ts.getPreEmitDiagnostics(program, program.getSourceFile(join(dir, file))).map((d) => {
    const line = d.file === undefined ? 0 : d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1
    return `${file}:${line} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`
  })
  t.strictSame(problems('good.ts'), [], 'the typed code and the docs examples compile')

  const expected = WRONG.split('\n').flatMap((text, i) => {
    const code = /\/\/ (TS\d+)$/.exec(text)?.[1]
    return code === undefined ? [] : [`wrong.ts:${i + 1} ${code}`]
  })
  t.equal(expected.length, 10)
  const found = problems('wrong.ts')
  t.strictSame(found.map((p) => p.split(' ').slice(0, 2).join(' ')), expected, found.join('\n'))
  t.match(found.join('\n'), /Property 'nmae' does not exist/)
  t.match(found.join('\n'), /'request.user' is possibly 'null'/)
  t.match(found.join('\n'), /Property 'toUpperCase' does not exist on type 'number'/)
  t.match(found.join('\n'), /Property 'trim' does not exist on type 'string \| number'/, 'a Numeric as the body may give it')
})
