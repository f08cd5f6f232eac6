import { html, type SafeHtml } from './escape.js'

/**
 * What every built-in page shares. Pages load nothing from elsewhere and carry no inline script
 * or style, so they work under `Content-Security-Policy: default-src 'self'` (SPEC §5.6).
 */
export interface LayoutData {
  /** The page title, also its heading. */
  title: string
  /** The page's main content. */
  body: SafeHtml
  /** A stylesheet of the same site to link, if any. */
  stylesheet?: string | null
}

/** A whole HTML document around `body`. */
export function layout ({ title, body, stylesheet }: LayoutData): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${typeof stylesheet === 'string' ? html`<link rel="stylesheet" href="${stylesheet}">` : null}
</head>
<body>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.html
}

/** A link under a form: to the sign-up page from the login page, and back. */
export interface PageLink {
  href: string
  text: string
}

/**
 * What every built-in form page is given: where the form posts, the CSRF token when the
 * `csrf` plugin set one (SPEC §5.5), the message of a refused submission, a notice of what just
 * happened, the stylesheet the plugin serves and the links it was given.
 */
export interface FormPageData {
  title: string
  /** The URL the form posts to. */
  action: string
  /** `request.csrfToken`: rendered as the hidden `csrftoken` field only when it is a string. */
  csrfToken?: string | null
  /** Why the last submission was refused (escaped when shown); null on a fresh page. */
  message?: string | null
  /** What just happened (`You are logged out.`), shown as a status; null when nothing did. */
  notice?: string | null
  /** The stylesheet the plugin serves beside the page (`<prefix>/style.css`); null for none. */
  stylesheet?: string | null
  /** Links shown under the form (the plugin's `links` option). */
  links?: readonly PageLink[]
}

/** The id of the message of a refused submission, which the form's fields name as their description. */
export const MESSAGE_ID = 'form-message'

/**
 * A form page's whole document: its title, the stylesheet, and `body` followed by the links.
 * @example const mine: Template<LoginPageData> = (data) => formPage({ ...data, title: 'Sign in' }, loginForm(data))
 */
export function formPage (data: FormPageData, body: SafeHtml): string {
  const links = data.links ?? []
  const nav = links.length === 0
    ? null
    : html`<nav class="links" aria-label="Related pages"><ul>${links.map((link) => html`<li><a href="${link.href}">${link.text}</a></li>`)}</ul></nav>`
  const whole = html`${body}
${nav}`
  return layout({ title: data.title, body: whole, stylesheet: data.stylesheet })
}

/** One input of a form and its label. */
export interface FieldSpec {
  /** The `id` and `name` of the input. */
  name: string
  label: string
  type?: 'text' | 'password' | 'email'
  autocomplete: string
  required?: boolean
  value?: string
  minlength?: number
  maxlength?: number
  inputmode?: 'numeric'
}

/**
 * A labelled input. While the form shows a refusal, each field names the message as its
 * description (`aria-describedby`), so a screen reader reads it with the field.
 * @example field(data, { name: 'nickname', label: 'Nickname', autocomplete: 'nickname', required: false })
 */
export function field (data: FormPageData, spec: FieldSpec): SafeHtml {
  const optional = (name: string, value: string | number | undefined): SafeHtml | null =>
    value === undefined ? null : html` ${name}="${String(value)}"`
  return html`<p class="field"><label for="${spec.name}">${spec.label}</label>
<input id="${spec.name}" name="${spec.name}"${optional('type', spec.type)} autocomplete="${spec.autocomplete}"${spec.required === false ? null : html` required`}${optional('value', spec.value)}${optional('minlength', spec.minlength)}${optional('maxlength', spec.maxlength)}${optional('inputmode', spec.inputmode)}${typeof data.message === 'string' ? html` aria-describedby="${MESSAGE_ID}"` : null}></p>`
}

/**
 * A page template: data in, a whole HTML document out. Each plugin with a page takes one as
 * its `template` option.
 * @example const myLogin: Template<LoginPageData> = (data) => layout({ title: 'Sign in', body: loginForm(data) })
 */
export type Template<D extends FormPageData = FormPageData> = (data: D) => string

/** The fields every built-in form sends: `format=html` (answers as pages) and the CSRF token. */
export function formFields (data: FormPageData): SafeHtml {
  return html`<input type="hidden" name="format" value="html">
${typeof data.csrfToken === 'string' ? html`<input type="hidden" name="csrftoken" value="${data.csrfToken}">` : null}`
}

/** The notice of what just happened and the message of a refused submission, or nothing. */
export function formMessage (data: FormPageData): SafeHtml {
  const notice = typeof data.notice === 'string' ? html`<p class="notice" role="status">${data.notice}</p>` : null
  const message = typeof data.message === 'string' ? html`<p class="message" id="${MESSAGE_ID}" role="alert">${data.message}</p>` : null
  return html`${notice}${message}`
}
