/** The lifecycle deciders in given / when / then form, and projection idempotence. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as E from 'fp-ts/lib/Either.js'
import { decideAnswer, decideFeedback, decideResume, decideStart } from '../../src/domain/lifecycle.js'
import { decideRecordCapture } from '../../src/domain/research-decider.js'
import { sealEvent, checkLine, genesisHash, type EventDraft, type RecordedEvent } from '../../src/events/chain.js'
import type { InvestigationSettings } from '../../src/events/catalog.js'
import { fold } from '../../src/projections/projection.js'
import { lifecycleProjection, type LifecycleS } from '../../src/projections/lifecycle.js'
import { right, left } from '../helpers/fs.js'

const settings: InvestigationSettings = { prompt_version: 'investigation_project_v1', budget_total: 2, action_costs: { 'project.query': 1 }, max_invalid_responses: 2, retry_delay_ms: 60_000, prompt_max_chars: 20_000, source_context: null }
const NOW = new Date('2026-11-30T12:00:00.000Z')
const genesis = right(genesisHash({ format: 'vba-case', format_version: 1, case_id: 'c', created_at: '2026-01-01T00:00:00.000Z' }))

/** Seals drafts into recorded events continuing `prior`. */
const record = (prior: RecordedEvent[], drafts: EventDraft[]): RecordedEvent[] => {
  let prev = prior[prior.length - 1]?.hash ?? genesis
  return drafts.map((d, i) => {
    const seq = prior.length + i + 1
    const s = right(sealEvent(d, { seq, prev, id: `e${seq}`, at: '2026-11-30T12:00:00.000Z', commandId: `c${seq}` }))
    prev = s.envelope.hash
    const c = checkLine(s.line, { seq, prev: s.envelope.prev, lineNo: seq })
    if (c.event === undefined) throw new Error(JSON.stringify(c.findings))
    return c.event
  })
}
const stateOf = (events: RecordedEvent[]): LifecycleS => {
  let s = lifecycleProjection.init()
  for (const e of events) s = lifecycleProjection.evolve(s, e)
  return s
}
/** given events, when a decision, then: the new log. */
const given = (...steps: Array<(s: LifecycleS) => E.Either<unknown, EventDraft[]>>): RecordedEvent[] => {
  let log: RecordedEvent[] = []
  for (const step of steps) log = [...log, ...record(log, right(step(stateOf(log)) as E.Either<never, EventDraft[]>))]
  return log
}
const types = (events: readonly RecordedEvent[]): string[] => events.map((e) => e.type)
const start = (s: LifecycleS) => decideStart(s, settings, 1)
const answer = (text: string, turn = 1) => (s: LifecycleS) => decideAnswer(s, turn, text, NOW, `P${turn}`)
const INTERPRET = JSON.stringify({ interpretation: { summary: 's' } })
const QUERY = JSON.stringify({ next: { kind: 'tool', operation: 'project.query', arguments: { kind: 'database.count', table: 't', filters: [] } } })

const deciders = suite('lifecycle deciders')

deciders('given nothing, when started, then the investigation starts interpreting; a second start is refused', () => {
  const log = given(start)
  assert.equal(types(log), ['InvestigationStarted', 'CheckpointRecorded'])
  assert.is(stateOf(log).state, 'INTERPRETING')
  assert.is(left(start(stateOf(log))).code, 'INVESTIGATION_STARTED')
})

deciders('given interpreting, when the interpretation arrives, then investigating (checkpoint 2)', () => {
  const log = given(start, answer(INTERPRET))
  assert.equal(types(log).slice(2), ['InterpretationRecorded', 'CheckpointRecorded'])
  assert.is(stateOf(log).checkpoint, 2)
})

deciders('given investigating, when a query is asked, then a confirmed plan with a positive reservation', () => {
  const log = given(start, answer(INTERPRET), answer(QUERY, 2))
  assert.equal(types(log).slice(4), ['PlanConfirmed', 'BudgetReserved'])
  const s = stateOf(log)
  assert.is(s.pendingPlan?.plan_id, 'P2')
  assert.is(s.pendingPlan?.reservation, 'res-P2')
})

