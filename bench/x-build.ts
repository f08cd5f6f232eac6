import { buildServers } from './measure.js'
buildServers(process.argv[2] === 'linked')
