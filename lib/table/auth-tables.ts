import { column, defineTable } from './index.js'

/**
 * The built-in user table, `auth_user` (SPEC §3). `password` holds a bcrypt hash and is secret:
 * TableCRUD never returns it. New rows are inactive unless `active` is given.
 * @example await createTables(app.pg, [userTable, tokenTable])
 */
export const userTable = defineTable('auth_user', {
  username: column.varchar({ length: 100, unique: true, required: true }),
  password: column.varchar({ length: 255, secret: true, required: true }),
  email: column.email({ null: true, unique: true }),
  first_name: column.varchar({ length: 255, null: true }),
  last_name: column.varchar({ length: 255, null: true }),
  active: column.boolean({ default: false }),
  admin: column.boolean({ default: false }),
  superuser: column.boolean({ default: false }),
  last_login: column.timestamp({ null: true })
}, { readable: 'username', helpText: 'The users who can log in' })

/**
 * The built-in token table, `auth_token`: the API tokens of token login and token auth. A
 * user's tokens go when the user does.
 * @example const token = await createToken(app.pg, user.id)
 */
export const tokenTable = defineTable('auth_token', {
  token: column.varchar({ length: 100, unique: true, required: true }),
  user: column.foreignKey(userTable, { null: false, onDelete: 'cascade' })
}, { helpText: 'API tokens, each for one user' })

/** The columns an `authTable` must have for the login and auth plugins. */
export const AUTH_COLUMNS = ['username', 'password', 'active', 'admin', 'superuser', 'last_login'] as const

/**
 * The built-in session table, `auth_session` (SPEC §5.1): one row per browser session of
 * session login. Only the hex SHA-256 of a session token is stored (`token_hash`, secret): the
 * token itself exists only in the browser's cookie, so a copy of the table opens no session.
 * Timestamps are UTC. A user's sessions go when the user does.
 * @example await createTables(app.pg, [userTable, sessionTable])
 */
export const sessionTable = defineTable('auth_session', {
  token_hash: column.varchar({ length: 64, unique: true, secret: true, required: true }),
  user: column.foreignKey(userTable, { null: false, onDelete: 'cascade' }),
  expiry_date: column.timestamp(),
  max_expiry_date: column.timestamp(),
  created_at: column.timestamp()
}, { helpText: 'Browser sessions of session login, each for one user' })

/** The columns a `sessionTable` option must have. */
export const SESSION_COLUMNS = ['token_hash', 'user', 'expiry_date', 'max_expiry_date'] as const

/**
 * The built-in MFA table, `auth_mfa_secret` (SPEC §5.4): one row per user, pending until
 * confirmed, revoked by `revoked_at`. `secret` holds the AES-256-GCM ciphertext of the TOTP
 * secret, `recovery_codes` salted hashes; both are secret columns. `last_used_step` is the
 * time step of the last code accepted, so no code is accepted twice. `failed_count` and
 * `failed_since` count the authenticator codes tried since the last good one (the lockout).
 * @example await createTables(app.pg, [userTable, sessionTable, mfaSecretTable])
 */
export const mfaSecretTable = defineTable('auth_mfa_secret', {
  // Unique: register replaces a user's pending or revoked row in one atomic upsert.
  user: column.foreignKey(userTable, { null: false, onDelete: 'cascade', unique: true }),
  secret: column.text({ secret: true }),
  recovery_codes: column.array(column.text(), { secret: true }),
  created_at: column.timestamp({ default: 'now' }),
  confirmed_at: column.timestamp({ null: true }),
  revoked_at: column.timestamp({ null: true }),
  last_used_at: column.timestamp({ null: true }),
  last_used_step: column.integer({ null: true }),
  // Wrong codes in a row and when the first of them came: the lockout of issue 27, in the
  // database so every instance counts the same attempts.
  failed_count: column.integer({ default: 0 }),
  failed_since: column.timestamp({ null: true })
}, { helpText: 'Authenticator-app (TOTP) enrollments, one per user' })

/** The columns a `secretTable` must have for `authenticatorProvider`. */
export const MFA_COLUMNS = ['user', 'secret', 'recovery_codes', 'created_at', 'confirmed_at', 'revoked_at', 'last_used_at', 'last_used_step', 'failed_count', 'failed_since'] as const
