import type { Scopes } from '../query/scope.js'

/** Writes `$<n>` for a scope's value (lib/sql/scope.ts), with how to fetch it from a request's scopes. */
export type ScopeBinder = (fetch: (scopes: Scopes) => unknown) => string

/**
 * A statement's bind parameters, each written in one step: `add` writes the next placeholder
 * and records how that parameter's value is fetched, as kysely's `appendValue` pushes a value
 * as it writes its `$<n>`. Nothing walks a query a second time to gather values in step with
 * the text. Texts are cached per query shape (DESIGN §4): a cached `Params` fetches the values
 * of each later query of the same shape from that query and its request's row scopes
 * (`values(input, scopes)`).
 */
export class Params<I> {
  private readonly fetches: Array<(input: I, scopes: Scopes) => unknown> = []

  add (fetch: (input: I) => unknown): string {
    this.fetches.push(fetch)
    return `$${this.fetches.length}`
  }

  /** A parameter fetched from the request's row scopes (SPEC §8.6). */
  readonly scoped: ScopeBinder = (fetch) => {
    this.fetches.push((_input, scopes) => fetch(scopes))
    return `$${this.fetches.length}`
  }

  values (input: I, scopes: Scopes): unknown[] {
    return this.fetches.map((fetch) => fetch(input, scopes))
  }
}

/** Parameters of a statement that is not cached: each value known as its placeholder is written. */
export class Values {
  readonly list: unknown[] = []

  constructor (private readonly scopes?: Scopes) {}

  add (value: unknown): string {
    this.list.push(value)
    return `$${this.list.length}`
  }

  /** A scope's value, known at once. */
  readonly scoped: ScopeBinder = (fetch) => this.add(fetch(this.scopes!))
}
