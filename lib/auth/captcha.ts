import { optionError } from '../errors.js'

/**
 * CAPTCHA checks for `sessionLogin` and `register` (SPEC §5.2). The providers are the one
 * place in lib/ that does network I/O: a POST to the provider's verify URL.
 */

/**
 * What `hcaptcha` and `recaptcha` make: a `captcha` option of `sessionLogin` and `register`.
 * @example const captcha: SiteVerifyCaptcha = hcaptcha({ secret: process.env.HCAPTCHA_SECRET! })
 */
export interface SiteVerifyCaptcha {
  /** The body field the provider's widget fills in. */
  readonly field: string
  /** Asks the provider; false when it refuses, a rejection when it cannot be asked. */
  verify: (token: string, request: { ip?: string }) => Promise<boolean>
}

/**
 * Options of `hcaptcha` and `recaptcha`.
 * @example const options: CaptchaProviderOptions = { secret: process.env.HCAPTCHA_SECRET!, timeout: 3000 }
 */
export interface CaptchaProviderOptions {
  /** The site's secret key at the provider. */
  secret: string
  /** The verify endpoint; default the provider's. Tests point it at a loopback fake. */
  verifyUrl?: string
  /** Milliseconds to wait for the provider before the check fails; default 5000. */
  timeout?: number
}

const HCAPTCHA_URL = 'https://api.hcaptcha.com/siteverify'
const RECAPTCHA_URL = 'https://www.google.com/recaptcha/api/siteverify'

/** A provider that takes `secret` and `response` urlencoded and answers JSON with `success`. */
function siteVerify (name: string, field: string, defaultUrl: string, options: CaptchaProviderOptions): SiteVerifyCaptcha {
  if (typeof options !== 'object' || options === null || typeof options.secret !== 'string' || options.secret === '') {
    throw optionError(name, 'secret', 'is required: a non-empty string')
  }
  const url = options.verifyUrl ?? defaultUrl
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw optionError(name, 'verifyUrl', 'must be an http or https URL')
  const timeout = options.timeout ?? 5000
  if (!Number.isInteger(timeout) || timeout <= 0) throw optionError(name, 'timeout', 'must be a positive integer of milliseconds')
  const { secret } = options
  return Object.freeze({
    field,
    async verify (token: string, request: { ip?: string }) {
      const form = new URLSearchParams({ secret, response: token })
      if (typeof request.ip === 'string') form.set('remoteip', request.ip)
      const response = await fetch(url, { method: 'POST', body: form, signal: AbortSignal.timeout(timeout) })
      if (!response.ok) return false
      const answer = await response.json() as { success?: unknown } | null
      return answer?.success === true
    }
  })
}

/**
 * hCaptcha: the widget posts `h-captcha-response`, checked at hCaptcha's siteverify.
 * @example app.register(register, { prefix: '/register', captcha: hcaptcha({ secret: process.env.HCAPTCHA_SECRET! }) })
 */
export function hcaptcha (options: CaptchaProviderOptions): SiteVerifyCaptcha {
  return siteVerify('hcaptcha', 'h-captcha-response', HCAPTCHA_URL, options)
}

/**
 * reCAPTCHA: the widget posts `g-recaptcha-response`, checked at Google's siteverify.
 * @example app.register(sessionLogin, { prefix: '/login', captcha: recaptcha({ secret: process.env.RECAPTCHA_SECRET! }) })
 */
export function recaptcha (options: CaptchaProviderOptions): SiteVerifyCaptcha {
  return siteVerify('recaptcha', 'g-recaptcha-response', RECAPTCHA_URL, options)
}
