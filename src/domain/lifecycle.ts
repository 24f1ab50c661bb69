/**
 * The investigation's deciders: pure functions from the folded case state and a command to the
 * events it produces, or a coded refusal. Given events, when command, then events. The rules in
 * rules.ts check the same things on a recorded log.
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { decodeQuery, holdsLoneSurrogate } from './query.js'
import type { EventDraft } from '../events/chain.js'
import type { InvestigationSettings } from '../events/settings.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import { describeErrors } from '../events/decode.js'
import type { CaseState, ObjectRefLite } from './case-state.js'
import { heldBudget, queryCost, remainingBudget, tokensSpent } from './budget.js'
import type { ModelProvenance } from '../events/model-provenance.js'
import { checkpointDraft as checkpoint, outageBackoffMs } from './research-decider.js'
import { answerFromCase } from './from-case.js'
import { PROMPT_MIN_CHARS } from './limits.js'
import { resumesByTime } from './blocks.js'
import type { Decision } from './decision.js'

/** SHA-256 of a request's canonical JSON (null when it has none). */
export const requestDigestOf = (request: unknown): string | null => {
  const text = canonicalJson(request)
  return E.isRight(text) ? sha256Digest(text.right) : null
}

export type { Decision }

/** Starts the investigation from the latest completed revision, with settings fixed for its life. */
export const decideStart = (s: CaseState, { settings }: { readonly settings: InvestigationSettings }): Decision => {
  if (s.state !== 'NOT_STARTED')
    return E.left(failure('INVESTIGATION_STARTED', 'the investigation has started already'))
  if (settings.prompt_version !== 'investigation_project_v1' && settings.prompt_max_chars < PROMPT_MIN_CHARS) {
    return E.left(
      failure(
        'INVALID_ARGUMENT',
        `prompt_max_chars is ${settings.prompt_max_chars}; a prompt of version 2 needs at least ${PROMPT_MIN_CHARS} characters`,
        { prompt_max_chars: settings.prompt_max_chars }
      )
    )
  }
  const done = s.revisions.filter((r) => r.completed)
  const latest = done[done.length - 1]
  if (latest === undefined)
    return E.left(
      failure(
        'CASE_NOT_PREPARED',
        'the case has no completed revision: record the bug report and run its preparation first',
        {}
      )
    )
  const committed = s.research.consumed + heldBudget(s.research)
  if (committed > settings.budget_total)
    return E.left(
      failure(
        'BUDGET_INSUFFICIENT',
        `${committed} units of research are committed already, more than the budget of ${settings.budget_total}`,
        { committed }
      )
    )
  return E.right([
    { type: 'InvestigationStarted', actor: 'controller', data: { settings, revision: latest.revision } },
    checkpoint(s, 'INTERPRETING')
  ])
}

// --- model turns ------------------------------------------------------------------------------

/** Another writer moved the case on since the caller looked: retryable, never a rule violation. */
const moved = (message: string): Decision =>
  E.left(
    failure('GENERATION_CONFLICT', `${message}: another writer advanced the case meanwhile; re-read it and retry`, {
      moved: true
    })
  )

export interface TurnRequest {
  readonly turn: number
  readonly phase: 'interpretation' | 'investigation'
  readonly prompt: ObjectRefLite & { readonly media_type?: string }
  readonly promptVersion: string
  readonly promptChars: number
}

/**
 * The request of the next model turn (its prompt stored as an object), or EXHAUSTED when the
 * investigation's token limit has been reached (no model is asked once it is spent).
 */
export const decideRequest = (s: CaseState, r: TurnRequest): Decision => {
  if (s.state !== 'INTERPRETING' && s.state !== 'INVESTIGATING')
    return E.left(failure('CASE_NOT_ADVANCEABLE', `the case is ${s.state}`, { state: s.state }))
  if (r.turn !== s.turn + 1)
    return moved(`turn ${r.turn} was to follow turn ${r.turn - 1}, but the case is at turn ${s.turn}`)
  if (r.phase !== (s.state === 'INTERPRETING' ? 'interpretation' : 'investigation'))
    return moved(`a ${r.phase} turn, but the case is ${s.state}`)
  if (s.pendingPlan?.reservation != null) return moved(`plan ${s.pendingPlan.plan_id} waits to be carried out first`)
  if (tokensSpent(s)) return E.right([checkpoint(s, 'EXHAUSTED', { reason: 'TOKEN_BUDGET_EXHAUSTED' })])
  return E.right([
    {
      type: 'ModelRequested',
      actor: 'controller',
      data: {
        turn: r.turn,
        phase: r.phase,
        prompt: r.prompt,
        prompt_version: r.promptVersion,
        prompt_chars: r.promptChars
      }
    }
  ])
}

