/** The lifecycle deciders in given / when / then form, and projection idempotence. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as E from 'fp-ts/lib/Either.js'
import { decideFeedback, decideResume, decideStart } from '../../src/domain/lifecycle-decider.js'
import { decideAnswer } from '../../src/domain/answer-decider.js'
import { decideRecordCapture, decideRecordFailure } from '../../src/domain/research-decider.js'
import { failure } from '../../src/failures/failure.js'
import { decideCompleteRevision, decideInputs } from '../../src/domain/inputs-decider.js'
import { ruleFold } from '../../src/domain/rules.js'
import type { CaseState } from '../../src/domain/case-state.js'
import { sealEvent, checkLine, genesisHash, type EventDraft, type RecordedEvent } from '../../src/events/chain.js'
import type { InvestigationSettings } from '../../src/events/settings.js'
import { fold } from '../../src/projections/projection.js'
import { lifecycleProjection } from '../../src/projections/lifecycle-view.js'
import { canonicalJson, sha256Digest } from '../../src/events/canonical.js'
import { right, left } from '../helpers/fs.js'

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
const NOW = new Date('2026-11-30T12:00:00.000Z')
const genesis = right(
  genesisHash({ format: 'vba-case', format_version: 1, case_id: 'c', created_at: '2026-01-01T00:00:00.000Z' })
)

/** Seals one decision (one command) into recorded events continuing `prior`. */
const record = (prior: RecordedEvent[], drafts: EventDraft[]): RecordedEvent[] => {
  let prev = prior[prior.length - 1]?.hash ?? genesis
  const command = `c${prior.length + 1}`
  return drafts.map((d, i) => {
    const seq = prior.length + i + 1
    const s = right(sealEvent(d, { seq, prev, id: `e${seq}`, at: '2026-11-30T12:00:00.000Z', commandId: command }))
    prev = s.envelope.hash
    const c = checkLine(s.line, { seq, prev: s.envelope.prev, lineNo: seq })
    if (c.event === undefined) throw new Error(JSON.stringify(c.findings))
    return c.event
  })
}
/** The state after `events`; every decision the deciders made must also pass the rules. */
const stateOf = (events: RecordedEvent[]): CaseState => {
  const rules = ruleFold()
  const violations = events.flatMap((e) => rules.feed(e))
  violations.push(...rules.end())
  assert.equal(violations, [], 'what the deciders decide passes the rules')
  return rules.state()
}
/** given events, when a decision, then: the new log. */
const given = (...steps: Array<(s: CaseState) => E.Either<unknown, readonly EventDraft[]>>): RecordedEvent[] => {
  let log: RecordedEvent[] = []
  for (const step of steps)
    log = [...log, ...record(log, [...right(step(stateOf(log)) as E.Either<never, readonly EventDraft[]>)])]
  return log
}
const types = (events: readonly RecordedEvent[]): string[] => events.map((e) => e.type)
const REPORT = { digest: `sha256:${'a'.repeat(64)}`, size: 12 }
const FACTS = { digest: `sha256:${'f'.repeat(64)}`, size: 40 }
/** A revision with its inputs and completion (the facts object is not read by these tests). */
const prepared = (s: CaseState): E.Either<unknown, readonly EventDraft[]> => {
  const o = right(
    decideInputs(s, {
      author: 'operator',
      index: { report: REPORT, entities: [{ type: 'quest', id: 1 }], attachments: [] }
    })
  )
  return o.status === 'new' ? E.right(o.events) : E.left('these inputs exist')
}
const completed = (s: CaseState) =>
  decideCompleteRevision(s, {
    revision: 1,
    captures: [],
    facts: FACTS,
    factCount: 1,
    complete: true,
    binding: null,
    enrichment: null
  })
const request = (turn: number) => (s: CaseState) =>
  E.right([
    {
      type: 'ModelRequested',
      actor: 'controller',
      data: {
        turn,
        phase: s.state === 'INTERPRETING' ? 'interpretation' : 'investigation',
        prompt: REPORT,
        prompt_version: 'investigation_project_v1',
        prompt_chars: 12
      }
    }
  ] as EventDraft[])
