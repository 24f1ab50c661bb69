/** The shapes of the client's queue namespace (types.ts holds the rest of the client's). */
import type { Lease } from '../adapters/case-store/store.js'
import type { QueueEntry, QueuePage, QueuePageOptions } from '../projections/queue.js'
import type { WorkEvent, WorkSummary } from '../investigation/worker.js'
import type { AdvanceResult } from '../commands/lifecycle-commands.js'
import type { ModelFn } from '../investigation/loop.js'
import type { AdvanceOptions } from './types.js'

/** Options of {@link QueueApi.work}. @category queue */
export interface WorkOptions {
  /** Your model, for every case the worker advances. */
  readonly model: ModelFn
  /** This worker's name, recorded with its leases (default host.pid). */
  readonly worker?: string | undefined
  /** Cases advanced at the same time (default 1). */
  readonly concurrency?: number | undefined
  /** Lease length, renewed every third of it (default 60 000 ms). */
  readonly leaseMs?: number | undefined
  /** How long an idle worker waits before asking again (default 1000 ms). */
  readonly pollMs?: number | undefined
  /** Model turns per claim (default 20). */
  readonly maxTurns?: number | undefined
  /** Refuse cases whose rules did not all apply (RULE_NOT_APPLIED): CASE_CORRUPT, the worker stops (see WorkerOptions.strict). */
  readonly strict?: boolean | undefined
  /** Return once nothing is runnable or leased (default: run until the signal). */
  readonly untilIdle?: boolean | undefined
  /** Stops the worker: the case in hand stops at its next step boundary and is released. */
  readonly signal?: AbortSignal | undefined
  readonly onEvent?: ((e: WorkEvent) => void) | undefined
}

/**
 * The work queue: which cases can run now and why the others cannot, and leases so a fleet never
 * advances one case twice at once. Listing works on a folder of case directories too; claims,
 * leases and `work` need the client's `store`.
 * @category queue
 */
export interface QueueApi {
  /**
   * Every case with its queue row, runnable ones first (`root`: a folder of case directories,
   * without a store). A store is read page after page: for a large one, read {@link QueueApi.page}.
   */
  list(root?: string): Promise<readonly QueueEntry[]>
  /**
   * One page of the queue: the cases after `after` (the previous page's `next`) in key order (case
   * id in a store, directory name under `root`), at most `limit`, optionally only some states, with
   * the counts per state of the whole queue. Pages never skip or repeat a case, also while cases
   * change state. INVALID_ARGUMENT for options out of bounds.
   */
  page(options?: QueuePageOptions & { readonly root?: string | undefined }): Promise<QueuePage>
  /** Leases one runnable case to `worker`, or null when nothing is runnable. */
  claim(worker: string, options?: { readonly leaseMs?: number | undefined }): Promise<Lease | null>
  /** Extends a lease still held (LEASE_LOST otherwise). */
  renew(lease: Lease, options?: { readonly leaseMs?: number | undefined }): Promise<Lease>
  /** Gives a case back to the queue; false when the lease was not held any more. */
  release(lease: Lease): Promise<boolean>
  /** Advances one claimed case under its lease with your model (appends are refused once the lease is lost). */
  advance(lease: Lease, options: AdvanceOptions): Promise<AdvanceResult>
  /** The worker loop: claim, advance, release, repeat, with the profile's research and settings. */
  work(options: WorkOptions): Promise<WorkSummary>
}
