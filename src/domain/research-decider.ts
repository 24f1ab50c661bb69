/**
 * Deciding research events in a case (given the research projection's state): reserve action
 * budget, then record the capture as evidence (a repeat when an identical capture exists) and
 * consume the reservation, or record the failure. Pure: the caller supplies ids and digests.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from './failure.js'
import type { EventDraft } from '../events/chain.js'
import type { ObjectRef } from '../events/codecs.js'
import type { QueryKind } from '../events/capture.js'
import type { ResearchState } from '../projections/research.js'

export type ResearchDecision = E.Either<Failure, EventDraft[]>

export interface Reserve {
  readonly reservationId: string
  readonly amount: number
  readonly planId: string | null
}

export const decideReserve = (s: ResearchState, c: Reserve): ResearchDecision => {
  if (!Number.isSafeInteger(c.amount) || c.amount <= 0) return E.left(failure('BUDGET_INVALID', 'a reservation is a positive whole amount', { amount: c.amount }))
  if (s.open.has(c.reservationId) || s.closed.has(c.reservationId)) return E.left(failure('RESERVATION_EXISTS', `reservation ${c.reservationId} exists`, { reservation_id: c.reservationId }))
  return E.right([{ type: 'BudgetReserved', actor: 'controller', data: { reservation_id: c.reservationId, action: 'project.query', amount: c.amount, plan_id: c.planId } }])
}

export interface RecordCapture {
  readonly reservationId: string
  readonly capture: ObjectRef
  readonly kind: QueryKind
  readonly requestDigest: string
}

/** Evidence ids are E1, E2, … in order of first appearance. */
export const nextEvidenceId = (s: ResearchState): string => `E${s.evidence.size + 1}`

/** The evidence a capture becomes: an earlier identical capture's id (a repeat), or the next id. */
export const evidenceFor = (s: ResearchState, captureDigest: string): { id: string; repeat: boolean } => {
  const earlier = s.byDigest.get(captureDigest)
  return earlier === undefined ? { id: nextEvidenceId(s), repeat: false } : { id: earlier, repeat: true }
}

export const decideRecordCapture = (s: ResearchState, c: RecordCapture): ResearchDecision => {
  const r = s.open.get(c.reservationId)
  if (r === undefined) return E.left(failure('RESERVATION_NOT_OPEN', `reservation ${c.reservationId} is not open`, { reservation_id: c.reservationId }))
  const evidence = evidenceFor(s, c.capture.digest)
  return E.right([
    { type: 'CaptureRecorded', actor: 'system', data: { reservation_id: c.reservationId, capture: c.capture, kind: c.kind, request_digest: c.requestDigest, evidence_id: evidence.id, repeat: evidence.repeat } },
    { type: 'BudgetConsumed', actor: 'system', data: { reservation_id: c.reservationId, amount: r.amount } }
  ])
}

export interface RecordFailure {
  readonly reservationId: string
  readonly failure: Failure
  /** An outage keeps the reservation (resumable); a refused question releases it. */
  readonly unavailable: boolean
}

export const decideRecordFailure = (s: ResearchState, c: RecordFailure): ResearchDecision => {
  const r = s.open.get(c.reservationId)
  if (r === undefined) return E.left(failure('RESERVATION_NOT_OPEN', `reservation ${c.reservationId} is not open`, { reservation_id: c.reservationId }))
  const failed: EventDraft = { type: 'ResearchFailed', actor: 'system', data: { reservation_id: c.reservationId, code: c.failure.code, message: c.failure.message, unavailable: c.unavailable } }
  return E.right(c.unavailable ? [failed] : [failed, { type: 'BudgetReleased', actor: 'system', data: { reservation_id: c.reservationId, amount: r.amount, reason: 'refused' } }])
}
