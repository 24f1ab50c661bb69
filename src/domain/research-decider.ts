/**
 * Deciding research events in a case: reserve action budget for an operator's query, record a
 * capture as evidence (a repeat when an identical capture exists) with the consumption, or record
 * a failure: a refused or timed-out question releases its reservation; an outage keeps it for a
 * resume. When the reservation is the pending plan's, the lifecycle follows in the same command
 * (blocked as RESEARCH_UNAVAILABLE, or back to INVESTIGATING). Operators may cancel a plan.
 * Pure: the caller supplies ids, digests and the clock.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { eventDraft, type EventDraft } from '../events/chain.js'
import type { ObjectRef } from '../events/codecs.js'
import type { QueryKind } from '../events/capture.js'
import type { LifecycleState, Requester } from '../events/catalog.js'
import type { CaseState, ResearchState } from './case-state.js'
import { budgetTotal, heldBudget, remainingBudget } from './budget.js'
import { stallBlock } from './stall.js'
import type { Decision } from './decision.js'

type ResearchDecision = Decision

/** A checkpoint draft continuing the state's generation. */
export const checkpointDraft = (
  s: CaseState,
  state: LifecycleState,
  extra: {
    reason?: string | null
    resume?: LifecycleState | null
    retryNotBefore?: string | null
    manualRetry?: boolean
  } = {}
): EventDraft =>
  eventDraft('CheckpointRecorded', {
    generation: s.checkpoint + 1,
    state,
    reason: extra.reason ?? null,
    resume_state: extra.resume ?? null,
    retry_not_before: extra.retryNotBefore ?? null,
    manual_retry: extra.manualRetry ?? false
  })

/** Backoff after the n-th outage in a row: 30 s, doubling, at most 30 minutes. */
export const outageBackoffMs = (streak: number): number => Math.min(30_000 * 2 ** Math.max(0, streak - 1), 30 * 60_000)

/** @category Deciders */
export interface Reserve {
  readonly reservationId: string
  readonly amount: number
  /** SHA-256 of the canonical, decoded request the reservation is for. */
  readonly requestDigest: string
  /** The program that asked (an MCP client), recorded with the reservation. */
  readonly requester?: Requester | null
  /** The canonical, decoded request itself (its digest is requestDigest), recorded so a refusal shows it. */
  readonly request?: Readonly<Record<string, unknown>> | null
}

/**
 * An operator's (or controller's) query outside the model's plans: refused once the
 * investigation is CONCLUDED or EXHAUSTED, and (BUDGET_EXHAUSTED) when the amount exceeds what is
 * left: every query costs the same, so a budget that cannot pay for this one pays for none.
 */
export const decideReserve = (s: CaseState, c: Reserve): ResearchDecision => {
  if (!Number.isSafeInteger(c.amount) || c.amount <= 0)
    return E.left(failure('BUDGET_INVALID', 'a reservation is a positive whole amount', { amount: c.amount }))
  if (s.research.open.has(c.reservationId) || s.research.closed.has(c.reservationId))
    return E.left(
      failure('RESERVATION_EXISTS', `reservation ${c.reservationId} exists`, { reservation_id: c.reservationId })
    )
  if (s.state === 'CONCLUDED' || s.state === 'EXHAUSTED')
    return E.left(
      failure('CASE_CLOSED', `the investigation is ${s.state}: no further research is recorded in this case`, {
        state: s.state
      })
    )
  if (s.settings !== null && c.amount > remainingBudget(s)) {
    const data = {
      amount: c.amount,
      remaining: remainingBudget(s),
      held: heldBudget(s.research),
      consumed: s.research.consumed,
      total: budgetTotal(s)
    }
    return E.left(
      failure(
        'BUDGET_EXHAUSTED',
        `the budget is spent: a query costs ${c.amount}, ${data.remaining} of ${data.total} is left (${data.consumed} consumed, ${data.held} held)`,
        data
      )
    )
  }
  return E.right([
    eventDraft('BudgetReserved', {
      reservation_id: c.reservationId,
      action: 'project.query',
      amount: c.amount,
      plan_id: null,
      request_digest: c.requestDigest,
      requester: c.requester ?? null,
      request: c.request ?? null
    })
  ])
}

/** @category Deciders */
export interface RecordCapture {
  readonly reservationId: string
  readonly capture: ObjectRef
  readonly kind: QueryKind
  readonly requestDigest: string
  /** The operator asked for this retry of a plan blocked as RESEARCH_UNAVAILABLE (recorded on the checkpoint). */
  readonly manualRetry?: boolean
}

/** Evidence ids are E1, E2, … in order of first appearance. */
export const nextEvidenceId = (s: ResearchState): string => `E${s.evidence.size + 1}`

/** The evidence a capture becomes: an earlier identical capture's id (a repeat), or the next id. */
export const evidenceFor = (s: ResearchState, captureDigest: string): { id: string; repeat: boolean } => {
  const earlier = s.byDigest.get(captureDigest)
  return earlier === undefined ? { id: nextEvidenceId(s), repeat: false } : { id: earlier, repeat: true }
}

const notOpen = (id: string): ResearchDecision =>
  E.left(failure('RESERVATION_NOT_OPEN', `reservation ${id} is not open`, { reservation_id: id }))

