#!/usr/bin/env node
/**
 * The fastify-tablecrud command line (`fastify-tablecrud --help`): the built-in tables, their
 * users and tokens, and the check of table definitions against the database named by
 * DATABASE_URL. The work is in ./main.ts and ./commands.ts.
 */
import { main } from './main.js'

process.exitCode = await main(process.argv.slice(2))
