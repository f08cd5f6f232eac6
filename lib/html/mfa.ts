import { html, type SafeHtml } from './escape.js'
import { field, formFields, formMessage, formPage, type FormPageData } from './layout.js'

/**
 * The data of the page of `mfaSetup`.
 * @example mfaSetupPage({ title: 'Two-factor authentication', action: '/mfa/', status: 'none', qrcodeUrl: '/mfa/qrcode.png', secret: null, recoveryCodes: null, notice: null })
 */
export interface MfaSetupPageData extends FormPageData {
  /** Where the user stands: no enrollment, one waiting for its first code, or one in use. */
  status: 'none' | 'pending' | 'enrolled'
  /**
   * A same-site URL of the pending secret's QR code PNG. The page links it rather than
   * embedding a `data:` URL, which `Content-Security-Policy: default-src 'self'` would block.
   */
  qrcodeUrl: string
  /** The pending secret (base32), for apps that cannot scan; null when none is pending. */
  secret: string | null
  /** The recovery codes, on the answer to `register` only (they are stored hashed). */
  recoveryCodes: readonly string[] | null
  /** What just happened (`MFA enabled`, `MFA disabled`); null otherwise. */
  notice: string | null
}

const passwordField = (data: MfaSetupPageData): SafeHtml => field(data, { name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' })

function actionForm (data: MfaSetupPageData, action: string, fields: SafeHtml | null, button: string): SafeHtml {
  return html`<form method="post" action="${data.action}">
${formFields(data)}
<input type="hidden" name="action" value="${action}">
${fields}
<p><button type="submit">${button}</button></p>
</form>`
}

function pending (data: MfaSetupPageData): SafeHtml {
  return html`<p>Scan this code with your authenticator app, then enter the code it shows.</p>
<p><img id="qrcode" src="${data.qrcodeUrl}" alt="QR code of the authenticator secret" width="200" height="200"></p>
${data.secret === null ? null : html`<p>Or enter this key by hand: <code id="secret">${data.secret}</code></p>`}
${data.recoveryCodes === null
    ? null
    : html`<p>Recovery codes: keep them somewhere safe. Each logs you in once if you lose the app.</p>
<ul id="recovery-codes">${data.recoveryCodes.map((code) => html`<li><code>${code}</code></li>`)}</ul>`}
${actionForm(data, 'confirm', field(data, { name: 'code', label: 'Code from the app', autocomplete: 'one-time-code', inputmode: 'numeric' }), 'Turn on')}
<p>Lost it? Start again:</p>
${actionForm(data, 'register', passwordField(data), 'New secret')}`
}

/**
 * The set-up, confirm or revoke forms alone, as the user's status calls for.
 * @example const mine: Template<MfaSetupPageData> = (data) => layout({ title: '2FA', body: mfaSetupForm(data) })
 */
export function mfaSetupForm (data: MfaSetupPageData): SafeHtml {
  const content = data.status === 'enrolled'
    ? html`<p>Two-factor authentication is on.</p>
${actionForm(data, 'revoke', passwordField(data), 'Turn off')}`
    : data.status === 'pending'
      ? pending(data)
      : html`<p>Two-factor authentication is off. Set it up with an authenticator app.</p>
${actionForm(data, 'register', passwordField(data), 'Set up')}`
  return html`${formMessage(data)}
${content}`
}

/**
 * The default MFA set-up page.
 * @example me.register(mfaSetup, { prefix: '/mfa', provider: totp, template: (data) => mfaSetupPage({ ...data, title: 'Security' }) })
 */
export function mfaSetupPage (data: MfaSetupPageData): string {
  return formPage(data, mfaSetupForm(data))
}
