import { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ExportFormat, ListQuery, QueryContext } from '../../lib/query/parse.js'
import { floatCheck, isEmbed, type Convert } from '../../lib/sql/embed.js'
import { cellOf, compileExport, shapeRow } from '../../lib/sql/select.js'
import type { Shape } from '../../lib/table/statement.js'
import type { CrudContext } from './context.js'

/** Rows fetched from the server-side cursor per read: enough to amortise a round trip, small enough to stay flat. */
const BATCH = 500

const MEDIA_TYPES = {
  ndjson: 'application/x-ndjson',
  csv: 'text/csv'
} as const satisfies Record<ExportFormat, string>

/**
 * The export format a GET `/` asks for (SPEC §7.5): `__format` wins; else the first of the
 * Accept header's media types that is JSON, NDJSON or CSV (no q-value weighing: a client that
 * wants an export names it). Null means the usual JSON page.
 */
export function exportFormat (query: ListQuery, request: FastifyRequest): ExportFormat | null {
  if (query.format !== null) return query.format === 'json' ? null : query.format
  const accept = request.headers.accept
  if (accept === undefined) return null
  for (const part of accept.split(',')) {
    const type = part.split(';')[0]!.trim().toLowerCase()
    if (type === 'application/json') return null
    if (type === MEDIA_TYPES.ndjson) return 'ndjson'
    if (type === MEDIA_TYPES.csv) return 'csv'
  }
  return null
}

/** An RFC 4180 field: quoted when it holds a comma, a quote or a line break; quotes doubled. */
export function csvField (value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/**
 * The real and double columns of a shape, each with its check: an export writes the values GET
 * `/` answers, so an infinity is null, and NaN (or either inside an array) fails as the page
 * does. An embed checks its own (`cellOf`).
 */
function floatChecks (shape: Shape): Array<{ alias: string, check: Convert }> {
  const checks: Array<{ alias: string, check: Convert }> = []
  shape.sources.forEach((source, i) => {
    const check = source === null || isEmbed(source) ? null : floatCheck(source.table, source.column)
    if (check !== null) checks.push({ alias: shape.aliases[i]!, check })
  })
  return checks
}

function encoder (format: ExportFormat, shape: Shape): { head: string, line: (row: Record<string, unknown>) => string } {
  const floats = floatChecks(shape)
  const checked = (row: Record<string, unknown>): Record<string, unknown> => {
    for (const { alias, check } of floats) if (row[alias] !== null) row[alias] = check(row[alias])
    return row
  }
  if (format === 'ndjson') return { head: '', line: (row) => JSON.stringify(shapeRow(checked(row), shape)) + '\n' }
  // Flat columns by their alias, so a joined field is one column named by its path, an embed its JSON text.
  return {
    head: shape.paths.map((p) => csvField(p.join('.'))).join(',') + '\r\n',
    line: (row) => {
      checked(row)
      return shape.aliases.map((_a, i) => csvField(cellOf(row, shape, i))).join(',') + '\r\n'
    }
  }
}

/**
 * Streams the rows of a GET `/` as NDJSON or CSV through a server-side cursor. The first batch
 * is read before anything is sent, so an error up to there is the usual §1 answer; after it,
 * a failure destroys the stream and the connection ends without a half row. The stream reads
 * a batch only when Node asks for more (`read()` is called once the consumer has drained), so
 * a slow client holds the server at one batch; a client that goes away destroys the stream,
 * which closes the cursor and releases its connection.
 */
export async function sendExport (c: CrudContext, ctx: QueryContext, reply: FastifyReply, query: ListQuery, format: ExportFormat): Promise<FastifyReply> {
  const statement = compileExport(ctx, query, c.options.maxExportRows ?? null)
  const cursor = await c.db.cursor(statement, 'read')
  const { head, line } = encoder(format, statement.shape)
  const encode = (rows: ReadonlyArray<Record<string, unknown>>): string => rows.map(line).join('')
  // What fails before the first byte (the statement, or a value the encoder cannot write: an
  // embedded NaN) is the usual answer, the cursor closed.
  let first: Array<Record<string, unknown>>
  let text: string
  try {
    first = await cursor.read(BATCH)
    text = head + encode(first)
  } catch (error) {
    await cursor.close()
    throw error
  }
  let reading = false
  const stream = new Readable({
    read () {
      /* c8 ignore next: Node calls read() again only after a push; a guard should a stream ever not */
      if (reading) return
      reading = true
      // Later, the stream is destroyed: the client sees the answer cut short.
      cursor.read(BATCH).then((rows) => {
        reading = false
        this.push(rows.length === 0 ? null : encode(rows))
      }).catch((error: Error) => this.destroy(error))
    },
    destroy (error, callback) {
      cursor.close().then(() => callback(error), callback)
    }
  })
  stream.push(text)
  if (first.length === 0) stream.push(null)
  return await reply.type(`${MEDIA_TYPES[format]}; charset=utf-8`).send(stream)
}
