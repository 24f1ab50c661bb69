/**
 * Case stores. One contract, two implementations: the directory store (a folder of case
 * packages, the embedded default) and the SQL store (knex on PostgreSQL or MariaDB/MySQL). Both
 * keep every event's exact canonical line bytes, so the same checks (chain and rules), the same
 * projections and the same export run over either, and a case exported from either gives the same
 * bag. A case is addressed as a directory path (the directory store) or as `{ store, caseId }`.
 *
 * Internal: methods reject with FailureError (coded failures); the public client turns them into
 * VbaError and the fp entry into Either values.
 */
import type { CaseDeclaration, EventEnvelope } from '../../events/envelope.js'
import type { ObjectRefLite } from '../../domain/case-state.js'
import type { AnyProjection } from '../../projections/projection.js'
import type { Env } from '../env.js'
import type { AppendOptions, AppendOutcome, RawCommand } from './append.js'
import type { CaseHandle } from './open.js'
import type { ReplayResult } from './replay.js'
import type { VerifyOptions, VerifyReport } from './verify.js'
import type { CaseView } from '../bagit/case-bag.js'
import type { QueueEntry } from '../../projections/queue.js'

/** A lease on a queued case: appends under it are refused once it is lost (LEASE_LOST). @category queue */
export interface Lease {
  readonly caseId: string
  readonly worker: string
  readonly token: string
  /** Epoch milliseconds. */
  readonly expiresAt: number
}

/** @category Raw appends */
export interface StoreAppendOptions extends AppendOptions {
  /** Append only while this lease holds (a worker advancing a claimed case). */
  readonly lease?: Lease
  /**
   * When the case moved on since the command was decided (its expected generation is stale), the
   * store calls this with the caught-up handle (under its lock, or before a write guarded by
   * the head it decides on) instead of failing with
   * GENERATION_CONFLICT: the command decided again on the current state (same command id), or
   * null when there is nothing to append any more. Typed commands without an explicit expected
   * generation use it, so concurrent writers of one case do not retry whole transactions.
   */
  readonly rebase?: (handle: CaseHandle) => RawCommand | null
  /**
   * Whether the events recorded under the command's id were recorded for what this command asks
   * (its intent: a note's text, a query's request): a reused id with another intent is
   * COMMAND_ID_CONFLICT, the same intent returns the recorded outcome. Without it, recorded events
   * other than the command's own are a conflict (see duplicateOf).
   */
  readonly sameIntent?: (recorded: readonly EventEnvelope[]) => boolean
}

/** @category Stores */
export interface CaseStore {
  readonly kind: 'directory' | 'sql'
  /** Where a case lives, for messages (never a password). */
  readonly describe: (ref: string) => string
  readonly create: (
    ref: string,
    options: { readonly caseId?: string; readonly title?: string; readonly env?: Env }
  ) => Promise<CaseDeclaration>
  /** Opens a case for deciding and appending: chain and rules checked, the state folded. */
  readonly open: (ref: string) => Promise<CaseHandle>
  readonly append: (handle: CaseHandle, cmd: RawCommand, options?: StoreAppendOptions) => Promise<AppendOutcome>
  /** The recorded outcome of a command id, if the handle has seen it. */
  readonly recordedOutcome: (handle: CaseHandle, commandId: string) => Promise<AppendOutcome | null>
  readonly readObject: (ref: string, object: ObjectRefLite) => Promise<Buffer>
  readonly verify: (ref: string, options?: VerifyOptions) => Promise<VerifyReport>
  readonly replay: (ref: string, projections: readonly AnyProjection[]) => Promise<ReplayResult>
  /** The case as a package (case.json, events.jsonl, HEAD, objects) at its head, for a bag. */
  readonly view: (ref: string) => Promise<CaseView>
}

/** A case in a store other than a directory. @category Stores */
export interface StoredCase {
  readonly store: CaseStore
  readonly caseId: string
}

/** Where a case is: a directory path, or a case id in a store. @category Stores */
export type CaseAt = string | StoredCase

/**
 * How long a lease lasts, in milliseconds: the default of a claim, a renewal and a worker's
 * slot, and the bounds every store, worker and verb holds a lease to (a second to a day).
 */
export const LEASE_MS = { default: 60_000, min: 1000, max: 86_400_000 } as const

/**
 * A store with a queue (the SQL store): what a worker claims cases from. Directories hold no
 * leases; their queue is only listed (directory-queue.ts).
 * @category Stores
 */
export interface QueueStore extends CaseStore {
  readonly claim: (worker: string, leaseMs: number) => Promise<Lease | null>
  readonly renew: (lease: Lease, leaseMs: number) => Promise<Lease>
  readonly release: (lease: Lease) => Promise<boolean>
  readonly list: () => Promise<
    ReadonlyArray<Pick<QueueEntry, 'lease' | 'runnable' | 'state' | 'reason' | 'retry_not_before'>>
  >
}
