/**
 * The bench's result as an SVG bar chart: per case, TableCRUD's req/s and CPU per request as
 * ratios of the hand-written server's, each with its goal drawn across the bar, so the standing
 * is seen at a glance (docs/performance.md shows it). Hand-written SVG: no chart dependency.
 */
export interface Bar {
  readonly label: string
  readonly value: number
  /** The goal, and which side of it passes. */
  readonly goal: number
  readonly atLeast: boolean
}

export interface Group { readonly label: string, readonly bars: readonly Bar[] }

const escape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

export function chart (title: string, groups: readonly Group[]): string {
  const left = 230
  const scale = 420
  const max = Math.max(1.6, ...groups.flatMap((g) => g.bars.map((b) => b.value + 0.1)))
  const x = (v: number): number => left + (v / max) * scale
  const bar = 14
  const rowGap = 10
  let y = 50
  const out: string[] = []
  for (const group of groups) {
    out.push(`<text x="10" y="${y + bar}" font-weight="bold">${escape(group.label)}</text>`)
    y += bar + 4
    for (const b of group.bars) {
      const pass = b.atLeast ? b.value >= b.goal : b.value <= b.goal
      y += bar + 2
      out.push(`<text x="${left - 8}" y="${y + bar - 3}" text-anchor="end" fill="#555">${escape(b.label)}</text>`)
      out.push(`<rect x="${left}" y="${y}" width="${(x(b.value) - left).toFixed(1)}" height="${bar}" fill="${pass ? '#3a7d44' : '#c0392b'}"/>`)
      out.push(`<line x1="${x(b.goal).toFixed(1)}" x2="${x(b.goal).toFixed(1)}" y1="${y - 3}" y2="${y + bar + 3}" stroke="#000" stroke-width="2" stroke-dasharray="3,2"/>`)
      out.push(`<text x="${(x(b.value) + 4).toFixed(1)}" y="${y + bar - 3}">${b.value.toFixed(2)} (goal ${b.atLeast ? '≥' : '≤'} ${b.goal})</text>`)
      y += bar
    }
    y += rowGap + 8
  }
  const height = y + 48
  const axis = [0, 0.5, 1, 1.5].filter((v) => v <= max)
    .map((v) => `<line x1="${x(v).toFixed(1)}" x2="${x(v).toFixed(1)}" y1="40" y2="${y}" stroke="#ddd"/><text x="${x(v).toFixed(1)}" y="${y + 16}" text-anchor="middle" fill="#555">${v}</text>`)
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${left + scale + 200}" height="${height}" font-family="sans-serif" font-size="12">`,
    '<rect width="100%" height="100%" fill="#fff"/>',
    `<text x="10" y="22" font-size="14" font-weight="bold">${escape(title)}</text>`,
    ...axis,
    `<line x1="${x(1).toFixed(1)}" x2="${x(1).toFixed(1)}" y1="40" y2="${y}" stroke="#888"/>`,
    ...out,
    `<text x="10" y="${height - 8}" fill="#555">TableCRUD / hand-written. Green meets the goal (dashed line), red does not.</text>`,
    '</svg>',
    ''
  ].join('\n')
}
