/**
 * fastify-tablecrud: PostgreSQL tables behind a REST API, with token and JWT auth.
 * Only the public API is exported here (DESIGN.md §1).
 */
export { defineTable, column } from './lib/table/index.js'
export type { Table, TableColumn, TableOptions, ColumnOptions, Column, OnDelete, Choice, RowOf, Readable } from './lib/table/index.js'
export { createTables, dropTables, startEmbeddedPostgres } from './lib/db/index.js'
export type { Queryable, EmbeddedPostgres, EmbeddedOptions } from './lib/db/index.js'
export { HttpError } from './lib/errors.js'
