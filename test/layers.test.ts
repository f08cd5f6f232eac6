import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { importsOf, ROOT } from './helpers/imports.js'

/**
 * The house rules of DESIGN §2 and STYLE "Layers", read from every source file's imports:
 * imports flow one way (lib/ never imports plugins/ or schemas/; schemas/ never imports
 * lib/sql; lib/table imports nothing of lib/sql), and no two folders import each other,
 * directly or round a loop. (schemas/ also reads lib/values and lib/query/fields, the wire
 * forms it describes; STYLE's "only lib/table" is not enforced, docs/testing.md.)
 */

const SOURCES = ['lib', 'schemas', 'plugins']

function sourceFiles (dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** The folder a file belongs to, for the rules: `lib/sql`, `lib` (its top-level files), `schemas`, `plugins/crud`. */
export function folderOf (file: string): string {
  const parts = file.split('/')
  return parts.length > 2 ? parts.slice(0, 2).join('/') : parts[0]!
}

const RULES: ReadonlyArray<{ from: RegExp, to: RegExp, why: string }> = [
  { from: /^lib\//, to: /^(plugins|schemas)\//, why: 'lib/ is the pure core: it never imports plugins/ or schemas/' },
  { from: /^schemas\//, to: /^lib\/sql\//, why: 'schemas/ describes rows and queries: it never compiles SQL' },
  { from: /^lib\/table\//, to: /^lib\/sql\//, why: 'lib/table is below lib/sql: lib/sql builds on it' }
]

/** Every import against the flow, as `file -> imported: why`. */
export function flowViolations (graph: ReadonlyMap<string, readonly string[]>): string[] {
  const problems: string[] = []
  for (const [file, imports] of graph) {
    for (const imported of imports) {
      const rule = RULES.find((r) => r.from.test(file) && r.to.test(imported))
      if (rule !== undefined) problems.push(`${file} -> ${imported}: ${rule.why}`)
    }
  }
  return problems
}

/** The loops between folders (strongly connected components of more than one folder), each with one file edge per step. */
export function folderCycles (graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const edges = new Map<string, Map<string, string>>()
  for (const [file, imports] of graph) {
    for (const imported of imports) {
      const [from, to] = [folderOf(file), folderOf(imported)]
      if (from === to) continue
      if (!edges.has(from)) edges.set(from, new Map())
      if (!edges.get(from)!.has(to)) edges.get(from)!.set(to, `${file} -> ${imported}`)
    }
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const cycles: string[][] = []
  const visit = (node: string): void => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let top: string
    do {
      top = stack.pop()!
      component.push(top)
    } while (top !== node)
    if (component.length > 1) {
      const members = new Set(component)
      cycles.push(component.flatMap((from) => [...edges.get(from)!].filter(([to]) => members.has(to)).map(([, edge]) => edge)).sort())
    }
  }
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node)
  return cycles
}

const graph = new Map(SOURCES.flatMap(sourceFiles).map((file) => [file, importsOf(file, readFileSync(join(ROOT, file), 'utf8'))]))

t.test('the rules catch what they are for', async (t) => {
  t.same(importsOf('lib/sql/a.ts', "import { x } from '../table/b.js'\nexport * from './c.js'\nimport type { Y } from '../../schemas/d.js'\nimport 'pg'\nconst m = await import('../db/e.js')"),
    ['lib/table/b.ts', 'lib/sql/c.ts', 'schemas/d.ts', 'lib/db/e.ts'])
  t.same(importsOf('lib/sql/a.ts', "import { x } from '../table/b.js'\nexport type { Y } from '../../schemas/d.js'\nconst m = await import('../db/e.js')", true),
    ['lib/table/b.ts'], 'loaded with it: neither types alone nor import()')
  t.same(folderOf('lib/errors.ts'), 'lib')
  t.same(folderOf('plugins/crud/reads.ts'), 'plugins/crud')
  const bad = new Map([
    ['lib/auth/a.ts', ['plugins/database.ts', 'lib/sql/b.ts']],
    ['schemas/row.ts', ['lib/sql/select.ts', 'lib/table/table.ts']],
    ['lib/table/c.ts', ['lib/sql/identifier.ts']],
    ['lib/sql/b.ts', ['lib/values/v.ts', 'lib/table/c.ts']],
    ['lib/values/v.ts', ['lib/table/c.ts']]
  ])
  t.same(flowViolations(bad), [
    'lib/auth/a.ts -> plugins/database.ts: lib/ is the pure core: it never imports plugins/ or schemas/',
    'schemas/row.ts -> lib/sql/select.ts: schemas/ describes rows and queries: it never compiles SQL',
    'lib/table/c.ts -> lib/sql/identifier.ts: lib/table is below lib/sql: lib/sql builds on it'
  ])
  t.same(folderCycles(bad), [[
    'lib/sql/b.ts -> lib/table/c.ts', 'lib/sql/b.ts -> lib/values/v.ts', 'lib/table/c.ts -> lib/sql/identifier.ts', 'lib/values/v.ts -> lib/table/c.ts'
  ]], 'the lib/table -> lib/sql -> lib/values loop, with the file behind each step')
})

t.test('every source file imports along the flow', async (t) => {
  t.ok(graph.size > 100, `read ${graph.size} source files`)
  t.same(flowViolations(graph), [])
})

t.test('no import cycle between folders', async (t) => {
  t.same(folderCycles(graph), [])
})
