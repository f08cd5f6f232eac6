import t from 'tap'
import fc from 'fast-check'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { column, defineTable } from '../../lib/table/index.js'
import { createTables } from '../../lib/db/index.js'
import { tableCrud, type Hook } from '../../plugins/crud/table-crud.js'
import { health } from '../../plugins/health.js'
import { useDatabase } from '../helpers/app.js'
import { contractProblem } from '../helpers/contract.js'
import { testDatabase } from '../helpers/db.js'

/*
 * Property test of SPEC §9.3's close under load: clients send random writes and reads over
 * kept-alive connections while `app.close()` runs at a random moment, with a random
 * `closeTimeout` and either `return503OnClosing`. Every answer is in the contract (no 5xx but,
 * under Fastify's default, the 503 of a closing server), a
 * write is all or nothing (one answered 2xx is in the table, one refused is not, one whose
 * answer was lost may be either), close ends within its bound, the pool ends, and nothing is
 * left unhandled.
 */

const db = await testDatabase(t)

/** Runs of the property; FUZZ_RUNS raises it for a longer hunt. Each run starts and closes an app. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 12)

const item = defineTable('fs_item', {
  label: column.varchar({ length: 40, unique: true }),
  n: column.integer({ default: 0 })
})
await createTables(db.pool, [item])

/** What Fastify answers by itself on a kept-alive connection once the server closes (docs/deployment.md). */
const CLOSING = '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}'

type Op = 'create' | 'patch' | 'delete' | 'bulk' | 'list' | 'get' | 'export'
const op = fc.constantFrom<Op>('create', 'create', 'patch', 'delete', 'bulk', 'list', 'get', 'export')

/**
 * What a row of the table may be once the run ends: `n` as a string, or 'absent'. One state
 * after an answer; several after a write whose answer was lost (it may or may not have run).
 */
type States = Set<string>

interface Outcome { status: number, body: string, type: string }

let runs = 0
/** What the runs met, said at the end: answers, Fastify's closing 503s, requests left without an answer. */
const seen = { answers: 0, closing503: 0, lost: 0, lostWrites: 0 }

async function send (base: string, method: string, path: string, payload?: unknown): Promise<Outcome | null> {
  try {
    const response = await fetch(base + path, {
      method,
      ...(payload === undefined ? {} : { body: JSON.stringify(payload), headers: { 'content-type': 'application/json' } })
    })
    const body = await response.text()
    seen.answers++
    if (body === CLOSING) seen.closing503++
    return { status: response.status, body, type: response.headers.get('content-type') ?? '' }
  } catch {
    // Refused, reset, or cut by the close timeout: no answer.
    seen.lost++
    if (method !== 'GET') seen.lostWrites++
    return null
  }
}

/**
 * Why an answer breaks the contract, or null: the closing 503 is Fastify's own body, and only
 * where `return503OnClosing` is left true (with false, a request during the close is served).
 */
function problem (outcome: Outcome, allowed: readonly number[], closing503: boolean): string | null {
  if (outcome.status === 503 && outcome.body === CLOSING) return closing503 ? null : 'Fastify\'s closing 503 with return503OnClosing false'
  if (outcome.status === 204 && allowed.includes(204)) return outcome.body === '' ? null : `a 204 with a body: ${outcome.body}`
  const response = { statusCode: outcome.status, body: outcome.body, headers: { 'content-type': outcome.type } } as unknown as LightMyRequestResponse
  return contractProblem(response, [...allowed, 503], () => null)
}

/** Writes held in their hooks for `ms` first, so that a short close timeout cuts some in flight. */
async function appWith (closeTimeout: number, ms: number, return503OnClosing: boolean): Promise<FastifyInstance> {
  const app = Fastify({ return503OnClosing })
  await useDatabase(app, db)
  await app.register(health, { closeTimeout })
  const held = async <T>(value: T): Promise<T> => await new Promise((resolve) => setTimeout(() => resolve(value), ms))
  const hooks: Array<Hook<typeof item>> = [
    { hookType: 'preSave', callable: async (row) => await held(row) },
    { hookType: 'prePatch', callable: async (_id, values) => await held(values) },
    { hookType: 'preDelete', callable: async () => { await held(null) } }
  ]
  await app.register(tableCrud, { table: item, prefix: '/items', readOnly: false, allowBulkUpdate: true, hooks })
  return app
}

