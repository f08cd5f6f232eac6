import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { unmeasured } from '../helpers/child.js'
import { testDatabase } from '../helpers/db.js'
import { freePort, waitFor } from '../helpers/servers.js'

// SPEC §9.3: `npm start` closes on SIGTERM (what orchestrators send) as on SIGINT (Ctrl-C),
// under load: exit code 0, nothing on stderr, every answer a 200 (the demo serves a request that
// arrives during the close: `return503OnClosing: false`).

// On this file's schema of the test server when there is one: the embedded database takes a
// minute to start on a busy machine.
const db = await testDatabase(t)

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`the demo closes on ${signal} under load`, async (t) => {
    const port = await freePort()
    const media = await mkdtemp(join(tmpdir(), 'tc-prod-media-'))
    t.teardown(async () => await rm(media, { recursive: true, force: true }))
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), MEDIA_PATH: media }
    if (db.embedded) delete env.DATABASE_URL
    else env.DATABASE_URL = db.connectionString
    // Through the pooled mode's PgBouncer (TEST_POOLER), as docs/deployment.md tells a user to.
    if (db.pooled) env.PREPARED_STATEMENTS = 'unnamed'
    delete env.REDIS_URL
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/movies/server.ts'], { env: unmeasured(env), stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    t.teardown(() => { child.kill('SIGKILL') })
    const base = `http://127.0.0.1:${port}`
    await waitFor('the demo to be ready', async () => (await fetch(`${base}/health/ready`)).status === 200, 120_000)

    const statuses = new Map<number, number>()
    const load = { running: true }
    const client = async (): Promise<void> => {
      while (load.running) {
        try {
          const answer = await fetch(`${base}/api/movies/?__page_size=5`)
          await answer.arrayBuffer()
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
        } catch {
          // Refused once the server has stopped listening: the load ends there.
          if (child.exitCode !== null) return
        }
      }
    }
    const clients = Array.from({ length: 3 }, client)
    await waitFor('the load to run', async () => (statuses.get(200) ?? 0) > 10)
    child.kill(signal)
    t.equal(await exited, 0, 'exit code 0')
    load.running = false
    await Promise.all(clients)
    t.equal(stderr, '', 'nothing on stderr')
    t.strictSame([...statuses.keys()], [200], `only 200 (${JSON.stringify([...statuses])})`)
  })
}
