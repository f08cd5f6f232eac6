export * from './ddl.js'
export * from './embedded.js'
export * from './types.js'
export * from './check.js'
