/**
 * A string literal for DDL and other statements that cannot take bind parameters. Here, in
 * lib/table, because the column types' descriptors write their defaults' literals with it and
 * lib/table imports nothing of lib/sql (the layers flow one way: lib/sql builds on lib/table);
 * lib/sql/identifier.ts gives it to the compilers.
 */
export function quoteLiteral (value: string): string {
  if (value.includes('\0')) throw new Error('a NUL byte cannot be written in SQL text')
  return `'${value.replaceAll("'", "''")}'`
}