const start = (s: CaseState) => decideStart(s, { settings: settings })
const answer =
  (text: string, turn = 1) =>
  (s: CaseState) =>
    E.map((d: EventDraft[]) => [
      { type: 'ModelResponded', actor: 'model', data: { turn, raw: REPORT, provenance: null } } as EventDraft,
      ...d
    ])(decideAnswer(s, { turn, raw: text, planId: `P${turn}` }, NOW))
/** The steps of a prepared, started case. */
const started = [prepared, completed, start]
/** A model turn: the request, then the answer. */
const turnOf = (text: string, turn = 1) => [request(turn), answer(text, turn)]
const INTERPRET = JSON.stringify({ interpretation: { summary: 's' } })
const QUERY = JSON.stringify({
  next: { kind: 'tool', operation: 'project.query', arguments: { kind: 'database.count', table: 't', filters: [] } }
})

const deciders = suite('lifecycle deciders')

/** Event types after the prepared revision, without the model exchange itself. */
const decided = (log: readonly RecordedEvent[]): string[] =>
  types(log).filter((t) => !['InputsRecorded', 'RevisionCompleted', 'ModelRequested', 'ModelResponded'].includes(t))

deciders(
  'given no completed revision, the start is refused; given one, the investigation starts interpreting from it',
  () => {
    assert.is(left(decideStart(stateOf([]), { settings })).code, 'CASE_NOT_PREPARED')
    assert.is(left(decideStart(stateOf(given(prepared)), { settings })).code, 'CASE_NOT_PREPARED')
    const log = given(...started)
    assert.equal(decided(log), ['InvestigationStarted', 'CheckpointRecorded'])
    const s = stateOf(log)
    assert.is(s.state, 'INTERPRETING')
    assert.is(s.revision, 1)
    assert.is(left(start(s)).code, 'INVESTIGATION_STARTED')
  }
)

deciders('given interpreting, when the interpretation arrives, then investigating (checkpoint 2)', () => {
  const log = given(...started, ...turnOf(INTERPRET))
  assert.equal(decided(log).slice(2), ['InterpretationRecorded', 'CheckpointRecorded'])
  assert.is(stateOf(log).checkpoint, 2)
})

deciders('given investigating, when a query is asked, then a confirmed plan with a positive reservation', () => {
  const log = given(...started, ...turnOf(INTERPRET), ...turnOf(QUERY, 2))
  assert.equal(decided(log).slice(4), ['PlanConfirmed', 'BudgetReserved'])
  const s = stateOf(log)
  assert.is(s.pendingPlan?.plan_id, 'P2')
  assert.is(s.pendingPlan?.reservation, 'res-P2')
})

const COUNT_REQUEST = right(canonicalJson({ kind: 'database.count', table: 't', filters: [] }))

deciders('given the budget is spent, when another query is asked, then EXHAUSTED with a reason', () => {
  const capture = { digest: `sha256:${'1'.repeat(64)}`, size: 10 }
  const capture2 = { digest: `sha256:${'2'.repeat(64)}`, size: 10 }
  const requestDigest = sha256Digest(COUNT_REQUEST)
  const log = given(
    ...started,
    ...turnOf(INTERPRET),
    ...turnOf(QUERY, 2),
    (s) => decideRecordCapture(s, { reservationId: 'res-P2', capture, kind: 'database.count', requestDigest }),
    ...turnOf(QUERY, 3),
    (s) =>
      decideRecordCapture(s, { reservationId: 'res-P3', capture: capture2, kind: 'database.count', requestDigest }),
    ...turnOf(QUERY, 4)
  )
  const s = stateOf(log)
  assert.is(s.state, 'EXHAUSTED')
  assert.is(s.reason, 'BUDGET_EXHAUSTED')
  assert.is(s.research.consumed, 2)
})

