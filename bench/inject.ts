import type { FastifyInstance } from 'fastify'

/** The median time, in ms, of `runs` in-process GETs of `url` (each must answer 200): the opt-in benches' latency. */
export async function injectMedian (app: FastifyInstance, url: string, runs: number): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    const response = await app.inject(url)
    times.push(performance.now() - start)
    if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!
}
