/**
 * The SQL store's connection: a knex pool configured by dialect, the mapping of driver errors to
 * coded failures (written here: never a password), transactions retried after deadlocks, and the
 * migrations. Every store operation runs through one {@link SqlContext}.
 */
import knexFactory, { type Knex } from 'knex'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../../failures/failure.js'
import { FailureError } from '../../failures/error.js'
import type { CaseStore } from '../case-store/store.js'
import { dialectOf, type Dialect } from './dialect.js'
import { MIGRATIONS_TABLE, MIGRATION_NAMES, migrationSource } from './migrations.js'
import { parseStoreUrl, type StoreConnection } from './url.js'
import { storeObjects, type StoreObjects } from './objects.js'
import { optional } from '../../optional.js'
import { UNREACHABLE_CODES } from '../unreachable-codes.js'

/** @category Stores */
export interface SqlStoreOptions {
  /** Where `password_env` is looked up (default process.env). */
  readonly environment?: Readonly<Record<string, string | undefined>>
  /** Connections in the pool (default 10). */
  readonly poolSize?: number
  /** How long an append waits for another writer of the same case (default 5000 ms). */
  readonly lockWaitMs?: number
  /** How long to wait for a connection (default 10000 ms). */
  readonly connectTimeoutMs?: number
}

/** What every operation of an open store shares. */
export interface SqlContext {
  readonly k: Knex
  readonly dialect: Dialect
  /** The store URL without its password, for messages. */
  readonly display: string
  /** Runs `work`, turning driver errors into coded failures. */
  readonly guard: <A>(work: () => Promise<A>) => Promise<A>
  /** Runs `work` in a transaction, retried after a deadlock (nothing was committed). */
  readonly transaction: <A>(work: (trx: Knex.Transaction) => Promise<A>) => Promise<A>
  /** The store itself (handles name it). */
  readonly store: () => CaseStore
  /** Objects: inserted once, read whole or in slices (src/adapters/sql-store/objects.ts). */
  readonly objects: StoreObjects
}

const SILENT = { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined }

/** Deadlocks and serialization failures are retried this often before CASE_LOCKED. */
const TRANSACTION_ATTEMPTS = 4

interface DriverError {
  readonly name?: string
  readonly code?: string
  readonly errno?: number
}

/** Unreachable, and PostgreSQL's codes for a server shutting down, a connection failure, or too many clients. */
const UNREACHABLE = new Set<string>([
  ...UNREACHABLE_CODES,
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300'
])
const DEADLOCK = new Set(['40P01', '40001', 'ER_LOCK_DEADLOCK'])
const LOCK_TIMEOUT = new Set(['55P03', 'ER_LOCK_WAIT_TIMEOUT'])

/**
 * A privilege the store's user lacks, or a read-only server or transaction: the operator's
 * configuration, not an outage (PostgreSQL's insufficient_privilege and read_only_sql_transaction,
 * MariaDB's table, column and command denials and --read-only).
 */
const DENIED = new Set([
  '42501',
  '25006',
  'ER_TABLEACCESS_DENIED_ERROR',
  'ER_COLUMNACCESS_DENIED_ERROR',
  'ER_SPECIFIC_ACCESS_DENIED_ERROR',
  'ER_OPTION_PREVENTS_STATEMENT'
])

/**
 * pg's error, without a code, for a connection the server or the network closed (a proxy with no
 * backend, a server going down, a cut link): an outage like ECONNRESET, never a bug.
 */
const CLOSED_BY_PEER = /^Connection terminated\b/

/** A driver error's own text, shortened (drivers never put the password in it). */
const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e)).slice(0, 300)

/** The driver's error code of a thrown error, if it has one. */
export const driverCode = (e: unknown): string | undefined => (e as DriverError | null)?.code

/** A driver error as a coded failure; the message is written here (never a password). */
export const storeFailure = (e: unknown, display: string): Failure => {
  if (e instanceof FailureError) return e.failure
  const err = (e ?? {}) as DriverError
  const code = err.code
  if (err.name === 'KnexTimeoutError')
    return failure('STORE_UNAVAILABLE', `no connection to the store ${display} in time`, { store: display })
  if (code === '3D000' || code === 'ER_BAD_DB_ERROR')
    return failure(
      'STORE_UNAVAILABLE',
      `the store's database does not exist (${display}): create it, then run vba store migrate`,
      { store: display, driver_code: code }
    )
  if (code === '28P01' || code === '28000' || code === 'ER_ACCESS_DENIED_ERROR' || code === 'ER_DBACCESS_DENIED_ERROR')
    return failure('STORE_UNAVAILABLE', `the store refused the credentials (${display})`, {
      store: display,
      driver_code: code
    })
  if (code === '42P01' || code === 'ER_NO_SUCH_TABLE')
    return failure(
      'STORE_SCHEMA_OUTDATED',
      `the store ${display} has no case tables: run vba store migrate --store URL`,
      { store: display }
    )
  if (code !== undefined && DENIED.has(code))
    return failure(
      'STORE_INVALID',
      `the store ${display} refused this to its user: ${errorText(e)} (grant the privileges docs/operations.md lists under "Privileges")`,
      { store: display, driver_code: code }
    )
  if (code !== undefined && LOCK_TIMEOUT.has(code))
    return failure('CASE_LOCKED', 'another writer holds the case (lock wait timed out); retry', { driver_code: code })
  if (code !== undefined && DEADLOCK.has(code))
    return failure('CASE_LOCKED', 'the store kept detecting deadlocks with other writers; retry', { driver_code: code })
  if (code === 'ER_NET_PACKET_TOO_LARGE')
    return failure('EVENT_TOO_LARGE', "a row is larger than the server's max_allowed_packet", { driver_code: code })
  if (code === undefined && CLOSED_BY_PEER.test(errorText(e)))
    return failure('STORE_UNAVAILABLE', `the store ${display} closed the connection (${errorText(e)})`, {
      store: display
    })
  if (code !== undefined && UNREACHABLE.has(code))
    return failure('STORE_UNAVAILABLE', `the store ${display} is unavailable (${code})`, {
      store: display,
      driver_code: code
    })
  return failure('INTERNAL_ERROR', `store ${display}: ${errorText(e)}`, {
    store: display,
    ...optional('driver_code', code)
  })
}