deciders(
  'given investigating, when invalid answers reach the limit, then BLOCKED / INVALID_LLM_RESPONSES with resume state and retry time',
  () => {
    const log = given(
      ...started,
      ...turnOf(INTERPRET),
      ...turnOf('{', 2),
      ...turnOf(JSON.stringify({ next: { kind: 'tool', operation: 'rm', arguments: {} } }), 3)
    )
    assert.equal(decided(log).slice(4), ['ModelResponseRejected', 'ModelResponseRejected', 'CheckpointRecorded'])
    const s = stateOf(log)
    assert.is(s.state, 'BLOCKED')
    assert.is(s.reason, 'INVALID_LLM_RESPONSES')
    assert.is(s.resumeState, 'INVESTIGATING')
    assert.is(s.retryNotBefore, '2026-11-30T12:01:00.000Z')
    // when resumed before the time without manual retry: refused; with it: exactly the resume state
    assert.is(left(decideResume(s, { manualRetry: false }, NOW)).code, 'RETRY_NOT_YET')
    const resumed = right(decideResume(s, { manualRetry: true }, NOW))
    assert.equal(resumed[0]?.data, {
      generation: 4,
      state: 'INVESTIGATING',
      reason: null,
      resume_state: null,
      retry_not_before: null,
      manual_retry: true
    })
    stateOf([...log, ...record(log, [...resumed])])
    // after the retry time no operator is needed
    assert.is(
      right(decideResume(s, { manualRetry: false }, new Date('2026-11-30T12:01:00.000Z')))[0]?.data && true,
      true
    )
  }
)

deciders('answers with lone surrogates are rejected, escaped or raw', () => {
  const log = given(
    ...started,
    ...turnOf(INTERPRET),
    ...turnOf('{"next": {"kind": "lab_test", "description": "\\ud800"}}', 2)
  )
  assert.is(stateOf(log).lastRejection?.code, 'MODEL_ANSWER_INVALID')
  const raw = given(...started, ...turnOf('{"interpretation": {"summary": "\ud800"}}'))
  assert.is(stateOf(raw).lastRejection?.code, 'MODEL_ANSWER_INVALID')
  // in a member's name too, and a number no double holds (neither can be canonicalised)
  for (const answer of [
    '{"interpretation": {"summary": "s", "\\udc00": 1}}',
    '{"interpretation": {"summary": "s", "n": 1e400}}'
  ]) {
    const odd = given(...started, ...turnOf(answer))
    assert.is(stateOf(odd).lastRejection?.code, 'MODEL_ANSWER_INVALID', answer)
    assert.match(stateOf(odd).lastRejection?.message ?? '', 'lone UTF-16 surrogates')
  }
  const fine = given(...started, ...turnOf('{"interpretation": {"summary": "s \\u00e9 \\ud83d\\ude00", "n": 1e300}}'))
  assert.is(stateOf(fine).lastRejection, null)
})

deciders('a rejection ends no hypothesis and changes no evidence', () => {
  const log = given(
    ...started,
    ...turnOf(INTERPRET),
    ...turnOf(JSON.stringify({ next: { kind: 'hypothesis', action: 'propose', statement: 'x', evidence: [] } }), 2),
    ...turnOf(
      JSON.stringify({
        next: {
          kind: 'hypothesis',
          action: 'update',
          hypothesis_id: 'H1',
          status: 'refuted',
          evidence: ['E99'],
          note: 'n'
        }
      }),
      3
    )
  )
  const s = stateOf(log)
  assert.is(s.hypotheses.get('H1')?.status, 'open')
  assert.is(s.lastRejection?.code, 'EVIDENCE_UNKNOWN')
})

