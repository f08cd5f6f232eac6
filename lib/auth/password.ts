import { createHmac } from 'node:crypto'
import type bcryptModule from 'bcrypt'
import { setupError, TABLECRUD_ERR_AUTH_PASSWORD_TOO_LONG, TABLECRUD_ERR_AUTH_PASSWORD_TOO_SHORT } from '../errors.js'

/** Password length limits, in characters (Unicode code points), SPEC §3. */
export const PASSWORD_MIN_LENGTH = 6
export const PASSWORD_MAX_LENGTH = 128

export const DEFAULT_BCRYPT_COST = 12

/** bcrypt's own range of cost factors. */
const MIN_COST = 4
const MAX_COST = 31
export const COST_RULE = `must be an integer from ${MIN_COST} to ${MAX_COST}`

/**
 * The bcrypt cost to use: the one given, else `TABLECRUD_BCRYPT_COST` from the environment
 * (so tests can run at cost 4), else 12.
 */
export function resolveCost (cost?: number): number {
  if (cost !== undefined) {
    if (!isCost(cost)) throw setupError(`bcryptCost ${COST_RULE}, not ${String(cost)}`)
    return cost
  }
  const env = process.env.TABLECRUD_BCRYPT_COST
  if (env === undefined || env === '') return DEFAULT_BCRYPT_COST
  if (!/^\d+$/.test(env) || !isCost(Number(env))) throw setupError(`TABLECRUD_BCRYPT_COST ${COST_RULE}, not ${JSON.stringify(env)}`)
  return Number(env)
}

/** Whether bcrypt takes `cost` as its cost factor. */
export function isCost (cost: unknown): cost is number {
  return Number.isInteger(cost) && (cost as number) >= MIN_COST && (cost as number) <= MAX_COST
}

/** Throws the 400 a client sees when a password it sets is too short or too long. */
export function checkPassword (password: string): void {
  const length = [...password].length
  if (length < PASSWORD_MIN_LENGTH) throw new TABLECRUD_ERR_AUTH_PASSWORD_TOO_SHORT(PASSWORD_MIN_LENGTH)
  if (length > PASSWORD_MAX_LENGTH) throw new TABLECRUD_ERR_AUTH_PASSWORD_TOO_LONG(PASSWORD_MAX_LENGTH)
}

/**
 * What bcrypt is given instead of the password itself. bcrypt reads at most 72 bytes and stops
 * at a NUL byte, so a long password (eighteen emoji) would be cut silently: every password is
 * first reduced to 44 base64 characters by HMAC-SHA256, which keeps all of its bits. The key
 * only separates this use of SHA-256 from others; it is not a secret.
 */
function prehash (password: string): string {
  return createHmac('sha256', 'fastify-tablecrud/bcrypt').update(password, 'utf8').digest('base64')
}

let loaded: Promise<typeof bcryptModule> | undefined

/**
 * bcrypt, loaded when a password is first hashed or checked: an application with no password
 * route does not load its native module at start-up (issue 17).
 */
async function bcryptLib (): Promise<typeof bcryptModule> {
  loaded ??= import('bcrypt').then((m) => m.default)
  return await loaded
}

/**
 * Hashes a password for the user table after checking its length (6 to 128 characters; a
 * 400 otherwise). The cost defaults to `TABLECRUD_BCRYPT_COST`, else 12.
 * @example const hash = await hashPassword('correct horse battery staple')
 */
export async function hashPassword (password: string, cost?: number): Promise<string> {
  checkPassword(password)
  return await (await bcryptLib()).hash(prehash(password), resolveCost(cost))
}

/** Whether `password` is the one `hash` was made from; false for anything that is not a bcrypt hash. */
export async function verifyPassword (password: string, hash: string): Promise<boolean> {
  try {
    return await (await bcryptLib()).compare(prehash(password), hash)
  } catch {
    return false
  }
}

const dummies = new Map<number, Promise<string>>()

/**
 * Spends the time a real check would, for a user that does not exist, so the answer time does
 * not tell which usernames exist. Always false.
 */
export async function verifyNobody (password: string, cost?: number): Promise<false> {
  const rounds = resolveCost(cost)
  const bcrypt = await bcryptLib()
  let dummy = dummies.get(rounds)
  if (dummy === undefined) {
    dummy = bcrypt.hash('no user has this password', rounds)
    dummies.set(rounds, dummy)
  }
  await bcrypt.compare(prehash(password), await dummy)
  return false
}
