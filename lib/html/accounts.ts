import { html, type SafeHtml } from './escape.js'
import { formFields, formMessage, layout, type FormPageData } from './layout.js'

/**
 * The data of the sign-up page of `register`.
 * @example registerPage({ title: 'Sign up', action: '/register/', username: '', email: '', minPasswordLength: 6 })
 */
export interface RegisterPageData extends FormPageData {
  /** The username and email of a refused submission, shown again; `''` on a fresh page. */
  username: string
  email: string
  minPasswordLength: number
  /** The body field a CAPTCHA widget fills in, when `captcha` is configured (the widget is the template's to add). */
  captchaField?: string | null
}

/**
 * The sign-up form alone, for a template that wraps it in its own layout.
 * @example const mine: Template<RegisterPageData> = (data) => layout({ title: 'Join us', body: registerForm(data), stylesheet: '/site.css' })
 */
export function registerForm (data: RegisterPageData): SafeHtml {
  return html`${formMessage(data)}
<form method="post" action="${data.action}">
${formFields(data)}
<p><label for="username">Username</label><br><input id="username" name="username" autocomplete="username" required value="${data.username}"></p>
<p><label for="email">Email</label><br><input id="email" name="email" type="email" autocomplete="email" required value="${data.email}"></p>
<p><label for="password">Password</label><br><input id="password" name="password" type="password" autocomplete="new-password" required minlength="${data.minPasswordLength}" maxlength="128"></p>
<p><label for="confirm_password">Password again</label><br><input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" required></p>
<p><button type="submit">Sign up</button></p>
</form>`
}

/**
 * The default sign-up page.
 * @example app.register(register, { prefix: '/register', template: (data) => registerPage({ ...data, title: 'Join' }) })
 */
export function registerPage (data: RegisterPageData): string {
  return layout({ title: data.title, body: registerForm(data) })
}

/**
 * The data of the page of `changePassword`.
 * @example changePasswordPage({ title: 'Change password', action: '/change-password/', minPasswordLength: 6 })
 */
export interface ChangePasswordPageData extends FormPageData {
  minPasswordLength: number
}

/**
 * The change-password form alone.
 * @example const mine: Template<ChangePasswordPageData> = (data) => layout({ title: 'Password', body: changePasswordForm(data) })
 */
export function changePasswordForm (data: ChangePasswordPageData): SafeHtml {
  return html`${formMessage(data)}
<form method="post" action="${data.action}">
${formFields(data)}
<p><label for="current_password">Current password</label><br><input id="current_password" name="current_password" type="password" autocomplete="current-password" required></p>
<p><label for="new_password">New password</label><br><input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="${data.minPasswordLength}" maxlength="128"></p>
<p><label for="confirm_new_password">New password again</label><br><input id="confirm_new_password" name="confirm_new_password" type="password" autocomplete="new-password" required></p>
<p><button type="submit">Change password</button></p>
</form>`
}

/**
 * The default change-password page.
 * @example me.register(changePassword, { prefix: '/change-password', template: (data) => changePasswordPage({ ...data, title: 'New password' }) })
 */
export function changePasswordPage (data: ChangePasswordPageData): string {
  return layout({ title: data.title, body: changePasswordForm(data) })
}
