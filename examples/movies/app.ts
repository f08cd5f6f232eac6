import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import fastifyStatic from '@fastify/static'
import type { Redis } from 'ioredis'
import {
  createTables, createToken, createUser, csp, csrf, errorShape, frameworkErrors, jwtAuth, jwtLogin, localMediaStorage, rateLimit,
  tableCrud, tokenAuth, tokenLogin, tokenTable, userTable, sessionAuth, sessionLogin, sessionLogout, sessionTable, html, layout,
  HttpError, type Validator, register, changePassword, mfaSetup, mfaSecretTable, authenticatorProvider, health, tablecrudDatabase
} from '../../index.js'
import { openApi } from '../../plugins/openapi.js'
import type {} from '../../user.js' // request.user: AuthUser | null (docs/auth.md)
import type { AuthUser } from '../../lib/auth/users.js'
import { director, movie, role, studio, tables } from './tables.js'
import { seed } from './seed.js'

export interface DemoOptions {
  connectionString: string
  /** Pool size: 1 on the embedded server. */
  max: number
  /**
   * How long an idle connection stays open (pg's default, 10 s, when absent). The embedded server
   * serves one connection at a time: a program beside the demo (the CLI, a test) waits for it.
   */
  idleTimeoutMillis?: number
  /** Signs the demo's JWTs; a fixed development secret by default. */
  secret?: string
  /**
   * The AES-256 key of the MFA secrets (64 hex characters); a fixed development key by default.
   * In production it comes from the environment or a secret manager, never from the code.
   */
  mfaKey?: string
  logger?: boolean
  /** Where uploaded posters go; served at `/media/`. Default: a folder in the system's temporary directory. */
  mediaPath?: string
  /** Rate-limit counters shared by every instance on this Redis; in the process without it. */
  redis?: Redis
  /**
   * `'unnamed'` behind a transaction-mode pooler (PgBouncer, Supabase's or Neon's pooled URL),
   * where a named prepared statement is not found on the next transaction's server connection
   * (docs/deployment.md). Named by default.
   */
  preparedStatements?: 'named' | 'unnamed'
}

/** The development MFA key: anyone who reads this file can decrypt the demo's MFA secrets. */
const DEMO_MFA_KEY = '6d66612d64656d6f2d6b65792d6368616e67652d6d652d696e2d70726f642121'

/** Where the demo keeps posters when not told: outside the repository, like any upload folder should be. */
export const DEFAULT_MEDIA_PATH = join(tmpdir(), 'fastify-tablecrud-demo-media')

/**
 * Uploaded files are served from the API's own origin: an SVG or HTML file must not run script
 * there, so each is sandboxed and its type is not sniffed (docs/media.md, "Serving files").
 */
const MEDIA_HEADERS = Object.freeze({
  'content-security-policy': "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
  'x-content-type-options': 'nosniff'
})

export const DEMO_USER = Object.freeze({ username: 'demo', password: 'demo-password' })

/** The library's stylesheet, as the login plugin serves it beside its page: the demo's own pages use it too. */
const STYLESHEET = '/login/style.css'
const HOME = { href: '/', text: 'Home' }
const LOG_IN = { href: '/login/', text: 'Already have an account? Log in' }
const SIGN_UP = { href: '/register/', text: 'No account? Sign up' }
const ACCOUNT = { href: '/me/', text: 'Your account' }

/** The demo's home page: what it is, where things are, and who is logged in. */
function homePage (user: AuthUser | null): string {
  const who = user === null
    ? html`<p id="who">You are not logged in. <a href="/login/">Log in</a> (as ${DEMO_USER.username}, password ${DEMO_USER.password}) or <a href="/register/">sign up</a>.</p>`
    : html`<p id="who">Logged in as <strong>${user.username}</strong>: <a href="/me/">your account</a> · <a href="/logout/">log out</a>.</p>`
  const body = html`<p>A REST API over PostgreSQL tables of movies, directors, studios and roles, made with fastify-tablecrud.</p>
${who}
<h2>Explore</h2>
<ul>
<li><a href="/docs/">API docs</a>: every route, with "Try it out"</li>
<li><a href="/api/movies/?__readable=true&amp;__order=-rating">The movies</a> (JSON), and <a href="/api/directors/">directors</a>, <a href="/api/studios/">studios</a>, <a href="/api/roles/">roles</a></li>
<li><a href="/docs/json">The OpenAPI document</a></li>
</ul>`
  return layout({ title: 'fastify-tablecrud movies demo', body, stylesheet: STYLESHEET })
}

