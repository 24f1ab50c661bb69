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

/** The lifecycle states whose next step runs without waiting for anything but a worker. */
export const RUNNABLE_STATES: readonly CaseLifecycleState[] = ['NOT_STARTED', 'INTERPRETING', 'INVESTIGATING']

/**
 * Whether a case can be claimed now or once its retry time passes (the SQL store's `claimable`
 * column, which its claim index covers): prepared, and in a runnable state or blocked by a
 * timed reason. {@link runnability} adds the clock.
 */
export const claimable = (row: Pick<QueueRow, 'revision' | 'state' | 'reason'>): boolean =>
  row.revision > 0 &&
  (RUNNABLE_STATES.includes(row.state) ||
    (row.state === 'BLOCKED' && row.reason !== null && TIMED_REASONS.includes(row.reason)))

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

/**
 * Which cases a page of the queue holds: the cases after a key, in key order (a case id in a
 * store, a directory name under a root), at most `limit`, optionally only those in some states.
 * Keys never change, so reading page after page (each `after` the previous page's `next`) gives
 * every case exactly once, also while cases change state meanwhile.
 * @category queue
 */
export interface QueuePageOptions {
  /** Only the cases after this key: the `next` of the previous page (none: from the first case). */
  readonly after?: string
  /** Cases per page: 1 to 10,000 (default 100). */
  readonly limit?: number
  /** Only the cases in these lifecycle states (default: every state). */
  readonly states?: readonly CaseLifecycleState[]
  /** Count the cases per state (default true; an aggregate over the store, no declaration read). */
  readonly counts?: boolean
}

/** How many cases a queue holds, by lifecycle state, and how many can run now. @category queue */
export interface QueueCounts {
  readonly total: number
  /** Cases a worker could claim now (prepared, runnable state or retry time passed, no live lease). */
  readonly runnable: number
  readonly by_state: Readonly<Partial<Record<CaseLifecycleState, number>>>
}

/** One page of the queue: its cases in key order, the key to read the next page after (null: the last page), the counts. @category queue */
export interface QueuePage {
  readonly entries: readonly QueueEntry[]
  /** The `after` of the next page; null when no case follows this page. */
  readonly next: string | null
  /** Every case of the queue counted (not only this page's, nor only the states asked for); null when not asked for. */
  readonly counts: QueueCounts | null
}

/** Cases per page unless asked otherwise, and the most a page holds. */
export const QUEUE_PAGE = { default: 100, max: 10_000 } as const

/** Every lifecycle state a queue row can be in, in lifecycle order. */
export const QUEUE_STATES: readonly CaseLifecycleState[] = [
  'NOT_STARTED',
  'INTERPRETING',
  'INVESTIGATING',
  'BLOCKED',
  'CONCLUDED',
  'EXHAUSTED'
]

/** The counts of a queue's entries (a queue that is read in whole, as a directory is). */
export const countEntries = (entries: readonly QueueEntry[]): QueueCounts => {
  const by: Partial<Record<CaseLifecycleState, number>> = {}
  for (const e of entries) by[e.state] = (by[e.state] ?? 0) + 1
  return { total: entries.length, runnable: entries.filter((e) => e.runnable).length, by_state: by }
}
