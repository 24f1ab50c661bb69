/**
 * The rules of answers from the case and stalled queries (from-case.ts, stall.ts), beside the
 * other rules in rules.ts: what a recorded QueryAnsweredFromCase must match, when a plan's
 * reservation should have been an answer from the case, and when stalled queries block. Pure.
 */
import type { RecordedEvent } from '../../events/chain.js'
import type { CaseState } from '../case-state.js'
import { recordedAnswer } from '../from-case.js'
import { nextStallBlocks, stallLimit } from '../stall.js'

type AnsweredFromCase = Extract<RecordedEvent, { type: 'QueryAnsweredFromCase' }>

/** Why a recorded answer from the case is not the one the deciders give (null when it is). */
export const fromCaseProblem = (
  s: CaseState,
  command: readonly RecordedEvent[],
  e: AnsweredFromCase,
  digestOf: (v: unknown) => string | null
): string | null => {
  const d = e.data
  if (s.settings?.answer_repeats_from_case !== true)
    return 'this investigation does not answer repeats from the case (it started with settings version 1)'
  const plan = s.pendingPlan
  if (
    plan === null ||
    plan.plan_id !== d.plan_id ||
    plan.reservation !== null ||
    !command.some((x) => x.type === 'PlanConfirmed' && x.data.plan_id === d.plan_id)
  ) {
    return `an answer from the case follows the confirmation of plan ${d.plan_id}, in its command`
  }
  if (digestOf(plan.arguments) !== d.request_digest)
    return `plan ${d.plan_id} asked another request than ${d.request_digest.slice(0, 20)}…`
  const recorded = recordedAnswer(s, d.request_digest)
  if (recorded === null) return 'the case holds no capture of this request'
  if (recorded.evidence_id !== d.evidence_id || recorded.capture.digest !== d.capture.digest)
    return `the case answers this request with ${recorded.evidence_id}, not ${d.evidence_id}`
  return null
}

/** The evidence a plan's request should have been answered with from the case, or null. */
export const answerableFromCase = (
  s: CaseState,
  planArguments: unknown,
  digestOf: (v: unknown) => string | null
): string | null => recordedAnswer(s, digestOf(planArguments))?.evidence_id ?? null

/** True when the stalled query `e` (a refused plan, an answer from the case) must block the case in its command. */
export const stallBlockOwed = (s: CaseState, e: RecordedEvent): boolean => {
  if (e.type === 'QueryAnsweredFromCase') return nextStallBlocks(s)
  if (e.type === 'ResearchFailed')
    return !e.data.unavailable && s.pendingPlan?.reservation === e.data.reservation_id && nextStallBlocks(s)
  return false
}

/** True when the stalled queries folded so far reach the limit and the command records one. */
export const stallBlockAllowed = (s: CaseState, command: readonly RecordedEvent[]): boolean => {
  const limit = stallLimit(s)
  return (
    limit !== null &&
    s.stalled >= limit &&
    command.some((x) => x.type === 'QueryAnsweredFromCase' || (x.type === 'ResearchFailed' && !x.data.unavailable))
  )
}
