/**
 * The lifecycle of an investigation: a view of the domain's case fold (src/domain/case-state.ts):
 * its checkpointed state (with the resume state and retry time when blocked), the model turns,
 * the confirmed plan still to be carried out, hypotheses, lab tests, the conclusion and the budget.
 */
import { evolve } from '../domain/case-evolve.js'
import { initCaseState, type CaseLifecycleState, type CaseState, type LatestOutcome } from '../domain/case-state.js'
import { budgetTotal, heldBudget, remainingBudget } from '../domain/budget.js'
import type { Projection } from './projection.js'
import type { BlockReason, LifecycleState } from '../events/catalog.js'

/** Why a case is blocked, or why it is EXHAUSTED. @category cases */
export type StatusReason = BlockReason | 'BUDGET_EXHAUSTED' | 'TOKEN_BUDGET_EXHAUSTED'

const REASONS: ReadonlySet<string> = new Set<StatusReason>([
  'RESEARCH_UNAVAILABLE',
  'INVALID_LLM_RESPONSES',
  'AWAITING_TEST_FEEDBACK',
  'MODEL_UNAVAILABLE',
  'BUDGET_EXHAUSTED',
  'TOKEN_BUDGET_EXHAUSTED'
])
/** A case state's reason as a StatusReason (null for none, or one this version does not know). */
export const reasonOf = (r: string | null): StatusReason | null =>
  r !== null && REASONS.has(r) ? (r as StatusReason) : null

/**
 * The budget of a started investigation: total (with top-ups), reserved, consumed, released, held and remaining.
 * @category cases
 */
export interface BudgetView {
  readonly total: number
  readonly topped_up: number
  readonly reserved: number
  readonly consumed: number
  readonly released: number
  readonly held: number
  readonly remaining: number
}

/**
 * The investigation as a view: lifecycle state and block, turns, plan, latest outcome, hypotheses, lab tests, conclusion, budget.
 * @category cases
 */
export interface LifecycleView {
  readonly state: CaseLifecycleState
  readonly checkpoint_generation: number
  readonly reason: StatusReason | null
  readonly resume_state: LifecycleState | null
  readonly retry_not_before: string | null
  /** The revision the investigation started from (0 before the start). */
  readonly revision: number
  readonly turn: number
  readonly consecutive_invalid_responses: number
  /** Refused or repeated queries in a row (they block at max_invalid_responses when the investigation counts them). */
  readonly stalled_queries: number
  readonly pending_plan: string | null
  readonly last_result: LatestOutcome | null
  readonly interpretation: string | null
  readonly hypotheses: ReadonlyArray<{
    readonly id: string
    readonly status: 'open' | 'supported' | 'refuted'
    readonly statement: string
    readonly evidence: readonly string[]
  }>
  readonly lab_requests: ReadonlyArray<{
    readonly id: string
    readonly description: string
    readonly feedback: string | null
  }>
  readonly conclusion: CaseState['conclusion']
  /** Null before the investigation starts (its budget is set by the start). */
  readonly budget: BudgetView | null
  /** Why the model could not be used, while the case waits for it: the code and the message (HTTP status, the provider's text). */
  readonly last_model_failure: { readonly code: string; readonly message: string } | null
  /** The model of the latest answer as its provider reported it, how it was reached, and the endpoint's origin. */
  readonly model: { readonly kind: string; readonly name: string | null; readonly endpoint: string | null } | null
  /** Model tokens spent, as the providers reported them, and the investigation's limit (null: none). */
  readonly tokens: {
    readonly prompt: number
    readonly completion: number
    readonly total: number
    readonly answers_with_usage: number
    readonly limit: number | null
  }
}

/** @category Projections */
export const lifecycleView = (s: CaseState): LifecycleView => {
  const r = s.research
  return {
    state: s.state,
    checkpoint_generation: s.checkpoint,
    reason: reasonOf(s.reason),
    resume_state: s.resumeState,
    retry_not_before: s.retryNotBefore,
    revision: s.revision,
    turn: s.turn,
    consecutive_invalid_responses: s.consecutiveInvalid,
    stalled_queries: s.stalled,
    pending_plan: s.pendingPlan?.plan_id ?? null,
    last_result: s.lastResult,
    interpretation: s.interpretation,
    hypotheses: [...s.hypotheses.values()].map((h) => ({
      id: h.id,
      status: h.status,
      statement: h.statement,
      evidence: [...h.evidence]
    })),
    lab_requests: [...s.labRequests.entries()].map(([id, v]) => ({
      id,
      description: v.description,
      feedback: v.feedback
    })),
    conclusion: s.conclusion,
    budget:
      s.settings === null
        ? null
        : {
            total: budgetTotal(s),
            topped_up: s.toppedUp,
            reserved: r.reserved,
            consumed: r.consumed,
            released: r.released,
            held: heldBudget(r),
            remaining: remainingBudget(s)
          },
    last_model_failure: s.lastModelFailure,
    model:
      s.lastModel === null ? null : { kind: s.lastModel.kind, name: s.lastModel.model, endpoint: s.lastModel.endpoint },
    tokens: { ...s.tokens, limit: s.settings?.max_tokens ?? null }
  }
}

/** @category Projections */
export const lifecycleProjection: Projection<CaseState, LifecycleView> = {
  name: 'lifecycle',
  version: 4,
  init: initCaseState,
  evolve,
  view: lifecycleView
}
