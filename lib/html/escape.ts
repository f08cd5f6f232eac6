/**
 * Escaping for the built-in pages: every value goes through `html` and is escaped unless it is
 * already `SafeHtml` (the output of another template). There is no templating engine: a page
 * is a function of its data, so an integrator can replace it with one of their own.
 */

const ENTITIES = new Map([['&', '&amp;'], ['<', '&lt;'], ['>', '&gt;'], ['"', '&quot;'], ["'", '&#39;']])

/** Text made safe for element content and quoted attribute values. */
export function escapeHtml (value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ENTITIES.get(ch)!)
}

/**
 * Markup that is already safe: what `html` returns. Wrap only constant markup in it.
 * @example const rows = users.map((u) => html`<li>${u.username}</li>`)
 */
export class SafeHtml {
  constructor (readonly html: string) {}
  toString (): string { return this.html }
}

function render (value: unknown): string {
  if (value instanceof SafeHtml) return value.html
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

/**
 * A template literal tag: interpolated values are escaped, `SafeHtml` values and arrays of
 * them are inserted as they are, `null`, `undefined` and `false` leave nothing.
 * @example html`<p class="error">${message}</p>`
 */
export function html (strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!
  return new SafeHtml(out)
}
