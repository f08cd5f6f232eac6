import t from 'tap'
import { LAG_CHECK_MS, LAG_SQL, REPLICA_RETRY_MS, ReplicaSet, type ReplicaPool } from '../../plugins/replicas.js'

// The routing rules of SPEC §9.2 on stand-in pools and a stand-in clock; the real replica is in
// test/plugins/replicas.test.ts.

interface Fake extends ReplicaPool { name: string, lagQueries: number, ended: boolean }

function fakePool (name: string, lag: () => Promise<number | null> = async () => 0): Fake {
  const pool: Fake = {
    name,
    lagQueries: 0,
    ended: false,
    connect: async () => { throw new Error('not used: work gets the pool') },
    query: async (text: string) => {
      if (text !== LAG_SQL) throw new Error(`unexpected ${text}`)
      pool.lagQueries++
      return { rows: [{ lag_ms: await lag() }] }
    },
    end: async () => { pool.ended = true }
  }
  return pool
}

const clock = { now: 1_000_000 }
const now = (): number => clock.now
const served = async (set: ReplicaSet): Promise<string> => await set.read(async (pool) => (pool as Fake).name, async () => 'primary')
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
const conflict = Object.assign(new Error('canceling statement due to conflict with recovery'), { code: '40001', severity: 'ERROR' })

t.test('round robin over the replicas; the primary when each has failed lately', async (t) => {
  const set = new ReplicaSet([fakePool('a'), fakePool('b')], null, now)
  t.strictSame([await served(set), await served(set), await served(set)], ['a', 'b', 'a'])
  // b is unreachable: the read that met it is served by the primary, and b is skipped a while.
  t.equal(await set.read(async () => { throw refused }, async () => 'primary'), 'primary')
  t.strictSame([await served(set), await served(set)], ['a', 'a'], 'b skipped')
  t.equal(await set.read(async () => { throw refused }, async () => 'primary'), 'primary', 'a fails too')
  t.equal(await served(set), 'primary', 'both skipped: the primary serves, no replica is tried')
  clock.now += REPLICA_RETRY_MS + 1
  t.strictSame([await served(set), await served(set)].sort(), ['a', 'b'], 'tried again after REPLICA_RETRY_MS')
})

t.test('an error a replica answers (a recovery conflict) sends that read to the primary and keeps the replica', async (t) => {
  const set = new ReplicaSet([fakePool('a')], null, now)
  t.equal(await set.read(async () => { throw conflict }, async () => 'primary'), 'primary')
  t.equal(await served(set), 'a', 'not skipped afterwards')
  await t.rejects(set.read(async () => { throw conflict }, async () => { throw new Error('the primary\'s own failure') }),
    { message: 'the primary\'s own failure' }, 'what the primary answers is the answer')
})

t.test('maxReplicaLagMs: a lagging replica, or one that cannot say, sends reads to the primary', async (t) => {
  let lag: number | null = 50
  const pool = fakePool('a', async () => lag)
  const set = new ReplicaSet([pool], 100, now)
  t.equal(await served(set), 'a', 'within the limit')
  t.equal(await served(set), 'a')
  t.equal(pool.lagQueries, 1, `one reading serves reads for ${LAG_CHECK_MS} ms`)
  lag = 150
  t.equal(await served(set), 'a', 'the reading is still fresh')
  clock.now += LAG_CHECK_MS
  t.equal(await served(set), 'primary', 'over the limit')
  t.equal(pool.lagQueries, 2)
  lag = null
  clock.now += LAG_CHECK_MS
  t.equal(await served(set), 'primary', 'no reading: treated as lagging')
  lag = 100
  clock.now += LAG_CHECK_MS
  t.equal(await served(set), 'a', 'at the limit')
})

t.test('reads at once share one lag reading; a failed reading skips the replica', async (t) => {
  let release = (): void => {}
  const gate = new Promise<void>((resolve) => { release = resolve })
  const pool = fakePool('a', async () => { await gate; return 0 })
  const set = new ReplicaSet([pool], 100, now)
  const reads = Promise.all([served(set), served(set), served(set)])
  release()
  t.strictSame(await reads, ['a', 'a', 'a'])
  t.equal(pool.lagQueries, 1)

  const down = fakePool('down', async () => { throw refused })
  const skipping = new ReplicaSet([down], 100, now)
  t.equal(await served(skipping), 'primary')
  t.equal(await served(skipping), 'primary')
  t.equal(down.lagQueries, 1, 'skipped after the failed reading, not asked again')
  t.strictSame(await skipping.lags(), [null])
})

t.test('lags() measures each replica; end() ends every pool', async (t) => {
  const pools = [fakePool('a', async () => 12), fakePool('b', async () => 0)]
  const set = new ReplicaSet(pools, null, now)
  t.equal(set.size, 2)
  t.strictSame(await set.lags(), [12, 0])
  await set.end()
  t.strictSame(pools.map((pool) => pool.ended), [true, true])
})
