/**
 * The answer decider: what a raw model answer means in the case's state. It is parsed and checked
 * (size, Unicode, JSON, the contract of its phase) and becomes an interpretation, a confirmed
 * plan with its reservation (or its answer from the case), a hypothesis, a lab test request or a
 * conclusion; anything invalid is a recorded rejection.
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure } from '../failures/failure.js'
import { decodeQuery, holdsLoneSurrogate } from './query.js'
import { eventDraft, type EventDraft } from '../events/chain.js'
import { canonicalJson, sameCanonicalJson, sha256Digest } from '../events/canonical.js'
import { describeErrors } from '../events/decode.js'
import type { CaseState } from './case-state.js'
import { queryCost, remainingBudget } from './budget.js'
import { checkpointDraft as checkpoint } from './research-decider.js'
import { answerFromCase } from './from-case.js'
import { moved, type Decision } from './decision.js'
import { boundsViolation } from '../events/bounds.js'

/** SHA-256 of a request's canonical JSON (null when it has none). */
export const requestDigestOf = (request: unknown): string | null => {
  const text = canonicalJson(request)
  return E.isRight(text) ? sha256Digest(text.right) : null
}

export const InterpretationAnswer = t.type({ interpretation: t.type({ summary: t.string }) })
const Evidence = t.array(t.string)
/** The members of a `next` answer, by what they decide (an MCP agent's decision tools are generated from them). */
export const NEXT_ANSWERS = {
  tool: t.type({ kind: t.literal('tool'), operation: t.string, arguments: t.unknown }),
  propose: t.type({
    kind: t.literal('hypothesis'),
    action: t.literal('propose'),
    statement: t.string,
    evidence: Evidence
  }),
  update: t.type({
    kind: t.literal('hypothesis'),
    action: t.literal('update'),
    hypothesis_id: t.string,
    status: t.keyof({ open: null, supported: null, refuted: null }),
    evidence: Evidence,
    note: t.string
  }),
  lab_test: t.type({ kind: t.literal('lab_test'), description: t.string }),
  conclusion: t.type({
    kind: t.literal('conclusion'),
    summary: t.string,
    hypotheses: t.array(t.string),
    evidence: Evidence
  })
} as const
const N = NEXT_ANSWERS
export const NextAction = t.type({ next: t.union([N.tool, N.propose, N.update, N.lab_test, N.conclusion]) })

/**
 * `NextAction.decode(u)` without the errors of the union's other members: a value that `is` a
 * NextAction decodes to itself (no codec in it transforms what it decodes, and `is` asks for every
 * member), so only an answer that is not pays for the errors (a hypothesis update built two other
 * members' errors before it decoded). test/domain/answer-decode.test.ts holds it to `decode`.
 */
export const decodeNext = (u: unknown): t.Validation<t.TypeOf<typeof NextAction>> =>
  NextAction.is(u) ? E.right(u) : NextAction.decode(u)

/** Longest answer the deciders parse (a longer one is rejected, and kept as a raw object). */
export const MAX_ANSWER_CHARS = 200_000

