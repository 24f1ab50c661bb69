import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { eventDraft, type EventDraft } from '../events/chain.js'
import type { InvestigationSettings } from '../events/settings.js'
import type { CaseState, ObjectRefLite } from './case-state.js'
import { committedResearch, tokensSpent } from './budget.js'
import type { ModelProvenance } from '../events/model-provenance.js'
import { checkpointDraft as checkpoint, outageBackoffMs } from './research-decider.js'
import { PROMPT_MIN_CHARS } from './limits.js'
import { resumesByTime } from './blocks.js'
import { moved, type Decision } from './decision.js'
import { decideAnswer } from './answer-decider.js'

export type { Decision }

/** Starts the investigation from the latest completed revision, with settings fixed for its life. */
export const decideStart = (s: CaseState, { settings }: { readonly settings: InvestigationSettings }): Decision => {
  if (s.state !== 'NOT_STARTED')
    return E.left(failure('INVESTIGATION_STARTED', 'the investigation has started already'))
  if (settings.prompt_version !== 'investigation_project_v1' && settings.prompt_max_chars < PROMPT_MIN_CHARS) {
    return E.left(
      failure(
        'INVALID_ARGUMENT',
        `prompt_max_chars is ${settings.prompt_max_chars}; a prompt of version 2 needs at least ${PROMPT_MIN_CHARS} characters`,
        { prompt_max_chars: settings.prompt_max_chars }
      )
    )
  }
  const done = s.revisions.filter((r) => r.completed)
  const latest = done[done.length - 1]
  if (latest === undefined)
    return E.left(
      failure(
        'CASE_NOT_PREPARED',
        'the case has no completed revision: record the bug report and run its preparation first',
        {}
      )
    )
  const committed = committedResearch(s.research)
  if (committed > settings.budget_total)
    return E.left(
      failure(
        'BUDGET_INSUFFICIENT',
        `${committed} units of research are committed already, more than the budget of ${settings.budget_total}: the start needs a budget total of at least ${committed}`,
        { committed }
      )
    )
  return E.right([
    eventDraft('InvestigationStarted', { settings, revision: latest.revision }, 'controller'),
    checkpoint(s, 'INTERPRETING')
  ])
}

// --- model turns ------------------------------------------------------------------------------

/** @category Deciders */
export interface TurnRequest {
  readonly turn: number
  readonly phase: 'interpretation' | 'investigation'
  readonly prompt: ObjectRefLite & { readonly media_type?: string }
  readonly promptVersion: string
  readonly promptChars: number
}

/**
 * The request of the next model turn (its prompt stored as an object), or EXHAUSTED when the
 * investigation's token limit has been reached (no model is asked once it is spent).
 */
export const decideRequest = (s: CaseState, r: TurnRequest): Decision => {
  if (s.state !== 'INTERPRETING' && s.state !== 'INVESTIGATING')
    return E.left(failure('CASE_NOT_ADVANCEABLE', `the case is ${s.state}`, { state: s.state }))
  if (r.turn !== s.turn + 1)
    return moved(`turn ${r.turn} was to follow turn ${r.turn - 1}, but the case is at turn ${s.turn}`)
  if (r.phase !== (s.state === 'INTERPRETING' ? 'interpretation' : 'investigation'))
    return moved(`a ${r.phase} turn, but the case is ${s.state}`)
  if (s.pendingPlan?.reservation != null) return moved(`plan ${s.pendingPlan.plan_id} waits to be carried out first`)
  if (tokensSpent(s)) return E.right([checkpoint(s, 'EXHAUSTED', { reason: 'TOKEN_BUDGET_EXHAUSTED' })])
  return E.right([
    eventDraft('ModelRequested', {
      turn: r.turn,
      phase: r.phase,
      prompt: r.prompt,
      prompt_version: r.promptVersion,
      prompt_chars: r.promptChars
    })
  ])
}

// --- the model's answers (the io-ts codecs are the answer contract) ---------------------------

/** @category Deciders */
export interface RecordedAnswer {
  readonly turn: number
  /** The raw answer as text (what the deciders parse). */
  readonly raw: string
  /** The raw answer's object (its exact bytes are stored). */
  readonly rawRef: ObjectRefLite & { readonly media_type?: string }
  readonly provenance: ModelProvenance | null
}

/** The model's answer recorded with which model gave it, and what it means (exactly one decision). */
export const decideResponse = (s: CaseState, a: RecordedAnswer, now: Date): Decision =>
  E.map((decided: EventDraft[]): EventDraft[] => [
    eventDraft('ModelResponded', { turn: a.turn, raw: a.rawRef, provenance: a.provenance }),
    ...decided
  ])(decideAnswer(s, { turn: a.turn, raw: a.raw, planId: `P${a.turn}` }, now))

