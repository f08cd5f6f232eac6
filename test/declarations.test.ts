import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/*
 * A whole-program type check: 215 s measured at load 20 on 2 cores (seven test runs at once),
 * past tap's default 180 s. The limit guards against a hang only.
 */
t.setTimeout(600_000)

/*
 * What the published declarations carry (dist/*.d.ts, as `npm run build` emits them): an
 * application compiled against them alone gets the module augmentations of the plugins it
 * imports from the package's entry, such as `request.csrfToken` from `csrf` (SPEC §5.5).
 * test/types.test.ts compiles against the sources, where every file is in the program anyway.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url))
mkdirSync(join(ROOT, 'node_modules/.cache'), { recursive: true })
const dir = mkdtempSync(join(ROOT, 'node_modules/.cache/tablecrud-declarations-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  typeRoots: [join(ROOT, 'node_modules/@types')]
}

const APP = `import Fastify from 'fastify'
import { csrf } from './dist/index.js'

const app = Fastify()
await app.register(csrf)
app.get('/form', async (request) => {
  const token: string | null | undefined = request.csrfToken
  return { token }
})
`

t.test('the emitted index.d.ts gives an application request.csrfToken', async (t) => {
  const build = ts.createProgram([join(ROOT, 'index.ts')], {
    ...OPTIONS, declaration: true, emitDeclarationOnly: true, rootDir: ROOT, outDir: join(dir, 'dist')
  })
  t.equal(build.emit().emitSkipped, false, 'the declarations are emitted')
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'app.ts'), APP)
  const app = ts.createProgram([join(dir, 'app.ts')], { ...OPTIONS, noEmit: true })
  const problems = ts.getPreEmitDiagnostics(app).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '))
  t.strictSame(problems, [], 'the application compiles against the declarations alone')
})
