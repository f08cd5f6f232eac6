import type { Table } from './table.js'

/**
 * A cache of what is derived from a table definition, by table and key: `make` runs once per
 * pair. A key that depends on other tables (relations reach them) says so, e.g. by holding
 * `tablesDefined()`. A key made from requests takes a `max` of keys a table: past it,
 * `make` runs each time and nothing more is kept.
 */
export function perTable<K, V> (max = Infinity): (table: Table, key: K, make: () => V) => V {
  const byTable = new WeakMap<Table, Map<K, V>>()
  return (table, key, make) => {
    let byKey = byTable.get(table)
    if (byKey === undefined) byTable.set(table, byKey = new Map())
    let value = byKey.get(key)
    if (value === undefined) {
      value = make()
      if (byKey.size < max) byKey.set(key, value)
    }
    return value
  }
}

/**
 * `perTable` for any owner object (a table, a conflict target's columns), keyed by a sequence
 * of objects in order (the columns of a statement): one Map lookup by identity a step, where a
 * key string joined from their names, then hashed, cost a POST or an upsert a microsecond or
 * more a request. `max` counts the sequences kept an owner.
 */
export function perSequence<O extends object, K extends object, V> (max = Infinity): (owner: O, keys: Iterable<K>, make: () => V) => V {
  interface Step { readonly next: Map<K, Step>, value?: V }
  const byOwner = new WeakMap<O, { readonly first: Step, kept: number }>()
  return (owner, keys, make) => {
    let root = byOwner.get(owner)
    if (root === undefined) byOwner.set(owner, root = { first: { next: new Map() }, kept: 0 })
    const full = root.kept >= max
    let step = root.first
    for (const key of keys) {
      let next = step.next.get(key)
      if (next === undefined) {
        // Past the cap, nothing more is kept: made each time.
        if (full) return make()
        step.next.set(key, next = { next: new Map() })
      }
      step = next
    }
    if (step.value !== undefined) return step.value
    const value = make()
    if (!full) {
      step.value = value
      root.kept++
    }
    return value
  }
}
