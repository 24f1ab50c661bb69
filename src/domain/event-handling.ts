/**
 * What the domain does with each event type: the rule that checks it against the state before it
 * (its family file in rules/, run by `checkEvent` in rules/events.ts) and what it changes in the
 * case state (folded by `evolve`, case-evolve.ts, besides research and revisions). One entry per
 * type of the catalog: a new type does not compile until it has both.
 *
 * One table for both is no runtime cycle: the checks import deciders, which import the state
 * (case-state.ts), and the state imports neither this table nor the fold.
 */
import type { RecordedEvent } from '../events/chain.js'
import type { EventType } from '../events/catalog.js'
import { tokensOf } from '../events/model-provenance.js'
import type { CaseState, Parts } from './case-state.js'
import { checkReserved, checkSettled, checkToppedUp } from './rules/budget.js'
import { checkCheckpoint, checkStart } from './rules/lifecycle.js'
import { checkFeedback } from './rules/reference.js'
import { checkCancelled, checkCapture, checkFailed, checkFromCase } from './rules/research.js'
import { checkCompleted, checkEnrichment, checkInputs } from './rules/revision.js'
import {
  checkAnswer,
  checkConclusion,
  checkInterpretation,
  checkLabTest,
  checkPlan,
  checkProposed,
  checkRejection,
  checkRequest,
  checkUpdated
} from './rules/turn.js'
import type { EventOf, RuleContext } from './rules/context.js'
import { checkSigned } from './rules/signature.js'

/** The pending plan before an event (a capture or a failure may be its outcome). */
export type PendingPlan = CaseState['pendingPlan']

/** What the domain does with an event of type `K`. */
export interface EventHandling<K extends EventType> {
  /** Its rules, in its context (its actor, version and command membership are checked for every type). */
  readonly check: (c: RuleContext<EventOf<K>>) => void
  /** What it changes in the case state (in place, through `w` for the parts it changes: see Parts), besides research and revisions. */
  readonly evolve: (s: CaseState, e: EventOf<K>, plan: PendingPlan, w: Parts) => void
}

const answered = (s: CaseState, e: RecordedEvent): void => {
  s.consecutiveInvalid = 0
  s.lastRejection = null
  s.lastModelFailure = null
  s.lastDecisionSeq = e.seq
  // a decision other than a query is progress; a query's progress is its new evidence
  if (e.type !== 'PlanConfirmed') s.stalled = 0
}

/** No rule beyond those every event has, or no change of the case state beyond research and revisions. */
const nothing = (): void => {}

/** An event type's check and fold (the type from the entry's key). */
const on = <K extends EventType>(
  check: NoInfer<EventHandling<K>['check']>,
  evolve: NoInfer<EventHandling<K>['evolve']>
): EventHandling<K> => ({ check, evolve })

