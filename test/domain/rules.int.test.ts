/**
 * One test per rule: a real investigation (written through the library's typed commands) is cut
 * at a point, a forged command is sealed on top with a correct chain, and the rule fold must name
 * the rule at the forged event's seq. The unforged prefix always passes.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { checkLine, sealEvent, type RecordedEvent } from '../../src/events/chain.js'
import { canonicalJson, sha256Digest } from '../../src/events/canonical.js'
import { ruleFold, type RuleViolation } from '../../src/domain/rules.js'
import type { Actor } from '../../src/events/codecs.js'
import { writeInvestigation, SMART_QUERY } from '../helpers/investigation.js'
import { right, tempDir } from '../helpers/fs.js'

const dir = path.join(tempDir('rules'), 'case')
await writeInvestigation(dir, tempDir('rules-world'))
const lines = readFileSync(path.join(dir, 'events.jsonl'), 'utf8').split('\n').filter(Boolean)
const recorded: RecordedEvent[] = lines.map((l, i) => {
  const c = checkLine(l, { seq: i + 1, prev: null, lineNo: i + 1 })
  if (c.event === undefined) throw new Error(JSON.stringify(c.findings))
  return c.event
})
const at = (seq: number): RecordedEvent => recorded[seq - 1] as RecordedEvent

type Draft = { type: string; actor: Actor; data: unknown }

/** Folds the log up to `cut`, then the forged commands; returns the violations of the forged part. */
const forge = (cut: number, ...commands: Draft[][]): RuleViolation[] => {
  const fold = ruleFold()
  const prefix = recorded.slice(0, cut).flatMap((e) => fold.feed(e))
  const events: RecordedEvent[] = []
  let prev = at(cut).hash
  let seq = cut
  commands.forEach((cmd, i) => {
    for (const d of cmd) {
      seq++
      const s = right(
        sealEvent(d, { seq, prev, id: `forged-${seq}`, at: '2026-11-30T10:00:01.000Z', commandId: `forged-${i}` })
      )
      prev = s.envelope.hash
      events.push(s.event)
    }
  })
  const violations = events.flatMap((e) => fold.feed(e))
  violations.push(...fold.end())
  assert.equal(prefix, [], 'the unforged prefix passes')
  return violations
}

/** Asserts that `rule` (of family `code`) fires at `seq`. */
const fires = (violations: readonly RuleViolation[], code: string, rule: string, seq: number): void => {
  assert.ok(
    violations.some((v) => v.code === code && v.rule === rule && v.seq === seq),
    `expected ${code} ${rule} at seq ${seq}, got ${JSON.stringify(violations)}`
  )
}

const checkpoint = (generation: number, state: string, extra: Record<string, unknown> = {}): Draft => ({
  type: 'CheckpointRecorded',
  actor: 'system',
  data: { generation, state, reason: null, resume_state: null, retry_not_before: null, manual_retry: false, ...extra }
})
const request = (turn: number, phase = 'investigation'): Draft => ({
  type: 'ModelRequested',
  actor: 'controller',
  data: {
    turn,
    phase,
    prompt: { digest: sha256Digest('p'), size: 1 },
    prompt_version: 'investigation_project_v1',
    prompt_chars: 1
  }
})
const responded = (turn: number): Draft => ({
  type: 'ModelResponded',
  actor: 'model',
  data: { turn, raw: { digest: sha256Digest('r'), size: 1 }, provenance: null }
})
const note = (actor: Actor): Draft => ({ type: 'NoteRecorded', actor, data: { text: 'n', format: 'plain' } })
const digestOf = (v: unknown): string => sha256Digest(right(canonicalJson(v)))
const PLAN_DIGEST = digestOf(SMART_QUERY)
const NEW_CAPTURE = { digest: `sha256:${'9'.repeat(64)}`, size: 100 }