deciders('given a lab test request, then AWAITING_TEST_FEEDBACK; manual retry does not unlock; feedback does', () => {
  const log = given(
    ...started,
    ...turnOf(INTERPRET),
    ...turnOf(JSON.stringify({ next: { kind: 'lab_test', description: 'try it' } }), 2)
  )
  const s = stateOf(log)
  assert.is(s.reason, 'AWAITING_TEST_FEEDBACK')
  assert.is(left(decideResume(s, { manualRetry: true }, NOW)).code, 'CASE_AWAITING_FEEDBACK')
  const after = [...log, ...record(log, [...right(decideFeedback(s, { requestId: 'L1', feedback: 'no item given' }))])]
  assert.is(stateOf(after).state, 'INVESTIGATING')
  assert.is(left(decideFeedback(stateOf(after), { requestId: 'L1', feedback: 'again' })).code, 'LAB_FEEDBACK_RECORDED')
})

deciders('a conclusion must cite known hypotheses and evidence', () => {
  const log = given(
    ...started,
    ...turnOf(INTERPRET),
    ...turnOf(JSON.stringify({ next: { kind: 'conclusion', summary: 's', hypotheses: ['H7'], evidence: [] } }), 2)
  )
  assert.is(stateOf(log).lastRejection?.code, 'EVIDENCE_UNKNOWN')
})

deciders.run()

/** Settings of a start with settings version 2: repeats answered from the case, stalled queries counted. */
const settingsV2: InvestigationSettings = {
  ...settings,
  prompt_version: 'investigation_project_v2',
  count_refusals: true,
  answer_repeats_from_case: true,
  contract: {
    source: null,
    databases: [{ name: 'world', allowed_tables: ['t'] }],
    limits: {
      max_lines: 80,
      max_rows: 200,
      max_result_bytes: 262144,
      max_matches: 200,
      max_files: 200,
      max_line_chars: 400,
      max_in_values: 100,
      max_filters: 16,
      max_columns: 64
    }
  }
}
const startedV2 = [prepared, completed, (s: CaseState) => decideStart(s, { settings: settingsV2 })]
const CAPTURE = { digest: `sha256:${'1'.repeat(64)}`, size: 10 }
const captured = (plan: string) => (s: CaseState) =>
  decideRecordCapture(s, {
    reservationId: `res-${plan}`,
    capture: CAPTURE,
    kind: 'database.count',
    requestDigest: sha256Digest(COUNT_REQUEST)
  })
const refused = (plan: string) => (s: CaseState) =>
  decideRecordFailure(
    s,
    {
      reservationId: `res-${plan}`,
      failure: failure('TABLE_NOT_ALLOWED', 'table secrets is not on the allowlist of world'),
      unavailable: false
    },
    NOW
  )
const OTHER = (n: number) =>
  JSON.stringify({
    next: {
      kind: 'tool',
      operation: 'project.query',
      arguments: { kind: 'database.count', table: `secrets_${n}`, filters: [] }
    }
  })
const HYPOTHESIS = JSON.stringify({ next: { kind: 'hypothesis', action: 'propose', statement: 'x', evidence: [] } })

const memory = suite('repeats from the case and stalled queries (settings version 2)')

memory(
  'given a captured query, when the identical query is asked again, then it is answered from the case: a repeat of E1, no reservation, no cost',
  () => {
    const log = given(...startedV2, ...turnOf(INTERPRET), ...turnOf(QUERY, 2), captured('P2'), ...turnOf(QUERY, 3))
    assert.equal(decided(log).slice(-2), ['PlanConfirmed', 'QueryAnsweredFromCase'])
    const s = stateOf(log)
    assert.is(s.pendingPlan, null)
    assert.is(s.research.reserved, 1, 'only the first ask reserved budget')
    assert.equal(s.lastResult, {
      kind: 'capture',
      evidence_id: 'E1',
      digest: CAPTURE.digest,
      repeat: true,
      plan_id: 'P3',
      seq: log.length,
      from_case: true
    })
    assert.is(s.research.evidence.get('E1')?.repeats, 1)
    assert.is(s.stalled, 1)
    // even with the budget spent, a repeat is answered (it costs nothing)
    const spent = given(
      ...startedV2.slice(0, 2),
      (st: CaseState) => decideStart(st, { settings: { ...settingsV2, budget_total: 1 } }),
      ...turnOf(INTERPRET),
      ...turnOf(QUERY, 2),
      captured('P2'),
      ...turnOf(QUERY, 3)
    )
    assert.equal(decided(spent).slice(-1), ['QueryAnsweredFromCase'])
  }
)