/** The check and the fold of every event type. */
export const EVENT_HANDLING: { readonly [K in EventType]: EventHandling<K> } = {
  // The preparation of a case: its inputs, its enrichment and its prepared revision.
  InputsRecorded: on(checkInputs, (s, e) => {
    s.report = { digest: e.data.report.digest, size: e.data.report.size }
  }),
  EnrichmentCaptured: on(checkEnrichment, nothing),
  RevisionCompleted: on(checkCompleted, (s, e) => {
    s.facts = { digest: e.data.facts.digest, size: e.data.facts.size }
  }),
  // The investigation's lifecycle and its model turns.
  InvestigationStarted: on(checkStart, (s, e) => {
    s.settings = e.data.settings
    s.revision = e.data.revision
  }),
  CheckpointRecorded: on(checkCheckpoint, (s, e, plan) => {
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
  }),
  ModelRequested: on(checkRequest, (s, e) => {
    s.turn = e.data.turn
    s.openTurn = { turn: e.data.turn, phase: e.data.phase }
  }),
  ModelResponded: on(checkAnswer, (s, e, _plan, w) => {
    s.openTurn = null
    s.modelFailureStreak = 0
    const p = e.data.provenance
    if (p === null) return
    s.lastModel = { kind: p.kind, model: p.model, endpoint: p.endpoint }
    if (p.usage === null) return
    const tokens = w.own(s, 'tokens')
    tokens.prompt += p.usage.prompt_tokens ?? 0
    tokens.completion += p.usage.completion_tokens ?? 0
    tokens.total += tokensOf(p.usage)
    tokens.answers_with_usage += 1
  }),
  ModelFailed: on(checkAnswer, (s, e) => {
    s.openTurn = null
    s.modelFailureStreak += 1
    s.lastModelFailure = { code: e.data.code, message: e.data.message }
  }),
  ModelResponseRejected: on(checkRejection, (s, e) => {
    s.consecutiveInvalid = e.data.consecutive
    s.lastRejection = { code: e.data.code, message: e.data.message }
  }),
  InterpretationRecorded: on(checkInterpretation, (s, e) => {
    s.interpretation = e.data.summary
    answered(s, e)
  }),
  PlanConfirmed: on(checkPlan, (s, e) => {
    s.pendingPlan = { plan_id: e.data.plan_id, arguments: e.data.arguments, turn: e.data.turn, reservation: null }
    answered(s, e)
  }),
  // The reasoning: hypotheses, lab tests and their feedback, the conclusion.
  HypothesisProposed: on(checkProposed, (s, e, _plan, w) => {
    w.own(s, 'hypotheses').set(e.data.hypothesis_id, {
      id: e.data.hypothesis_id,
      statement: e.data.statement,
      status: 'open',
      evidence: [...e.data.evidence]
    })
    answered(s, e)
  }),
  HypothesisUpdated: on(checkUpdated, (s, e, _plan, w) => {
    const h = w.entry(w.own(s, 'hypotheses'), e.data.hypothesis_id)
    if (h !== undefined) {
      h.status = e.data.status
      const evidence = w.own(h, 'evidence')
      for (const id of e.data.evidence) if (!evidence.includes(id)) evidence.push(id)
    }
    answered(s, e)
  }),
  LabTestRequested: on(checkLabTest, (s, e, _plan, w) => {
    w.own(s, 'labRequests').set(e.data.request_id, { description: e.data.description, feedback: null })
    answered(s, e)
  }),
  LabFeedbackRecorded: on(checkFeedback, (s, e, _plan, w) => {
    const r = w.entry(w.own(s, 'labRequests'), e.data.request_id)
    if (r !== undefined) r.feedback = e.data.feedback
  }),
  ConclusionRecorded: on(checkConclusion, (s, e) => {
    s.conclusion = { summary: e.data.summary, hypotheses: [...e.data.hypotheses], evidence: [...e.data.evidence] }
    answered(s, e)
  }),
  // The budget and the research of confirmed plans.
  BudgetReserved: on(checkReserved, (s, e, _plan, w) => {
    const pending = s.pendingPlan !== null && e.data.plan_id === s.pendingPlan.plan_id ? w.own(s, 'pendingPlan') : null
    if (pending !== null) pending.reservation = e.data.reservation_id
  }),
  // the plan a capture answered (its evidence exists only once research has folded it in)
  CaptureRecorded: on(checkCapture, (s, e, plan, w) => {
    const ev = w.entry(w.own(s.research, 'evidence'), e.data.evidence_id)
    if (ev !== undefined) ev.last_plan = plan?.reservation === e.data.reservation_id ? plan.plan_id : null
  }),
  BudgetConsumed: on(checkSettled, nothing),
  BudgetReleased: on(checkSettled, nothing),
  BudgetToppedUp: on(checkToppedUp, (s, e) => {
    s.toppedUp += e.data.amount
  }),
  ResearchFailed: on(checkFailed, nothing),
  QueryAnsweredFromCase: on(checkFromCase, nothing),
  PlanCancelled: on(checkCancelled, (s, e) => {
    s.lastResult = { kind: 'cancelled', plan_id: e.data.plan_id, reason: e.data.reason, seq: e.seq }
  }),
  // What people hand in, and the signature of a command.
  NoteRecorded: on(nothing, nothing),
  AttachmentAdded: on(nothing, nothing),
  CommandSigned: on(checkSigned, nothing)
}
