/**
 * Quoting for names that come from table definitions. Names from a request never reach these:
 * they are looked up in the definition first and only the canonical name is quoted.
 */
export function quoteIdent (name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** A string literal for DDL and other statements that cannot take bind parameters. */
export function quoteLiteral (value: string): string {
  if (value.includes('\0')) throw new Error('a NUL byte cannot be written in SQL text')
  return `'${value.replaceAll("'", "''")}'`
}
