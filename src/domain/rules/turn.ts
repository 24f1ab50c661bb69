/**
 * Model turns (family RULE_TURN): requests in order and only when a model may be asked, answers
 * to the open request first in their command, exactly one decision per answer, ids as the
 * deciders number them, plans that are valid queries of the contract.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { RecordedEvent } from '../../events/chain.js'
import { decodeQuery } from '../query.js'
import { tokensSpent } from '../budget.js'
import { investigating } from './lifecycle.js'
import { knownEvidence } from './reference.js'
import type { EventOf, RuleContext } from './context.js'

/** The events that are a model's decided answer (exactly one follows each ModelResponded). */
export const DECISIONS = new Set<string>([
  'InterpretationRecorded',
  'ModelResponseRejected',
  'PlanConfirmed',
  'HypothesisProposed',
  'HypothesisUpdated',
  'LabTestRequested',
  'ConclusionRecorded'
])

/** turn.decision: a decision is recorded with the answer of the current turn, one per answer. */
const decision = (c: RuleContext, answerTurn?: number): void => {
  const first = c.cmd.events[0]
  if (first?.type !== 'ModelResponded' || first.data.turn !== c.s.turn) {
    c.bad(
      'turn.decision',
      `${c.e.type} is a model decision: it is recorded with the model's answer of the current turn (${c.s.turn})`
    )
    return
  }
  if (c.cmd.events.some((x) => DECISIONS.has(x.type)))
    c.bad('turn.decision', `one answer makes one decision; ${c.e.type} is a second one`)
  if (answerTurn !== undefined && answerTurn !== first.data.turn)
    c.bad('turn.decision', `${c.e.type} names turn ${answerTurn}, but answers turn ${first.data.turn}`)
}

export const checkRequest = (c: RuleContext<EventOf<'ModelRequested'>>): void => {
  const { s, e } = c
  const d = e.data
  if (s.state !== 'INTERPRETING' && s.state !== 'INVESTIGATING')
    c.bad('turn.request', `no model turn while the case is ${s.state}${s.reason === null ? '' : ` / ${s.reason}`}`)
  else if (d.phase !== (s.state === 'INTERPRETING' ? 'interpretation' : 'investigation'))
    c.bad('turn.request', `a ${d.phase} prompt while the case is ${s.state}`)
  if (d.turn !== s.turn + 1) c.bad('turn.request', `turn ${d.turn} follows turn ${s.turn}; it must be ${s.turn + 1}`)
  if (s.pendingPlan?.reservation != null)
    c.bad('turn.request', `plan ${s.pendingPlan.plan_id} waits to be carried out before the model is asked again`)
  if (tokensSpent(s))
    c.bad(
      'budget.tokens',
      `${s.tokens.total} model tokens are spent, the limit is ${String(s.settings?.max_tokens)}: no model is asked again`
    )
}

export const checkAnswer = (c: RuleContext<EventOf<'ModelResponded'> | EventOf<'ModelFailed'>>): void => {
  const { s, e } = c
  const d = e.data
  if (s.openTurn === null || s.openTurn.turn !== d.turn)
    c.bad(
      'turn.answer',
      `${e.type} of turn ${d.turn} answers no open request (${s.openTurn === null ? 'none is open' : `turn ${s.openTurn.turn} is open`})`
    )
  else if (s.state !== 'INTERPRETING' && s.state !== 'INVESTIGATING')
    c.bad(
      'turn.answer',
      `${e.type} while the case is ${s.state}${s.reason === null ? '' : ` / ${s.reason}`}: no model is asked then`
    )
  if (c.cmd.events.length > 0) c.bad('turn.answer', `${e.type} begins the command that records the answer`)
  if (e.type === 'ModelResponded') {
    c.expect(
      'command.whole',
      `the answer of turn ${d.turn} is recorded with what it means (one decision)`,
      (x) => DECISIONS.has(x.type) || (x.type === 'CheckpointRecorded' && x.data.state === 'EXHAUSTED')
    )
  } else {
    c.expect(
      'command.whole',
      'a failed model call blocks the case as MODEL_UNAVAILABLE in the same command',
      (x) => x.type === 'CheckpointRecorded' && x.data.state === 'BLOCKED' && x.data.reason === 'MODEL_UNAVAILABLE'
    )
  }
}

const isStallBlock = (x: RecordedEvent): boolean =>
  x.type === 'CheckpointRecorded' && x.data.state === 'BLOCKED' && x.data.reason === 'INVALID_LLM_RESPONSES'

