/**
 * The state of a case, folded from its log: revisions, research (reservations, budget, evidence)
 * and the investigation's lifecycle. One fold in the domain, beside the deciders that decide on
 * it (lifecycle.ts, research-decider.ts) and the rules that check every recorded event against it
 * (rules.ts). Read-side projections are views of this state; the domain never imports them.
 *
 * `evolve` (case-evolve.ts) updates the state in place: the fold owns it (see projections/projection.ts).
 * This module imports neither the fold nor the rules: the rules import deciders, which import it.
 */
import type { ExtractedEntity, LifecycleState, Requester } from '../events/catalog.js'
import type { Binding, InvestigationSettings } from '../events/settings.js'

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
  /** The program that asked for an operator's query (an MCP client), as its reservation records it. */
  readonly requester: Requester | null
  /** The request of an operator's query, when its reservation records it (BudgetReserved version 4 on). */
  readonly request: Readonly<Record<string, unknown>> | null
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
      /** Who asked for the query it answers when that is no plan (an MCP client); absent: an operator, or a plan. */
      readonly requester?: { readonly protocol: 'mcp'; readonly name: string; readonly version: string }
    }
  | {
      readonly kind: 'failure'
      readonly code: string
      readonly message: string
      readonly plan_id: string | null
      readonly arguments: Readonly<Record<string, unknown>> | null
      readonly seq: number
      /** Who asked for the refused query when that is no plan (an MCP client); absent: an operator, or a plan. */
      readonly requester?: { readonly protocol: 'mcp'; readonly name: string; readonly version: string }
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
  /** The format generation of the case's writer (its declaration), when known to the fold; null: before generations. */
  formatGeneration: number | null
  /** The case's id (its declaration), when known to the fold. */
  caseId: string | null
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
  lastAt: null,
  formatGeneration: null,
  caseId: null
})

/**
 * How `evolve` reaches the parts it changes in place: the part itself, or, for a state a
 * snapshot shares its parts with ({@link snapshotCaseState}), a copy made on the first change
 * after the snapshot (copy on write: the snapshot keeps the part as it was).
 */
export interface Parts {
  /** `x` to change in place, or a copy of it when a snapshot shares it (the caller keeps the copy where `x` was). */
  readonly mine: <T extends object>(x: T) => T
  /** `o[k]`, to change in place: copied into `o` first when a snapshot shares it (`o` itself must be the state's own). */
  readonly own: <T extends object, K extends keyof T>(o: T, k: K) => T[K]
  /** The entry `k` of a map `own` returned, to change in place (copied into the map first when shared). */
  readonly entry: <V extends object>(m: Map<string, V>, k: string) => V | undefined
}

/** The parts of a state no snapshot shares: changed where they are. */
export const IN_PLACE: Parts = { mine: (x) => x, own: (o, k) => o[k], entry: (m, k) => m.get(k) }

/** What each snapshotted state (and its research state) has copied since its last snapshot: its own parts. */
const owned = new WeakMap<object, WeakSet<object>>()

const copyOf = <T extends object>(x: T): T =>
  (x instanceof Map ? new Map(x) : x instanceof Set ? new Set(x) : Array.isArray(x) ? [...x] : { ...x }) as T

/** How `evolve` changes the parts of state `s` (or of its research state `s`): see {@link Parts}. */
export const partsOf = (s: CaseState | ResearchState): Parts => {
  const owns = owned.get(s)
  if (owns === undefined) return IN_PLACE
  const mine = <T extends object>(x: T): T => {
    if (owns.has(x)) return x
    const c = copyOf(x)
    owns.add(c)
    return c
  }
  const own = <T extends object, K extends keyof T>(o: T, k: K): T[K] => {
    const x = o[k]
    if (typeof x !== 'object' || x === null || owns.has(x)) return x
    const c = mine(x)
    o[k] = c
    return c
  }
  const entry = <V extends object>(m: Map<string, V>, k: string): V | undefined => {
    const x = m.get(k)
    if (x === undefined || owns.has(x)) return x
    const c = mine(x)
    m.set(k, c)
    return c
  }
  return { mine, own, entry }
}

/**
 * The state as it is now, for reading only (never evolve it): it shares every part with `s`, and
 * `s` copies a part on its first change after this (see {@link Parts}). The rule fold keeps the
 * state before every prompt and answer for their re-derivation: a few parts change between two
 * turns, so a snapshot costs far less than a copy. test/domain/case-state-clone.test.ts holds it
 * to a deep copy taken at the same point.
 */
export const snapshotCaseState = (s: CaseState): CaseState => {
  const mine = new WeakSet<object>()
  owned.set(s, mine)
  owned.set(s.research, mine)
  return { ...s, research: { ...s.research } }
}

/**
 * A state to evolve on while `s` stays as it is: it shares every part with `s` and copies a part
 * on its own first change (see {@link Parts}), the mirror of {@link snapshotCaseState}. `s` itself
 * must not be evolved while the fork is in use (it would change the parts they share): a writer
 * checks a command on a fork of its handle's state, and either keeps the fork once the command is
 * written (the old state is dropped) or drops the fork (a refused or lost command), before the
 * handle's state moves on. test/domain/case-state-clone.test.ts holds it to deep copies.
 */
export const forkCaseState = (s: CaseState): CaseState => {
  const fork = { ...s, research: { ...s.research } }
  const mine = new WeakSet<object>()
  owned.set(fork, mine)
  owned.set(fork.research, mine)
  return fork
}

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
