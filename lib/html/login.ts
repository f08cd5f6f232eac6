import { html, type SafeHtml } from './escape.js'
import { formFields, formMessage, layout, type FormPageData } from './layout.js'

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
}

/** The login form alone, for a template that wraps it in its own layout. */
export function loginForm (data: LoginPageData): SafeHtml {
  const providers = data.mfaProviders
  return html`${formMessage(data)}
<form method="post" action="${data.action}">
${formFields(data)}
<p><label for="username">Username</label><br><input id="username" name="username" autocomplete="username" required value="${data.username}"></p>
<p><label for="password">Password</label><br><input id="password" name="password" type="password" autocomplete="current-password" required></p>
${providers.length > 1
    ? html`<p><label for="mfa_provider">Second factor</label><br><select id="mfa_provider" name="mfa_provider">${providers.map((name) => html`<option value="${name}">${name}</option>`)}</select></p>`
    : null}
${providers.length > 0
    ? html`<p><label for="mfa_code">Authentication code (if you set one up)</label><br><input id="mfa_code" name="mfa_code" autocomplete="one-time-code" inputmode="numeric"></p>`
    : null}
<p><button type="submit">Log in</button></p>
</form>`
}

/** The default login page. */
export function loginPage (data: LoginPageData): string {
  return layout({ title: data.title, body: loginForm(data) })
}
