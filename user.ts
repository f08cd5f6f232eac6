/// <reference types="@fastify/jwt" preserve="true" />
import type { AuthUser } from './lib/auth/users.js'

/*
 * `import type {} from 'fastify-tablecrud/user'` types `request.user` as TableCRUD's auth
 * plugins set it: the user, or null on an excluded path or when `allowUnauthenticated` let a
 * request through. @fastify/jwt declares `request.user` with the type its `FastifyJWT` interface
 * names, so that is where this goes; an application with a user type of its own declares that
 * instead and does not import this (docs/auth.md).
 */
declare module '@fastify/jwt' {
  interface FastifyJWT {
    user: AuthUser | null
  }
}

export type { AuthUser }