deciders('given the budget is spent, when another query is asked, then EXHAUSTED with a reason', () => {
  const capture = { digest: 'sha256:' + '1'.repeat(64), size: 10 }
  const capture2 = { digest: 'sha256:' + '2'.repeat(64), size: 10 }
  const log = given(start, answer(INTERPRET), answer(QUERY, 2),
    (s) => decideRecordCapture(s.research, { reservationId: 'res-P2', capture, kind: 'database.count', requestDigest: capture.digest }),
    answer(QUERY, 3),
    (s) => decideRecordCapture(s.research, { reservationId: 'res-P3', capture: capture2, kind: 'database.count', requestDigest: capture.digest }),
    answer(QUERY, 4))
  const s = stateOf(log)
  assert.is(s.state, 'EXHAUSTED')
  assert.is(s.reason, 'BUDGET_EXHAUSTED')
  assert.is(s.research.consumed, 2)
})

deciders('given investigating, when invalid answers reach the limit, then BLOCKED / INVALID_LLM_RESPONSES with resume state and retry time', () => {
  const log = given(start, answer(INTERPRET), answer('{', 2), answer(JSON.stringify({ next: { kind: 'tool', operation: 'rm', arguments: {} } }), 3))
  assert.equal(types(log).slice(4), ['ModelResponseRejected', 'ModelResponseRejected', 'CheckpointRecorded'])
  const s = stateOf(log)
  assert.is(s.state, 'BLOCKED')
  assert.is(s.reason, 'INVALID_LLM_RESPONSES')
  assert.is(s.resumeState, 'INVESTIGATING')
  assert.is(s.retryNotBefore, '2026-11-30T12:01:00.000Z')
  // when resumed before the time without manual retry: refused; with it: exactly the resume state
  assert.is(left(decideResume(s, { manualRetry: false, now: NOW })).code, 'RETRY_NOT_YET')
  const resumed = right(decideResume(s, { manualRetry: true, now: NOW }))
  assert.equal(resumed[0]?.data, { generation: 4, state: 'INVESTIGATING', reason: null, resume_state: null, retry_not_before: null, manual_retry: true })
  // after the retry time no operator is needed
  assert.is(right(decideResume(s, { manualRetry: false, now: new Date('2026-11-30T12:01:00.000Z') }))[0]?.data && true, true)
})

deciders('a rejection ends no hypothesis and changes no evidence', () => {
  const log = given(start, answer(INTERPRET), answer(JSON.stringify({ next: { kind: 'hypothesis', action: 'propose', statement: 'x', evidence: [] } }), 2), answer(JSON.stringify({ next: { kind: 'hypothesis', action: 'update', hypothesis_id: 'H1', status: 'refuted', evidence: ['E99'], note: 'n' } }), 3))
  const s = stateOf(log)
  assert.is(s.hypotheses.get('H1')?.status, 'open')
  assert.is(s.lastRejection?.code, 'EVIDENCE_UNKNOWN')
})

deciders('given a lab test request, then AWAITING_TEST_FEEDBACK; manual retry does not unlock; feedback does', () => {
  const log = given(start, answer(INTERPRET), answer(JSON.stringify({ next: { kind: 'lab_test', description: 'try it' } }), 2))
  const s = stateOf(log)
  assert.is(s.reason, 'AWAITING_TEST_FEEDBACK')
  assert.is(left(decideResume(s, { manualRetry: true, now: NOW })).code, 'CASE_AWAITING_FEEDBACK')
  const after = [...log, ...record(log, right(decideFeedback(s, 'L1', 'no item given')))]
  assert.is(stateOf(after).state, 'INVESTIGATING')
  assert.is(left(decideFeedback(stateOf(after), 'L1', 'again')).code, 'LAB_FEEDBACK_RECORDED')
})

deciders('a conclusion must cite known hypotheses and evidence', () => {
  const log = given(start, answer(INTERPRET), answer(JSON.stringify({ next: { kind: 'conclusion', summary: 's', hypotheses: ['H7'], evidence: [] } }), 2))
  assert.is(stateOf(log).lastRejection?.code, 'EVIDENCE_UNKNOWN')
})

deciders.run()

const projection = suite('lifecycle projection')

projection('delivering every event twice changes nothing', () => {
  const log = given(start, answer(INTERPRET), answer(QUERY, 2), answer('{', 3))
  const once = fold([lifecycleProjection])
  const twice = fold([lifecycleProjection])
  for (const e of log) once.feed(e)
  for (const e of log) {
    twice.feed(e)
    twice.feed(e)
  }
  assert.equal(twice.views(), once.views())
})

projection.run()
