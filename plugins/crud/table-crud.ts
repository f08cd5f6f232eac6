import type { FastifyPluginAsync, FastifyRegisterOptions } from 'fastify'
import type {} from '@fastify/swagger'
import type { Table } from '../../lib/table/table.js'
import { errorHandler, recordContextTable } from '../errors.js'
import { serialiserCompiler } from './compilers.js'
import { crudContext } from './context.js'
import { helperRoutes } from './helpers.js'
import { mediaRoutes } from './media.js'
import { checkOptions, type TableCrudOptions } from './options.js'
import { aggregateRoutes } from './aggregate.js'
import { readRoutes } from './reads.js'
import { methodAnswers } from './routing.js'
import { writeRoutes } from './writes.js'

export type { Crud, Hook, HookContext, Row, TableCrudOptions, Validator, ValidatorRequest, Validators } from './options.js'
export type { ValidatorQuery } from './validator-query.js'

/** The type of `tableCrud`: `register` takes it with the options of any table (below). */
export type TableCrudPlugin = FastifyPluginAsync<TableCrudOptions>

declare module 'fastify' {
  interface FastifyRegister<T> {
    /**
     * `register(tableCrud, options)`: the table is inferred from `options.table`, so validators
     * and hooks are typed by its columns (`RowOf`, `WriteRowOf`). A plugin's options type
     * cannot be generic, hence this overload.
     */
    <Tb extends Table>(plugin: TableCrudPlugin, opts: FastifyRegisterOptions<TableCrudOptions<Tb>>): T
  }
}

/**
 * Exposes one table as a REST API (SPEC §2), in its own encapsulated context: register it once
 * per table with a prefix.
 * @example
 * app.register(tableCrud, { table: movie, prefix: '/movies', readOnly: false, maxJoins: 1 })
 */
export const tableCrud: TableCrudPlugin = async function tableCrud (fastify, rawOptions) {
  const options = checkOptions(rawOptions)
  const c = crudContext(fastify, options)

  fastify.setErrorHandler(errorHandler)
  fastify.setSerializerCompiler(serialiserCompiler)
  recordContextTable(fastify, options.table.name)
  // A body must be JSON: without this, text/plain bodies would reach validation as strings.
  fastify.removeContentTypeParser('text/plain')

  const writable = !options.readOnly
  // The methods of `/:id/` and of `/`; an unknown path under the prefix is a 404 (SPEC §6.13).
  const onlyMethods = await methodAnswers(fastify, ['GET', 'HEAD', ...(writable ? ['PUT' as const, 'PATCH' as const, 'DELETE' as const] : [])])
  onlyMethods('/', ['GET', 'HEAD', ...(writable ? ['POST' as const, ...(options.allowBulkUpdate ? ['PATCH' as const] : []), ...(options.allowBulkDelete ? ['DELETE' as const] : [])] : [])])
  readRoutes(c)
  helperRoutes(c, onlyMethods)
  aggregateRoutes(c, onlyMethods)
  await mediaRoutes(c, onlyMethods)
  if (writable) writeRoutes(c)
}
