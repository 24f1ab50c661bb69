/**
 * The lifecycle of an investigation, folded from the log: its checkpointed state (with the
 * resume state and retry time when blocked), the model exchanges, the confirmed plan still to be
 * carried out, hypotheses, lab tests, the conclusion, and the research state (budget, evidence).
 */
import type { InvestigationSettings, LifecycleState } from '../events/catalog.js'
import type { Projection } from './projection.js'
import { initResearch, researchProjection, type ResearchState } from './research.js'

export interface Hypothesis {
  readonly id: string
  readonly statement: string
  status: 'open' | 'supported' | 'refuted'
  evidence: string[]
}

export interface LifecycleS {
  settings: InvestigationSettings | null
  revision: number
  state: LifecycleState | 'NOT_STARTED'
  checkpoint: number
  reason: string | null
  resumeState: LifecycleState | null
  retryNotBefore: string | null
  turn: number
  consecutiveInvalid: number
  lastRejection: { code: string; message: string } | null
  pendingPlan: { plan_id: string; arguments: Record<string, unknown>; turn: number; reservation: string | null } | null
  interpretation: string | null
  hypotheses: Map<string, Hypothesis>
  labRequests: Map<string, { description: string; feedback: string | null }>
  conclusion: { summary: string; hypotheses: string[]; evidence: string[] } | null
  /** The latest capture recorded for a plan (what the next prompt shows in full). */
  lastResult: { evidence_id: string; digest: string; repeat: boolean; plan_id: string | null } | null
  /** The latest revision's report and facts objects (the prompt's case part). */
  report: { digest: string; size: number } | null
  facts: { digest: string; size: number } | null
  research: ResearchState
}

export interface LifecycleView {
  readonly state: string
  readonly checkpoint_generation: number
  readonly reason: string | null
  readonly resume_state: string | null
  readonly retry_not_before: string | null
  readonly turn: number
  readonly consecutive_invalid_responses: number
  readonly pending_plan: string | null
  readonly hypotheses: ReadonlyArray<{ id: string; status: string; statement: string; evidence: readonly string[] }>
  readonly lab_requests: ReadonlyArray<{ id: string; description: string; feedback: string | null }>
  readonly conclusion: LifecycleS['conclusion']
  readonly budget: { total: number; reserved: number; consumed: number; released: number; held: number; remaining: number } | null
}

export const initLifecycle = (): LifecycleS => ({
  settings: null,
  revision: 0,
  state: 'NOT_STARTED',
  checkpoint: 0,
  reason: null,
  resumeState: null,
  retryNotBefore: null,
  turn: 0,
  consecutiveInvalid: 0,
  lastRejection: null,
  pendingPlan: null,
  interpretation: null,
  hypotheses: new Map(),
  labRequests: new Map(),
  conclusion: null,
  lastResult: null,
  report: null,
  facts: null,
  research: initResearch()
})

/** Budget left for new reservations: total minus consumed minus what reservations still hold. */
export const remainingBudget = (s: LifecycleS): number => {
  if (s.settings === null) return 0
  const r = s.research
  return s.settings.budget_total - r.consumed - (r.reserved - r.consumed - r.released)
}

export const lifecycleProjection: Projection<LifecycleS, LifecycleView> = {
  name: 'lifecycle',
  version: 1,
  init: initLifecycle,
  evolve: (s, e) => {
    s.research = researchProjection.evolve(s.research, e)
    switch (e.type) {
      case 'InputsRecorded':
        s.report = { digest: e.data.report.digest, size: e.data.report.size }
        return s
      case 'RevisionCompleted':
        s.facts = { digest: e.data.facts.digest, size: e.data.facts.size }
        return s
      case 'InvestigationStarted':
        s.settings = e.data.settings
        s.revision = e.data.revision
        return s
      case 'CheckpointRecorded':
        s.checkpoint = e.data.generation
        s.state = e.data.state
        s.reason = e.data.reason
        s.resumeState = e.data.resume_state
        s.retryNotBefore = e.data.retry_not_before
        if (e.data.state !== 'BLOCKED') s.consecutiveInvalid = 0
        return s
      case 'ModelRequested':
        s.turn = e.data.turn
        return s
      case 'ModelResponseRejected':
        s.consecutiveInvalid = e.data.consecutive
        s.lastRejection = { code: e.data.code, message: e.data.message }
        return s
      case 'InterpretationRecorded':
        s.interpretation = e.data.summary
        s.consecutiveInvalid = 0
        s.lastRejection = null
        return s
      case 'PlanConfirmed':
        s.pendingPlan = { plan_id: e.data.plan_id, arguments: e.data.arguments, turn: e.data.turn, reservation: null }
        s.consecutiveInvalid = 0
        s.lastRejection = null
        return s
      case 'BudgetReserved':
        if (s.pendingPlan !== null && e.data.plan_id === s.pendingPlan.plan_id) s.pendingPlan.reservation = e.data.reservation_id
        return s
      case 'CaptureRecorded':
        s.lastResult = { evidence_id: e.data.evidence_id, digest: e.data.capture.digest, repeat: e.data.repeat, plan_id: s.pendingPlan?.plan_id ?? null }
        if (s.pendingPlan?.reservation === e.data.reservation_id) s.pendingPlan = null
        return s
      case 'BudgetReleased':
        if (s.pendingPlan?.reservation === e.data.reservation_id) s.pendingPlan = null
        return s
      case 'HypothesisProposed':
        s.hypotheses.set(e.data.hypothesis_id, { id: e.data.hypothesis_id, statement: e.data.statement, status: 'open', evidence: [...e.data.evidence] })
        s.consecutiveInvalid = 0
        s.lastRejection = null
        return s
      case 'HypothesisUpdated': {
        const h = s.hypotheses.get(e.data.hypothesis_id)
        if (h !== undefined) {
          h.status = e.data.status
          for (const id of e.data.evidence) if (!h.evidence.includes(id)) h.evidence.push(id)
        }
        s.consecutiveInvalid = 0
        s.lastRejection = null
        return s
      }
      case 'LabTestRequested':
        s.labRequests.set(e.data.request_id, { description: e.data.description, feedback: null })
        return s
      case 'LabFeedbackRecorded': {
        const r = s.labRequests.get(e.data.request_id)
        if (r !== undefined) r.feedback = e.data.feedback
        return s
      }
      case 'ConclusionRecorded':
        s.conclusion = { summary: e.data.summary, hypotheses: [...e.data.hypotheses], evidence: [...e.data.evidence] }
        return s
      default:
        return s
    }
  },
  view: (s) => {
    const r = s.research
    return {
      state: s.state,
      checkpoint_generation: s.checkpoint,
      reason: s.reason,
      resume_state: s.resumeState,
      retry_not_before: s.retryNotBefore,
      turn: s.turn,
      consecutive_invalid_responses: s.consecutiveInvalid,
      pending_plan: s.pendingPlan?.plan_id ?? null,
      hypotheses: [...s.hypotheses.values()].map((h) => ({ id: h.id, status: h.status, statement: h.statement, evidence: [...h.evidence] })),
      lab_requests: [...s.labRequests.entries()].map(([id, v]) => ({ id, description: v.description, feedback: v.feedback })),
      conclusion: s.conclusion,
      budget: s.settings === null ? null : { total: s.settings.budget_total, reserved: r.reserved, consumed: r.consumed, released: r.released, held: r.reserved - r.consumed - r.released, remaining: remainingBudget(s) }
    }
  }
}
