/**
 * Names for prepared statements, one per distinct SQL text, so PostgreSQL parses and plans a
 * query shape once per connection (DESIGN §4). Texts past the cap run unnamed: a connection
 * keeps every statement it prepared, so the number of names must stay bounded.
 */
const names = new Map<string, string>()
const MAX_NAMED = 1000

export function statementName (text: string): string | undefined {
  let name = names.get(text)
  if (name === undefined && names.size < MAX_NAMED) {
    name = `tablecrud_${names.size}`
    names.set(text, name)
  }
  return name
}
