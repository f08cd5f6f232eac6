import type { Table } from './table.js'

/**
 * A cache of what is derived from a table definition, by table and key: `make` runs once per
 * pair. A key that depends on other tables (relations reach them) says so, e.g. by holding
 * `allTables().length`. A key made from requests takes a `max` of keys a table: past it,
 * `make` runs each time and nothing more is kept.
 */
export function perTable<K, V> (max = Infinity): (table: Table, key: K, make: () => V) => V {
  return perObject<Table, K, V>(max)
}

/** `perTable` for what is derived from another object kept for the process (a conflict target's columns). */
export function perObject<O extends object, K, V> (max = Infinity): (owner: O, key: K, make: () => V) => V {
  const byOwner = new WeakMap<O, Map<K, V>>()
  return (owner, key, make) => {
    let byKey = byOwner.get(owner)
    if (byKey === undefined) byOwner.set(owner, byKey = new Map())
    let value = byKey.get(key)
    if (value === undefined) {
      value = make()
      if (byKey.size < max) byKey.set(key, value)
    }
    return value
  }
}