// --- the model's answers (the io-ts codecs are the answer contract) ---------------------------

export const InterpretationAnswer = t.type({ interpretation: t.type({ summary: t.string }) })
const Evidence = t.array(t.string)
export const NextAction = t.type({
  next: t.union([
    t.type({ kind: t.literal('tool'), operation: t.string, arguments: t.unknown }),
    t.type({ kind: t.literal('hypothesis'), action: t.literal('propose'), statement: t.string, evidence: Evidence }),
    t.type({
      kind: t.literal('hypothesis'),
      action: t.literal('update'),
      hypothesis_id: t.string,
      status: t.keyof({ open: null, supported: null, refuted: null }),
      evidence: Evidence,
      note: t.string
    }),
    t.type({ kind: t.literal('lab_test'), description: t.string }),
    t.type({ kind: t.literal('conclusion'), summary: t.string, hypotheses: t.array(t.string), evidence: Evidence })
  ])
})

/** Longest answer the deciders parse (a longer one is rejected, and kept as a raw object). */
export const MAX_ANSWER_CHARS = 200_000

const reject = (s: CaseState, turn: number, code: string, message: string, now: Date): EventDraft[] => {
  const consecutive = s.consecutiveInvalid + 1
  const events: EventDraft[] = [
    {
      type: 'ModelResponseRejected',
      actor: 'system',
      data: { turn, code, message: message.slice(0, 500), consecutive }
    }
  ]
  const limit = s.settings?.max_invalid_responses ?? 3
  if (consecutive >= limit && s.state !== 'BLOCKED' && s.state !== 'NOT_STARTED') {
    const retry = new Date(now.getTime() + (s.settings?.retry_delay_ms ?? 0)).toISOString()
    events.push(
      checkpoint(s, 'BLOCKED', {
        reason: 'INVALID_LLM_RESPONSES',
        resume: s.state === 'INTERPRETING' ? 'INTERPRETING' : 'INVESTIGATING',
        retryNotBefore: retry
      })
    )
  }
  return events
}

const unknownEvidence = (s: CaseState, ids: readonly string[]): string[] =>
  ids.filter((id) => !s.research.evidence.has(id))

/** A string holding a UTF-16 surrogate without its partner (not representable in UTF-8). */
export const hasLoneSurrogate = (text: string): boolean => holdsLoneSurrogate(text)

/**
 * Decides what a raw model answer means. Invalid answers (not JSON, not the contract, lone
 * surrogates, an unknown operation, invalid query arguments, unknown evidence) are recorded as
 * rejections: a technical rejection ends no hypothesis and changes no evidence. After
 * max_invalid_responses in a row the case is BLOCKED / INVALID_LLM_RESPONSES with retry_not_before.
 */
export interface Answer {
  readonly turn: number
  /** The raw answer as text. */
  readonly raw: string
  /** The id a plan of this answer gets (P<turn>). */
  readonly planId: string
}

