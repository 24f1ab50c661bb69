/** References (family RULE_REFERENCE): cited evidence, hypotheses and lab requests exist when they are cited. */
import type { EventOf, RuleContext } from './context.js'

/** reference.evidence */
export const knownEvidence = (c: RuleContext, ids: readonly string[]): void => {
  const unknown = ids.filter((id) => !c.s.research.evidence.has(id))
  if (unknown.length > 0)
    c.bad('reference.evidence', `${c.e.type} cites evidence that does not exist: ${unknown.slice(0, 5).join(', ')}`)
}

/** reference.lab: feedback answers an existing request, once. */
export const checkFeedback = (c: RuleContext<EventOf<'LabFeedbackRecorded'>>): void => {
  const r = c.s.labRequests.get(c.e.data.request_id)
  if (r === undefined) c.bad('reference.lab', `lab test request ${c.e.data.request_id} does not exist`)
  else if (r.feedback !== null) c.bad('reference.lab', `feedback for ${c.e.data.request_id} is recorded already`)
}
