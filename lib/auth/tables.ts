import { column, defineTable } from '../table/index.js'

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