export const decideAnswer = (s: CaseState, { turn, raw, planId }: Answer, now: Date): Decision => {
  if (s.state !== 'INTERPRETING' && s.state !== 'INVESTIGATING')
    return E.left(failure('CASE_NOT_ADVANCEABLE', `the case is ${s.state}`, { state: s.state }))
  if (s.openTurn?.turn !== turn) return moved(`turn ${turn} is not waiting for an answer`)
  if (raw.length > MAX_ANSWER_CHARS)
    return E.right(
      reject(
        s,
        turn,
        'MODEL_ANSWER_TOO_LARGE',
        `the answer has ${raw.length} characters, over ${MAX_ANSWER_CHARS}`,
        now
      )
    )
  if (hasLoneSurrogate(raw))
    return E.right(
      reject(s, turn, 'MODEL_ANSWER_INVALID', 'the answer holds lone UTF-16 surrogates (not valid Unicode text)', now)
    )
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return E.right(reject(s, turn, 'MODEL_ANSWER_NOT_JSON', 'the answer is not JSON', now))
  }
  // Escaped lone surrogates ("\ud800") parse, but can be neither canonicalised nor stored.
  if (E.isLeft(canonicalJson(parsed)))
    return E.right(
      reject(s, turn, 'MODEL_ANSWER_INVALID', 'the answer holds lone UTF-16 surrogates (\\ud800-style escapes)', now)
    )
  if (s.state === 'INTERPRETING') {
    const a = InterpretationAnswer.decode(parsed)
    if (E.isLeft(a))
      return E.right(
        reject(
          s,
          turn,
          'MODEL_ANSWER_INVALID',
          `expected {"interpretation": {"summary": …}}: ${describeErrors(a.left)}`,
          now
        )
      )
    return E.right([
      { type: 'InterpretationRecorded', actor: 'model', data: { turn, summary: a.right.interpretation.summary } },
      checkpoint(s, 'INVESTIGATING')
    ])
  }
  const a = NextAction.decode(parsed)
  if (E.isLeft(a))
    return E.right(reject(s, turn, 'MODEL_ANSWER_INVALID', `expected {"next": {…}}: ${describeErrors(a.left)}`, now))
  const next = a.right.next
  switch (next.kind) {
    case 'tool': {
      if (next.operation !== 'project.query')
        return E.right(
          reject(
            s,
            turn,
            'UNKNOWN_OPERATION',
            `unknown operation ${JSON.stringify(next.operation.slice(0, 40))}; the only operation is project.query`,
            now
          )
        )
      const q = decodeQuery(next.arguments)
      if (E.isLeft(q)) return E.right(reject(s, turn, q.left.code, q.left.message, now))
      if (q.right.kind === 'source.context' && s.settings?.source_context === null) {
        return E.right(
          reject(
            s,
            turn,
            'OPERATION_NOT_IN_CONTRACT',
            "source.context is not part of this investigation's contract (it started without it)",
            now
          )
        )
      }
      const confirmed: EventDraft = {
        type: 'PlanConfirmed',
        actor: 'model',
        data: { plan_id: planId, turn, operation: 'project.query', arguments: q.right }
      }
      const fromCase = answerFromCase(s, planId, requestDigestOf(q.right), now)
      if (fromCase !== null) return E.right([confirmed, ...fromCase])
      const cost = queryCost(s)
      if (cost > remainingBudget(s)) return E.right([checkpoint(s, 'EXHAUSTED', { reason: 'BUDGET_EXHAUSTED' })])
      return E.right([
        confirmed,
        {
          type: 'BudgetReserved',
          actor: 'controller',
          data: {
            reservation_id: `res-${planId}`,
            action: 'project.query',
            amount: cost,
            plan_id: planId,
            request_digest: null,
            requester: null
          }
        }
      ])
    }
    case 'hypothesis': {
      const unknown = unknownEvidence(s, next.evidence)
      if (unknown.length > 0)
        return E.right(
          reject(s, turn, 'EVIDENCE_UNKNOWN', `unknown evidence ids: ${unknown.join(', ').slice(0, 200)}`, now)
        )
      if (next.action === 'propose')
        return E.right([
          {
            type: 'HypothesisProposed',
            actor: 'model',
            data: { hypothesis_id: `H${s.hypotheses.size + 1}`, statement: next.statement, evidence: next.evidence }
          }
        ])
      if (!s.hypotheses.has(next.hypothesis_id))
        return E.right(
          reject(s, turn, 'HYPOTHESIS_UNKNOWN', `unknown hypothesis ${next.hypothesis_id.slice(0, 20)}`, now)
        )
      return E.right([
        {
          type: 'HypothesisUpdated',
          actor: 'model',
          data: { hypothesis_id: next.hypothesis_id, status: next.status, evidence: next.evidence, note: next.note }
        }
      ])
    }
    case 'lab_test': {
      const id = `L${s.labRequests.size + 1}`
      return E.right([
        { type: 'LabTestRequested', actor: 'model', data: { request_id: id, description: next.description } },
        checkpoint(s, 'BLOCKED', { reason: 'AWAITING_TEST_FEEDBACK', resume: 'INVESTIGATING' })
      ])
    }
    case 'conclusion': {
      const unknown = [...unknownEvidence(s, next.evidence), ...next.hypotheses.filter((h) => !s.hypotheses.has(h))]
      if (unknown.length > 0)
        return E.right(
          reject(
            s,
            turn,
            'EVIDENCE_UNKNOWN',
            `unknown evidence or hypothesis ids: ${unknown.join(', ').slice(0, 200)}`,
            now
          )
        )
      return E.right([
        {
          type: 'ConclusionRecorded',
          actor: 'model',
          data: { summary: next.summary, hypotheses: next.hypotheses, evidence: next.evidence }
        },
        checkpoint(s, 'CONCLUDED')
      ])
    }
    default: {
      const _never: never = next
      return E.left(failure('INTERNAL_ERROR', `unhandled answer ${JSON.stringify(_never)}`))
    }
  }
}

export interface RecordedAnswer {
  readonly turn: number
  /** The raw answer as text (what the deciders parse). */
  readonly raw: string
  /** The raw answer's object (its exact bytes are stored). */
  readonly rawRef: ObjectRefLite & { readonly media_type?: string }
  readonly provenance: ModelProvenance | null
}

