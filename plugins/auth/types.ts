/// <reference types="@fastify/jwt" preserve="true" />
import type { AuthUser } from '../../lib/auth/users.js'

export type { AuthUser }

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Who made the request, set by `tokenAuth`, `jwtAuth` and `sessionAuth` in the contexts they protect;
     * null on an excluded path, or when `allowUnauthenticated` let a request through.
     */
    user: AuthUser | null
    /** Why `jwtAuth` did not authenticate a request it let through (`allowUnauthenticated`); null otherwise. */
    jwtError: string | null
  }
}

// @fastify/jwt declares `request.user` too; its type follows this interface, so both agree.
declare module '@fastify/jwt' {
  interface FastifyJWT {
    user: AuthUser | null
  }
}
