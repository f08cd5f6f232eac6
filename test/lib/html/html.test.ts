import t from 'tap'
import { escapeHtml, formFields, formMessage, html, layout, loginForm, loginPage, logoutPage, SafeHtml } from '../../../lib/html/index.js'

const LOGIN = { title: 'Log in', action: '/login/', username: '', mfaProviders: [] as string[] }

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
  t.equal(formMessage({ title: 't', action: '/', message: '<oops>' }).html, '<p class="message" role="alert">&lt;oops&gt;</p>')
})

t.test('the login page', async (t) => {
  const page = loginPage({ ...LOGIN, username: '"><script>', message: 'Login failed', csrfToken: 'tok' })
  t.match(page, '<form method="post" action="/login/">')
  t.match(page, 'value="&quot;&gt;&lt;script&gt;"')
  t.match(page, '<p class="message" role="alert">Login failed</p>')
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