// Landmarks of the base investigation (asserted, so a change of the helper shows here).
const base = suite('the base investigation')
base('is the log the rules cases cut into', () => {
  assert.equal(
    [at(7).type, at(11).type, at(15).type, at(17).type, at(20).type, at(21).type, at(25).type],
    [
      'CheckpointRecorded',
      'CheckpointRecorded',
      'BudgetReserved',
      'BudgetConsumed',
      'HypothesisProposed',
      'NoteRecorded',
      'CheckpointRecorded'
    ]
  )
  assert.equal(forge(25), [])
})
base.run()

const rules = suite('every rule fires on its forgery')

rules('actor.allowed: a note written as the model', () =>
  fires(forge(25, [note('model')]), 'RULE_ACTOR', 'actor.allowed', 26)
)
rules('actor.allowed: a checkpoint written by an operator', () =>
  fires(forge(11, [{ ...checkpoint(3, 'CONCLUDED'), actor: 'operator' }]), 'RULE_ACTOR', 'actor.allowed', 12)
)

rules('lifecycle.start-once', () => {
  const started = at(6)
  fires(
    forge(21, [
      { type: 'InvestigationStarted', actor: 'controller', data: started.data },
      checkpoint(4, 'INTERPRETING')
    ]),
    'RULE_LIFECYCLE',
    'lifecycle.start-once',
    22
  )
})
rules('lifecycle.start-revision: a start without a completed revision', () => {
  const fold = ruleFold()
  const s = right(
    sealEvent(
      { type: 'InvestigationStarted', actor: 'controller', data: at(6).data },
      { seq: 1, prev: at(1).prev, id: 'x', at: '2026-11-30T10:00:00.000Z', commandId: 'c' }
    )
  )
  fires(fold.feed(s.event), 'RULE_LIFECYCLE', 'lifecycle.start-revision', 1)
})
rules('lifecycle.generation', () =>
  fires(
    forge(
      11,
      [request(2)],
      [
        responded(2),
        { type: 'LabTestRequested', actor: 'model', data: { request_id: 'L1', description: 'd' } },
        checkpoint(5, 'BLOCKED', { reason: 'AWAITING_TEST_FEEDBACK', resume_state: 'INVESTIGATING' })
      ]
    ),
    'RULE_LIFECYCLE',
    'lifecycle.generation',
    15
  )
)
rules('lifecycle.transition: CONCLUDED without a conclusion', () =>
  fires(forge(11, [checkpoint(3, 'CONCLUDED')]), 'RULE_LIFECYCLE', 'lifecycle.transition', 12)
)
rules('lifecycle.block-reason: BLOCKED without a reason', () =>
  fires(
    forge(
      11,
      [request(2)],
      [
        responded(2),
        { type: 'LabTestRequested', actor: 'model', data: { request_id: 'L1', description: 'd' } },
        checkpoint(3, 'BLOCKED', { resume_state: 'INVESTIGATING' })
      ]
    ),
    'RULE_LIFECYCLE',
    'lifecycle.block-reason',
    15
  )
)
rules('lifecycle.resume: a manual retry never unlocks AWAITING_TEST_FEEDBACK', () =>
  fires(
    forge(
      11,
      [request(2)],
      [
        responded(2),
        { type: 'LabTestRequested', actor: 'model', data: { request_id: 'L1', description: 'd' } },
        checkpoint(3, 'BLOCKED', { reason: 'AWAITING_TEST_FEEDBACK', resume_state: 'INVESTIGATING' })
      ],
      [checkpoint(4, 'INVESTIGATING', { manual_retry: true })]
    ),
    'RULE_LIFECYCLE',
    'lifecycle.resume',
    16
  )
)
rules('lifecycle.resume: INVALID_LLM_RESPONSES before its retry time without a manual retry', () =>
  fires(
    forge(
      11,
      [request(2)],
      [
        responded(2),
        { type: 'ModelResponseRejected', actor: 'system', data: { turn: 2, code: 'X', message: 'm', consecutive: 1 } }
      ],
      [request(3)],
      [
        responded(3),
        { type: 'ModelResponseRejected', actor: 'system', data: { turn: 3, code: 'X', message: 'm', consecutive: 2 } },
        checkpoint(3, 'BLOCKED', {
          reason: 'INVALID_LLM_RESPONSES',
          resume_state: 'INVESTIGATING',
          retry_not_before: '2026-12-01T00:00:00.000Z'
        })
      ],
      [checkpoint(4, 'INVESTIGATING')]
    ),
    'RULE_LIFECYCLE',
    'lifecycle.resume',
    19
  )
)
rules('lifecycle.terminal: a checkpoint out of CONCLUDED', () =>
  fires(forge(25, [checkpoint(4, 'INVESTIGATING')]), 'RULE_LIFECYCLE', 'lifecycle.terminal', 26)
)
rules('lifecycle.exhausted: EXHAUSTED with budget left', () =>
  fires(
    forge(11, [request(2)], [responded(2), checkpoint(3, 'EXHAUSTED', { reason: 'BUDGET_EXHAUSTED' })]),
    'RULE_LIFECYCLE',
    'lifecycle.exhausted',
    14
  )
)
rules('lifecycle.phase: an investigation action while interpreting', () =>
  fires(
    forge(
      7,
      [request(1, 'interpretation')],
      [
        responded(1),
        { type: 'HypothesisProposed', actor: 'model', data: { hypothesis_id: 'H1', statement: 's', evidence: [] } }
      ]
    ),
    'RULE_LIFECYCLE',
    'lifecycle.phase',
    10
  )
)

