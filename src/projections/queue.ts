/**
 * The queue row of a case: what a fleet of workers needs to know to pick the next case (its
 * lifecycle state, block reason and retry time, its latest completed revision, the budget left),
 * and whether it can run now, or why not. A pure view of the case state; the SQL store keeps it in
 * the same transaction as every append.
 */
import type { CaseLifecycleState, CaseState } from '../domain/case-state.js'
import { remainingBudget } from '../domain/budget.js'
import { BLOCK_REASONS, runnableAfterRetry } from '../domain/blocks.js'

/**
 * The queue columns of a case: its lifecycle state, block reason and retry time, revision, budget left and pending plan.
 * @category queue
 */
export interface QueueRow {
  readonly state: CaseLifecycleState
  readonly reason: string | null
  readonly retry_not_before: string | null
  /** The latest completed revision (0: none, the case is not prepared). */
  readonly revision: number
  readonly budget_left: number | null
  readonly pending_plan: string | null
  /** The model of the latest answer, as the provider reported it. */
  readonly model: string | null
  /** Model tokens the case has spent, as the providers reported them. */
  readonly tokens_total: number
  /** Why the model could not be used, while the case waits for it (code and message). */
  readonly last_model_failure: { readonly code: string; readonly message: string } | null
}

export const queueRow = (s: CaseState): QueueRow => ({
  state: s.state,
  reason: s.reason,
  retry_not_before: s.retryNotBefore,
  revision: s.revisions.filter((r) => r.completed).reduce((m, r) => Math.max(m, r.revision), 0),
  budget_left: s.settings === null ? null : remainingBudget(s),
  pending_plan: s.pendingPlan?.plan_id ?? null,
  model: s.lastModel?.model ?? null,
  tokens_total: s.tokens.total,
  last_model_failure: s.lastModelFailure
})

/** Blocks whose case is runnable again once their retry time has passed (src/domain/blocks.ts). */
export const TIMED_REASONS: readonly string[] = BLOCK_REASONS.filter(runnableAfterRetry)

/** Whether a case's next step can run at `now` (epoch ms), or why not. */
export const runnability = (row: QueueRow, now: number): { readonly runnable: boolean; readonly why: string } => {
  if (row.revision === 0) return { runnable: false, why: 'no completed revision: prepare the case first' }
  switch (row.state) {
    case 'NOT_STARTED':
      return { runnable: true, why: 'prepared, not started' }
    case 'INTERPRETING':
    case 'INVESTIGATING':
      return {
        runnable: true,
        why: row.pending_plan === null ? 'the model is next' : `plan ${row.pending_plan} is to be carried out`
      }
    case 'CONCLUDED':
      return { runnable: false, why: 'concluded' }
    case 'EXHAUSTED':
      return {
        runnable: false,
        why: row.reason === 'TOKEN_BUDGET_EXHAUSTED' ? 'the token budget is spent' : 'the budget is exhausted'
      }
    case 'BLOCKED': {
      if (!runnableAfterRetry(row.reason))
        return {
          runnable: false,
          why:
            row.reason === 'AWAITING_TEST_FEEDBACK' ? 'waits for lab test feedback' : `blocked (${String(row.reason)})`
        }
      const at = row.retry_not_before === null ? Number.NaN : Date.parse(row.retry_not_before)
      return Number.isNaN(at) || at <= now
        ? { runnable: true, why: `${row.reason}: the retry time has passed` }
        : { runnable: false, why: `${row.reason}: retry not before ${row.retry_not_before}` }
    }
    default: {
      const _never: never = row.state
      return _never
    }
  }
}

/** One case in a queue listing: its queue row, whether it can run now (or why not), its lease. @category queue */
export interface QueueEntry extends QueueRow {
  readonly case_id: string
  /** The case directory (a directory queue), for the verbs that take it. */
  readonly dir?: string
  readonly title: string | null
  readonly generation: number
  readonly runnable: boolean
  readonly why: string
  /** The worker holding the case and until when (ISO time), or null. */
  readonly lease: { readonly worker: string; readonly expires_at: string } | null
  /** When the case last changed (its last event's time, or its creation), ISO. */
  readonly last_activity: string
}
