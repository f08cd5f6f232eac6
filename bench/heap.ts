/**
 * Reading V8 heap snapshots (`.heapsnapshot`, as bench/server.ts writes them): what a heap is
 * made of, and how two differ.
 *
 *   node --import tsx bench/heap.ts <a.heapsnapshot> <b.heapsnapshot>
 *
 * prints what b holds more than a, by object kind: e.g. an idle hand-written server against an
 * idle TableCRUD one (bench/memory.ts with BENCH_HEAP=1 takes both).
 */
import { readFileSync } from 'node:fs'

interface Snapshot {
  snapshot: { meta: { node_fields: string[], node_types: [string[]] } }
  nodes: number[]
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

const mb = (n: number): string => (n / 1048576).toFixed(2)
const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0)

/** What `b` holds more than `a`, largest first. */
export function growth (a: Map<string, number>, b: Map<string, number>, n: number): string {
  return [...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).sort((x, y) => y[1] - x[1]).slice(0, n)
    .map(([k, v]) => `${mb(v).padStart(8)} MB  ${k}`).join('\n')
}

if (process.argv[1] === new URL(import.meta.url).pathname && process.argv.length >= 4) {
  const [a, b] = process.argv.slice(2).map(readSnapshot) as [Snapshot, Snapshot]
  const [sa, sb] = [heapSummary(a), heapSummary(b)]
  console.log(`heap: ${mb(total(sa))} MB against ${mb(total(sb))} MB (+${mb(total(sb) - total(sa))}); largest growth by kind:\n${growth(sa, sb, 25)}`)
}
