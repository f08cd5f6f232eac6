/**
 * The bench's one table of all cases, and its memory and start-up table, as Markdown: medians
 * over the rounds, each TableCRUD server as a ratio of the hand-written one, with the range of
 * the per-round ratios (how far one round swings), and the machine the figures hold for.
 */
import { readFileSync } from 'node:fs'
import os from 'node:os'
import type pg from 'pg'
import { GOAL } from './cases.js'
import { median, type Measured, type Settings } from './rounds.js'
import type { Run } from './measure.js'

/** Where and when: what a figure cannot be read without (issue 31). */
export async function machine (admin: pg.Pool): Promise<string> {
  const model = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? 'unknown CPU'
  const { rows: [pgVersion] } = await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v")
  const memory = (os.totalmem() / 2 ** 30).toFixed(1)
  return `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; ${os.availableParallelism()} CPUs (nproc), ${model}, ${memory} GB; PostgreSQL ${pgVersion!.v}; Node ${process.version}`
}

export const loadAverage = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' ')

type Figure = (r: Run) => number
const rps: Figure = (r) => r.rps
const cpu: Figure = (r) => r.cpuPerRequest

/** Median of a contender's figure, and the range of its per-round ratio to the hand-written server's (or another's). */
function ratio (hand: readonly Run[], other: readonly Run[], figure: Figure): { value: number, low: number, high: number } | null {
  if (other.length === 0 || hand.length === 0) return null
  const perRound = other.map((r, i) => figure(r) / figure(hand[i]!))
  return { value: median(other.map(figure)) / median(hand.map(figure)), low: Math.min(...perRound), high: Math.max(...perRound) }
}

const nameOf = (m: Measured): string => `${m.group === '' ? '' : `${m.group}: `}${m.c.label}`

const range = (x: { value: number, low: number, high: number } | null): string =>
  x === null ? '—' : `${x.value.toFixed(2)} (${x.low.toFixed(2)}-${x.high.toFixed(2)})`
const whole = (xs: readonly Run[], figure: Figure): string => xs.length === 0 ? '—' : median(xs.map(figure)).toFixed(0)

/** Issue 31: TableCRUD's req/s at least this many times Platformatic DB's, on every case both serve. */
export const RIVAL_GOAL = 1.3

/**
 * TableCRUD (the last contender) against a rival (Platformatic DB, contender `rival`): its
 * req/s and CPU per request as ratios of the rival's, per case, and how many cases meet
 * RIVAL_GOAL. No columns without a rival.
 */
function versus (measured: readonly Measured[], labels: readonly string[], rival: number | undefined): { header: string, align: string, cells: (m: Measured) => string, summary: string[] } {
  if (rival === undefined) return { header: '', align: '', cells: () => '', summary: [] }
  const [crud, other] = [labels.at(-1)!, labels[rival]!]
  const rpsOf = (m: Measured): ReturnType<typeof ratio> => ratio(m.closed[rival]!, m.closed.at(-1)!, rps)
  const cpuOf = (m: Measured): ReturnType<typeof ratio> => { const runs = m.rate === null ? m.closed : m.fixed; return ratio(runs[rival]!, runs.at(-1)!, cpu) }
  const both = measured.filter((m) => rpsOf(m) !== null)
  const below = both.filter((m) => rpsOf(m)!.value < RIVAL_GOAL)
  return {
    header: ` ${crud} / ${other} req/s (range) | ${crud} / ${other} CPU (range) |`,
    align: '---:|---:|',
    cells: (m) => ` ${range(rpsOf(m))} | ${range(cpuOf(m))} |`,
    summary: ['', `${crud} / ${other} req/s ≥ ${RIVAL_GOAL} (issue 31) on ${both.length - below.length} of the ${both.length} cases both serve` +
      (below.length === 0 ? '.' : `; below on: ${below.map((m) => `${nameOf(m)} (${rpsOf(m)!.value.toFixed(2)})`).join('; ')}.`)]
  }
}

/** Per case, each TableCRUD server's median ratios to the hand-written server (null: it does not serve the case). */
export interface Ratios { readonly label: string, readonly rps: ReadonlyArray<number | null>, readonly cpu: ReadonlyArray<number | null>, readonly goal: typeof GOAL }

/**
 * The table of all cases. `labels` are the contenders' (the hand-written one first, TableCRUD
 * last); `rival`, Platformatic DB's index among them, adds TableCRUD's ratios to it. For a
 * database-bound case the CPU columns are those of the runs at a fixed rate (‡).
 */
