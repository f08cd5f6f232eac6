/**
 * fastify-tablecrud: Fastify plugins that put PostgreSQL tables behind a REST API, with token, JWT and session logins.
 * Only the public API is exported here (DESIGN.md §1). The plugins beside TableCRUD load when
 * registered (plugins/lazy.ts).
 */
import { lazyPlugin } from './plugins/lazy.js'
export { defineTable, column } from './lib/table/index.js'
export type { Table, TableColumn, TableOptions, ColumnOptions, AssignedOptions, Identity, Column, OnDelete, Choice, RowOf, WriteRowOf, PatchOf, KeyOf, KeyValueOf, Readable, Json } from './lib/table/index.js'
export { createTables, dropTables, startEmbeddedPostgres, checkTables } from './lib/db/index.js'
export type { Queryable, Database, DatabaseHandle, Runner, Result, Intent, EmbeddedPostgres, EmbeddedOptions, TableProblem, TableProblemKind } from './lib/db/index.js'
export { HttpError } from './lib/errors.js'
export { tableCrud } from './plugins/crud/table-crud.js'
export type { TableCrudOptions, TableCrudPlugin, Validators, Validator, ValidatorRequest, ValidatorQuery, Hook, HookContext, Crud, Row } from './plugins/crud/table-crud.js'
export type { ScopeConditions, ScopeFunction } from './lib/query/scope.js'
export { userTable, tokenTable, createUser, createToken, hashPassword, tableTokenProvider, staticTokenProvider, securitySchemesOf } from './lib/auth/index.js'
export type { NewUser, UserRow, CreateUserOptions, TokenAuthProvider, TokenLoginProvider, ProviderContext, TableTokenProviderOptions } from './lib/auth/index.js'
export type { AuthUser } from './plugins/auth/types.js'
export const tokenLogin = lazyPlugin(async () => (await import('./plugins/auth/token-login.js')).tokenLogin, 'tokenLogin')
export type { TokenLoginOptions } from './plugins/auth/token-login.js'
export const tokenAuth = lazyPlugin(async () => (await import('./plugins/auth/token-auth.js')).tokenAuth, 'fastify-tablecrud/token-auth', true)
export type { TokenAuthOptions } from './plugins/auth/token-auth.js'
export const jwtLogin = lazyPlugin(async () => (await import('./plugins/auth/jwt-login.js')).jwtLogin, 'jwtLogin')
export type { JwtLoginOptions } from './plugins/auth/jwt-login.js'
export const jwtAuth = lazyPlugin(async () => (await import('./plugins/auth/jwt-auth.js')).jwtAuth, 'fastify-tablecrud/jwt-auth', true)
export type { JwtAuthOptions } from './plugins/auth/jwt-auth.js'
export { localMediaStorage, s3MediaStorage, MediaStorage, DEFAULT_EXTENSIONS, DEFAULT_CHARACTERS } from './lib/media/index.js'
export type { LocalMediaStorage, S3MediaStorage, LocalMediaStorageOptions, S3MediaStorageOptions, S3ClientLike, MediaStorageOptions, StoreFileOptions, FileData } from './lib/media/index.js'
export { errorShape, frameworkErrors } from './plugins/error-shape.js'
export const openApi = lazyPlugin(async () => (await import('./plugins/openapi.js')).openApi, 'fastify-tablecrud/openapi', true)
export type { PoolOptions, PoolLike } from './plugins/database.js'
export type { OpenApiOptions, OpenApiInfo, OpenApiServer, OpenApiSwaggerOptions, OpenApiUiOptions } from './plugins/openapi.js'
export { sessionTable, createSession, deleteSession, deleteExpiredSessions } from './lib/auth/index.js'
export type { SessionOptions, NewSession } from './lib/auth/index.js'
export const sessionLogin = lazyPlugin(async () => (await import('./plugins/auth/session-login.js')).sessionLogin, 'sessionLogin')
export type { SessionLoginOptions, LoginHooks, LoginHookResult } from './plugins/auth/session-login.js'
export const sessionLogout = lazyPlugin(async () => (await import('./plugins/auth/session-logout.js')).sessionLogout, 'sessionLogout')
export type { SessionLogoutOptions } from './plugins/auth/session-logout.js'
export const sessionAuth = lazyPlugin(async () => (await import('./plugins/auth/session-auth.js')).sessionAuth, 'fastify-tablecrud/session-auth', true)
export type { SessionAuthOptions } from './plugins/auth/session-auth.js'
export type { Captcha, MfaProvider, MfaContext } from './plugins/auth/extensions.js'
export { html, escapeHtml, SafeHtml, layout, formFields, formMessage, formPage, field, PAGE_STYLE, loginPage, loginForm, logoutPage, logoutForm } from './lib/html/index.js'
export type { Template, LayoutData, FormPageData, FieldSpec, PageLink, LoginPageData, LogoutPageData } from './lib/html/index.js'
export const csrf = lazyPlugin(async () => (await import('./plugins/web/csrf.js')).csrf, 'fastify-tablecrud/csrf', true)
export type { CsrfOptions } from './plugins/web/csrf.js'
export const csp = lazyPlugin(async () => (await import('./plugins/web/csp.js')).csp, 'fastify-tablecrud/csp', true)
export type { CspOptions } from './plugins/web/csp.js'
export const rateLimit = lazyPlugin(async () => (await import('./plugins/web/rate-limit.js')).rateLimit, 'fastify-tablecrud/rate-limit', true)
export type { RateLimitOptions } from './plugins/web/rate-limit.js'
export { mfaSecretTable, authenticatorProvider, hcaptcha, recaptcha } from './lib/auth/index.js'
export type { AuthenticatorProvider, AuthenticatorProviderOptions, MfaEnrollment, MfaStatus, MfaDbContext, CaptchaProviderOptions, SiteVerifyCaptcha } from './lib/auth/index.js'
export const register = lazyPlugin(async () => (await import('./plugins/auth/register.js')).register, 'register')
export type { RegisterOptions } from './plugins/auth/register.js'
export const changePassword = lazyPlugin(async () => (await import('./plugins/auth/change-password.js')).changePassword, 'changePassword')
export type { ChangePasswordOptions } from './plugins/auth/change-password.js'
export const mfaSetup = lazyPlugin(async () => (await import('./plugins/auth/mfa-setup.js')).mfaSetup, 'mfaSetup')
export type { MfaSetupOptions } from './plugins/auth/mfa-setup.js'
export { registerPage, registerForm, changePasswordPage, changePasswordForm, mfaSetupPage, mfaSetupForm } from './lib/html/index.js'
export type { RegisterPageData, ChangePasswordPageData, MfaSetupPageData } from './lib/html/index.js'
export const health = lazyPlugin(async () => (await import('./plugins/health.js')).health, 'health')
export type { HealthOptions, Probe, ReplicaProbe } from './plugins/health.js'
export const tablecrudDatabase = lazyPlugin(async () => (await import('./plugins/tablecrud-database.js')).tablecrudDatabase, 'fastify-tablecrud/database', true)
export type { TablecrudDatabaseOptions } from './plugins/tablecrud-database.js'
