/**
 * Every command of the case decider through the public given / when / then specification
 * (vba-case-research/testing): what it produces from a state, and what it refuses. Each decision
 * also passes the rule fold (the specification runs it).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { caseDecider, command, given, type CaseCommandType, type EventDraft } from '../../src/testing.js'
import { failure } from '../../src/failures/failure.js'
import type { InvestigationSettings } from '../../src/events/settings.js'
import { canonicalJson, sha256Digest } from '../../src/events/canonical.js'
import { right } from '../helpers/fs.js'

const T0 = new Date('2026-11-30T12:00:00.000Z')
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000)
const ref = (c: string, size = 10) => ({ digest: `sha256:${c.repeat(64)}`, size })
const REPORT = ref('a', 12)
const FACTS = ref('f', 40)
const settings: InvestigationSettings = {
  prompt_version: 'investigation_project_v1',
  budget_total: 2,
  action_costs: { 'project.query': 1 },
  max_invalid_responses: 2,
  retry_delay_ms: 60_000,
  prompt_max_chars: 20_000,
  source_context: null,
  max_tokens: null,
  contract: null,
  count_refusals: false,
  answer_repeats_from_case: false,
  binding: null
}
const index = { report: REPORT, entities: [{ type: 'quest', id: 1 }], attachments: [] }
const inputsDigest = sha256Digest(right(canonicalJson(index)))
const QUERY = { kind: 'database.count', table: 't', filters: [] }
const QUERY_DIGEST = sha256Digest(right(canonicalJson(QUERY)))

const checkpoint = (generation: number, state: string, extra: Record<string, unknown> = {}): EventDraft => ({
  type: 'CheckpointRecorded',
  actor: 'system',
  data: { generation, state, reason: null, resume_state: null, retry_not_before: null, manual_retry: false, ...extra }
})

const prepared = [
  command('RecordInputs', { author: 'operator', index }, at(0)),
  command(
    'CompleteRevision',
    { revision: 1, captures: [], facts: FACTS, factCount: 1, complete: true, binding: null, enrichment: null },
    at(1)
  )
]
const started = [...prepared, command('StartInvestigation', { settings }, at(2))]
const request = (turn: number, phase: 'interpretation' | 'investigation', when: Date) =>
  command(
    'RequestModel',
    { turn, phase, prompt: REPORT, promptVersion: 'investigation_project_v1', promptChars: 12 },
    when
  )
const answer = (turn: number, raw: unknown, when: Date) =>
  command(
    'RecordAnswer',
    { turn, raw: typeof raw === 'string' ? raw : JSON.stringify(raw), rawRef: ref('b'), provenance: null },
    when
  )
const investigating = [
  ...started,
  request(1, 'interpretation', at(3)),
  answer(1, { interpretation: { summary: 's' } }, at(4))
]
const planned = [
  ...investigating,
  request(2, 'investigation', at(5)),
  answer(2, { next: { kind: 'tool', operation: 'project.query', arguments: QUERY } }, at(6))
]

// Every command type is specified below (a new command does not compile until it is listed here).
const covered: Record<CaseCommandType, true> = {
  RecordNote: true,
  AddAttachment: true,
  RecordInputs: true,
  CompleteRevision: true,
  StartInvestigation: true,
  RequestModel: true,
  RecordAnswer: true,
  RecordModelFailure: true,
  Resume: true,
  RecordFeedback: true,
  Reserve: true,
  RecordCapture: true,
  RecordResearchFailure: true,
  CancelPlan: true,
  TopUp: true
}

test('RecordNote and AddAttachment: recorded by their author; empty text or a name over 255 characters refused', () => {
  given()
    .when(command('RecordNote', { author: 'controller', text: 'seen on realm 2' }, T0))
    .then([{ type: 'NoteRecorded', actor: 'controller', data: { text: 'seen on realm 2', format: 'plain' } }])
  given()
    .when(command('RecordNote', { author: 'operator', text: '  ' }, T0))
    .thenFails('INVALID_ARGUMENT')
  given()
    .when(command('AddAttachment', { author: 'operator', name: 'log.txt', object: ref('c') }, T0))
    .then([{ type: 'AttachmentAdded', actor: 'operator', data: { name: 'log.txt', object: ref('c') } }])
  given()
    .when(command('AddAttachment', { author: 'operator', name: 'x'.repeat(256), object: ref('c') }, T0))
    .thenFails('INVALID_ARGUMENT')
})

test('an accidental await of a specification is refused with a message, not compared', async () => {
  let message = ''
  try {
    // TypeScript refuses this await (TS1320); JavaScript callers get the message.
    const spec: unknown = given().when(command('RecordNote', { author: 'controller', text: 'seen on realm 2' }, T0))
    await (spec as Promise<void>)
  } catch (e) {
    message = e instanceof Error ? e.message : String(e)
  }
  assert.match(message, 'is not a promise')
})

test('RecordInputs: the next revision; the same inputs again make none', () => {
  given()
    .when(command('RecordInputs', { author: 'operator', index }, T0))
    .then([
      {
        type: 'InputsRecorded',
        actor: 'operator',
        data: { revision: 1, inputs_version: 1, inputs_digest: inputsDigest, ...index, origin: null }
      }
    ])
  given(prepared[0]!)
    .when(command('RecordInputs', { author: 'operator', index }, at(1)))
    .then([])
})

test('RecordInputs again: a new revision after a completed one with the same inputs; an open one is continued', () => {
  given(...prepared)
    .when(command('RecordInputs', { author: 'operator', index, again: true }, at(2)))
    .then([
      {
        type: 'InputsRecorded',
        actor: 'operator',
        data: { revision: 2, inputs_version: 1, inputs_digest: inputsDigest, ...index, origin: null }
      }
    ])
  given(prepared[0]!)
    .when(command('RecordInputs', { author: 'operator', index, again: true }, at(1)))
    .then([])
})

test('CompleteRevision: the latest open revision, once', () => {
  given(prepared[0]!)
    .when(prepared[1]!)
    .then([
      {
        type: 'RevisionCompleted',
        actor: 'system',
        data: { revision: 1, facts: FACTS, fact_count: 1, queries: 0, complete: true, binding: null, enrichment: null }
      }
    ])
  given(...prepared)
    .when(
      command(
        'CompleteRevision',
        { revision: 1, captures: [], facts: FACTS, factCount: 1, complete: true, binding: null, enrichment: null },
        at(2)
      )
    )
    .thenFails('REVISION_COMPLETED')
  given().when(prepared[1]!).thenFails('REVISION_NOT_OPEN')
})

test('StartInvestigation: from the latest completed revision, into INTERPRETING, once', () => {
  given(...prepared)
    .when(command('StartInvestigation', { settings }, at(2)))
    .then([
      { type: 'InvestigationStarted', actor: 'controller', data: { settings, revision: 1 } },
      checkpoint(1, 'INTERPRETING')
    ])
  given(prepared[0]!)
    .when(command('StartInvestigation', { settings }, at(2)))
    .thenFails('CASE_NOT_PREPARED')
  given(...started)
    .when(command('StartInvestigation', { settings }, at(3)))
    .thenFails('INVESTIGATION_STARTED')
})

test('RequestModel: the next turn of the phase; a stale turn is a conflict; a spent token budget ends the case instead', () => {
  given(...started)
    .when(request(1, 'interpretation', at(3)))
    .then([
      {
        type: 'ModelRequested',
        actor: 'controller',
        data: {
          turn: 1,
          phase: 'interpretation',
          prompt: REPORT,
          prompt_version: 'investigation_project_v1',
          prompt_chars: 12
        }
      }
    ])
  given(...started)
    .when(request(2, 'interpretation', at(3)))
    .thenFails('GENERATION_CONFLICT')
  given(...prepared)
    .when(request(1, 'interpretation', at(3)))
    .thenFails('CASE_NOT_ADVANCEABLE')
  const limited = { ...settings, prompt_version: 'investigation_project_v2' as const, max_tokens: 10 }
  const usage = {
    kind: 'http' as const,
    model: 'm',
    endpoint: null,
    parameters: null,
    attempts: 1,
    latency_ms: 5,
    finish_reason: 'stop',
    usage: { prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 },
    program: null,
    exit_status: null
  }
  given(
    ...prepared,
    command('StartInvestigation', { settings: limited }, at(2)),
    request(1, 'interpretation', at(3)),
    command(
      'RecordAnswer',
      { turn: 1, raw: JSON.stringify({ interpretation: { summary: 's' } }), rawRef: ref('b'), provenance: usage },
      at(4)
    )
  )
    .when(request(2, 'investigation', at(5)))
    .then([checkpoint(3, 'EXHAUSTED', { reason: 'TOKEN_BUDGET_EXHAUSTED' })])
})

test('RecordAnswer: the answer with exactly one decision; a plan reserves the cost of a query; invalid answers are rejected', () => {
  given(...started, request(1, 'interpretation', at(3)))
    .when(answer(1, { interpretation: { summary: 's' } }, at(4)))
    .then([
      { type: 'ModelResponded', actor: 'model', data: { turn: 1, raw: ref('b'), provenance: null } },
      { type: 'InterpretationRecorded', actor: 'model', data: { turn: 1, summary: 's' } },
      checkpoint(2, 'INVESTIGATING')
    ])
  const events = given(...investigating, request(2, 'investigation', at(5)))
    .when(answer(2, { next: { kind: 'tool', operation: 'project.query', arguments: QUERY } }, at(6)))
    .events()
  assert.equal(
    events.map((e) => e.type),
    ['ModelResponded', 'PlanConfirmed', 'BudgetReserved']
  )
  assert.equal(events[2]?.data, {
    reservation_id: 'res-P2',
    action: 'project.query',
    amount: 1,
    plan_id: 'P2',
    request_digest: null,
    requester: null,
    request: null
  })
  const rejected = given(...investigating, request(2, 'investigation', at(5)))
    .when(answer(2, '{', at(6)))
    .events()
  assert.equal(
    rejected.map((e) => e.type),
    ['ModelResponded', 'ModelResponseRejected']
  )
  given(...started)
    .when(answer(1, { interpretation: { summary: 's' } }, at(4)))
    .thenFails('GENERATION_CONFLICT')
})

test('RecordModelFailure: blocked as MODEL_UNAVAILABLE, retried after the backoff (or a Retry-After the provider sent)', () => {
  const f = failure('MODEL_HTTP_ERROR', 'slow down', { retry_after_ms: 120_000 })
  given(...started, request(1, 'interpretation', at(3)))
    .when(command('RecordModelFailure', { turn: 1, failure: f }, at(4)))
    .then([
      { type: 'ModelFailed', actor: 'system', data: { turn: 1, code: 'MODEL_HTTP_ERROR', message: 'slow down' } },
      checkpoint(2, 'BLOCKED', {
        reason: 'MODEL_UNAVAILABLE',
        resume_state: 'INTERPRETING',
        retry_not_before: new Date(at(4).getTime() + 120_000).toISOString()
      })
    ])
  given(...started)
    .when(command('RecordModelFailure', { turn: 1, failure: f }, at(4)))
    .thenFails('GENERATION_CONFLICT')
})

test('Resume: into the resume state after the retry time, or earlier with a manual retry; never a case waiting for feedback', () => {
  const blocked = [
    ...started,
    request(1, 'interpretation', at(3)),
    command('RecordModelFailure', { turn: 1, failure: failure('MODEL_CALL_FAILED', 'down') }, at(4))
  ]
  given(...blocked)
    .when(command('Resume', { manualRetry: false }, at(5)))
    .thenFails('RETRY_NOT_YET')
  given(...blocked)
    .when(command('Resume', { manualRetry: true }, at(5)))
    .then([checkpoint(3, 'INTERPRETING', { manual_retry: true })])
  given(...blocked)
    .when(command('Resume', { manualRetry: false }, at(60)))
    .then([checkpoint(3, 'INTERPRETING')])
  given(...started)
    .when(command('Resume', { manualRetry: true }, at(5)))
    .thenFails('CASE_NOT_BLOCKED')
  const lab = [
    ...investigating,
    request(2, 'investigation', at(5)),
    answer(2, { next: { kind: 'lab_test', description: 'try it' } }, at(6))
  ]
  given(...lab)
    .when(command('Resume', { manualRetry: true }, at(7)))
    .thenFails('CASE_AWAITING_FEEDBACK')
})

test('RecordFeedback: answers an open lab request once, and the case continues', () => {
  const lab = [
    ...investigating,
    request(2, 'investigation', at(5)),
    answer(2, { next: { kind: 'lab_test', description: 'try it' } }, at(6))
  ]
  given(...lab)
    .when(command('RecordFeedback', { requestId: 'L1', feedback: 'no item' }, at(7)))
    .then([
      { type: 'LabFeedbackRecorded', actor: 'operator', data: { request_id: 'L1', feedback: 'no item' } },
      checkpoint(4, 'INVESTIGATING')
    ])
  given(...lab, command('RecordFeedback', { requestId: 'L1', feedback: 'no item' }, at(7)))
    .when(command('RecordFeedback', { requestId: 'L1', feedback: 'again' }, at(8)))
    .thenFails('LAB_FEEDBACK_RECORDED')
  given(...lab)
    .when(command('RecordFeedback', { requestId: 'L9', feedback: 'x' }, at(7)))
    .thenFails('LAB_REQUEST_UNKNOWN')
})

test('Reserve: an operator query within the budget; over it BUDGET_EXHAUSTED; never in a closed case', () => {
  given(...started)
    .when(command('Reserve', { reservationId: 'q1', amount: 1, requestDigest: QUERY_DIGEST }, at(3)))
    .then([
      {
        type: 'BudgetReserved',
        actor: 'controller',
        data: {
          reservation_id: 'q1',
          action: 'project.query',
          amount: 1,
          plan_id: null,
          request_digest: QUERY_DIGEST,
          requester: null,
          request: null
        }
      }
    ])
  given(...started)
    .when(command('Reserve', { reservationId: 'q1', amount: 3, requestDigest: QUERY_DIGEST }, at(3)))
    .thenFails('BUDGET_EXHAUSTED')
  given(...started, command('Reserve', { reservationId: 'q1', amount: 1, requestDigest: QUERY_DIGEST }, at(3)))
    .when(command('Reserve', { reservationId: 'q1', amount: 1, requestDigest: QUERY_DIGEST }, at(4)))
    .thenFails('RESERVATION_EXISTS')
  given()
    .when(command('Reserve', { reservationId: 'q1', amount: 0, requestDigest: QUERY_DIGEST }, T0))
    .thenFails('BUDGET_INVALID')
})

test('RecordCapture: new evidence E1 with its consumption; an identical capture is a repeat', () => {
  given(...planned)
    .when(
      command(
        'RecordCapture',
        { reservationId: 'res-P2', capture: ref('1'), kind: 'database.count', requestDigest: QUERY_DIGEST },
        at(7)
      )
    )
    .then([
      {
        type: 'CaptureRecorded',
        actor: 'system',
        data: {
          reservation_id: 'res-P2',
          capture: ref('1'),
          kind: 'database.count',
          request_digest: QUERY_DIGEST,
          evidence_id: 'E1',
          repeat: false
        }
      },
      { type: 'BudgetConsumed', actor: 'system', data: { reservation_id: 'res-P2', amount: 1 } }
    ])
  given(...planned)
    .when(
      command(
        'RecordCapture',
        { reservationId: 'res-P9', capture: ref('1'), kind: 'database.count', requestDigest: QUERY_DIGEST },
        at(7)
      )
    )
    .thenFails('RESERVATION_NOT_OPEN')
})

test('RecordResearchFailure: a refusal releases the reservation; an outage of a plan blocks the case with a backoff', () => {
  const refused = failure('TABLE_NOT_ALLOWED', 'no')
  given(...planned)
    .when(command('RecordResearchFailure', { reservationId: 'res-P2', failure: refused, unavailable: false }, at(7)))
    .then([
      {
        type: 'ResearchFailed',
        actor: 'system',
        data: { reservation_id: 'res-P2', code: 'TABLE_NOT_ALLOWED', message: 'no', unavailable: false }
      },
      { type: 'BudgetReleased', actor: 'system', data: { reservation_id: 'res-P2', amount: 1, reason: 'refused' } }
    ])
  given(...planned)
    .when(
      command(
        'RecordResearchFailure',
        { reservationId: 'res-P2', failure: failure('DATABASE_UNAVAILABLE', 'down'), unavailable: true },
        at(7)
      )
    )
    .then([
      {
        type: 'ResearchFailed',
        actor: 'system',
        data: { reservation_id: 'res-P2', code: 'DATABASE_UNAVAILABLE', message: 'down', unavailable: true }
      },
      checkpoint(3, 'BLOCKED', {
        reason: 'RESEARCH_UNAVAILABLE',
        resume_state: 'INVESTIGATING',
        retry_not_before: at(37).toISOString()
      })
    ])
})

test('CancelPlan: the pending plan released as cancelled, with a reason', () => {
  given(...planned)
    .when(command('CancelPlan', { reason: 'wrong table' }, at(7)))
    .then([
      {
        type: 'PlanCancelled',
        actor: 'operator',
        data: { reservation_id: 'res-P2', plan_id: 'P2', reason: 'wrong table' }
      },
      { type: 'BudgetReleased', actor: 'operator', data: { reservation_id: 'res-P2', amount: 1, reason: 'cancelled' } }
    ])
  given(...planned)
    .when(command('CancelPlan', { reason: ' ' }, at(7)))
    .thenFails('REASON_REQUIRED')
  given(...investigating)
    .when(command('CancelPlan', { reason: 'x' }, at(7)))
    .thenFails('NOTHING_TO_CANCEL')
})

test('TopUp: a running investigation only, a positive amount and a reason', () => {
  given(...started)
    .when(command('TopUp', { amount: 5, reason: 'deeper look' }, at(3)))
    .then([{ type: 'BudgetToppedUp', actor: 'operator', data: { amount: 5, reason: 'deeper look' } }])
  given(...prepared)
    .when(command('TopUp', { amount: 5, reason: 'x' }, at(3)))
    .thenFails('INVESTIGATION_NOT_STARTED')
  given(...started)
    .when(command('TopUp', { amount: -1, reason: 'x' }, at(3)))
    .thenFails('BUDGET_INVALID')
})

test('the specification fails a decision the rules reject, and a wrong expectation', () => {
  // a history the rules reject: a checkpoint out of nowhere
  assert.throws(() => given([checkpoint(1, 'CONCLUDED')]), /breaks the rules/)
  assert.throws(() =>
    given(...started)
      .when(command('TopUp', { amount: 5, reason: 'x' }, at(3)))
      .then([])
  )
  assert.throws(
    () =>
      given(...started)
        .when(command('TopUp', { amount: 5, reason: 'x' }, at(3)))
        .thenFails('BUDGET_INVALID'),
    /expected the refusal/
  )
  // a command dated before the last one breaks time.order
  assert.throws(
    () =>
      given(...started)
        .when(command('TopUp', { amount: 5, reason: 'x' }, at(-10)))
        .events(),
    /time\.order/
  )
})

test('the state a specification holds is caseDecider.evolve over what was decided', () => {
  const spec = given(...planned)
  assert.is(spec.state().pendingPlan?.reservation, 'res-P2')
  const events = spec.when(command('CancelPlan', { reason: 'x' }, at(7))).events()
  assert.equal(
    events.map((e) => e.type),
    ['PlanCancelled', 'BudgetReleased']
  )
  assert.is(spec.state().pendingPlan, null)
  assert.is(spec.state().research.released, 1)
  const fresh = caseDecider.initialState()
  assert.is(
    caseDecider.evolve(fresh, { ...events[0]!, type: 'NoteRecorded', data: { text: 'n', format: 'plain' } }),
    fresh
  )
  assert.is(Object.keys(covered).length, 15)
})

test.run()
