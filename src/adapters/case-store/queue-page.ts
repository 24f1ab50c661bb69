/**
 * The options of a page of the queue, checked once for both stores (a store's pages and a
 * folder's): the page size within bounds, known states only, a key of at most 256 characters.
 */
import type { CaseLifecycleState } from '../../domain/case-state.js'
import { fail } from '../../failures/error.js'
import {
  countEntries,
  QUEUE_PAGE,
  QUEUE_STATES,
  type QueueEntry,
  type QueuePage,
  type QueuePageOptions
} from '../../projections/queue.js'

export interface CheckedPage {
  readonly after: string | null
  readonly limit: number
  /** Null: every state. */
  readonly states: readonly CaseLifecycleState[] | null
  readonly counts: boolean
}

/** The page options as given, or INVALID_ARGUMENT naming what is wrong. */
export const checkPageOptions = (o: QueuePageOptions = {}): CheckedPage => {
  const limit = o.limit ?? QUEUE_PAGE.default
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > QUEUE_PAGE.max)
    fail('INVALID_ARGUMENT', `a page holds 1 to ${QUEUE_PAGE.max} cases (got ${String(o.limit)})`)
  const after = o.after ?? null
  if (after !== null && (typeof after !== 'string' || after === '' || after.length > 256))
    fail('INVALID_ARGUMENT', 'after: the key of the last case seen (the next of the previous page), 1-256 characters')
  let states: CaseLifecycleState[] | null = null
  if (o.states !== undefined) {
    const unknown = o.states.filter((s) => !QUEUE_STATES.includes(s))
    if (unknown.length > 0 || o.states.length === 0)
      fail(
        'INVALID_ARGUMENT',
        `states: one or more of ${QUEUE_STATES.join(', ')} (got ${o.states.join(', ') || 'none'})`,
        {
          states: QUEUE_STATES
        }
      )
    states = [...new Set(o.states)]
  }
  return { after, limit, states, counts: o.counts !== false }
}

/**
 * A page of a queue that is read in whole (a folder of case directories): its entries ordered by
 * `keyOf`, those after the key, in the states asked for.
 */
export const pageOfEntries = (
  all: readonly QueueEntry[],
  keyOf: (e: QueueEntry) => string,
  o: CheckedPage
): QueuePage => {
  const sorted = [...all].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0))
  const wanted = sorted.filter(
    (e) => (o.after === null || keyOf(e) > o.after) && (o.states === null || o.states.includes(e.state))
  )
  const entries = wanted.slice(0, o.limit)
  const last = entries[entries.length - 1]
  return {
    entries,
    next: wanted.length > o.limit && last !== undefined ? keyOf(last) : null,
    counts: o.counts ? countEntries(all) : null
  }
}
