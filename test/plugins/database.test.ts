import t from 'tap'
import Fastify from 'fastify'
import fastifyPostgres from '@fastify/postgres'
import { database } from '../../plugins/database.js'
import { testDatabase } from '../helpers/db.js'

const db = await testDatabase(t)

t.test('the pool gets one error listener, however many plugins ask, and an idle connection lost is only logged', async (t) => {
  const app = Fastify()
  await app.register(fastifyPostgres, { connectionString: db.connectionString, max: db.max })
  await app.ready()
  t.teardown(async () => await app.close())
  const before = app.pg.pool.listenerCount('error')
  t.equal(database(app, 'first'), app.pg)
  database(app, 'second')
  t.equal(app.pg.pool.listenerCount('error'), before + 1)
  t.doesNotThrow(() => app.pg.pool.emit('error', new Error('terminating connection due to administrator command')))
  t.equal((await app.pg.query('SELECT 1 AS one')).rows[0].one, 1, 'the pool still serves')
})

t.test('without @fastify/postgres the plugin is told what to register', async (t) => {
  const app = Fastify()
  t.throws(() => database(app, 'somePlugin'), { message: 'somePlugin: register @fastify/postgres before this plugin (it uses fastify.pg)' })
  await app.close()
})
