/** The rules of a case (src/domain/rules/ holds them, one file per family). */
export * from './rules/index.js'
