import t from 'tap'
import { type LoginPageData, escapeHtml, field, formFields, formMessage, formPage, html, layout, loginForm, loginPage, logoutPage, PAGE_STYLE, SafeHtml } from '../../../lib/html/index.js'

const LOGIN: LoginPageData = { title: 'Log in', action: '/login/', username: '', mfaProviders: [] }

t.test('escapeHtml escapes the five characters that matter', async (t) => {
  t.equal(escapeHtml('<a href="x" title=\'y\'>&amp;</a>'), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;')
  t.equal(escapeHtml('plain text é'), 'plain text é')
})

t.test('html escapes values, keeps SafeHtml and arrays of it, drops null, undefined and false', async (t) => {
  const inner = html`<b>${'<i>'}</b>`
  t.ok(inner instanceof SafeHtml)
  t.equal(inner.html, '<b>&lt;i&gt;</b>')
  t.equal(String(inner), '<b>&lt;i&gt;</b>')
  t.equal(html`<p>${inner}${[html`<br>`, '<x>']}${null}${undefined}${false}${0}${'"'}</p>`.html, '<p><b>&lt;i&gt;</b><br>&lt;x&gt;0&quot;</p>')
  t.equal(html``.html, '')
})

t.test('layout: a whole document, no script, no inline style, nothing from elsewhere', async (t) => {
  const page = layout({ title: 'A <title>', body: html`<p>x</p>` })
  t.match(page, /^<!doctype html>\n<html lang="en">/)
  t.match(page, '<title>A &lt;title&gt;</title>')
  t.match(page, '<h1>A &lt;title&gt;</h1>')
  t.notMatch(page, /<script|<style|style=|<link|https?:/)
  t.match(layout({ title: 't', body: html``, stylesheet: '/login/style.css' }), '<link rel="stylesheet" href="/login/style.css">')
})

t.test('form fields: format=html always, the CSRF field only for a string token', async (t) => {
  t.equal(formFields({ title: 't', action: '/' }).html, '<input type="hidden" name="format" value="html">\n')
  t.equal(formFields({ title: 't', action: '/', csrfToken: null }).html, '<input type="hidden" name="format" value="html">\n')
  t.match(formFields({ title: 't', action: '/', csrfToken: 'a"b' }).html, '<input type="hidden" name="csrftoken" value="a&quot;b">')
  t.equal(formMessage({ title: 't', action: '/' }).html, '')
  t.equal(formMessage({ title: 't', action: '/', message: '<oops>' }).html, '<p class="message" id="form-message" role="alert">&lt;oops&gt;</p>')
})

t.test('the login page', async (t) => {
  const page = loginPage({ ...LOGIN, username: '"><script>', message: 'Login failed', csrfToken: 'tok' })
  t.match(page, '<form method="post" action="/login/">')
  t.match(page, 'value="&quot;&gt;&lt;script&gt;"')
  t.match(page, '<p class="message" id="form-message" role="alert">Login failed</p>')
  t.match(page, 'name="csrftoken" value="tok"')
  t.notMatch(page, 'mfa_')
  t.match(loginForm({ ...LOGIN, mfaProviders: ['totp'] }).html, 'name="mfa_code"')
  t.notMatch(loginForm({ ...LOGIN, mfaProviders: ['totp'] }).html, 'mfa_provider')
  t.match(loginForm({ ...LOGIN, mfaProviders: ['a<', 'b'] }).html, '<select id="mfa_provider" name="mfa_provider"><option value="a&lt;">a&lt;</option><option value="b">b</option></select>')
})

t.test('the logout page: a button, or the notice after a logout', async (t) => {
  t.match(logoutPage({ title: 'Log out', action: '/logout/', loggedOut: false }), '<button type="submit">Log out</button>')
  const done = logoutPage({ title: 'Log out', action: '/logout/', loggedOut: true })
  t.match(done, 'Successfully logged out')
  t.notMatch(done, '<form')
})

t.test('notices and messages: a status and an alert, the alert named by the fields it is about', async (t) => {
  t.equal(formMessage({ title: 't', action: '/', notice: 'You are <out>.' }).html, '<p class="notice" role="status">You are &lt;out&gt;.</p>')
  const both = loginPage({ ...LOGIN, notice: 'You are logged out.', message: 'Login failed' })
  t.match(both, /<p class="notice" role="status">You are logged out.<\/p><p class="message" id="form-message" role="alert">Login failed<\/p>/)
  t.match(both, '<input id="username" name="username" autocomplete="username" required value="" aria-describedby="form-message">')
  t.match(both, '<input id="password" name="password" type="password" autocomplete="current-password" required aria-describedby="form-message">')
  t.notMatch(loginPage(LOGIN), /aria-describedby|role=/, 'a fresh page: no message, no description')
})

t.test('field: a label tied to its input, optional attributes only when given', async (t) => {
  t.equal(field({ title: 't', action: '/' }, { name: 'code', label: 'Code <6>', autocomplete: 'one-time-code', inputmode: 'numeric', required: false }).html,
    '<p class="field"><label for="code">Code &lt;6&gt;</label>\n<input id="code" name="code" autocomplete="one-time-code" inputmode="numeric"></p>')
  t.match(field({ title: 't', action: '/' }, { name: 'p', label: 'P', type: 'password', autocomplete: 'new-password', minlength: 8, maxlength: 128 }).html,
    '<input id="p" name="p" type="password" autocomplete="new-password" required minlength="8" maxlength="128">')
})

t.test('formPage: the stylesheet it is given, and the links under the form', async (t) => {
  const page = formPage({ title: 'T', action: '/', stylesheet: '/login/style.css', links: [{ href: '/register/?a=1&b=2', text: 'Sign <up>' }] }, html`<p>x</p>`)
  t.match(page, '<link rel="stylesheet" href="/login/style.css">')
  t.match(page, '<nav class="links" aria-label="Related pages"><ul><li><a href="/register/?a=1&amp;b=2">Sign &lt;up&gt;</a></li></ul></nav>')
  t.notMatch(formPage({ title: 'T', action: '/' }, html``), /<nav|<link/, 'no links, no stylesheet: neither')
  t.match(loginPage({ ...LOGIN, next: '/me/?a="b"' }), '<input type="hidden" name="next" value="/me/?a=&quot;b&quot;">', 'next carried, escaped')
  t.notMatch(loginPage({ ...LOGIN, next: null }), 'name="next"')
})

t.test('the stylesheet: small, and nothing in it that loads from elsewhere', async (t) => {
  t.ok(Buffer.byteLength(PAGE_STYLE) < 4096, `${Buffer.byteLength(PAGE_STYLE)} bytes`)
  t.notMatch(PAGE_STYLE, /url\(|@import|https?:/)
  t.match(PAGE_STYLE, /@media \(max-width: 30rem\)/, 'a phone layout')
  t.match(PAGE_STYLE, /:focus-visible \{ outline: 3px solid/, 'a visible focus ring')
})
