/**
 * fastify-tablecrud: PostgreSQL tables behind a REST API, with token and JWT auth.
 * Only the public API is exported here (DESIGN.md §1).
 */
export { defineTable, column } from './lib/table/index.js'
export type { Table, TableColumn, TableOptions, ColumnOptions, Column, OnDelete, Choice, RowOf, Readable } from './lib/table/index.js'
export { createTables, dropTables, startEmbeddedPostgres } from './lib/db/index.js'
export type { Queryable, EmbeddedPostgres, EmbeddedOptions } from './lib/db/index.js'
export { HttpError } from './lib/errors.js'
export { tableCrud } from './plugins/table-crud.js'
export type { TableCrudOptions, Validators, Validator, Hook, HookContext, Crud, Row } from './plugins/table-crud.js'
export { userTable, tokenTable, createUser, createToken, hashPassword, tableTokenProvider, staticTokenProvider, securitySchemesOf } from './lib/auth/index.js'
export type { AuthDb, NewUser, UserRow, CreateUserOptions, TokenAuthProvider, TokenLoginProvider, ProviderContext, TableTokenProviderOptions } from './lib/auth/index.js'
export type { AuthUser } from './plugins/auth-types.js'
export { tokenLogin } from './plugins/token-login.js'
export type { TokenLoginOptions } from './plugins/token-login.js'
export { tokenAuth } from './plugins/token-auth.js'
export type { TokenAuthOptions } from './plugins/token-auth.js'
export { jwtLogin } from './plugins/jwt-login.js'
export type { JwtLoginOptions } from './plugins/jwt-login.js'
export { jwtAuth } from './plugins/jwt-auth.js'
export type { JwtAuthOptions } from './plugins/jwt-auth.js'
export { openApi } from './plugins/openapi.js'
export type { OpenApiOptions, OpenApiInfo, OpenApiServer } from './plugins/openapi.js'
