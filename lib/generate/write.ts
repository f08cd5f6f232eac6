import type { MappedColumn } from './columns.js'

/* The TypeScript `generate` writes: house style (two spaces, single quotes, no semicolons). */

export interface WrittenColumn {
  name: string
  mapped: MappedColumn
  /** A ForeignKey: the target's variable, its ON DELETE, whether its key is a string, and its reverse relation's name where the default clashes. */
  foreignKey: { variable: string, onDelete: string, stringKey: boolean, related: string | undefined } | undefined
}

export interface WrittenTable {
  name: string
  variable: string
  comment: string | null
  lines: string[]
}

const RESERVED = new Set([
  'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else', 'enum', 'export', 'extends',
  'false', 'finally', 'for', 'function', 'if', 'import', 'in', 'instanceof', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw',
  'true', 'try', 'typeof', 'var', 'void', 'while', 'with', 'yield', 'let', 'static', 'implements', 'interface', 'package', 'private',
  'protected', 'public', 'await', 'arguments', 'eval',
  // The module's own names.
  'column', 'defineTable', 'Table', 'tables'
])

/** The variable a table is exported as: its name, unless that is a keyword or one of the module's names. */
export const variableName = (table: string): string => RESERVED.has(table) ? `${table}_table` : table

/** A string as a single-quoted TypeScript literal. */
export function quote (text: string): string {
  return `'${JSON.stringify(text).slice(1, -1).replaceAll('\\"', '"').replaceAll("'", "\\'")}'`
}

/** An object literal's key; `__proto__` computed, as written plain (even quoted) it sets the prototype instead. */
const key = (name: string): string => name === '__proto__' ? `[${quote(name)}]` : /^[A-Za-z_$][\w$]*$/.test(name) ? name : quote(name)

/** A value as TypeScript: strings quoted, arrays and objects (JSON values, choices) spelled out. */
export function literal (value: unknown): string {
  if (typeof value === 'string') return quote(value)
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([k, v]) => `${key(k)}: ${literal(v)}`)
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`
  }
  return String(value)
}

/** The order options are written in, whatever order they were found in. */
const ORDER = ['length', 'digits', 'primaryKey', 'identity', 'null', 'onDelete', 'related', 'unique', 'index', 'default', 'required', 'choices', 'helpText']

function options (mapped: MappedColumn): string {
  const found = [...mapped.options].sort(([a], [b]) => ORDER.indexOf(a) - ORDER.indexOf(b)).map(([name, value]) => {
    // Choices are written value: value, so the labels are the values' own (displayName of the key).
    const written = name === 'choices' ? Object.fromEntries((value as unknown[]).map((v) => [String(v), v])) : value
    return `${name}: ${literal(written)}`
  })
  return found.length === 0 ? '' : `{ ${found.join(', ')} }`
}

function builder (mapped: MappedColumn): string {
  if (mapped.type === 'array') return `column.array(${[builder(mapped.element!), options(mapped)].filter(Boolean).join(', ')})`
  return `column.${mapped.type}(${options(mapped)})`
}

/** One `name: column.<type>(...)` line of a definition. */
export function writeColumn ({ name, mapped, foreignKey }: WrittenColumn): string {
  if (foreignKey === undefined) return `${key(name)}: ${builder(mapped)}`
  if (foreignKey.onDelete !== 'cascade') mapped.options.set('onDelete', foreignKey.onDelete)
  if (foreignKey.related !== undefined) mapped.options.set('related', foreignKey.related)
  const generic = foreignKey.stringKey ? '<string>' : ''
  return `${key(name)}: column.foreignKey${generic}((): Table => ${foreignKey.variable}${mapped.options.size === 0 ? '' : `, ${options(mapped)}`})`
}

/** The module: a header, the import, one definition per table, and `tables`. */
export function typeScript (tables: readonly WrittenTable[]): string {
  // What the module uses, and only that: under `noUnusedLocals` an unused import is an error.
  const used = [
    tables.some((t) => t.lines.length > 0) && 'column',
    tables.length > 0 && 'defineTable',
    tables.some((t) => t.lines.some((line) => line.includes('(): Table =>'))) && 'type Table'
  ].filter(Boolean)
  const definitions = tables.map((t) => {
    const options = t.comment === null ? '' : `, { helpText: ${quote(t.comment)} }`
    const columns = t.lines.length === 0 ? '{}' : `{\n${t.lines.map((line) => `  ${line}`).join(',\n')}\n}`
    return `export const ${t.variable} = defineTable(${quote(t.name)}, ${columns}${options})\n`
  })
  return [
    '// Written by `fastify-tablecrud generate` from the database; edit it as your own. `fastify-tablecrud check` compares it with the database.',
    ...(used.length === 0 ? [] : [`import { ${used.join(', ')} } from 'fastify-tablecrud'`]),
    '',
    ...definitions,
    '/** Every table above, for createTables and checkTables. */',
    `export const tables = [${tables.map((t) => t.variable).join(', ')}]`,
    ''
  ].join('\n')
}
