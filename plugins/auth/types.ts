import type { AuthUser } from '../../lib/auth/users.js'

export type { AuthUser }

/*
 * `request.user` is not declared here: @fastify/jwt declares it, typed by the application's
 * `FastifyJWT` interface, and an application may have its own user type there. TableCRUD's
 * `AuthUser | null` is opted into with `import type {} from 'fastify-tablecrud/user'` (user.ts).
 */
declare module 'fastify' {
  interface FastifyRequest {
    /** Why `jwtAuth` did not authenticate a request it let through (`allowUnauthenticated`); null otherwise. */
    jwtError: string | null
  }
}