/**
 * When the reservation is the pending plan's and the case waits for research, it continues; a
 * retry the operator asked for (before the retry time, say) is recorded as a manual retry.
 */
const resumed = (s: CaseState, reservationId: string, manualRetry = false): EventDraft[] =>
  s.pendingPlan?.reservation === reservationId && s.state === 'BLOCKED' && s.reason === 'RESEARCH_UNAVAILABLE'
    ? [checkpointDraft(s, 'INVESTIGATING', { manualRetry })]
    : []

export const decideRecordCapture = (s: CaseState, c: RecordCapture): ResearchDecision => {
  const r = s.research.open.get(c.reservationId)
  if (r === undefined) return notOpen(c.reservationId)
  const evidence = evidenceFor(s.research, c.capture.digest)
  return E.right([
    eventDraft('CaptureRecorded', {
      reservation_id: c.reservationId,
      capture: c.capture,
      kind: c.kind,
      request_digest: c.requestDigest,
      evidence_id: evidence.id,
      repeat: evidence.repeat
    }),
    eventDraft('BudgetConsumed', { reservation_id: c.reservationId, amount: r.amount }),
    ...resumed(s, c.reservationId, c.manualRetry)
  ])
}

/** @category Deciders */
export interface RecordFailure {
  readonly reservationId: string
  readonly failure: Failure
  /** An outage keeps the reservation (resumable); a refused or timed-out question releases it. */
  readonly unavailable: boolean
  /** The operator asked for this retry of a plan blocked as RESEARCH_UNAVAILABLE (recorded on the checkpoint). */
  readonly manualRetry?: boolean
}

export const decideRecordFailure = (s: CaseState, c: RecordFailure, now: Date): ResearchDecision => {
  const r = s.research.open.get(c.reservationId)
  if (r === undefined) return notOpen(c.reservationId)
  const failed: EventDraft = eventDraft('ResearchFailed', {
    reservation_id: c.reservationId,
    code: c.failure.code,
    message: c.failure.message.slice(0, 500),
    unavailable: c.unavailable
  })
  const mine = s.pendingPlan?.reservation === c.reservationId
  if (!c.unavailable) {
    const resume = resumed(s, c.reservationId, c.manualRetry)
    // a refused plan is a stalled query: at the limit the case blocks (stall.ts)
    const block = mine ? stallBlock(s, now, resume.length) : []
    return E.right([
      failed,
      eventDraft('BudgetReleased', { reservation_id: c.reservationId, amount: r.amount, reason: 'refused' }, 'system'),
      ...resume,
      ...block
    ])
  }
  if (!mine) return E.right([failed])
  // The plan's outage blocks the case (or renews the block) with a growing retry time.
  const retry = new Date(now.getTime() + outageBackoffMs(s.research.outageStreak + 1)).toISOString()
  return E.right([
    failed,
    checkpointDraft(s, 'BLOCKED', {
      reason: 'RESEARCH_UNAVAILABLE',
      resume: 'INVESTIGATING',
      retryNotBefore: retry,
      manualRetry: c.manualRetry === true && s.state === 'BLOCKED'
    })
  ])
}

/** @category Deciders */
export interface CancelPlan {
  /** The reservation to cancel: the pending plan's by default, or an operator query's. */
  readonly reservationId?: string
  readonly reason: string
}

/** An operator cancels the pending plan (or an open query): its budget is released as cancelled. */
export const decideCancelPlan = (s: CaseState, c: CancelPlan): ResearchDecision => {
  if (c.reason.trim() === '') return E.left(failure('REASON_REQUIRED', 'say why the plan is cancelled'))
  const id = c.reservationId ?? s.pendingPlan?.reservation ?? null
  if (id === null) return E.left(failure('NOTHING_TO_CANCEL', 'no confirmed plan is waiting to be carried out'))
  const r = s.research.open.get(id)
  if (r === undefined) return notOpen(id)
  return E.right([
    eventDraft('PlanCancelled', { reservation_id: id, plan_id: r.plan_id, reason: c.reason }),
    eventDraft('BudgetReleased', { reservation_id: id, amount: r.amount, reason: 'cancelled' }, 'operator'),
    ...resumed(s, id)
  ])
}

/** An operator adds budget to a running investigation (not to a concluded or exhausted one). */
export const decideTopUp = (
  s: CaseState,
  { amount, reason }: { readonly amount: number; readonly reason: string }
): ResearchDecision => {
  if (!Number.isSafeInteger(amount) || amount <= 0)
    return E.left(failure('BUDGET_INVALID', 'a top-up is a positive whole amount', { amount }))
  if (reason.trim() === '') return E.left(failure('REASON_REQUIRED', 'say why the budget is topped up'))
  if (s.settings === null)
    return E.left(
      failure('INVESTIGATION_NOT_STARTED', 'the investigation has not started; its budget is set when it starts')
    )
  if (s.state === 'CONCLUDED' || s.state === 'EXHAUSTED')
    return E.left(
      failure('CASE_CLOSED', `the investigation is ${s.state}; a terminal budget state is not reset`, {
        state: s.state
      })
    )
  return E.right([eventDraft('BudgetToppedUp', { amount, reason })])
}