const mounts = [['movies', movie], ['directors', director], ['studios', studio], ['roles', role]] as const

/** Only superusers may delete: `request.user` comes from the auth plugins. */
const superusersOnly: Validator = (_crud, request) => {
  if (request.user?.superuser !== true) throw new HttpError(403, 'Only superusers may delete rows.')
}

/** The browser side, in a context of its own under CSRF protection. */
async function browserSide (site: FastifyInstance, totp: ReturnType<typeof authenticatorProvider>): Promise<void> {
  await site.register(csrf)
  await site.register(sessionLogin, { prefix: '/login', redirectTo: '/me/', mfaProviders: [totp], links: [SIGN_UP, HOME] })
  await site.register(sessionLogout, { prefix: '/logout', redirectTo: '/login/', links: [HOME] })
  await site.register(register, { prefix: '/register', redirectTo: '/login/', userDefaults: { active: true }, links: [LOG_IN, HOME] })
  await site.register(async (account) => {
    await account.register(sessionAuth, { loginUrl: '/login/' })
    await account.register(changePassword, { prefix: '/change-password', loginUrl: '/login/', links: [ACCOUNT] })
    await account.register(mfaSetup, { prefix: '/mfa', provider: totp, links: [ACCOUNT] })
  })
  await site.register(async (home) => {
    await home.register(sessionAuth, { allowUnauthenticated: true })
    home.get('/', { schema: { hide: true }, config: { tablecrudPage: true } }, async (request, reply) =>
      await reply.type('text/html; charset=utf-8').send(homePage(request.user)))
  })
  await site.register(async (me) => {
    await me.register(sessionAuth, { increaseExpiry: '30m', loginUrl: '/login/' })
    me.get('/', { config: { tablecrudPage: true }, schema: { operationId: 'me', summary: 'Who is logged in (a page)', tags: ['sessions'], response: { 200: { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } } } } }, async (request, reply) => {
      const user = request.user!
      const body = html`<p>Logged in as <strong id="username">${user.username}</strong>.</p>
<nav class="links" aria-label="Your account"><ul><li><a href="/change-password/">Change password</a></li><li><a href="/mfa/">Two-factor authentication</a></li><li><a href="/logout/">Log out</a></li><li><a href="/">Home</a></li></ul></nav>`
      return await reply.type('text/html; charset=utf-8').send(layout({ title: 'Who am I', body, stylesheet: STYLESHEET }))
    })
  }, { prefix: '/me' })
}

/** The OpenAPI document's `info`. */
const DEMO_INFO = {
  title: 'fastify-tablecrud movies demo',
  version: '1.0.0',
  description: 'Directors, studios, movies and roles.',
  contact: { name: 'The fastify-tablecrud maintainers' },
  license: { name: 'MIT', identifier: 'MIT' }
}

/**
 * The movies demo: public read-only tables under `/api`, the same tables writable under
 * `/api/admin` (JWT) and `/api/token` (token auth), both logins, the docs at `/docs`, and the
 * browser side under CSRF protection: a login page at `/login/`, logout at `/logout/`, and
 * `/me/` behind session auth; sign-up at `/register/` (new users are active), and behind session
 * auth the password change at `/change-password/` and MFA set-up (an authenticator app) at
 * `/mfa/`, which the session and JWT logins then ask for. Every response is under the CSP and
 * the rate limits.
 */
