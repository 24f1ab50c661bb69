/**
 * Research (family RULE_RESEARCH): a capture or a failure belongs to an open reservation and
 * answers the request it was made for, evidence is numbered as the deciders number it, a capture
 * is of the binding in force (an obligation), cancellations release their reservation, and an
 * answer from the case points at what the case recorded.
 */
import type { RecordedEvent } from '../../events/chain.js'
import { bindingInForce } from '../budget.js'
import { evidenceFor } from '../research-decider.js'
import { fromCaseProblem, stallBlockOwed } from './repeats.js'
import { digestOf } from './digest.js'
import { isStallBlock } from './turn.js'
import type { EventOf, RuleContext } from './context.js'

/** research.evidence-id: new evidence takes the next id; a repeat names the evidence it repeats. */
const checkEvidenceId = (c: RuleContext, digest: string, id: string, repeat: boolean): void => {
  const want = evidenceFor(c.s.research, digest)
  if (want.id === id && want.repeat === repeat) return
  c.bad(
    'research.evidence-id',
    want.repeat
      ? `this capture was recorded before as ${want.id}: it is a repeat of ${want.id}, not ${repeat ? 'a repeat of ' : 'new evidence '}${id}`
      : `new evidence is numbered ${want.id}, not ${id}${repeat ? ' (and it repeats nothing)' : ''}`
  )
}

/**
 * What a recorded capture (research's or a revision's enrichment) owes: its evidence id, and its
 * object, which must decode as a capture of its kind and request (an obligation).
 */
export const checkCaptured = (c: RuleContext, d: EventOf<'CaptureRecorded' | 'EnrichmentCaptured'>['data']): void => {
  checkEvidenceId(c, d.capture.digest, d.evidence_id, d.repeat)
  c.obligations.push({
    kind: 'capture',
    seq: c.e.seq,
    ref: d.capture,
    queryKind: d.kind,
    requestDigest: d.request_digest
  })
}

const expectStallBlock = (c: RuleContext): void => {
  if (stallBlockOwed(c.s, c.e))
    c.expect(
      'command.whole',
      'a stalled query that reaches max_invalid_responses blocks the case as INVALID_LLM_RESPONSES in the same command',
      isStallBlock
    )
}

/** research.request: the request a capture answers is the one its reservation was made for. */
const requestProblem = (c: RuleContext<EventOf<'CaptureRecorded'>>): string | null => {
  const d = c.e.data
  const open = c.s.research.open.get(d.reservation_id)
  if (open === undefined) return null
  if (open.plan_id !== null) {
    const plan = c.s.pendingPlan
    if (plan === null || plan.reservation !== d.reservation_id)
      return `plan ${open.plan_id} of ${d.reservation_id} is not the pending plan`
    return digestOf(plan.arguments) === d.request_digest
      ? null
      : `the capture answers another request than plan ${plan.plan_id} confirmed`
  }
  if (open.request_digest === null)
    return `reservation ${d.reservation_id} names no request, so no capture can answer it`
  return open.request_digest === d.request_digest
    ? null
    : `the capture answers another request than reservation ${d.reservation_id} was made for`
}

export const checkCapture = (c: RuleContext<EventOf<'CaptureRecorded'>>): void => {
  const d = c.e.data
  const bound = bindingInForce(c.s)
  if (bound !== null)
    c.obligations.push({
      kind: 'binding',
      seq: c.e.seq,
      binding: bound,
      captures: [{ digest: d.capture.digest, size: d.capture.size }]
    })
  if (!c.s.research.open.has(d.reservation_id))
    c.bad('research.reservation', `a capture belongs to an open reservation; ${d.reservation_id} is not open`)
  const problem = requestProblem(c)
  if (problem !== null) c.bad('research.request', problem)
  checkCaptured(c, d)
  c.expect(
    'command.whole',
    `a capture consumes its reservation ${d.reservation_id} in the same command`,
    (x) => x.type === 'BudgetConsumed' && x.data.reservation_id === d.reservation_id
  )
}

export const checkFailed = (c: RuleContext<EventOf<'ResearchFailed'>>): void => {
  const { s, e } = c
  const d = e.data
  const open = s.research.open.get(d.reservation_id)
  if (open === undefined)
    c.bad('research.reservation', `a failed query belongs to an open reservation; ${d.reservation_id} is not open`)
  expectStallBlock(c)
  if (!d.unavailable) {
    c.expect(
      'command.whole',
      `a failed query releases ${d.reservation_id} (refused) in the same command`,
      (x) => x.type === 'BudgetReleased' && x.data.reservation_id === d.reservation_id && x.data.reason === 'refused'
    )
  } else if (open?.plan_id != null && s.pendingPlan?.reservation === d.reservation_id) {
    c.expect(
      'command.whole',
      'an outage while carrying out a plan blocks the case as RESEARCH_UNAVAILABLE in the same command',
      (x: RecordedEvent) =>
        x.type === 'CheckpointRecorded' && x.data.state === 'BLOCKED' && x.data.reason === 'RESEARCH_UNAVAILABLE'
    )
  }
}

export const checkCancelled = (c: RuleContext<EventOf<'PlanCancelled'>>): void => {
  const d = c.e.data
  const open = c.s.research.open.get(d.reservation_id)
  if (open === undefined) c.bad('research.cancel', `reservation ${d.reservation_id} is not open`)
  else if (open.plan_id !== d.plan_id)
    c.bad(
      'research.cancel',
      `reservation ${d.reservation_id} belongs to ${open.plan_id ?? 'an operator query'}, not ${d.plan_id ?? 'an operator query'}`
    )
  if (d.reason.trim() === '') c.bad('research.cancel', 'a cancellation gives its reason')
  c.expect(
    'command.whole',
    `a cancellation releases ${d.reservation_id} as cancelled in the same command`,
    (x) => x.type === 'BudgetReleased' && x.data.reservation_id === d.reservation_id && x.data.reason === 'cancelled'
  )
}

export const checkFromCase = (c: RuleContext<EventOf<'QueryAnsweredFromCase'>>): void => {
  const problem = fromCaseProblem(c.s, c.cmd.events, c.e, digestOf)
  if (problem !== null) c.bad('research.from-case', problem)
  expectStallBlock(c)
}
