/**
 * Reading V8 heap snapshots (`.heapsnapshot`, as bench/server.ts writes them): what a heap is
 * made of, and how two differ.
 *
 *   node --import tsx bench/heap.ts <a.heapsnapshot> <b.heapsnapshot>
 *
 * prints what b holds more than a, by object kind and by the script whose functions (bytecode,
 * function infos, closures) it is: e.g. an idle hand-written server against an idle TableCRUD one.
 */
import { readFileSync } from 'node:fs'

interface Snapshot {
  snapshot: { meta: { node_fields: string[], node_types: [string[]], edge_fields: string[], edge_types: [string[]] } }
  nodes: number[]
  edges: number[]
  strings: string[]
}

export function readSnapshot (path: string): Snapshot {
  return JSON.parse(readFileSync(path, 'utf8')) as Snapshot
}

/** Self size by object kind (`type:name`, e.g. `object:Object`, `string`), in bytes. */
export function heapSummary (heap: Snapshot): Map<string, number> {
  const fields = heap.snapshot.meta.node_fields
  const types = heap.snapshot.meta.node_types[0]
  const [type, name, size] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number]
  const out = new Map<string, number>()
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const t = types[heap.nodes[i + type]!]!
    const key = t === 'object' || t === 'closure' ? `${t}:${heap.strings[heap.nodes[i + name]!]}` : t
    out.set(key, (out.get(key) ?? 0) + heap.nodes[i + size]!)
  }
  return out
}

/**
 * Bytes of function code by script: each function info's own size and what it alone points
 * at (bytecode, scope info, feedback metadata), and each closure of it, credited to the
 * script it was compiled from (a file URL, `node:` module or a package's file).
 */
export function codeByScript (heap: Snapshot): Map<string, number> {
  const nf = heap.snapshot.meta.node_fields.length
  const ef = heap.snapshot.meta.edge_fields
  const edgeTypes = heap.snapshot.meta.edge_types[0]
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f)) as [number, number, number]
  const [size, edgeCount] = ['self_size', 'edge_count'].map((f) => heap.snapshot.meta.node_fields.indexOf(f)) as [number, number]
  // The first edge of each node.
  const firstEdge = new Uint32Array(heap.nodes.length / nf + 1)
  for (let n = 0, e = 0; n < heap.nodes.length / nf; n++) {
    firstEdge[n] = e
    e += heap.nodes[n * nf + edgeCount]! * ef.length
  }
  firstEdge[heap.nodes.length / nf] = heap.edges.length
  const edgesOf = function * (n: number): Generator<{ name: string, to: number }> {
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += ef.length) {
      const type = edgeTypes[heap.edges[e + eType]!]!
      const name = type === 'element' || type === 'hidden' ? String(heap.edges[e + eName]) : heap.strings[heap.edges[e + eName]!]!
      yield { name, to: heap.edges[e + eTo]! / nf }
    }
  }
  const stringOf = (n: number): string => heap.strings[heap.nodes[n * nf + heap.snapshot.meta.node_fields.indexOf('name')]!]!
  const scriptName = new Map<number, string>()
  const nameOfScript = (n: number): string => {
    let name = scriptName.get(n)
    if (name === undefined) {
      name = '(unnamed script)'
      for (const edge of edgesOf(n)) if (edge.name === 'name') name = stringOf(edge.to)
      scriptName.set(n, name)
    }
    return name
  }
  const out = new Map<string, number>()
  const sfiScript = new Map<number, string>()
  const nodeCount = heap.nodes.length / nf
  for (let n = 0; n < nodeCount; n++) {
    let script: string | undefined
    let bytes = heap.nodes[n * nf + size]!
    for (const edge of edgesOf(n)) {
      if (edge.name === 'script') script = nameOfScript(edge.to)
      else if (['function_data', 'bytecode', 'name_or_scope_info', 'scope_info', 'feedback_metadata'].includes(edge.name)) bytes += heap.nodes[edge.to * nf + size]!
    }
    if (script === undefined) continue
    sfiScript.set(n, script)
    out.set(script, (out.get(script) ?? 0) + bytes)
  }
  for (let n = 0; n < nodeCount; n++) {
    for (const edge of edgesOf(n)) {
      if (edge.name !== 'shared') continue
      const script = sfiScript.get(edge.to)
      if (script !== undefined) out.set(script, (out.get(script) ?? 0) + heap.nodes[n * nf + size]!)
    }
  }
  return out
}

/** `file:///…/node_modules/@scope/name/…` → `@scope/name`; the project's own files → `(tablecrud) dir`. */
export function packageOf (url: string): string {
  if (url.includes('node_modules/')) return url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1')
  if (url.startsWith('node:') || !url.includes('/')) return url.startsWith('node:') ? 'node:' + url.slice(5).split('/')[0] : '(node internals)'
  return '(tablecrud) ' + url.replace(/^.*\/\.build\//, '').replace(/\/[^/]*$/, '')
}

const mb = (n: number): string => (n / 1048576).toFixed(2)
const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0)

/** What `b` holds more than `a`, largest first. */
export function growth (a: Map<string, number>, b: Map<string, number>, n: number): string {
  return [...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).sort((x, y) => y[1] - x[1]).slice(0, n)
    .map(([k, v]) => `${mb(v).padStart(8)} MB  ${k}`).join('\n')
}

function byPackage (code: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>()
  for (const [url, bytes] of code) out.set(packageOf(url), (out.get(packageOf(url)) ?? 0) + bytes)
  return out
}

if (process.argv[1] === new URL(import.meta.url).pathname && process.argv.length >= 4) {
  const [a, b] = process.argv.slice(2).map(readSnapshot) as [Snapshot, Snapshot]
  const [sa, sb] = [heapSummary(a), heapSummary(b)]
  console.log(`heap: ${mb(total(sa))} MB against ${mb(total(sb))} MB (+${mb(total(sb) - total(sa))}); largest growth by kind:\n${growth(sa, sb, 25)}`)
  const [ca, cb] = [codeByScript(a), codeByScript(b)].map(byPackage) as [Map<string, number>, Map<string, number>]
  console.log(`\nfunction code: ${mb(total(ca))} MB against ${mb(total(cb))} MB; largest growth by package or directory:\n${growth(ca, cb, 25)}`)
}
