/**
 * Alternating rounds (issue 31): every case on every server, round after round, the servers'
 * order reversed each round, so drift over the run (a neighbour's load, the database's caches,
 * autovacuum) falls on each server alike; the figures compared are medians over the rounds.
 */
import type pg from 'pg'
import type { Case } from './cases.js'
import { requestFor, run, type Run, type Server } from './measure.js'

/** A server measured: the hand-written one first, then Platformatic DB, then one or two TableCRUD servers. */
export interface Contender {
  readonly label: string
  readonly server: Server
}

export interface Settings {
  readonly seconds: number
  readonly connections: number
  readonly rounds: number
  /**
   * The fixed rate of a database-bound case, as a share of the slowest server's req/s in the
   * warm-up, Platformatic DB left out: adding it would lower the rate of the hand-written and
   * TableCRUD servers, and their figures would not compare with runs without it.
   */
  readonly rateShare: number
}

export interface Measured {
  readonly c: Case
  /** Label of the group of servers it ran on (a topology), '' for the main one. */
  readonly group: string
  /** Per contender: whether it serves the case (it has a route for it, and answered it in the warm-up). */
  readonly serves: readonly boolean[]
  /** Per contender, in their order: one run per round as fast as it answers (closed loop); empty where the contender does not serve the case. */
  readonly closed: Run[][]
  /** Database-bound cases: the offered rate, and per contender one run per round at that rate (open loop). */
  readonly rate: number | null
  readonly fixed: Run[][]
}

export function median (xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * Warm-up (which also checks that each server answers the case: a TableCRUD checkout of
 * before a feature does not, and is left out of that case), then `rounds` rounds. A server
 * with no route for a case (Platformatic, bench/platformatic/requests.ts) is not sent it.
 */
export async function measureRounds (group: string, contenders: readonly Contender[], cases: readonly Case[], admin: pg.Pool, s: Settings): Promise<Measured[]> {
  const once = async (c: Case, who: Contender, seconds: number, rate?: number): Promise<Run> => {
    try {
      return await run(who.server, c, seconds, s.connections, rate)
    } finally {
      for (const statement of c.after ?? []) await admin.query(statement)
    }
  }
  const warm = Math.max(1, Math.round(s.seconds / 5))
  const measured: Measured[] = []
  for (const c of cases) {
    const serves: boolean[] = []
    const speeds: number[] = []
    for (const who of contenders) {
      if (requestFor(who.server.kind, c) === null) { serves.push(false); continue }
      const r = await once(c, who, warm).catch((error: unknown) => {
        if (who.server.kind === 'hand') throw error
        console.error(`${who.label} left out of "${c.label}": ${String(error)}`)
        return null
      })
      serves.push(r !== null)
      if (r !== null && who.server.kind !== 'platformatic') speeds.push(r.rps)
    }
    const rate = c.dbBound === true ? Math.max(1, Math.floor(s.rateShare * Math.min(...speeds))) : null
    measured.push({ c, group, serves, closed: contenders.map(() => []), rate, fixed: contenders.map(() => []) })
  }
  for (let round = 0; round < s.rounds; round++) {
    const order = contenders.map((who, i) => ({ who, i }))
    if (round % 2 === 1) order.reverse()
    for (const m of measured) {
      console.error(`${group === '' ? '' : `${group}: `}round ${round + 1}/${s.rounds}: ${m.c.label}`)
      for (const { who, i } of order) if (m.serves[i]!) m.closed[i]!.push(await once(m.c, who, s.seconds))
      if (m.rate === null) continue
      for (const { who, i } of order) if (m.serves[i]!) m.fixed[i]!.push(await once(m.c, who, s.seconds, m.rate))
    }
  }
  return measured
}
