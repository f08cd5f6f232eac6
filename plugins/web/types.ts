import type {} from 'fastify'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The CSRF token of this request (SPEC §5.5), set by the `csrf` plugin of its context; the
     * built-in forms carry it as a hidden field. Absent where no `csrf` plugin is registered.
     */
    csrfToken?: string | null
  }

  interface FastifyContextConfig {
    /**
     * Marks a login, register, change-password or MFA route: the `rateLimit` plugin puts its
     * `login` limit on the route's POSTs (SPEC §5.7). Every auth plugin with such a route sets it.
     */
    tablecrudLogin?: boolean
    /**
     * Marks a route that answers with a page: a `sessionAuth` with `loginUrl` sends a request
     * for it without a live session to the login page, whatever its `Accept` header.
     */
    tablecrudPage?: boolean
  }
}
