export * from './projection.js'
export * from './summary.js'
export * from './defaults.js'
export * from './research.js'