const reserve = (id: string, amount: number, plan: string | null, requestDigest: string | null): Draft => ({
  type: 'BudgetReserved',
  actor: 'controller',
  data: {
    reservation_id: id,
    action: 'project.query',
    amount,
    plan_id: plan,
    request_digest: requestDigest,
    requester: null,
    request: null
  }
})

rules('budget.reservation-unique', () =>
  fires(forge(17, [reserve('res-P2', 1, null, PLAN_DIGEST)]), 'RULE_BUDGET', 'budget.reservation-unique', 18)
)
rules('budget.reservation-plan: a reservation for a plan that was not confirmed', () =>
  fires(forge(11, [reserve('res-P9', 1, 'P9', null)]), 'RULE_BUDGET', 'budget.reservation-plan', 12)
)
rules('budget.settle-open: consuming a closed reservation', () =>
  fires(
    forge(17, [{ type: 'BudgetConsumed', actor: 'system', data: { reservation_id: 'res-P2', amount: 1 } }]),
    'RULE_BUDGET',
    'budget.settle-open',
    18
  )
)
rules('budget.settle-open: consuming another amount than reserved', () =>
  fires(
    forge(15, [
      {
        type: 'CaptureRecorded',
        actor: 'system',
        data: {
          reservation_id: 'res-P2',
          capture: NEW_CAPTURE,
          kind: 'database.rows',
          request_digest: PLAN_DIGEST,
          evidence_id: 'E4',
          repeat: false
        }
      },
      { type: 'BudgetConsumed', actor: 'system', data: { reservation_id: 'res-P2', amount: 3 } }
    ]),
    'RULE_BUDGET',
    'budget.settle-open',
    17
  )
)
rules('budget.overdrawn: reserving more than is left', () =>
  fires(forge(17, [reserve('res-big', 10, null, PLAN_DIGEST)]), 'RULE_BUDGET', 'budget.overdrawn', 18)
)
rules('budget.release-reason: a release as refused with no refused query', () =>
  fires(
    forge(15, [
      { type: 'BudgetReleased', actor: 'system', data: { reservation_id: 'res-P2', amount: 1, reason: 'refused' } }
    ]),
    'RULE_BUDGET',
    'budget.release-reason',
    16
  )
)
rules('budget.release-reason: a release as cancelled by the system', () =>
  fires(
    forge(15, [
      { type: 'PlanCancelled', actor: 'operator', data: { reservation_id: 'res-P2', plan_id: 'P2', reason: 'r' } },
      { type: 'BudgetReleased', actor: 'system', data: { reservation_id: 'res-P2', amount: 1, reason: 'cancelled' } }
    ]),
    'RULE_BUDGET',
    'budget.release-reason',
    17
  )
)
rules('budget.tokens: TOKEN_BUDGET_EXHAUSTED with no token limit reached', () =>
  fires(
    forge(21, [checkpoint(3, 'EXHAUSTED', { reason: 'TOKEN_BUDGET_EXHAUSTED' })]),
    'RULE_BUDGET',
    'budget.tokens',
    22
  )
)
rules('budget.top-up: after the conclusion', () =>
  fires(
    forge(25, [{ type: 'BudgetToppedUp', actor: 'operator', data: { amount: 5, reason: 'more' } }]),
    'RULE_BUDGET',
    'budget.top-up',
    26
  )
)

