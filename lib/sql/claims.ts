import type { Statement } from '../table/statement.js'

/**
 * What a `claims` mount runs first in each transaction (SPEC §8.6): the request's claims as
 * `request.claims` and, with `role`, the role, both local to the transaction (`set_config(...,
 * true)`, which is `SET LOCAL`), so nothing is left on a pooled connection and it works through
 * a transaction-mode pooler. One statement, both as bind parameters: `set_config('role', ...)`
 * is `SET LOCAL ROLE`, as PostgREST does it.
 */
export function claimsStatement (claims: string, role: string | null): Statement {
  return role === null
    ? Object.freeze({ text: "SELECT set_config('request.claims', $1, true)", values: Object.freeze([claims]) })
    : Object.freeze({ text: "SELECT set_config('request.claims', $1, true), set_config('role', $2, true)", values: Object.freeze([claims, role]) })
}
