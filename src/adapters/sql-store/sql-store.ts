/**
 * The SQL store: cases in PostgreSQL or MariaDB/MySQL through knex (drivers `pg` and `mysql2`).
 *
 * Every event is kept as its exact canonical line bytes (plus seq, hash and command id as indexed
 * columns), so the checks of a log (chain and rules), the projections and the bag are the same
 * code as for a directory, and a case gives the same bag from either store. One module per
 * operation: connection (pool, errors, transactions, migrations), dialect (what differs between
 * PostgreSQL and MariaDB), rows, scan-rows, append, read, queue and create; this one composes them.
 */
import type { Knex } from 'knex'
import type { QueueEntry, QueuePage, QueuePageOptions } from '../../projections/queue.js'
import type { CaseStore, Lease } from '../case-store/store.js'
import { openContext, type SqlStoreOptions } from './connection.js'
import { appendInStore } from './append.js'
import { openInStore, readObjectInStore, recordedInStore, replayInStore, verifyInStore, viewInStore } from './read.js'
import { caseLease, claimCase, leaseNamedCase, releaseLease, renewLease } from './queue.js'
import { listQueue, queueEntry, queuePage } from './queue-list.js'
import { createInStore, importIntoStore } from './create.js'

export type { QueueEntry }
export { migrateStore, storeFailure, type SqlStoreOptions } from './connection.js'

/** A SQL store: the {@link CaseStore} contract plus the queue, import, and closing the pool. @category Stores */
export interface SqlStore extends CaseStore {
  readonly kind: 'sql'
  /** The store URL without its password. */
  readonly url: string
  readonly dialect: 'postgres' | 'mysql'
  /**
   * The cases updated longest ago (at most `limit`, default 10,000) with their queue rows, runnable
   * ones first. To read every case, read {@link SqlStore.page} after page.
   */
  readonly list: (options?: { readonly limit?: number }) => Promise<QueueEntry[]>
  /**
   * One page of the queue in case-id order: the cases after `after` (the previous page's `next`),
   * optionally in some states, with the counts per state (INVALID_ARGUMENT for options out of bounds).
   */
  readonly page: (options?: QueuePageOptions) => Promise<QueuePage>
  /** One case's queue entry, or null when the store holds no such case. */
  readonly entry: (caseId: string) => Promise<QueueEntry | null>
  /**
   * Leases one runnable case to `worker` for `leaseMs` (the database's clock), or null when none is
   * runnable. Cases held by a live lease are skipped; an expired lease (a crashed worker) is taken over.
   */
  readonly claim: (worker: string, leaseMs: number) => Promise<Lease | null>
  /**
   * Leases one named case, runnable or not (an operator's `vba investigate`), unless a live lease
   * of another worker holds it (CASE_LEASED).
   */
  readonly leaseCase: (caseId: string, worker: string, leaseMs: number) => Promise<Lease>
  /** The live lease on a case (who holds it, until when), or null. */
  readonly leaseOf: (caseId: string) => Promise<QueueEntry['lease']>
  /** Extends a lease that is still held (LEASE_LOST otherwise). */
  readonly renew: (lease: Lease, leaseMs: number) => Promise<Lease>
  /** Gives a case back (by lease, or by case id and worker name); false when it was not held. */
  readonly release: (lease: Lease | { readonly caseId: string; readonly worker: string }) => Promise<boolean>
  /** Copies a verified case package (a directory) in; CASE_EXISTS when the id is taken. */
  /** Copies a verified case directory in (`strict`: refuse one whose rules did not all apply, as verify's `strict`). */
  readonly importDirectory: (
    dir: string,
    options?: { readonly strict?: boolean }
  ) => Promise<{ readonly case_id: string; readonly generation: number }>
  /** The raw knex instance (benchmarks and tests). */
  readonly knex: Knex
  readonly close: () => Promise<void>
}

/**
 * Opens a SQL store (a pool; the schema is checked at once: STORE_SCHEMA_OUTDATED until `vba
 * store migrate` has run). Close it when done.
 */
export const openSqlStore = async (url: string, options: SqlStoreOptions = {}): Promise<SqlStore> => {
  let self: SqlStore | null = null
  const ctx = await openContext(url, options, () => self as SqlStore)
  const store: SqlStore = {
    kind: 'sql',
    url: ctx.display,
    dialect: ctx.dialect.name,
    knex: ctx.k,
    describe: (ref) => `${ctx.display} case ${ref}`,
    create: (ref, o) => createInStore(ctx, o.caseId ?? ref, o),
    open: (caseId) => openInStore(ctx, caseId),
    append: (handle, cmd, o) => appendInStore(ctx, handle, cmd, o),
    recordedOutcome: (handle, commandId) => recordedInStore(ctx, handle, commandId),
    readObject: (_ref, object) => readObjectInStore(ctx, object),
    verify: (caseId, o) => verifyInStore(ctx, caseId, o),
    replay: (caseId, projections) => replayInStore(ctx, caseId, projections),
    view: (caseId) => viewInStore(ctx, caseId),
    list: (o) => listQueue(ctx, o),
    page: (o) => queuePage(ctx, o),
    entry: (caseId) => queueEntry(ctx, caseId),
    claim: (worker, leaseMs) => claimCase(ctx, worker, leaseMs),
    leaseCase: (caseId, worker, leaseMs) => leaseNamedCase(ctx, caseId, worker, leaseMs),
    leaseOf: (caseId) => caseLease(ctx, caseId),
    renew: (lease, leaseMs) => renewLease(ctx, lease, leaseMs),
    release: (l) => releaseLease(ctx, l),
    importDirectory: (dir, options) => importIntoStore(ctx, dir, options),
    close: () => ctx.k.destroy()
  }
  self = store
  return store
}
