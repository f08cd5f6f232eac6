import { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Database, Result, Row, Runner } from '../../lib/db/port.js'
import { claimsStatement } from '../../lib/sql/claims.js'
import type { Statement } from '../../lib/table/statement.js'

/** The claims of a request (SPEC §8.6): any JSON object, e.g. `{ sub: request.user.id, role: 'member' }`. */
export type Claims = (request: FastifyRequest) => Record<string, unknown> | Promise<Record<string, unknown>>

/** The statement each transaction of the request in progress starts with. */
const current = new AsyncLocalStorage<{ first: Statement | null }>()

/**
 * The database of a `claims` mount (SPEC §8.6): every statement of a request runs in a
 * transaction that first sets `request.claims` (and the role), so PostgreSQL's row-level
 * security policies decide; a statement alone becomes BEGIN, the claims, it, COMMIT. The claims
 * are computed once per request, in an onRequest hook of the mount (after the auth plugins of
 * its parents set `request.user`), and found by every statement of that request through an
 * AsyncLocalStorage; a statement that finds none (which would run as the table's owner, past
 * every policy) throws instead of running.
 */
export function claimsDatabase (fastify: FastifyInstance, db: Database, claims: Claims, role: string | null): Database {
  fastify.addHook('onRequest', (request, _reply, done) => {
    const store: { first: Statement | null } = { first: null }
    current.run(store, () => {
      Promise.resolve().then(async () => await claims(request)).then((value) => {
        store.first = claimsStatement(JSON.stringify(value), role)
        done()
      }, done)
    })
  })
  const first = (): Statement => {
    const statement = current.getStore()?.first
    if (statement === undefined || statement === null) throw new Error('tableCrud claims: a statement outside a request of its mount')
    return statement
  }
  const claimed = async <T>(work: (tx: Runner) => Promise<T>): Promise<T> => {
    const statement = first()
    return await db.transaction(async (tx) => {
      await tx.run(statement)
      return await work(tx)
    })
  }
  return {
    run: async (statement) => await claimed(async (tx) => await tx.run(statement)),
    transaction: claimed,
    // Always in the claims' transaction: the statement alone would run past every policy.
    single: async <T, R extends Row>(statement: Statement, _types: readonly number[] | null, answer: (result: Result<R>) => T): Promise<T> =>
      await claimed(async (tx) => answer(await tx.run<R>(statement))),
    cursor: async (statement) => await db.cursor(statement, 'write', [first()]),
    query: db.query
  }
}
