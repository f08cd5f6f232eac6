/**
 * The built-in pages' one stylesheet, served by each form plugin beside its page
 * (`<prefix>/style.css`) so it comes from the page's own origin: `default-src 'self'` allows
 * it, and there is no inline style to allow. Small on purpose: a readable column on a phone and
 * on a desktop, controls big enough to touch, a focus ring that shows, and colours whose
 * contrast passes WCAG AA (text 4.5:1, borders 3:1). A `template` may link its own instead.
 * @example app.get('/style.css', async (_request, reply) => reply.type('text/css').send(PAGE_STYLE))
 */
export const PAGE_STYLE = `*, *::before, *::after { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 100%; line-height: 1.5; color: #1a1a1a; background: #f3f4f6; }
body { margin: 0; padding: 1rem; }
main { max-width: 28rem; margin: 2rem auto; padding: 1.5rem; background: #fff; border: 1px solid #d1d5db; border-radius: 0.5rem; }
h1 { margin: 0 0 1rem; font-size: 1.5rem; line-height: 1.25; }
p { margin: 0 0 1rem; }
.field label { display: block; margin-bottom: 0.25rem; font-weight: 600; }
input, select { display: block; width: 100%; min-height: 2.75rem; padding: 0.5rem 0.75rem; font: inherit; color: inherit; background: #fff; border: 1px solid #6b7280; border-radius: 0.375rem; }
button { min-height: 2.75rem; padding: 0.5rem 1.25rem; font: inherit; font-weight: 600; color: #fff; background: #1d4ed8; border: 1px solid #1d4ed8; border-radius: 0.375rem; cursor: pointer; }
button:hover { background: #1e40af; }
a { color: #1d4ed8; }
a:focus-visible, input:focus-visible, select:focus-visible, button:focus-visible { outline: 3px solid #1d4ed8; outline-offset: 2px; }
.message, .notice { padding: 0.75rem 1rem; border-radius: 0.375rem; border: 1px solid; }
.message { color: #991b1b; background: #fef2f2; border-color: #b91c1c; }
.notice { color: #14532d; background: #f0fdf4; border-color: #15803d; }
input[aria-describedby] { border-color: #b91c1c; }
.links ul { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; margin: 1.5rem 0 0; padding: 1rem 0 0; list-style: none; border-top: 1px solid #e5e7eb; }
.links a { display: inline-block; padding: 0.25rem 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
img { max-width: 100%; height: auto; }
ul { padding-left: 1.25rem; }
@media (max-width: 30rem) { body { padding: 0; } main { margin: 0; min-height: 100vh; border: 0; border-radius: 0; } }
`

/** Where each form plugin serves `PAGE_STYLE`, under its prefix. */
export const STYLESHEET_FILE = 'style.css'