const knexConfig = (c: StoreConnection, d: Dialect, o: SqlStoreOptions): Knex.Config => {
  const session = d.session(o.lockWaitMs ?? 5000)
  const connectTimeoutMs = o.connectTimeoutMs ?? 10_000
  return {
    client: d.client,
    log: SILENT,
    connection: {
      host: c.host,
      port: c.port,
      user: c.user,
      ...optional('password', c.password),
      database: c.database,
      ...d.connection(connectTimeoutMs)
    },
    pool: {
      min: 0,
      max: o.poolSize ?? 10,
      afterCreate: (
        conn: { query: (sql: string, cb: (e: unknown) => void) => void },
        done: (e: unknown, c: unknown) => void
      ) => {
        const next = (i: number): void => {
          if (i === session.length) {
            done(null, conn)
            return
          }
          conn.query(session[i] as string, (e) => (e ? done(e, conn) : next(i + 1)))
        }
        next(0)
      }
    },
    acquireConnectionTimeout: connectTimeoutMs,
    migrations: { tableName: MIGRATIONS_TABLE, migrationSource }
  }
}

const connectionOf = (url: string, options: SqlStoreOptions): StoreConnection => {
  const c = parseStoreUrl(url, options.environment ?? process.env)
  if (E.isLeft(c)) throw new FailureError(c.left)
  return c.right
}

/** The knex pool of a store, once its driver (an optional peer) is loaded. */
const openKnex = async (c: StoreConnection, d: Dialect, options: SqlStoreOptions): Promise<Knex> => {
  await d.loadDriver()
  return knexFactory(knexConfig(c, d, options))
}

/** Brings the store's schema to the latest version; returns the migrations it applied. */
export const migrateStore = async (
  url: string,
  options: SqlStoreOptions = {}
): Promise<{ readonly applied: readonly string[]; readonly latest: string }> => {
  const c = connectionOf(url, options)
  const k = await openKnex(c, dialectOf(c.client), options)
  try {
    const [, applied] = (await k.migrate.latest()) as [number, string[]]
    return { applied, latest: MIGRATION_NAMES[MIGRATION_NAMES.length - 1] as string }
  } catch (e) {
    throw new FailureError(storeFailure(e, c.display))
  } finally {
    await k.destroy()
  }
}

/**
 * Opens the pool of a store URL and checks its schema (STORE_SCHEMA_OUTDATED until `vba store
 * migrate` has run); `store` names the store its handles belong to.
 */
export const openContext = async (
  url: string,
  options: SqlStoreOptions,
  store: () => CaseStore
): Promise<SqlContext> => {
  const c = connectionOf(url, options)
  const dialect = dialectOf(c.client)
  const k = await openKnex(c, dialect, options)
  const display = c.display
  const guard = async <A>(work: () => Promise<A>): Promise<A> => {
    try {
      return await work()
    } catch (e) {
      throw new FailureError(storeFailure(e, display))
    }
  }
  try {
    // Read, never written: knex's migrate.list() creates its tables where it cannot see them, so
    // every read verb (verify, queue list, export: fit for a read replica) wrote to the database.
    const applied = new Set(((await k(MIGRATIONS_TABLE).select('name')) as Array<{ name: string }>).map((r) => r.name))
    const pending = MIGRATION_NAMES.filter((n) => !applied.has(n))
    if (pending.length > 0)
      throw new FailureError(
        failure(
          'STORE_SCHEMA_OUTDATED',
          `the store ${display} is ${pending.length} migration(s) behind this version of vba: run vba store migrate --store URL`,
          { store: display, pending: pending.length }
        )
      )
  } catch (e) {
    await k.destroy()
    throw new FailureError(storeFailure(e, display))
  }
  const transaction = async <A>(work: (trx: Knex.Transaction) => Promise<A>): Promise<A> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await k.transaction(work)
      } catch (e) {
        const code = driverCode(e)
        if (code !== undefined && DEADLOCK.has(code) && attempt < TRANSACTION_ATTEMPTS) {
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt))
          continue
        }
        throw new FailureError(storeFailure(e, display))
      }
    }
  }
  return { k, dialect, display, guard, transaction, store, objects: storeObjects(dialect.name) }
}
