/**
 * The state of a case, folded from its log: revisions, research (reservations, budget, evidence)
 * and the investigation's lifecycle. One fold in the domain, beside the deciders that decide on
 * it (lifecycle.ts, research-decider.ts) and the rules that check every recorded event against it
 * (rules.ts). Read-side projections are views of this state; the domain never imports them.
 *
 * `evolve` updates the state in place: the fold owns it (see projections/projection.ts).
 */
import type { RecordedEvent } from '../events/chain.js'
import type { EventType, ExtractedEntity, LifecycleState } from '../events/catalog.js'
import type { Binding, InvestigationSettings } from '../events/settings.js'
import { tokensOf } from '../events/model-provenance.js'
import { evolveResearch, evolveRevisions } from './research-fold.js'

/** @category Projections */
export interface ObjectRefLite {
  readonly digest: string
  readonly size: number
}

/** @category Projections */
export interface Reservation {
  readonly id: string
  readonly amount: number
  readonly seq: number
  readonly plan_id: string | null
  readonly request_digest: string | null
}

/** @category Projections */
export interface Evidence {
  readonly id: string
  readonly digest: string
  readonly kind: string
  readonly first_seq: number
  repeats: number
  /** Recorded by the case's preparation (enrichment) or as the answer to a query. */
  readonly origin: 'enrichment' | 'query'
  /** The last time it answered a query (a capture, a repeat, an answer from the case), or null. */
  last_result_seq: number | null
  /** The plan whose query it answered last (null for an operator's query or enrichment). */
  last_plan: string | null
}

/**
 * The capture recorded last for a request (by request digest): an identical query is answered from it.
 * @category Projections
 */
export interface AnsweredRequest {
  readonly evidence_id: string
  readonly capture: ObjectRefLite
}

/** @category Projections */
export interface ResearchState {
  open: Map<string, Reservation>
  closed: Set<string>
  reserved: number
  consumed: number
  released: number
  evidence: Map<string, Evidence>
  byDigest: Map<string, string>
  /** Object references of the captures (digest → {digest, size}) for reading them back. */
  evidenceRefs: Map<string, ObjectRefLite>
  /** The latest capture of each request digest (captures and enrichment). */
  byRequest: Map<string, AnsweredRequest>
  failures: number
  unavailable: number
  lastFailure: { code: string; reservation_id: string; unavailable: boolean } | null
  /** Outages since the last answered query: the backoff of RESEARCH_UNAVAILABLE grows with it. */
  outageStreak: number
}

/** @category Projections */
export interface RevisionInfo {
  readonly revision: number
  readonly inputs_digest: string
  /** The entities enrichment resolves: the listed ones, then those extracted from the report. */
  readonly entities: ReadonlyArray<{ type: string; id: number | string }>
  /** The entities extracted from the report, with their spans (inputs version 2 only). */
  readonly extracted?: ReadonlyArray<ExtractedEntity>
  completed: boolean
  facts: ObjectRefLite | null
  fact_count: number
  complete: boolean
  captures: number
  /** What the revision's enrichment was bound to (null before it completed, or for version-1 completions). */
  binding: Binding | null
}

/** @category Projections */
export interface Hypothesis {
  readonly id: string
  readonly statement: string
  status: 'open' | 'supported' | 'refuted'
  evidence: string[]
}

/** What the last confirmed plan (or operator query) came to: the next prompt shows it. @category cases */
export type LatestOutcome =
  | {
      readonly kind: 'capture'
      readonly evidence_id: string
      readonly digest: string
      readonly repeat: boolean
      readonly plan_id: string | null
      readonly seq: number
      readonly from_case: boolean
    }
  | {
      readonly kind: 'failure'
      readonly code: string
      readonly message: string
      readonly plan_id: string | null
      readonly arguments: Readonly<Record<string, unknown>> | null
      readonly seq: number
    }
  | { readonly kind: 'cancelled'; readonly plan_id: string | null; readonly reason: string; readonly seq: number }

/** @category cases */
export type CaseLifecycleState = LifecycleState | 'NOT_STARTED'