rules('research.reservation: a capture with no open reservation', () =>
  fires(
    forge(17, [
      {
        type: 'CaptureRecorded',
        actor: 'system',
        data: {
          reservation_id: 'res-none',
          capture: NEW_CAPTURE,
          kind: 'database.rows',
          request_digest: PLAN_DIGEST,
          evidence_id: 'E5',
          repeat: false
        }
      },
      { type: 'BudgetConsumed', actor: 'system', data: { reservation_id: 'res-none', amount: 1 } }
    ]),
    'RULE_RESEARCH',
    'research.reservation',
    18
  )
)
rules('research.request: a capture of another request than the plan confirmed', () =>
  fires(
    forge(15, [
      {
        type: 'CaptureRecorded',
        actor: 'system',
        data: {
          reservation_id: 'res-P2',
          capture: NEW_CAPTURE,
          kind: 'database.rows',
          request_digest: sha256Digest('another request'),
          evidence_id: 'E5',
          repeat: false
        }
      },
      { type: 'BudgetConsumed', actor: 'system', data: { reservation_id: 'res-P2', amount: 1 } }
    ]),
    'RULE_RESEARCH',
    'research.request',
    16
  )
)
rules('research.request: an operator reservation without its request', () =>
  fires(forge(17, [reserve('res-op', 1, null, null)]), 'RULE_RESEARCH', 'research.request', 18)
)
rules("research.requester: a plan's reservation claiming an MCP client asked", () =>
  fires(
    forge(
      11,
      [request(2)],
      [
        responded(2),
        {
          type: 'PlanConfirmed',
          actor: 'model',
          data: { plan_id: 'P2', turn: 2, operation: 'project.query', arguments: SMART_QUERY }
        },
        {
          ...reserve('res-P2', 1, 'P2', null),
          data: {
            reservation_id: 'res-P2',
            action: 'project.query',
            amount: 1,
            plan_id: 'P2',
            request_digest: null,
            requester: { protocol: 'mcp', name: 'someone-else', version: '1.0' },
            request: null
          }
        }
      ]
    ),
    'RULE_RESEARCH',
    'research.requester',
    15
  )
)
rules('research.evidence-id: new evidence with a wrong number', () =>
  fires(
    forge(15, [
      {
        type: 'CaptureRecorded',
        actor: 'system',
        data: {
          reservation_id: 'res-P2',
          capture: NEW_CAPTURE,
          kind: 'database.rows',
          request_digest: PLAN_DIGEST,
          evidence_id: 'E9',
          repeat: false
        }
      },
      { type: 'BudgetConsumed', actor: 'system', data: { reservation_id: 'res-P2', amount: 1 } }
    ]),
    'RULE_RESEARCH',
    'research.evidence-id',
    16
  )
)
rules('research.evidence-id: a repeat passed off as new evidence', () => {
  const earlier = (at(2).data as { capture: { digest: string; size: number } }).capture
  fires(
    forge(15, [
      {
        type: 'CaptureRecorded',
        actor: 'system',
        data: {
          reservation_id: 'res-P2',
          capture: earlier,
          kind: 'database.rows',
          request_digest: PLAN_DIGEST,
          evidence_id: 'E4',
          repeat: false
        }
      },
      { type: 'BudgetConsumed', actor: 'system', data: { reservation_id: 'res-P2', amount: 1 } }
    ]),
    'RULE_RESEARCH',
    'research.evidence-id',
    16
  )
})
rules('research.cancel: cancelling a settled reservation', () =>
  fires(
    forge(17, [
      { type: 'PlanCancelled', actor: 'operator', data: { reservation_id: 'res-P2', plan_id: 'P2', reason: 'r' } },
      { type: 'BudgetReleased', actor: 'operator', data: { reservation_id: 'res-P2', amount: 1, reason: 'cancelled' } }
    ]),
    'RULE_RESEARCH',
    'research.cancel',
    18
  )
)

