import type { LightMyRequestResponse } from 'fastify'

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Why a response breaks the contract the property tests (fuzz.test.ts, fuzz-writes.test.ts)
 * hold every answer to, or null: no 5xx (SPEC §1: 500 is reserved for bugs), a status of
 * `allowed`, JSON, and an error in the SPEC shape with a TABLECRUD code; `ok` judges a 2xx's body.
 */
export function contractProblem (response: LightMyRequestResponse, allowed: readonly number[], ok: (body: any) => string | null): string | null {
  if (response.statusCode >= 500) return `a ${response.statusCode}: ${response.body}`
  if (!allowed.includes(response.statusCode)) return `status ${response.statusCode}: ${response.body}`
  // A path that is not valid percent-encoding is refused by the router, before any plugin: the
  // body is Fastify's own, in the same shape (an integrator may set frameworkErrors).
  const badUrl = response.statusCode === 400 && response.body.includes('"code":"FST_ERR_BAD_URL"')
  if (response.headers['content-type'] !== (badUrl ? 'application/json' : JSON_TYPE)) return `content type ${String(response.headers['content-type'])}`
  let body: any
  try {
    body = JSON.parse(response.body)
  } catch {
    return `not JSON: ${response.body.slice(0, 200)}`
  }
  if (response.statusCode < 300) return ok(body)
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'an error body that is not an object'
  if (body.statusCode !== response.statusCode) return `statusCode ${String(body.statusCode)}`
  for (const member of ['code', 'error', 'message']) {
    if (typeof body[member] !== 'string' || body[member] === '') return `no ${member} in ${response.body}`
  }
  return /^TABLECRUD_ERR_[A-Z_]+$/.test(String(body.code)) || badUrl ? null : `code ${String(body.code)}`
}
