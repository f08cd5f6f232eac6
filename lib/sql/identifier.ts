/**
 * Quoting for names that come from table definitions. Names from a request never reach these:
 * they are looked up in the definition first and only the canonical name is quoted.
 */
export function quoteIdent (name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** A string literal for DDL and other statements that cannot take bind parameters. */
export { quoteLiteral } from '../table/literal.js'
