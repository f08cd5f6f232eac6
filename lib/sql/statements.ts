import type { Statement } from '../table/statement.js'

/**
 * Names for prepared statements, one per distinct SQL text, so PostgreSQL parses and plans a
 * query shape once per connection (DESIGN §4). Texts past the cap run unnamed: a connection
 * keeps every statement it prepared, so the number of names must stay bounded.
 */
const names = new Map<string, string>()
export const MAX_NAMED = 1000

export function statementName (text: string): string | undefined {
  let name = names.get(text)
  if (name === undefined && names.size < MAX_NAMED) {
    name = `tablecrud_${names.size}`
    names.set(text, name)
  }
  return name
}

/**
 * Transaction control, sent through the port's `run` like every other statement (kysely sends
 * `begin` and `commit` through `executeQuery`), so a pooler mode or a timeout applies to them too.
 */
export const BEGIN: Statement = Object.freeze({ text: 'BEGIN', values: Object.freeze([]) })
export const COMMIT: Statement = Object.freeze({ text: 'COMMIT', values: Object.freeze([]) })
export const ROLLBACK: Statement = Object.freeze({ text: 'ROLLBACK', values: Object.freeze([]) })
