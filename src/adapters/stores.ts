/**
 * The one place that opens (or migrates) a case store from a URL: the scheme picks the
 * implementation, the way knex resolves a dialect. `postgres:`/`postgresql:` and
 * `mysql:`/`mariadb:` are the SQL store, loaded only when a URL names it (so knex and its drivers
 * stay out of directory-only commands). A URL that is none of these, or no URL at all, is
 * STORE_INVALID before anything loads; no message ever shows a password.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure } from '../failures/failure.js'
import { FailureError } from '../failures/error.js'
import { parseStoreUrl } from './sql-store/url.js'
import type { SqlStore, SqlStoreOptions } from './sql-store/sql-store.js'

/** Options of {@link openStore}: the SQL store's, and whether to migrate first. */
export interface OpenStoreOptions extends SqlStoreOptions {
  /** Bring the store's schema to the latest version first (`vba store migrate`). */
  readonly migrate?: boolean
}

/** The migrations a store's schema went through, and the latest one. */
export interface Migrated {
  readonly applied: readonly string[]
  readonly latest: string
}

interface Implementation {
  readonly open: (url: string, options: OpenStoreOptions) => Promise<SqlStore>
  readonly migrate: (url: string, options: SqlStoreOptions) => Promise<Migrated>
}

// The SQL store (knex and its drivers) loads only for a URL that names one.
const sqlStore: Implementation = {
  open: async (url, options) => {
    const { migrateStore, openSqlStore } = await import('./sql-store/sql-store.js')
    const { migrate, ...rest } = options
    if (migrate === true) await migrateStore(url, rest)
    return openSqlStore(url, rest)
  },
  migrate: async (url, options) => (await import('./sql-store/sql-store.js')).migrateStore(url, options)
}

/** The implementation of each URL scheme (with its colon, as `URL.protocol` gives it). */
const IMPLEMENTATIONS: ReadonlyMap<string, Implementation> = new Map([
  ['postgres:', sqlStore],
  ['postgresql:', sqlStore],
  ['mysql:', sqlStore],
  ['mariadb:', sqlStore]
])

/** The implementation a URL names; the URL is checked in full before anything loads. */
const implementationOf = (url: string, options: SqlStoreOptions): Implementation => {
  // Scheme, database, parameters and password_env: refused here, with the parser's message.
  const parsed = parseStoreUrl(url, options.environment ?? process.env)
  if (E.isLeft(parsed)) throw new FailureError(parsed.left)
  let scheme: string
  try {
    scheme = new URL(url).protocol
  } catch {
    scheme = ''
  }
  const found = IMPLEMENTATIONS.get(scheme)
  if (found === undefined)
    throw new FailureError(
      failure(
        'STORE_INVALID',
        `unknown store scheme ${scheme.replace(/:$/, '')}: use postgres:// or mysql:// (mariadb://)`
      )
    )
  return found
}

/**
 * Opens the store a URL names (close it when done). Rejects with a FailureError: STORE_INVALID for
 * a URL of no known scheme, and whatever the implementation refuses (STORE_UNAVAILABLE,
 * STORE_SCHEMA_OUTDATED, CREDENTIALS_MISSING…).
 */
export const openStore = async (url: string, options: OpenStoreOptions = {}): Promise<SqlStore> =>
  implementationOf(url, options).open(url, options)

/** Creates or upgrades the schema of the store a URL names (`vba store migrate`); refuses as {@link openStore}. */
export const migrateStoreAt = async (url: string, options: SqlStoreOptions = {}): Promise<Migrated> =>
  implementationOf(url, options).migrate(url, options)
