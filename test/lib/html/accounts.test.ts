import t from 'tap'
import { changePasswordPage, mfaSetupPage, registerPage, type MfaSetupPageData } from '../../../lib/html/index.js'

const base = { title: 'T<i>', action: '/a"b/', csrfToken: null, message: null }

t.test('the sign-up page escapes what it shows again', async (t) => {
  const page = registerPage({ ...base, username: '<script>', email: 'a"b@c.d', minPasswordLength: 8, message: '<b>no</b>', csrfToken: 'x&y' })
  t.match(page, /<title>T&lt;i&gt;<\/title>/)
  t.match(page, /action="\/a&quot;b\/"/)
  t.match(page, /value="&lt;script&gt;"/)
  t.match(page, /value="a&quot;b@c.d"/)
  t.match(page, /minlength="8"/)
  t.match(page, /role="alert">&lt;b&gt;no&lt;\/b&gt;</)
  t.match(page, /name="csrftoken" value="x&amp;y"/)
  t.notMatch(page, /<script>|style=|<style/)
})

t.test('the change-password page', async (t) => {
  const page = changePasswordPage({ ...base, minPasswordLength: 6 })
  for (const name of ['current_password', 'new_password', 'confirm_new_password']) t.match(page, new RegExp(`name="${name}" type="password"`))
  t.notMatch(page, /csrftoken|role="alert"/)
})

t.test('the MFA page as the status calls for', async (t) => {
  const data: MfaSetupPageData = { ...base, status: 'none', qrcodeUrl: '/mfa/qrcode.png', secret: null, recoveryCodes: null, notice: null }
  const none = mfaSetupPage(data)
  t.match(none, /value="register"/)
  t.notMatch(none, /value="confirm"|value="revoke"|<img/)
  const pending = mfaSetupPage({ ...data, status: 'pending', secret: 'ABC<', recoveryCodes: ['aaaaaa-bbbbbb'] })
  t.match(pending, /<img id="qrcode" src="\/mfa\/qrcode.png"/)
  t.match(pending, /<code id="secret">ABC&lt;<\/code>/)
  t.match(pending, /<li><code>aaaaaa-bbbbbb<\/code><\/li>/)
  t.match(pending, /value="confirm"/)
  const undecryptable = mfaSetupPage({ ...data, status: 'pending' })
  t.notMatch(undecryptable, /id="secret"|recovery-codes/, 'no key or codes to show: only the QR code and the forms')
  const enrolled = mfaSetupPage({ ...data, status: 'enrolled', notice: 'MFA <enabled>' })
  t.match(enrolled, /role="status">MFA &lt;enabled&gt;</)
  t.match(enrolled, /value="revoke"/)
  t.notMatch(enrolled, /<img/)
})