rules('turn.request: a skipped turn number', () => fires(forge(11, [request(5)]), 'RULE_TURN', 'turn.request', 12))
rules('turn.request: asking the model while a plan waits', () =>
  fires(forge(15, [request(3)]), 'RULE_TURN', 'turn.request', 16)
)
rules('turn.answer: an answer nobody asked for', () =>
  fires(
    forge(11, [
      responded(2),
      { type: 'HypothesisProposed', actor: 'model', data: { hypothesis_id: 'H1', statement: 's', evidence: [] } }
    ]),
    'RULE_TURN',
    'turn.answer',
    12
  )
)
rules('turn.decision: a model decision outside an answer', () =>
  fires(
    forge(21, [
      { type: 'HypothesisProposed', actor: 'model', data: { hypothesis_id: 'H2', statement: 's', evidence: ['E4'] } }
    ]),
    'RULE_TURN',
    'turn.decision',
    22
  )
)
rules('turn.decision: two decisions from one answer', () =>
  fires(
    forge(
      21,
      [request(4)],
      [
        responded(4),
        { type: 'HypothesisProposed', actor: 'model', data: { hypothesis_id: 'H2', statement: 's', evidence: [] } },
        { type: 'HypothesisProposed', actor: 'model', data: { hypothesis_id: 'H3', statement: 't', evidence: [] } }
      ]
    ),
    'RULE_TURN',
    'turn.decision',
    25
  )
)
rules('turn.rejection-count', () =>
  fires(
    forge(
      11,
      [request(2)],
      [
        responded(2),
        { type: 'ModelResponseRejected', actor: 'system', data: { turn: 2, code: 'X', message: 'm', consecutive: 2 } },
        checkpoint(3, 'BLOCKED', {
          reason: 'INVALID_LLM_RESPONSES',
          resume_state: 'INVESTIGATING',
          retry_not_before: '2026-12-01T00:00:00.000Z'
        })
      ]
    ),
    'RULE_TURN',
    'turn.rejection-count',
    14
  )
)
rules('turn.ids: a hypothesis numbered out of order', () =>
  fires(
    forge(
      17,
      [request(3)],
      [
        responded(3),
        { type: 'HypothesisProposed', actor: 'model', data: { hypothesis_id: 'H7', statement: 's', evidence: ['E4'] } }
      ]
    ),
    'RULE_TURN',
    'turn.ids',
    20
  )
)
rules('turn.plan: a plan that is not a project.query', () =>
  fires(
    forge(
      11,
      [request(2)],
      [
        responded(2),
        {
          type: 'PlanConfirmed',
          actor: 'model',
          data: {
            plan_id: 'P2',
            turn: 2,
            operation: 'project.query',
            arguments: { kind: 'shell.exec', command: 'rm -rf /' }
          }
        },
        reserve('res-P2', 1, 'P2', null)
      ]
    ),
    'RULE_TURN',
    'turn.plan',
    14
  )
)

rules('reference.evidence', () =>
  fires(
    forge(
      17,
      [request(3)],
      [
        responded(3),
        { type: 'HypothesisProposed', actor: 'model', data: { hypothesis_id: 'H1', statement: 's', evidence: ['E99'] } }
      ]
    ),
    'RULE_REFERENCE',
    'reference.evidence',
    20
  )
)
rules('reference.hypothesis: a conclusion citing H7', () =>
  fires(
    forge(
      21,
      [request(4)],
      [
        responded(4),
        { type: 'ConclusionRecorded', actor: 'model', data: { summary: 's', hypotheses: ['H7'], evidence: ['E4'] } },
        checkpoint(3, 'CONCLUDED')
      ]
    ),
    'RULE_REFERENCE',
    'reference.hypothesis',
    24
  )
)
rules('reference.lab: feedback for a request that was never made', () =>
  fires(
    forge(21, [{ type: 'LabFeedbackRecorded', actor: 'operator', data: { request_id: 'L9', feedback: 'f' } }]),
    'RULE_REFERENCE',
    'reference.lab',
    22
  )
)