memory(
  'given max_invalid_responses 2, when two plans in a row are refused, then BLOCKED / INVALID_LLM_RESPONSES, resumable; an operator resume counts anew',
  () => {
    const log = given(
      ...startedV2,
      ...turnOf(INTERPRET),
      ...turnOf(OTHER(1), 2),
      refused('P2'),
      ...turnOf(OTHER(2), 3),
      refused('P3')
    )
    assert.equal(decided(log).slice(-3), ['ResearchFailed', 'BudgetReleased', 'CheckpointRecorded'])
    const s = stateOf(log)
    assert.is(s.state, 'BLOCKED')
    assert.is(s.reason, 'INVALID_LLM_RESPONSES')
    assert.is(s.resumeState, 'INVESTIGATING')
    assert.is(s.retryNotBefore, '2026-11-30T12:01:00.000Z')
    assert.is(s.research.released, 2, 'refusals cost nothing')
    const resumed = [...log, ...record(log, [...right(decideResume(s, { manualRetry: true }, NOW))])]
    assert.is(stateOf(resumed).stalled, 0)
    assert.is(stateOf(resumed).state, 'INVESTIGATING')
  }
)

memory('repeats from the case count like refusals; any other decision or new evidence starts the count anew', () => {
  const repeats = given(
    ...startedV2,
    ...turnOf(INTERPRET),
    ...turnOf(QUERY, 2),
    captured('P2'),
    ...turnOf(QUERY, 3),
    ...turnOf(QUERY, 4)
  )
  assert.equal(decided(repeats).slice(-3), ['PlanConfirmed', 'QueryAnsweredFromCase', 'CheckpointRecorded'])
  assert.is(stateOf(repeats).reason, 'INVALID_LLM_RESPONSES')
  const broken = given(
    ...startedV2,
    ...turnOf(INTERPRET),
    ...turnOf(OTHER(1), 2),
    refused('P2'),
    ...turnOf(HYPOTHESIS, 3),
    ...turnOf(OTHER(2), 4),
    refused('P4')
  )
  assert.is(stateOf(broken).state, 'INVESTIGATING')
  assert.is(stateOf(broken).stalled, 1)
  const evidence = given(
    ...startedV2,
    ...turnOf(INTERPRET),
    ...turnOf(OTHER(1), 2),
    refused('P2'),
    ...turnOf(QUERY, 3),
    captured('P3'),
    ...turnOf(OTHER(2), 4),
    refused('P4')
  )
  assert.is(stateOf(evidence).state, 'INVESTIGATING')
})

memory(
  'settings version 1 keep their behaviour: refusals never block, an identical query is reserved and run again',
  () => {
    const log = given(
      ...started,
      ...turnOf(INTERPRET),
      ...turnOf(OTHER(1), 2),
      refused('P2'),
      ...turnOf(OTHER(2), 3),
      refused('P3'),
      ...turnOf(OTHER(3), 4),
      refused('P4')
    )
    assert.is(stateOf(log).state, 'INVESTIGATING')
    const again = given(...started, ...turnOf(INTERPRET), ...turnOf(QUERY, 2), captured('P2'), ...turnOf(QUERY, 3))
    assert.equal(decided(again).slice(-2), ['PlanConfirmed', 'BudgetReserved'])
  }
)