export const checkRejection = (c: RuleContext<EventOf<'ModelResponseRejected'>>): void => {
  const { s, e } = c
  decision(c, e.data.turn)
  if (e.data.consecutive !== s.consecutiveInvalid + 1)
    c.bad(
      'turn.rejection-count',
      `rejection ${e.data.consecutive} in a row follows ${s.consecutiveInvalid}; it must be ${s.consecutiveInvalid + 1}`
    )
  const limit = s.settings?.max_invalid_responses ?? 3
  if (e.data.consecutive >= limit)
    c.expect(
      'command.whole',
      `the ${limit}th invalid answer in a row blocks the case as INVALID_LLM_RESPONSES in the same command`,
      isStallBlock
    )
}

export const checkInterpretation = (c: RuleContext<EventOf<'InterpretationRecorded'>>): void => {
  decision(c, c.e.data.turn)
  if (c.s.state !== 'INTERPRETING') c.bad('lifecycle.phase', `an interpretation while the case is ${c.s.state}`)
  c.expect(
    'command.whole',
    'an interpretation is recorded with its INVESTIGATING checkpoint',
    (x) => x.type === 'CheckpointRecorded' && x.data.state === 'INVESTIGATING'
  )
}

export const checkPlan = (c: RuleContext<EventOf<'PlanConfirmed'>>): void => {
  const { s, e } = c
  const d = e.data
  decision(c, d.turn)
  investigating(c)
  if (s.pendingPlan !== null) c.bad('turn.plan', `plan ${s.pendingPlan.plan_id} is still pending`)
  if (d.plan_id !== `P${d.turn}`) c.bad('turn.ids', `the plan of turn ${d.turn} is P${d.turn}, not ${d.plan_id}`)
  const q = decodeQuery(d.arguments)
  if (E.isLeft(q)) c.bad('turn.plan', `the plan is not a valid project.query: ${q.left.message}`)
  else if (q.right.kind === 'source.context' && s.settings?.source_context === null)
    c.bad('turn.plan', "source.context is not part of this investigation's contract")
  c.expect(
    'command.whole',
    `plan ${d.plan_id} is recorded with its budget reservation (or its answer from the case)`,
    (x) => (x.type === 'BudgetReserved' || x.type === 'QueryAnsweredFromCase') && x.data.plan_id === d.plan_id
  )
}

export const checkProposed = (c: RuleContext<EventOf<'HypothesisProposed'>>): void => {
  decision(c)
  investigating(c)
  const want = `H${c.s.hypotheses.size + 1}`
  if (c.e.data.hypothesis_id !== want)
    c.bad('turn.ids', `the next hypothesis is ${want}, not ${c.e.data.hypothesis_id}`)
  knownEvidence(c, c.e.data.evidence)
}

export const checkUpdated = (c: RuleContext<EventOf<'HypothesisUpdated'>>): void => {
  decision(c)
  investigating(c)
  if (!c.s.hypotheses.has(c.e.data.hypothesis_id))
    c.bad('reference.hypothesis', `hypothesis ${c.e.data.hypothesis_id} does not exist`)
  knownEvidence(c, c.e.data.evidence)
}

export const checkLabTest = (c: RuleContext<EventOf<'LabTestRequested'>>): void => {
  decision(c)
  investigating(c)
  const want = `L${c.s.labRequests.size + 1}`
  if (c.e.data.request_id !== want)
    c.bad('turn.ids', `the next lab test request is ${want}, not ${c.e.data.request_id}`)
  c.expect(
    'command.whole',
    'a lab test request blocks the case as AWAITING_TEST_FEEDBACK in the same command',
    (x) => x.type === 'CheckpointRecorded' && x.data.state === 'BLOCKED' && x.data.reason === 'AWAITING_TEST_FEEDBACK'
  )
}

export const checkConclusion = (c: RuleContext<EventOf<'ConclusionRecorded'>>): void => {
  decision(c)
  investigating(c)
  const unknown = c.e.data.hypotheses.filter((h) => !c.s.hypotheses.has(h))
  if (unknown.length > 0)
    c.bad(
      'reference.hypothesis',
      `the conclusion cites hypotheses that do not exist: ${unknown.slice(0, 5).join(', ')}`
    )
  knownEvidence(c, c.e.data.evidence)
  c.expect(
    'command.whole',
    'a conclusion is recorded with its CONCLUDED checkpoint',
    (x) => x.type === 'CheckpointRecorded' && x.data.state === 'CONCLUDED'
  )
}

export { isStallBlock }