export function casesTable (measured: readonly Measured[], labels: readonly string[], s: Settings, rival?: number): { lines: string[], ratios: Ratios[] } {
  const others = labels.slice(1)
  const each = (f: (l: string) => string): string => others.map(f).join(' | ')
  const vs = versus(measured, labels, rival)
  const lines = [
    `| case | ${labels.map((l) => `${l} req/s`).join(' | ')} | ${each((l) => `${l} / hand req/s (range)`)} | ${labels.map((l) => `${l} CPU µs/req`).join(' | ')} | ${each((l) => `${l} / hand CPU (range)`)} | goal (req/s, CPU) | met |${vs.header}`,
    `|---|${labels.map(() => '---:').join('|')}|${others.map(() => '---:').join('|')}|${labels.map(() => '---:').join('|')}|${others.map(() => '---:').join('|')}|---|:---:|${vs.align}`
  ]
  const ratios: Ratios[] = []
  for (const m of measured) {
    const goal = m.c.goal ?? GOAL
    const cpuRuns = m.rate === null ? m.closed : m.fixed
    const hand = m.closed[0]!
    const rpsRatios = m.closed.slice(1).map((runs) => ratio(hand, runs, rps))
    const cpuRatios = cpuRuns.slice(1).map((runs) => ratio(cpuRuns[0]!, runs, cpu))
    const last = { rps: rpsRatios.at(-1)?.value ?? null, cpu: cpuRatios.at(-1)?.value ?? null }
    const label = `${nameOf(m)}${m.rate === null ? '' : ' ‡'}`
    ratios.push({ label, rps: rpsRatios.map((r) => r?.value ?? null), cpu: cpuRatios.map((r) => r?.value ?? null), goal })
    const met = last.rps === null || last.cpu === null ? '—' : last.rps >= goal.rps && last.cpu <= goal.cpu ? 'yes' : '**no**'
    lines.push(`| ${label} | ${m.closed.map((r) => whole(r, rps)).join(' | ')} | ${rpsRatios.map(range).join(' | ')} | ${cpuRuns.map((r) => whole(r, cpu)).join(' | ')} | ${cpuRatios.map(range).join(' | ')} | ≥ ${goal.rps}, ≤ ${goal.cpu} | ${met} |${vs.cells(m)}`)
  }
  lines.push(...vs.summary)
  // What tells a database-bound case: the hand-written server idle most of the time at saturation.
  const busy = measured.map((m) => `${nameOf(m)} ${(median(m.closed[0]!.map(rps)) * median(m.closed[0]!.map(cpu)) / 1e6).toFixed(2)}`)
  lines.push('', `Cores the hand-written server kept busy as fast as it answered (req/s × CPU per request): ${busy.join('; ')}.`)
  const fixed = measured.filter((m) => m.rate !== null)
  if (fixed.length > 0) {
    lines.push(
      '',
      `‡ Database-bound: req/s as fast as each server answers; CPU per request at a fixed offered rate (autocannon \`overallRate\`, the same for every server: ${s.rateShare} of the slowest server's req/s in the warm-up${rival === undefined ? '' : `, ${labels[rival]!}'s left out`}), where each server answered:`,
      '',
      `| case | offered req/s | ${labels.map((l) => `${l} req/s answered`).join(' | ')} | ${each((l) => `${l} / hand CPU as fast as it answers`)} |`,
      `|---|---:|${labels.map(() => '---:').join('|')}|${others.map(() => '---:').join('|')}|`
    )
    for (const m of fixed) {
      lines.push(`| ${m.c.label} | ${m.rate!} | ${m.fixed.map((r) => whole(r, rps)).join(' | ')} | ${m.closed.slice(1).map((runs) => range(ratio(m.closed[0]!, runs, cpu))).join(' | ')} |`)
    }
  }
  return { lines, ratios }
}

export interface Process {
  readonly label: string
  /** RSS right after start-up and a forced GC, and once V8 has settled (bench/measure.ts `settled`), MB. */
  readonly idle?: number
  readonly settled?: number
  /** Starts in which V8 did not give back the young generation within the wait: their settled reading is a just-started one. */
  readonly unsettled?: number
  readonly peak: number
  readonly startup?: number
  readonly startup20?: number
  readonly idle20?: number
  readonly settled20?: number
}

/** Idle and peak RSS and start-up of each server: the goals of issues 31 (memory) and 17 (start-up with 20 tables). */
export function processTable (processes: readonly Process[]): string[] {
  const hand = processes[0]!
  const last = processes.at(-1)!
  const ok = (pass: boolean): string => pass ? 'yes' : '**no**'
  // A row no server has a figure for (BENCH_STARTS=0) is left out.
  const row = (what: string, value: (p: Process) => number | undefined, digits: number, goal: string, met: string): string[] =>
    processes.every((p) => value(p) === undefined) ? [] : [`| ${what} | ${processes.map((p) => value(p)?.toFixed(digits) ?? '—').join(' | ')} | ${goal} | ${met} |`]
  const over = (value: (p: Process) => number | undefined): number => (value(last) ?? NaN) - (value(hand) ?? NaN)
  return [
    `| process | ${processes.map((p) => p.label).join(' | ')} | goal | met |`,
    `|---|${processes.map(() => '---:').join('|')}|---|:---:|`,
    ...row('idle RSS just started, after a GC, MB, the same tables', (p) => p.idle, 1, `(+${over((p) => p.idle).toFixed(1)})`, '—'),
    ...row('idle RSS once V8 has settled, MB, the same tables', (p) => p.settled, 1, `≤ hand-written + 10 MB (+${over((p) => p.settled).toFixed(1)})`,
      // Judged only when both servers settled in every start: an unsettled reading is a just-started one.
      (hand.unsettled ?? 0) + (last.unsettled ?? 0) === 0 ? ok(over((p) => p.settled) <= 10) : `— (starts not settled in 30 s: ${hand.label} ${hand.unsettled ?? 0}, ${last.label} ${last.unsettled ?? 0})`),
    ...row('peak RSS over the run, MB', (p) => p.peak, 1, `≤ 1.2× hand-written (${(last.peak / hand.peak).toFixed(2)}×)`, ok(last.peak <= 1.2 * hand.peak)),
    ...row('spawn to first 200, ms, the same tables', (p) => p.startup, 0, `(+${over((p) => p.startup).toFixed(0)} ms)`, '—'),
    ...row('spawn to first 200, ms, TableCRUD with 20 tables', (p) => p.startup20, 0, `≤ hand-written + 300 ms (+${((last.startup20 ?? NaN) - (hand.startup ?? NaN)).toFixed(0)})`, ok((last.startup20 ?? Infinity) - (hand.startup ?? NaN) <= 300)),
    ...row('idle RSS just started, after a GC, MB, TableCRUD with 20 tables', (p) => p.idle20, 1, '', '—'),
    ...row('idle RSS once V8 has settled, MB, TableCRUD with 20 tables', (p) => p.settled20, 1, '', '—')
  ]
}