/** @category Projections */
export interface CaseState {
  research: ResearchState
  revisions: RevisionInfo[]
  /** The latest revision's report, and the latest completed revision's facts. */
  report: ObjectRefLite | null
  facts: ObjectRefLite | null
  settings: InvestigationSettings | null
  /** The revision the investigation started from (0 before the start). */
  revision: number
  state: CaseLifecycleState
  checkpoint: number
  reason: string | null
  resumeState: LifecycleState | null
  retryNotBefore: string | null
  /** The last model turn requested, and the request still waiting for its answer. */
  turn: number
  openTurn: { readonly turn: number; readonly phase: 'interpretation' | 'investigation' } | null
  consecutiveInvalid: number
  lastRejection: { code: string; message: string } | null
  lastModelFailure: { code: string; message: string } | null
  /** Failed model calls since the last answer: the backoff of MODEL_UNAVAILABLE grows with it. */
  modelFailureStreak: number
  /** The model of the latest answer, as recorded with it (null before the first, or for answers recorded without provenance). */
  lastModel: { readonly kind: string; readonly model: string | null; readonly endpoint: string | null } | null
  /** Model tokens spent, as the providers reported them (answers without usage count 0). */
  tokens: { prompt: number; completion: number; total: number; answers_with_usage: number }
  pendingPlan: { plan_id: string; arguments: Record<string, unknown>; turn: number; reservation: string | null } | null
  interpretation: string | null
  hypotheses: Map<string, Hypothesis>
  labRequests: Map<string, { description: string; feedback: string | null }>
  /**
   * Queries in a row that brought nothing new: refused plans and answers from the case (reset by
   * new evidence, any other decision, or an operator's resume of INVALID_LLM_RESPONSES). With
   * `count_refusals` it blocks at max_invalid_responses.
   */
  stalled: number
  /** Seq of the model's last decision (interpretation, plan, hypothesis, lab test, conclusion); 0 before any. */
  lastDecisionSeq: number
  conclusion: { summary: string; hypotheses: string[]; evidence: string[] } | null
  lastResult: LatestOutcome | null
  /** Budget added by operators after the start (with reasons in the log). */
  toppedUp: number
  /** The reservation of the plan a RESEARCH_UNAVAILABLE block waits on (only its answer ends the block). */
  researchBlockReservation: string | null
  /** When the case was created (its declaration), when known to the fold, and the time of the last event. */
  createdAt: string | null
  lastAt: string | null
}

export const initResearch = (): ResearchState => ({
  open: new Map(),
  closed: new Set(),
  reserved: 0,
  consumed: 0,
  released: 0,
  evidence: new Map(),
  byDigest: new Map(),
  evidenceRefs: new Map(),
  byRequest: new Map(),
  failures: 0,
  unavailable: 0,
  lastFailure: null,
  outageStreak: 0
})

export const initCaseState = (): CaseState => ({
  research: initResearch(),
  revisions: [],
  report: null,
  facts: null,
  settings: null,
  revision: 0,
  state: 'NOT_STARTED',
  checkpoint: 0,
  reason: null,
  resumeState: null,
  retryNotBefore: null,
  turn: 0,
  openTurn: null,
  consecutiveInvalid: 0,
  lastRejection: null,
  lastModelFailure: null,
  modelFailureStreak: 0,
  lastModel: null,
  tokens: { prompt: 0, completion: 0, total: 0, answers_with_usage: 0 },
  pendingPlan: null,
  interpretation: null,
  hypotheses: new Map(),
  labRequests: new Map(),
  stalled: 0,
  lastDecisionSeq: 0,
  conclusion: null,
  lastResult: null,
  toppedUp: 0,
  researchBlockReservation: null,
  createdAt: null,
  lastAt: null
})

/**
 * A copy that no later `evolve` of either side can change: a writer checks a command on a copy and
 * keeps the original if it is refused, and the rule fold keeps the state before every prompt and
 * answer for their re-derivation. What `evolve` mutates in place is copied (the research maps and
 * counters, evidence entries, revisions, hypotheses and their evidence lists, lab requests, the
 * token counts, the pending plan); what it only ever replaces (settings, references, the latest
 * outcome, the conclusion) is shared. test/domain/case-state-clone.test.ts holds it to a deep copy.
 */
export const cloneCaseState = (s: CaseState): CaseState => {
  const r = s.research
  return {
    ...s,
    research: {
      ...r,
      open: new Map(r.open),
      closed: new Set(r.closed),
      evidence: new Map(Array.from(r.evidence, ([k, v]) => [k, { ...v }])),
      byDigest: new Map(r.byDigest),
      evidenceRefs: new Map(r.evidenceRefs),
      byRequest: new Map(r.byRequest),
      lastFailure: r.lastFailure === null ? null : { ...r.lastFailure }
    },
    revisions: s.revisions.map((x) => ({ ...x })),
    tokens: { ...s.tokens },
    pendingPlan: s.pendingPlan === null ? null : { ...s.pendingPlan },
    hypotheses: new Map(Array.from(s.hypotheses, ([k, h]) => [k, { ...h, evidence: [...h.evidence] }])),
    labRequests: new Map(Array.from(s.labRequests, ([k, v]) => [k, { ...v }]))
  }
}

// --- the fold -----------------------------------------------------------------------------------

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