const reject = (s: CaseState, turn: number, code: string, message: string, now: Date): EventDraft[] => {
  const consecutive = s.consecutiveInvalid + 1
  const events: EventDraft[] = [
    eventDraft('ModelResponseRejected', { turn, code, message: message.slice(0, 500), consecutive })
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

type Next = t.TypeOf<typeof NextAction>['next']

/** The raw answer parsed, or the rejection of an answer too large, not Unicode text or not JSON. */
const parseRaw = (
  s: CaseState,
  turn: number,
  raw: string,
  now: Date
): { parsed: unknown } | { rejected: EventDraft[] } => {
  if (raw.length > MAX_ANSWER_CHARS)
    return {
      rejected: reject(
        s,
        turn,
        'MODEL_ANSWER_TOO_LARGE',
        `the answer has ${raw.length} characters, over ${MAX_ANSWER_CHARS}`,
        now
      )
    }
  if (hasLoneSurrogate(raw))
    return {
      rejected: reject(
        s,
        turn,
        'MODEL_ANSWER_INVALID',
        'the answer holds lone UTF-16 surrogates (not valid Unicode text)',
        now
      )
    }
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return { rejected: reject(s, turn, 'MODEL_ANSWER_NOT_JSON', 'the answer is not JSON', now) }
  }
  // Before the canonical encoder and the answer's codec, which recurse.
  const bounds = boundsViolation(parsed)
  if (bounds !== null)
    return { rejected: reject(s, turn, 'MODEL_ANSWER_INVALID', `the answer is ${bounds.message}`, now) }
  // Escaped lone surrogates ("\ud800") parse, but can be neither canonicalised nor stored (nor can
  // a number too large for a double). A value of plain members only, checked without making its
  // text, canonicalises; anything else is decided by the canonical encoder.
  if (!sameCanonicalJson(parsed, parsed) && E.isLeft(canonicalJson(parsed)))
    return {
      rejected: reject(
        s,
        turn,
        'MODEL_ANSWER_INVALID',
        'the answer holds lone UTF-16 surrogates (\\ud800-style escapes)',
        now
      )
    }
  return { parsed }
}

/** A project.query the model asks for: its plan and reservation, its answer from the case, or a rejection. */
const decideTool = (
  s: CaseState,
  turn: number,
  planId: string,
  next: Extract<Next, { kind: 'tool' }>,
  now: Date
): EventDraft[] => {
  if (next.operation !== 'project.query')
    return reject(
      s,
      turn,
      'UNKNOWN_OPERATION',
      `unknown operation ${JSON.stringify(next.operation.slice(0, 40))}; the only operation is project.query`,
      now
    )
  const q = decodeQuery(next.arguments)
  if (E.isLeft(q)) return reject(s, turn, q.left.code, q.left.message, now)
  if (q.right.kind === 'source.context' && s.settings?.source_context === null) {
    return reject(
      s,
      turn,
      'OPERATION_NOT_IN_CONTRACT',
      "source.context is not part of this investigation's contract (it started without it)",
      now
    )
  }
  const confirmed: EventDraft = eventDraft('PlanConfirmed', {
    plan_id: planId,
    turn,
    operation: 'project.query',
    arguments: q.right
  })
  const fromCase = answerFromCase(s, planId, requestDigestOf(q.right), now)
  if (fromCase !== null) return [confirmed, ...fromCase]
  const cost = queryCost(s)
  if (cost > remainingBudget(s)) return [checkpoint(s, 'EXHAUSTED', { reason: 'BUDGET_EXHAUSTED' })]
  return [
    confirmed,
    eventDraft('BudgetReserved', {
      reservation_id: `res-${planId}`,
      action: 'project.query',
      amount: cost,
      plan_id: planId,
      request_digest: null,
      requester: null,
      request: null
    })
  ]
}

/** What the model's next action of kind `K` records in its turn, or the rejection of the answer. */
type DecideNext<K extends Next['kind']> = (
  s: CaseState,
  turn: number,
  next: Extract<Next, { kind: K }>,
  now: Date
) => EventDraft[]

/** A hypothesis proposed or updated, citing known evidence only. */
const decideHypothesis: DecideNext<'hypothesis'> = (s, turn, next, now) => {
  const unknown = unknownEvidence(s, next.evidence)
  if (unknown.length > 0)
    return reject(s, turn, 'EVIDENCE_UNKNOWN', `unknown evidence ids: ${unknown.join(', ').slice(0, 200)}`, now)
  if (next.action === 'propose')
    return [
      eventDraft('HypothesisProposed', {
        hypothesis_id: `H${s.hypotheses.size + 1}`,
        statement: next.statement,
        evidence: next.evidence
      })
    ]
  if (!s.hypotheses.has(next.hypothesis_id))
    return reject(s, turn, 'HYPOTHESIS_UNKNOWN', `unknown hypothesis ${next.hypothesis_id.slice(0, 20)}`, now)
  return [
    eventDraft('HypothesisUpdated', {
      hypothesis_id: next.hypothesis_id,
      status: next.status,
      evidence: next.evidence,
      note: next.note
    })
  ]
}

/** A conclusion citing known evidence and hypotheses; the case is CONCLUDED. */
const decideConclusion: DecideNext<'conclusion'> = (s, turn, next, now) => {
  const unknown = [...unknownEvidence(s, next.evidence), ...next.hypotheses.filter((h) => !s.hypotheses.has(h))]
  if (unknown.length > 0)
    return reject(
      s,
      turn,
      'EVIDENCE_UNKNOWN',
      `unknown evidence or hypothesis ids: ${unknown.join(', ').slice(0, 200)}`,
      now
    )
  return [
    eventDraft('ConclusionRecorded', { summary: next.summary, hypotheses: next.hypotheses, evidence: next.evidence }),
    checkpoint(s, 'CONCLUDED')
  ]
}

export const decideAnswer = (s: CaseState, { turn, raw, planId }: Answer, now: Date): Decision => {
  if (s.state !== 'INTERPRETING' && s.state !== 'INVESTIGATING')
    return E.left(failure('CASE_NOT_ADVANCEABLE', `the case is ${s.state}`, { state: s.state }))
  if (s.openTurn?.turn !== turn) return moved(`turn ${turn} is not waiting for an answer`)
  const p = parseRaw(s, turn, raw, now)
  if ('rejected' in p) return E.right(p.rejected)
  if (s.state === 'INTERPRETING') {
    const a = InterpretationAnswer.decode(p.parsed)
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
      eventDraft('InterpretationRecorded', { turn, summary: a.right.interpretation.summary }),
      checkpoint(s, 'INVESTIGATING')
    ])
  }
  const a = decodeNext(p.parsed)
  if (E.isLeft(a))
    return E.right(reject(s, turn, 'MODEL_ANSWER_INVALID', `expected {"next": {…}}: ${describeErrors(a.left)}`, now))
  const next = a.right.next
  switch (next.kind) {
    case 'tool':
      return E.right(decideTool(s, turn, planId, next, now))
    case 'hypothesis':
      return E.right(decideHypothesis(s, turn, next, now))
    case 'lab_test': {
      const id = `L${s.labRequests.size + 1}`
      return E.right([
        eventDraft('LabTestRequested', { request_id: id, description: next.description }),
        checkpoint(s, 'BLOCKED', { reason: 'AWAITING_TEST_FEEDBACK', resume: 'INVESTIGATING' })
      ])
    }
    case 'conclusion':
      return E.right(decideConclusion(s, turn, next, now))
    default: {
      const _never: never = next
      return E.left(failure('INTERNAL_ERROR', `unhandled answer ${JSON.stringify(_never)}`))
    }
  }
}