/** The model's answer recorded with which model gave it, and what it means (exactly one decision). */
export const decideResponse = (s: CaseState, a: RecordedAnswer, now: Date): Decision =>
  E.map((decided: EventDraft[]): EventDraft[] => [
    { type: 'ModelResponded', actor: 'model', data: { turn: a.turn, raw: a.rawRef, provenance: a.provenance } },
    ...decided
  ])(decideAnswer(s, { turn: a.turn, raw: a.raw, planId: `P${a.turn}` }, now))

/** How long a provider asked to be left alone (a Retry-After it sent), from a failure's data. */
const retryAfterOf = (f: Failure): number => {
  const v = f.data['retry_after_ms']
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.min(v, 24 * 3_600_000) : 0
}

/**
 * The model function failed for this turn (it threw, the provider refused or timed out, after the
 * client's own retries): the failure is recorded, and the case waits as MODEL_UNAVAILABLE with a
 * growing retry time, at least as long as a Retry-After the provider sent (`retry_after_ms` in
 * the failure's data). A call the controller cancelled is not a failure: nothing is recorded.
 */
export const decideModelFailure = (
  s: CaseState,
  { turn, failure: f }: { readonly turn: number; readonly failure: Failure },
  now: Date
): Decision => {
  if (s.state !== 'INTERPRETING' && s.state !== 'INVESTIGATING')
    return E.left(failure('CASE_NOT_ADVANCEABLE', `the case is ${s.state}`, { state: s.state }))
  if (s.openTurn?.turn !== turn) return moved(`turn ${turn} is not waiting for an answer`)
  // The block lasts the backoff of the failure streak, or what the provider asked for if longer.
  const retry = new Date(
    now.getTime() + Math.max(outageBackoffMs(s.modelFailureStreak + 1), retryAfterOf(f))
  ).toISOString()
  return E.right([
    { type: 'ModelFailed', actor: 'system', data: { turn, code: f.code, message: f.message.slice(0, 500) } },
    checkpoint(s, 'BLOCKED', { reason: 'MODEL_UNAVAILABLE', resume: s.state, retryNotBefore: retry })
  ])
}

/**
 * Resuming a blocked case. INVALID_LLM_RESPONSES and MODEL_UNAVAILABLE resume into exactly their
 * stored resume_state once retry_not_before has passed, or at once with manualRetry (recorded).
 * Nothing else is reset. AWAITING_TEST_FEEDBACK needs feedback; RESEARCH_UNAVAILABLE resumes by
 * carrying out the plan.
 */
export const decideResume = (s: CaseState, opts: { readonly manualRetry: boolean }, now: Date): Decision => {
  if (s.state !== 'BLOCKED')
    return E.left(failure('CASE_NOT_BLOCKED', `the case is ${s.state}, not blocked`, { state: s.state }))
  if (s.reason === 'AWAITING_TEST_FEEDBACK')
    return E.left(
      failure('CASE_AWAITING_FEEDBACK', 'the case waits for lab test feedback; record it with vba case feedback', {
        reason: s.reason
      })
    )
  if (s.reason === 'RESEARCH_UNAVAILABLE')
    return E.left(
      failure(
        'CASE_RESEARCH_BLOCKED',
        'the case resumes when research is available again: run the investigation (advance) to retry the confirmed plan, or cancel the plan',
        { reason: s.reason, retry_not_before: s.retryNotBefore }
      )
    )
  if (!resumesByTime(s.reason) || s.resumeState === null)
    return E.left(failure('CASE_NOT_RESUMABLE', `blocked for ${String(s.reason)}`, { reason: s.reason }))
  if (!opts.manualRetry && s.retryNotBefore !== null && now.getTime() < Date.parse(s.retryNotBefore)) {
    return E.left(
      failure(
        'RETRY_NOT_YET',
        `retry_not_before ${s.retryNotBefore} has not passed; an operator may resume now with a manual retry`,
        { retry_not_before: s.retryNotBefore }
      )
    )
  }
  return E.right([checkpoint(s, s.resumeState, { manualRetry: opts.manualRetry })])
}

export const decideFeedback = (
  s: CaseState,
  { requestId, feedback }: { readonly requestId: string; readonly feedback: string }
): Decision => {
  const r = s.labRequests.get(requestId)
  if (r === undefined)
    return E.left(failure('LAB_REQUEST_UNKNOWN', `no lab test request ${requestId}`, { request_id: requestId }))
  if (r.feedback !== null)
    return E.left(
      failure('LAB_FEEDBACK_RECORDED', `feedback for ${requestId} is recorded already`, { request_id: requestId })
    )
  const events: EventDraft[] = [
    { type: 'LabFeedbackRecorded', actor: 'operator', data: { request_id: requestId, feedback } }
  ]
  if (s.state === 'BLOCKED' && s.reason === 'AWAITING_TEST_FEEDBACK')
    events.push(checkpoint(s, s.resumeState ?? 'INVESTIGATING'))
  return E.right(events)
}
