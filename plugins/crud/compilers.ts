import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import formats from 'ajv-formats'
import fastJson from 'fast-json-stringify'

/**
 * Bodies are checked by this Ajv: no coercion, no stripping, every error (DESIGN §6). One for
 * every table of the process: each Ajv compiles its meta-schema first, some 5 ms and 0.5 MB
 * that twenty tables paid twenty times. Ajv keys what it compiled by the schema object.
 * `ownProperties`: a body's own members only, so a column named `constructor` or `toString`
 * is not found in a body that leaves it out (by default Ajv reads `body.constructor`). It costs
 * 20 to 60 ns a body object here, some 0.5% of an upsert of 100 rows.
 */
export const bodyAjv = new Ajv({ coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: false, strict: false, ownProperties: true })
formats.default(bodyAjv)

type Serialiser = (data: unknown) => string
const serialisers = new WeakMap<object, Serialiser>()

/**
 * Fastify's serialiser compiler, with two changes that matter when many tables are mounted.
 * The function is kept by schema object: Fastify compiles one per route and status, and a
 * table's routes (each twice, with and without the trailing slash) share the error schemas and
 * their row schema, so twenty tables compiled the same few schemas some 1,800 times. And it is
 * compiled on the first response that needs it, not at start-up: most of a table's routes
 * and statuses are never answered by a given process. TableCRUD's schemas hold no `$ref` to
 * shared schemas, so none of Fastify's external schemas are needed.
 */
export function serialiserCompiler ({ schema }: { schema: object }): Serialiser {
  let serialise: Serialiser | undefined
  return (data) => (serialise ??= shared(schema))(data)
}

function shared (schema: object): Serialiser {
  let serialise = serialisers.get(schema)
  if (serialise === undefined) {
    serialise = fastJson(schema)
    serialisers.set(schema, serialise)
  }
  return serialise
}

interface BodyValidator {
  (data: unknown): boolean
  errors?: ErrorObject[] | null
}

/**
 * A body validator compiled by `ajv` on the first body it checks, for the reason serialisers
 * are (above). Fastify reads `errors` off the function after a `false`.
 */
export function lazyValidator (ajv: Ajv, schema: object): BodyValidator {
  let validate: ValidateFunction | undefined
  const validator: BodyValidator = (data) => {
    validate ??= ajv.compile(schema)
    const valid = validate(data) as boolean
    validator.errors = validate.errors
    return valid
  }
  return validator
}