memory(
  'the rules: a stalled query at the limit without its block, a reservation for a request the case answers, a stall block in a version-1 investigation',
  () => {
    const violations = (events: RecordedEvent[]): string[] => {
      const rules = ruleFold()
      const out = events.flatMap((e) => rules.feed(e))
      out.push(...rules.end())
      return out.map((v) => `${v.code} ${v.rule}`)
    }
    const base = given(
      ...startedV2,
      ...turnOf(INTERPRET),
      ...turnOf(OTHER(1), 2),
      refused('P2'),
      ...turnOf(OTHER(2), 3)
    )
    const owed = [...base, ...record(base, [...right(refused('P3')(stateOf(base)))].slice(0, 2))]
    assert.equal(violations(owed), ['RULE_COMMAND command.whole'])
    const answered = given(...startedV2, ...turnOf(INTERPRET), ...turnOf(QUERY, 2), captured('P2'), request(3))
    const reserved = [
      ...answered,
      ...record(answered, [
        { type: 'ModelResponded', actor: 'model', data: { turn: 3, raw: REPORT, provenance: null } },
        {
          type: 'PlanConfirmed',
          actor: 'model',
          data: {
            plan_id: 'P3',
            turn: 3,
            operation: 'project.query',
            arguments: { kind: 'database.count', table: 't', filters: [] }
          }
        },
        {
          type: 'BudgetReserved',
          actor: 'controller',
          data: {
            reservation_id: 'res-P3',
            action: 'project.query',
            amount: 1,
            plan_id: 'P3',
            request_digest: null,
            requester: null,
            request: null
          }
        }
      ])
    ]
    assert.equal(violations(reserved), ['RULE_RESEARCH research.from-case'])
    const v1 = given(...started, ...turnOf(INTERPRET), ...turnOf(OTHER(1), 2), refused('P2'), ...turnOf(OTHER(2), 3))
    const s = stateOf(v1)
    const blocked = [
      ...v1,
      ...record(v1, [
        ...right(refused('P3')(s)),
        {
          type: 'CheckpointRecorded',
          actor: 'system',
          data: {
            generation: s.checkpoint + 1,
            state: 'BLOCKED',
            reason: 'INVALID_LLM_RESPONSES',
            resume_state: 'INVESTIGATING',
            retry_not_before: '2026-11-30T12:01:00.000Z',
            manual_retry: false
          }
        }
      ])
    ]
    assert.equal(violations(blocked), ['RULE_LIFECYCLE lifecycle.transition'])
  }
)

memory('an early manual retry of a research outage is recorded as a manual retry', () => {
  const log = given(...startedV2, ...turnOf(INTERPRET), ...turnOf(QUERY, 2), (s) =>
    decideRecordFailure(
      s,
      { reservationId: 'res-P2', failure: failure('DATABASE_UNAVAILABLE', 'down'), unavailable: true },
      NOW
    )
  )
  assert.is(stateOf(log).reason, 'RESEARCH_UNAVAILABLE')
  const retried = given(
    ...startedV2,
    ...turnOf(INTERPRET),
    ...turnOf(QUERY, 2),
    (s) =>
      decideRecordFailure(
        s,
        { reservationId: 'res-P2', failure: failure('DATABASE_UNAVAILABLE', 'down'), unavailable: true },
        NOW
      ),
    (s) =>
      decideRecordCapture(s, {
        reservationId: 'res-P2',
        capture: CAPTURE,
        kind: 'database.count',
        requestDigest: sha256Digest(COUNT_REQUEST),
        manualRetry: true
      })
  )
  const last = retried[retried.length - 1]
  assert.is(last?.type, 'CheckpointRecorded')
  assert.equal(last?.type === 'CheckpointRecorded' ? [last.data.state, last.data.manual_retry] : null, [
    'INVESTIGATING',
    true
  ])
})

memory.run()

const projection = suite('lifecycle projection')

projection('delivering every event twice changes nothing', () => {
  const capture = { digest: `sha256:${'1'.repeat(64)}`, size: 10 }
  const log = given(
    ...started,
    ...turnOf(INTERPRET),
    ...turnOf(QUERY, 2),
    (s) =>
      decideRecordCapture(s, {
        reservationId: 'res-P2',
        capture,
        kind: 'database.count',
        requestDigest: sha256Digest(COUNT_REQUEST)
      }),
    ...turnOf('{', 3)
  )
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
