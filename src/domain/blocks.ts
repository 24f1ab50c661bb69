/**
 * The block reasons of an investigation, defined once: whether a block names a retry time, ends
 * by itself once that time has passed (a resume checkpoint), may be ended early by an operator's
 * manual retry, and makes its case runnable in a fleet's queue once the time has passed. The
 * rules, the deciders, the loop and the queue all read this table; a new reason does not compile
 * until it is described here.
 */
import type { BlockReason } from '../events/catalog.js'

export interface BlockKind {
  /** The block names `retry_not_before`. */
  readonly retryTime: boolean
  /** Once the retry time has passed, a resume checkpoint alone ends it (into its resume state). */
  readonly resumesByTime: boolean
  /** An operator's manual retry may end it before its retry time (recorded). */
  readonly manualRetry: boolean
  /** A fleet's queue counts its case runnable once the retry time has passed. */
  readonly runnableAfterRetry: boolean
}

export const BLOCKS: { readonly [R in BlockReason]: BlockKind } = {
  INVALID_LLM_RESPONSES: { retryTime: true, resumesByTime: true, manualRetry: true, runnableAfterRetry: true },
  MODEL_UNAVAILABLE: { retryTime: true, resumesByTime: true, manualRetry: true, runnableAfterRetry: true },
  // Ends when the blocked plan is answered, refused or cancelled; the loop retries it after the time.
  RESEARCH_UNAVAILABLE: { retryTime: true, resumesByTime: false, manualRetry: true, runnableAfterRetry: true },
  // Only lab test feedback ends it.
  AWAITING_TEST_FEEDBACK: { retryTime: false, resumesByTime: false, manualRetry: false, runnableAfterRetry: false }
}

/** The block reasons the deciders write. */
export const BLOCK_REASONS = Object.keys(BLOCKS) as BlockReason[]

const kindOf = (reason: string | null): BlockKind | undefined =>
  reason !== null && Object.hasOwn(BLOCKS, reason) ? BLOCKS[reason as BlockReason] : undefined

/** A known block reason. */
export const isBlockReason = (reason: string | null): reason is BlockReason => kindOf(reason) !== undefined
/** Blocks that a resume checkpoint ends once their retry time has passed (or by a manual retry). */
export const resumesByTime = (reason: string | null): boolean => kindOf(reason)?.resumesByTime === true
/** Blocks that name a retry time. */
export const namesRetryTime = (reason: string | null): boolean => kindOf(reason)?.retryTime === true
/** Blocks an operator may end early with a manual retry. */
export const allowsManualRetry = (reason: string | null): boolean => kindOf(reason)?.manualRetry === true
/** Blocks whose case is runnable in a queue once the retry time has passed. */
export const runnableAfterRetry = (reason: string | null): boolean => kindOf(reason)?.runnableAfterRetry === true
