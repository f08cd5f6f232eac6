import type { FastifyPluginAsync, FastifyRegisterOptions } from 'fastify'
import type {} from '@fastify/swagger'
import type { Table } from '../../lib/table/table.js'
import { TABLECRUD_ERR_ROUTE_NOT_FOUND } from '../../lib/errors.js'
import { errorHandler, pathOf, recordContextTable, sendError } from '../errors.js'
import { serialiserCompiler } from './compilers.js'
import { crudContext } from './context.js'
import { helperRoutes } from './helpers.js'
import { mediaRoutes } from './media.js'
import { checkOptions, type TableCrudOptions } from './options.js'
import { aggregateRoutes } from './aggregate.js'
import { readRoutes } from './reads.js'
import { beyondRoutes, notAllowed } from './routing.js'
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
  fastify.setNotFoundHandler(async (request, reply) => sendError(reply, new TABLECRUD_ERR_ROUTE_NOT_FOUND(request.method, pathOf(request))))
  // A body must be JSON: without this, text/plain bodies would reach validation as strings.
  fastify.removeContentTypeParser('text/plain')

  readRoutes(c)
  helperRoutes(c)
  aggregateRoutes(c)
  const writable = !options.readOnly
  notAllowed(fastify, '/', writable ? ['POST', ...(options.allowBulkUpdate ? ['PATCH' as const] : []), ...(options.allowBulkDelete ? ['DELETE' as const] : [])] : [])
  notAllowed(fastify, '/:id/', writable ? ['PUT', 'PATCH', 'DELETE'] : [])
  beyondRoutes(fastify, writable)
  await mediaRoutes(c)
  if (writable) writeRoutes(c)
}
