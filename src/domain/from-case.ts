/**
 * An identical query asked again is answered from the case. When an investigation answers repeats
 * from the case (`answer_repeats_from_case`, every start with settings version 2), a plan whose
 * request digest equals one the case has a capture for (a query's or the enrichment's) is not
 * carried out again: the capture recorded last for that request is shown again as a repeat of its
 * evidence, at no cost (`QueryAnsweredFromCase`, no reservation). Enrichment captures are
 * reachable the same way: their rows are shown when the model asks their query. Pure.
 */
import { eventDraft, type EventDraft } from '../events/chain.js'
import type { CaseState, AnsweredRequest } from './case-state.js'
import { stallBlock } from './stall.js'

/** The recorded answer to a request digest, when the investigation answers repeats from the case. */
export const recordedAnswer = (s: CaseState, requestDigest: string | null): AnsweredRequest | null =>
  s.settings?.answer_repeats_from_case === true && requestDigest !== null
    ? (s.research.byRequest.get(requestDigest) ?? null)
    : null

/**
 * The events of a plan answered from the case (after its PlanConfirmed, in the same command),
 * or null when the case holds no capture of the request.
 */
export const answerFromCase = (
  s: CaseState,
  planId: string,
  requestDigest: string | null,
  now: Date
): EventDraft[] | null => {
  const recorded = recordedAnswer(s, requestDigest)
  if (recorded === null || requestDigest === null) return null
  return [
    eventDraft('QueryAnsweredFromCase', {
      plan_id: planId,
      request_digest: requestDigest,
      evidence_id: recorded.evidence_id,
      capture: recorded.capture
    }),
    ...stallBlock(s, now)
  ]
}
