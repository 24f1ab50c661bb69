/**
 * The fold of the case state (src/domain/case-state.ts): what each event type changes, in place
 * (the fold owns the state, see projections/projection.ts). One entry per event type in `EVOLVE`.
 */
import type { RecordedEvent } from '../events/chain.js'
import type { EventType } from '../events/catalog.js'
import { tokensOf } from '../events/model-provenance.js'
import type { CaseState } from './case-state.js'
import { evolveResearch, evolveRevisions } from './research-fold.js'

const answered = (s: CaseState, e: RecordedEvent): void => {
  s.consecutiveInvalid = 0
  s.lastRejection = null
  s.lastModelFailure = null
  s.lastDecisionSeq = e.seq
  // a decision other than a query is progress; a query's progress is its new evidence
  if (e.type !== 'PlanConfirmed') s.stalled = 0
}

type EventOf<T extends EventType> = Extract<RecordedEvent, { type: T }>
type PendingPlan = CaseState['pendingPlan']

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
        from_case: false
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
          arguments: mine ? plan.arguments : null,
          seq: e.seq
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

const nothing = (): void => {}

/**
 * What each event type changes in the case state besides research and revisions (one entry per
 * type of the catalog: a new type does not compile until it says what it changes). `plan` is the
 * pending plan before the event.
 */
const EVOLVE: { readonly [K in EventType]: (s: CaseState, e: EventOf<K>, plan: PendingPlan) => void } = {
  NoteRecorded: nothing,
  CommandSigned: nothing,
  AttachmentAdded: nothing,
  InputsRecorded: (s, e) => {
    s.report = { digest: e.data.report.digest, size: e.data.report.size }
  },
  EnrichmentCaptured: nothing,
  RevisionCompleted: (s, e) => {
    s.facts = { digest: e.data.facts.digest, size: e.data.facts.size }
  },
  InvestigationStarted: (s, e) => {
    s.settings = e.data.settings
    s.revision = e.data.revision
  },
  CheckpointRecorded: (s, e, plan) => {
    s.researchBlockReservation =
      e.data.state === 'BLOCKED' && e.data.reason === 'RESEARCH_UNAVAILABLE'
        ? (plan?.reservation ?? s.researchBlockReservation)
        : null
    s.checkpoint = e.data.generation
    s.resumeState = e.data.resume_state
    s.retryNotBefore = e.data.retry_not_before
    if (e.data.state !== 'BLOCKED') s.consecutiveInvalid = 0
    // an operator's resume of a block for invalid answers starts the count of stalled queries anew
    if (s.state === 'BLOCKED' && s.reason === 'INVALID_LLM_RESPONSES' && e.data.state !== 'BLOCKED') s.stalled = 0
    s.state = e.data.state
    s.reason = e.data.reason
  },
  ModelRequested: (s, e) => {
    s.turn = e.data.turn
    s.openTurn = { turn: e.data.turn, phase: e.data.phase }
  },
  ModelResponded: (s, e) => {
    s.openTurn = null
    s.modelFailureStreak = 0
    const p = e.data.provenance
    if (p === null) return
    s.lastModel = { kind: p.kind, model: p.model, endpoint: p.endpoint }
    if (p.usage === null) return
    s.tokens.prompt += p.usage.prompt_tokens ?? 0
    s.tokens.completion += p.usage.completion_tokens ?? 0
    s.tokens.total += tokensOf(p.usage)
    s.tokens.answers_with_usage += 1
  },
  ModelFailed: (s, e) => {
    s.openTurn = null
    s.modelFailureStreak += 1
    s.lastModelFailure = { code: e.data.code, message: e.data.message }
  },
  ModelResponseRejected: (s, e) => {
    s.consecutiveInvalid = e.data.consecutive
    s.lastRejection = { code: e.data.code, message: e.data.message }
  },
  InterpretationRecorded: (s, e) => {
    s.interpretation = e.data.summary
    answered(s, e)
  },
  PlanConfirmed: (s, e) => {
    s.pendingPlan = { plan_id: e.data.plan_id, arguments: e.data.arguments, turn: e.data.turn, reservation: null }
    answered(s, e)
  },
  BudgetReserved: (s, e) => {
    if (s.pendingPlan !== null && e.data.plan_id === s.pendingPlan.plan_id)
      s.pendingPlan.reservation = e.data.reservation_id
  },
  HypothesisProposed: (s, e) => {
    s.hypotheses.set(e.data.hypothesis_id, {
      id: e.data.hypothesis_id,
      statement: e.data.statement,
      status: 'open',
      evidence: [...e.data.evidence]
    })
    answered(s, e)
  },
  HypothesisUpdated: (s, e) => {
    const h = s.hypotheses.get(e.data.hypothesis_id)
    if (h !== undefined) {
      h.status = e.data.status
      for (const id of e.data.evidence) if (!h.evidence.includes(id)) h.evidence.push(id)
    }
    answered(s, e)
  },
  LabTestRequested: (s, e) => {
    s.labRequests.set(e.data.request_id, { description: e.data.description, feedback: null })
    answered(s, e)
  },
  LabFeedbackRecorded: (s, e) => {
    const r = s.labRequests.get(e.data.request_id)
    if (r !== undefined) r.feedback = e.data.feedback
  },
  ConclusionRecorded: (s, e) => {
    s.conclusion = { summary: e.data.summary, hypotheses: [...e.data.hypotheses], evidence: [...e.data.evidence] }
    answered(s, e)
  },
  PlanCancelled: (s, e) => {
    s.lastResult = { kind: 'cancelled', plan_id: e.data.plan_id, reason: e.data.reason, seq: e.seq }
  },
  BudgetToppedUp: (s, e) => {
    s.toppedUp += e.data.amount
  },
  // the plan a capture answered (its evidence exists only once research has folded it in)
  CaptureRecorded: (s, e, plan) => {
    const ev = s.research.evidence.get(e.data.evidence_id)
    if (ev !== undefined) ev.last_plan = plan?.reservation === e.data.reservation_id ? plan.plan_id : null
  },
  BudgetConsumed: nothing,
  BudgetReleased: nothing,
  ResearchFailed: nothing,
  QueryAnsweredFromCase: nothing
}

/** Folds one recorded event into the case state (in place) and returns it. */
export const evolve = (s: CaseState, e: RecordedEvent): CaseState => {
  const plan = s.pendingPlan
  evolvePlanOutcome(s, e, plan)
  s.research = evolveResearch(s.research, e)
  s.revisions = evolveRevisions(s.revisions, e)
  s.lastAt = e.at
  ;(EVOLVE[e.type] as (s: CaseState, e: RecordedEvent, plan: PendingPlan) => void)(s, e, plan)
  return s
}
