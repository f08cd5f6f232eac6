import t from 'tap'
import { caughtUp, replicaMissing, startPrimary, startReplica } from '../helpers/replica.js'
import { ask } from '../helpers/servers.js'

// SPEC §9.2 against a real streaming replica: a primary of our own (initdb) and a replica made
// from it with pg_basebackup -R, both on loopback ports, started and stopped here.

const missing = replicaMissing()

t.test('a streaming replica of our own primary', { skip: missing ?? false }, async (t) => {
  const primary = await startPrimary(t)
  const replica = await startReplica(t, primary)

  t.test('it replays the primary\'s writes and refuses its own', async (t) => {
    await ask(primary.url('test'), 'CREATE TABLE seen (n int); INSERT INTO seen VALUES (1)')
    await caughtUp(primary, replica)
    t.strictSame(await ask(replica.url('test'), 'SELECT n, pg_is_in_recovery() AS standby FROM seen'), [{ n: 1, standby: true }])
    await t.rejects(ask(replica.url('test'), 'INSERT INTO seen VALUES (2)'), { code: '25006' })
  })
})