export async function buildDemo (options: DemoOptions): Promise<FastifyInstance> {
  const secret = options.secret ?? 'demo-secret-change-me-in-production-0123456789'
  // A request that arrives on a kept-alive connection during the close is served, with
  // `Connection: close`, rather than answered with Fastify's own 503 (docs/deployment.md).
  const app = Fastify({ logger: options.logger ?? false, frameworkErrors, return503OnClosing: false })
  // First, so every error of the application, Fastify's and Node's own included, is in the SPEC §1 shape.
  await app.register(errorShape)
  await app.register(fastifyPostgres, { connectionString: options.connectionString, max: options.max, idleTimeoutMillis: options.idleTimeoutMillis, connectionTimeoutMillis: 5000 })
  if (options.preparedStatements !== undefined) await app.register(tablecrudDatabase, { preparedStatements: options.preparedStatements })
  // Before the CSP and the rate limits, so a load balancer's probes are neither (SPEC §9.3).
  await app.register(health)
  // Every page and route, the docs included, under `default-src 'self'` and the rate limits
  // (SPEC §5.6, §5.7); the login routes get the login limit.
  await app.register(csp)
  await app.register(rateLimit, options.redis === undefined ? {} : { redis: options.redis, nameSpace: 'movies-demo-rl-' })
  await app.register(openApi, { routePrefix: '/docs', info: DEMO_INFO })
  await app.after()
  await createTables(app.pg, [...tables, userTable, tokenTable, sessionTable, mfaSecretTable])
  const totp = authenticatorProvider({ encryptionKey: options.mfaKey ?? DEMO_MFA_KEY, issuer: 'tablecrud demo' })
  await seed(app.pg)
  const users = await app.pg.query('SELECT 1 FROM auth_user WHERE username = $1', [DEMO_USER.username])
  if (users.rowCount === 0) {
    const user = await createUser(app.pg, { ...DEMO_USER, superuser: true, admin: true })
    await createToken(app.pg, user.id)
  }

  // Posters: uploaded through POST <mount>/movies/media/, served here, the key kept in movie.poster.
  const mediaPath = options.mediaPath ?? DEFAULT_MEDIA_PATH
  await mkdir(mediaPath, { recursive: true })
  const posters = localMediaStorage({
    column: movie.columnMap.get('poster')!,
    mediaPath,
    rootUrl: '/media',
    allowedExtensions: ['png', 'jpg', 'jpeg', 'gif', 'webp']
  })
  await app.register(fastifyStatic, {
    root: mediaPath,
    prefix: '/media/',
    index: false,
    setHeaders: (reply) => { reply.headers(MEDIA_HEADERS) }
  })
  const media = (table: unknown): { mediaStorage?: typeof posters[] } => table === movie ? { mediaStorage: [posters] } : {}

  await app.register(jwtLogin, { prefix: '/login/jwt', secret, expiry: '1h', mfaProviders: [totp] })
  await app.register(tokenLogin, { prefix: '/login/token' })
  // The browser side, under CSRF protection: the login page at /login/ (/login/jwt and
  // /login/token are other routes, for API clients), logout at /logout/, sign-up at /register/,
  // and behind the session cookie the /me/ page, the password change and MFA set-up.
  await app.register(async (site) => { await browserSide(site, totp) })
  await app.register(async (api) => {
    for (const [name, table] of mounts) {
      await api.register(tableCrud, { table, prefix: `/${name}`, maxJoins: 2, ...media(table) })
    }
  }, { prefix: '/api' })
  await app.register(async (admin) => {
    await admin.register(jwtAuth, { secret })
    for (const [name, table] of mounts) {
      await admin.register(tableCrud, { table, prefix: `/${name}`, operationIdPrefix: `admin.${table.name}`, readOnly: false, allowBulkDelete: true, maxJoins: 2, validators: { deleteSingle: [superusersOnly], deleteAll: [superusersOnly] }, ...media(table) })
    }
  }, { prefix: '/api/admin' })
  await app.register(async (tokenApi) => {
    await tokenApi.register(tokenAuth, {})
    for (const [name, table] of mounts) {
      await tokenApi.register(tableCrud, { table, prefix: `/${name}`, operationIdPrefix: `token.${table.name}`, readOnly: false, maxJoins: 2, ...media(table) })
    }
  }, { prefix: '/api/token' })
  return app
}
