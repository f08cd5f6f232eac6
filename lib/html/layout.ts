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

/**
 * What every built-in form page is given: where the form posts, the CSRF token when the
 * `csrf` plugin set one (SPEC §5.5), and the message of a refused submission.
 */
export interface FormPageData {
  title: string
  /** The URL the form posts to. */
  action: string
  /** `request.csrfToken`: rendered as the hidden `csrftoken` field only when it is a string. */
  csrfToken?: string | null
  /** Why the last submission was refused (escaped when shown); null on a fresh page. */
  message?: string | null
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

/** The message of a refused submission, or nothing. */
export function formMessage (data: FormPageData): SafeHtml {
  return typeof data.message === 'string' ? html`<p class="message" role="alert">${data.message}</p>` : html``
}