t.test('close under random load: every answer in the contract, every write all or nothing, the pool ended', async (t) => {
  await fc.assert(fc.asyncProperty(
    fc.array(fc.array(op, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }),
    fc.nat({ max: 25 }),
    fc.integer({ min: 20, max: 1500 }),
    fc.nat({ max: 40 }),
    fc.boolean(),
    async (clients, answersBeforeClose, closeTimeout, hookMs, return503OnClosing) => {
      const run = ++runs
      const app = await appWith(closeTimeout, hookMs, return503OnClosing)
      const base = await app.listen({ port: 0, host: '127.0.0.1' })
      const rows = new Map<string, { id: number | null, states: States }>()
      const problems: string[] = []
      const unhandled: unknown[] = []
      const record = (error: unknown): void => { unhandled.push(error) }
      process.on('unhandledRejection', record)
      let answered = 0
      let closeBegun = false
      let closeStarted: () => void = () => {}
      const closing = new Promise<void>((resolve) => { closeStarted = resolve })
      const check = (what: string, outcome: Outcome, allowed: readonly number[]): void => {
        const why = problem(outcome, allowed, return503OnClosing)
        if (why !== null) problems.push(`${what}: ${why}`)
      }

      /** One client: its ops in turn, again and again, until the server is gone. */
      const client = async (ops: Op[], c: number): Promise<void> => {
        let seq = 0
        for (let i = 0; ; i++) {
          const kind = ops[i % ops.length]!
          // Its own rows only, and only those it knows the state of: writes in turn, no races.
          const known = [...rows.entries()].filter(([label, row]) => label.startsWith(`r${run}c${c}-`) && row.id !== null && row.states.size === 1 && !row.states.has('absent'))
          const target = known[i % Math.max(1, known.length)]
          let outcome: Outcome | null
          if (kind === 'create' || target === undefined) {
            const label = `r${run}c${c}-${seq++}`
            rows.set(label, { id: null, states: new Set(['absent']) })
            outcome = await send(base, 'POST', '/items/', { label, n: 0 })
            if (outcome === null) rows.get(label)!.states.add('0')
            else {
              check(`POST ${label}`, outcome, [201])
              if (outcome.status === 201) rows.set(label, { id: (JSON.parse(outcome.body) as { id: number }).id, states: new Set(['0']) })
            }
          } else if (kind === 'patch' || kind === 'bulk' || kind === 'delete') {
            const [label, row] = target
            const n = i + 1
            const path = kind === 'bulk' ? `/items/?label=${label}&label__match=exact` : `/items/${row.id!}/`
            outcome = await send(base, kind === 'delete' ? 'DELETE' : 'PATCH', path, kind === 'delete' ? undefined : { n })
            const after = kind === 'delete' ? 'absent' : String(n)
            if (outcome === null) row.states.add(after)
            else {
              check(`${kind} ${label}`, outcome, kind === 'delete' ? [204] : [200])
              if (outcome.status < 300) row.states = new Set([after])
              if (kind === 'bulk' && outcome.status === 200 && outcome.body !== '{"count":1}') problems.push(`bulk ${label}: ${outcome.body}`)
            }
          } else {
            const path = kind === 'list' ? '/items/?__page_size=5' : kind === 'get' ? `/items/${target[1].id!}/` : '/items/?__format=ndjson'
            outcome = await send(base, 'GET', path)
            // An export's 200 is NDJSON, not a JSON body.
            if (outcome !== null && (kind !== 'export' || outcome.status !== 200)) check(`GET ${path}`, outcome, [200])
          }
          if (outcome !== null && ++answered >= answersBeforeClose) closeStarted()
          // Once the close has begun, one refused or closing answer ends the client.
          if (closeBegun && (outcome === null || outcome.status === 503)) return
        }
      }

      const load = clients.map(async (ops, c) => await client(ops, c))
      await closing
      closeBegun = true
      const started = Date.now()
      await app.close()
      const closedIn = Date.now() - started
      await Promise.all(load)
      process.off('unhandledRejection', record)

      // The truth, read straight from the database: each row one of the states its answers allow.
      const { rows: stored } = await db.pool.query<{ label: string, n: number }>('SELECT label, n FROM fs_item WHERE label LIKE $1', [`r${run}c%`])
      const actual = new Map(stored.map((r) => [r.label, String(r.n)]))
      for (const [label, row] of rows) {
        const state = actual.get(label) ?? 'absent'
        if (!row.states.has(state)) problems.push(`${label} is ${state}, the answers allow ${[...row.states].join(' or ')}`)
      }
      for (const label of actual.keys()) if (!rows.has(label)) problems.push(`${label} written by no request`)
      if (closedIn > closeTimeout + 10_000) problems.push(`close took ${closedIn} ms with closeTimeout ${closeTimeout}`)
      if (app.pg.pool.totalCount !== 0 || !app.pg.pool.ending) problems.push(`the pool did not end: ${app.pg.pool.totalCount} connections`)
      if (unhandled.length > 0) problems.push(`unhandled: ${String(unhandled[0])}`)
      if (problems.length > 0) throw new Error(problems.join('\n'))
    }
  ), { numRuns: RUNS })
  // How often the runs met a close mid-request varies with timing: said, not asserted.
  t.comment(`${RUNS} runs: ${JSON.stringify(seen)}`)
  t.pass('no run broke the contract')
})
