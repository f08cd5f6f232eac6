/**
 * A statement's bind parameters, each written in one step: `add` writes the next placeholder
 * and records how that parameter's value is fetched, as kysely's `appendValue` pushes a value
 * as it writes its `$<n>`. Nothing walks a query a second time to gather values in step with
 * the text. Texts are cached per query shape (DESIGN §4): a cached `Params` fetches the values
 * of each later query of the same shape from that query (`values(input)`).
 */
export class Params<I> {
  private readonly fetches: Array<(input: I) => unknown> = []

  add (fetch: (input: I) => unknown): string {
    this.fetches.push(fetch)
    return `$${this.fetches.length}`
  }

  values (input: I): unknown[] {
    return this.fetches.map((fetch) => fetch(input))
  }
}

/** Parameters of a statement that is not cached: each value known as its placeholder is written. */
export class Values {
  readonly list: unknown[] = []

  add (value: unknown): string {
    this.list.push(value)
    return `$${this.list.length}`
  }
}
