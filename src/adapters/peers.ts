/**
 * The drivers and the MCP SDK are optional peer dependencies (as knex and emmett-postgresql have
 * theirs): a consumer installs only what it uses. Each is loaded by its package name on first use,
 * with `import()` (so a bundler can leave it outside the bundle), and a missing one is
 * PACKAGE_MISSING, naming the package to install and the feature that needs it.
 */
import { fail } from '../failures/error.js'

/** The optional peers (package.json's peerDependenciesMeta) and what needs each. */
export const OPTIONAL_PEERS = {
  pg: 'the SQL case store on PostgreSQL',
  mysql2: 'the SQL case store on MariaDB/MySQL and a MySQL/MariaDB world database',
  'better-sqlite3': 'an SQLite world database (the demo world is one)',
  '@modelcontextprotocol/sdk': 'vba mcp'
} as const

/** The name of an optional peer package. */
export type OptionalPeer = keyof typeof OPTIONAL_PEERS

/** True when `e` is the module resolver saying that the package `name` itself is not there. */
const isMissing = (e: unknown, name: string): boolean => {
  const err = e as { code?: unknown; message?: unknown } | null
  return (
    (err?.code === 'ERR_MODULE_NOT_FOUND' || err?.code === 'MODULE_NOT_FOUND') &&
    typeof err.message === 'string' &&
    err.message.includes(`'${name}'`)
  )
}

/**
 * Loads the optional peer `name` through `load` (an `import()` of the package itself), for
 * `feature` (said in the failure); a missing package is PACKAGE_MISSING, anything else rethrown.
 *
 * @example
 * const { default: Database } = await loadPeer('better-sqlite3', 'an SQLite world database', () => import('better-sqlite3'))
 */
export const loadPeer = async <M>(name: OptionalPeer, feature: string, load: () => Promise<M>): Promise<M> => {
  try {
    return await load()
  } catch (e) {
    if (!isMissing(e, name)) throw e
    return fail(
      'PACKAGE_MISSING',
      `${feature} needs the package ${name}, which is not installed: npm install ${name}`,
      {
        package: name,
        feature
      }
    )
  }
}