const inputs = at(1).data as { report: unknown; entities: unknown; attachments: unknown }
rules('revision.number', () =>
  fires(
    forge(25, [
      {
        type: 'InputsRecorded',
        actor: 'operator',
        data: {
          ...inputs,
          revision: 5,
          inputs_version: 1,
          inputs_digest: digestOf({ report: inputs.report, entities: [], attachments: inputs.attachments }),
          entities: []
        }
      }
    ]),
    'RULE_REVISION',
    'revision.number',
    26
  )
)
rules('revision.inputs-digest: an origin the digest does not cover', () =>
  fires(
    forge(25, [
      {
        type: 'InputsRecorded',
        actor: 'operator',
        data: {
          ...inputs,
          revision: 2,
          inputs_version: 1,
          inputs_digest: digestOf({ report: inputs.report, entities: [], attachments: inputs.attachments }),
          entities: [],
          origin: 'https://example.org/issues/1'
        }
      }
    ]),
    'RULE_REVISION',
    'revision.inputs-digest',
    26
  )
)
rules("revision.inputs-digest: a digest that is not the inputs'", () =>
  fires(
    forge(25, [
      {
        type: 'InputsRecorded',
        actor: 'operator',
        data: { ...inputs, revision: 2, inputs_version: 1, inputs_digest: sha256Digest('x'), entities: [] }
      }
    ]),
    'RULE_REVISION',
    'revision.inputs-digest',
    26
  )
)
rules('revision.inputs-digest: the same inputs as revision 1 before it is completed', () =>
  fires(
    forge(1, [{ type: 'InputsRecorded', actor: 'operator', data: { ...(at(1).data as object), revision: 2 } }]),
    'RULE_REVISION',
    'revision.inputs-digest',
    2
  )
)
rules('the same inputs as a completed revision 1: a revision prepared again breaks no revision rule', () => {
  const v = forge(25, [{ type: 'InputsRecorded', actor: 'operator', data: { ...(at(1).data as object), revision: 2 } }])
  assert.equal(
    v.filter((x) => x.code === 'RULE_REVISION'),
    []
  )
})
rules('revision.open: enriching a completed revision', () =>
  fires(
    forge(25, [
      {
        type: 'EnrichmentCaptured',
        actor: 'system',
        data: { ...(at(2).data as object), evidence_id: 'E1', repeat: true }
      },
      { type: 'RevisionCompleted', actor: 'system', data: at(5).data }
    ]),
    'RULE_REVISION',
    'revision.open',
    26
  )
)
rules('revision.queries: a completion claiming queries it did not record', () =>
  fires(
    forge(1, [{ type: 'RevisionCompleted', actor: 'system', data: { ...(at(5).data as object), queries: 5 } }]),
    'RULE_REVISION',
    'revision.queries',
    2
  )
)

rules('command.whole: a capture that consumes nothing', () =>
  fires(
    forge(15, [
      {
        type: 'CaptureRecorded',
        actor: 'system',
        data: {
          reservation_id: 'res-P2',
          capture: NEW_CAPTURE,
          kind: 'database.rows',
          request_digest: PLAN_DIGEST,
          evidence_id: 'E5',
          repeat: false
        }
      }
    ]),
    'RULE_COMMAND',
    'command.whole',
    16
  )
)
rules('command.whole: a start without its checkpoint', () =>
  fires(
    forge(5, [{ type: 'InvestigationStarted', actor: 'controller', data: at(6).data }]),
    'RULE_COMMAND',
    'command.whole',
    6
  )
)

rules.run()
