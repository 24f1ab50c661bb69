/**
 * The fold of the case state (src/domain/case-state.ts), in place (the fold owns the state, see
 * projections/projection.ts): the outcome of the pending plan, research and revisions, then what
 * each event type changes (its `evolve` in `EVENT_HANDLING`, event-handling.ts).
 */
import type { RecordedEvent } from '../events/chain.js'
import { partsOf, type CaseState, type Parts } from './case-state.js'
import { EVENT_HANDLING, type PendingPlan } from './event-handling.js'
import type { Requester } from '../events/requester.js'
import { evolveResearch, evolveRevisions } from './research-fold.js'

/** Who asked for the query of an open reservation that is no plan's (an MCP client), to keep with its outcome. */
const requesterOf = (s: CaseState, reservationId: string, mine: boolean): { requester?: Requester } => {
  const r = mine ? null : (s.research.open.get(reservationId)?.requester ?? null)
  return r === null ? {} : { requester: r }
}

/** What the pending plan's outcome changes, read before the research state forgets the reservation. */
const evolvePlanOutcome = (s: CaseState, e: RecordedEvent, plan: PendingPlan): void => {
  switch (e.type) {
    case 'CaptureRecorded': {
      const mine = plan?.reservation === e.data.reservation_id
      s.lastResult = {
        kind: 'capture',
        evidence_id: e.data.evidence_id,
        digest: e.data.capture.digest,
        repeat: e.data.repeat,
        plan_id: mine ? plan.plan_id : null,
        seq: e.seq,
        from_case: false,
        ...requesterOf(s, e.data.reservation_id, mine)
      }
      if (mine) {
        s.pendingPlan = null
        s.stalled = 0
      }
      return
    }
    case 'QueryAnsweredFromCase':
      s.lastResult = {
        kind: 'capture',
        evidence_id: e.data.evidence_id,
        digest: e.data.capture.digest,
        repeat: true,
        plan_id: e.data.plan_id,
        seq: e.seq,
        from_case: true
      }
      s.pendingPlan = null
      s.stalled += 1
      return
    case 'ResearchFailed':
      if (!e.data.unavailable) {
        const mine = plan?.reservation === e.data.reservation_id
        s.lastResult = {
          kind: 'failure',
          code: e.data.code,
          message: e.data.message,
          plan_id: mine ? plan.plan_id : null,
          arguments: mine ? plan.arguments : (s.research.open.get(e.data.reservation_id)?.request ?? null),
          seq: e.seq,
          ...requesterOf(s, e.data.reservation_id, mine)
        }
        if (mine) s.stalled += 1
      }
      return
    case 'BudgetReleased':
      if (plan?.reservation === e.data.reservation_id) s.pendingPlan = null
      return
    default:
      return
  }
}

/** Folds one recorded event into the case state (in place, copying first what a snapshot shares: Parts) and returns it. */
export const evolve = (s: CaseState, e: RecordedEvent): CaseState => {
  const plan = s.pendingPlan
  const w = partsOf(s)
  evolvePlanOutcome(s, e, plan)
  s.research = evolveResearch(s.research, e, w)
  s.revisions = evolveRevisions(s.revisions, e, w)
  s.lastAt = e.at
  ;(EVENT_HANDLING[e.type].evolve as (s: CaseState, e: RecordedEvent, plan: PendingPlan, w: Parts) => void)(
    s,
    e,
    plan,
    w
  )
  return s
}
