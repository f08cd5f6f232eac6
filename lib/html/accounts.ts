import { html, type SafeHtml } from './escape.js'
import { field, formFields, formMessage, formPage, type FormPageData } from './layout.js'

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
${field(data, { name: 'username', label: 'Username', autocomplete: 'username', value: data.username })}
${field(data, { name: 'email', label: 'Email', type: 'email', autocomplete: 'email', value: data.email })}
${field(data, { name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', minlength: data.minPasswordLength, maxlength: 128 })}
${field(data, { name: 'confirm_password', label: 'Password again', type: 'password', autocomplete: 'new-password' })}
<p><button type="submit">Sign up</button></p>
</form>`
}

/**
 * The default sign-up page.
 * @example app.register(register, { prefix: '/register', template: (data) => registerPage({ ...data, title: 'Join' }) })
 */
export function registerPage (data: RegisterPageData): string {
  return formPage(data, registerForm(data))
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
${field(data, { name: 'current_password', label: 'Current password', type: 'password', autocomplete: 'current-password' })}
${field(data, { name: 'new_password', label: 'New password', type: 'password', autocomplete: 'new-password', minlength: data.minPasswordLength, maxlength: 128 })}
${field(data, { name: 'confirm_new_password', label: 'New password again', type: 'password', autocomplete: 'new-password' })}
<p><button type="submit">Change password</button></p>
</form>`
}

/**
 * The default change-password page.
 * @example me.register(changePassword, { prefix: '/change-password', template: (data) => changePasswordPage({ ...data, title: 'New password' }) })
 */
export function changePasswordPage (data: ChangePasswordPageData): string {
  return formPage(data, changePasswordForm(data))
}
