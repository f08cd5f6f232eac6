import { html, type SafeHtml } from './escape.js'
import { formFields, formMessage, formPage, type FormPageData } from './layout.js'

/**
 * The data of the logout page of `sessionLogout`.
 * @example logoutPage({ title: 'Log out', action: '/logout/', loggedOut: false })
 */
export interface LogoutPageData extends FormPageData {
  /** True after a successful logout without `redirectTo`: the page says so instead of showing the button. */
  loggedOut: boolean
}

/** The logout form (a button) alone, or the logged-out notice. */
export function logoutForm (data: LogoutPageData): SafeHtml {
  if (data.loggedOut) return html`<p class="notice" role="status">Successfully logged out</p>`
  return html`${formMessage(data)}
<form method="post" action="${data.action}">
${formFields(data)}
<p><button type="submit">Log out</button></p>
</form>`
}

/** The default logout page. */
export function logoutPage (data: LogoutPageData): string {
  return formPage(data, logoutForm(data))
}
