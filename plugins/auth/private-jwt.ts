import type { FastifyInstance } from 'fastify'
import type { JWT } from '@fastify/jwt'

let namespaces = 0

/**
 * An @fastify/jwt instance of our own, pinned to HS256, requiring `exp`, with no clock
 * tolerance. It lives in a private child context under its own namespace, so any number of
 * jwtLogin and jwtAuth registrations (nested or side by side) and an integrator's own
 * @fastify/jwt never meet: no decorator of the integrator's contexts is taken.
 */
export async function privateJwt (fastify: FastifyInstance, secret: string | Buffer, expiresIn?: number): Promise<JWT> {
  const namespace = `tablecrud${++namespaces}`
  let jwt: JWT | undefined
  await fastify.register(async (child) => {
    // Loaded by the first JWT plugin registered: it and fast-jwt are a good part of the
    // library's import time, which applications without JWT need not pay (issue 17).
    const { default: fastifyJwt } = await import('@fastify/jwt')
    await child.register(fastifyJwt, {
      secret,
      namespace,
      decoratorName: `${namespace}Payload`,
      sign: { algorithm: 'HS256', ...(expiresIn === undefined ? {} : { expiresIn }) },
      verify: { algorithms: ['HS256'], requiredClaims: ['exp'], clockTolerance: 0 }
    })
    jwt = (child.jwt as unknown as Record<string, JWT>)[namespace]
  })
  return jwt!
}
