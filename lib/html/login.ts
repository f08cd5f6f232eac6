import { html, type SafeHtml } from './escape.js'
import { field, formFields, formMessage, formPage, type FormPageData } from './layout.js'

/**
 * The data of the login page of `sessionLogin`.
 * @example loginPage({ title: 'Log in', action: '/login/', username: '', mfaProviders: [], csrfToken: null, message: null })
 */
export interface LoginPageData extends FormPageData {
  /** The username of the refused submission, shown again; `''` on a fresh page. */
  username: string
  /** Names of the MFA providers: with any, the form has a code field; with several, a choice of provider. */
  mfaProviders: readonly string[]
  /** The body field a CAPTCHA widget fills in, when `captcha` is configured (the widget is the template's to add). */
  captchaField?: string | null
  /** The path of this site to go to after logging in (`?next=`, checked), sent as a hidden field; null for `redirectTo`. */
  next?: string | null
}

/** The login form alone, for a template that wraps it in its own layout. */
export function loginForm (data: LoginPageData): SafeHtml {
  const providers = data.mfaProviders
  return html`${formMessage(data)}
<form method="post" action="${data.action}">
${formFields(data)}
${typeof data.next === 'string' ? html`<input type="hidden" name="next" value="${data.next}">` : null}
${field(data, { name: 'username', label: 'Username', autocomplete: 'username', value: data.username })}
${field(data, { name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' })}
${providers.length > 1
    ? html`<p class="field"><label for="mfa_provider">Second factor</label>
<select id="mfa_provider" name="mfa_provider">${providers.map((name) => html`<option value="${name}">${name}</option>`)}</select></p>`
    : null}
${providers.length > 0
    ? field(data, { name: 'mfa_code', label: 'Authentication code (if you set one up)', autocomplete: 'one-time-code', inputmode: 'numeric', required: false })
    : null}
<p><button type="submit">Log in</button></p>
</form>`
}

/** The default login page. */
export function loginPage (data: LoginPageData): string {
  return formPage(data, loginForm(data))
}