/** How long a provider asked to be left alone (a Retry-After it sent), from a failure's data. */
const retryAfterOf = (f: Failure): number => {
  const v = f.data['retry_after_ms']
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.min(v, 24 * 3_600_000) : 0
}

/**
 * The model function failed for this turn (it threw, the provider refused or timed out, after the
 * client's own retries): the failure is recorded, and the case waits as MODEL_UNAVAILABLE with a
 * growing retry time, at least as long as a Retry-After the provider sent (`retry_after_ms` in
 * the failure's data). A call the controller cancelled is not a failure: nothing is recorded.
 */
export const decideModelFailure = (
  s: CaseState,
  { turn, failure: f }: { readonly turn: number; readonly failure: Failure },
  now: Date
): Decision => {
  if (s.state !== 'INTERPRETING' && s.state !== 'INVESTIGATING')
    return E.left(failure('CASE_NOT_ADVANCEABLE', `the case is ${s.state}`, { state: s.state }))
  if (s.openTurn?.turn !== turn) return moved(`turn ${turn} is not waiting for an answer`)
  // The block lasts the backoff of the failure streak, or what the provider asked for if longer.
  const retry = new Date(
    now.getTime() + Math.max(outageBackoffMs(s.modelFailureStreak + 1), retryAfterOf(f))
  ).toISOString()
  return E.right([
    eventDraft('ModelFailed', { turn, code: f.code, message: f.message.slice(0, 500) }),
    checkpoint(s, 'BLOCKED', { reason: 'MODEL_UNAVAILABLE', resume: s.state, retryNotBefore: retry })
  ])
}

/**
 * Resuming a blocked case. INVALID_LLM_RESPONSES and MODEL_UNAVAILABLE resume into exactly their
 * stored resume_state once retry_not_before has passed, or at once with manualRetry (recorded).
 * Nothing else is reset. AWAITING_TEST_FEEDBACK needs feedback; RESEARCH_UNAVAILABLE resumes by
 * carrying out the plan.
 */
export const decideResume = (s: CaseState, opts: { readonly manualRetry: boolean }, now: Date): Decision => {
  if (s.state !== 'BLOCKED')
    return E.left(failure('CASE_NOT_BLOCKED', `the case is ${s.state}, not blocked`, { state: s.state }))
  if (s.reason === 'AWAITING_TEST_FEEDBACK')
    return E.left(
      failure('CASE_AWAITING_FEEDBACK', 'the case waits for lab test feedback; record it with vba case feedback', {
        reason: s.reason
      })
    )
  if (s.reason === 'RESEARCH_UNAVAILABLE')
    return E.left(
      failure(
        'CASE_RESEARCH_BLOCKED',
        'the case resumes when research is available again: run the investigation (advance) to retry the confirmed plan, or cancel the plan',
        { reason: s.reason, retry_not_before: s.retryNotBefore }
      )
    )
  if (!resumesByTime(s.reason) || s.resumeState === null)
    return E.left(failure('CASE_NOT_RESUMABLE', `blocked for ${String(s.reason)}`, { reason: s.reason }))
  if (!opts.manualRetry && s.retryNotBefore !== null && now.getTime() < Date.parse(s.retryNotBefore)) {
    return E.left(
      failure(
        'RETRY_NOT_YET',
        `retry_not_before ${s.retryNotBefore} has not passed; an operator may resume now with a manual retry`,
        { retry_not_before: s.retryNotBefore }
      )
    )
  }
  return E.right([checkpoint(s, s.resumeState, { manualRetry: opts.manualRetry })])
}

export const decideFeedback = (
  s: CaseState,
  { requestId, feedback }: { readonly requestId: string; readonly feedback: string }
): Decision => {
  const r = s.labRequests.get(requestId)
  if (r === undefined)
    return E.left(failure('LAB_REQUEST_UNKNOWN', `no lab test request ${requestId}`, { request_id: requestId }))
  if (r.feedback !== null)
    return E.left(
      failure('LAB_FEEDBACK_RECORDED', `feedback for ${requestId} is recorded already`, { request_id: requestId })
    )
  const events: EventDraft[] = [eventDraft('LabFeedbackRecorded', { request_id: requestId, feedback })]
  if (s.state === 'BLOCKED' && s.reason === 'AWAITING_TEST_FEEDBACK')
    events.push(checkpoint(s, s.resumeState ?? 'INVESTIGATING'))
  return E.right(events)
}
