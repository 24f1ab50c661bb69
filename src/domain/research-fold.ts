/**
 * The research and revision parts of the case fold: reservations, captures (evidence and
 * repeats), settlements and failures; revisions opened and completed. Pure, used by the whole
 * fold in case-state.ts and by the research and revisions projections.
 */
import type { RecordedEvent } from '../events/chain.js'
import { partsOf, IN_PLACE, type Parts, type ResearchState, type RevisionInfo } from './case-state.js'

/** Research events: reservations, captures (evidence and repeats), settlements, failures. */
export const evolveResearch = (r: ResearchState, e: RecordedEvent, w: Parts = partsOf(r)): ResearchState => {
  switch (e.type) {
    case 'BudgetReserved':
      w.own(r, 'open').set(e.data.reservation_id, {
        id: e.data.reservation_id,
        amount: e.data.amount,
        seq: e.seq,
        plan_id: e.data.plan_id,
        request_digest: e.data.request_digest,
        requester: e.data.requester,
        request: e.data.request
      })
      r.reserved += e.data.amount
      return r
    case 'BudgetConsumed':
      w.own(r, 'open').delete(e.data.reservation_id)
      w.own(r, 'closed').add(e.data.reservation_id)
      r.consumed += e.data.amount
      return r
    case 'BudgetReleased':
      w.own(r, 'open').delete(e.data.reservation_id)
      w.own(r, 'closed').add(e.data.reservation_id)
      r.released += e.data.amount
      return r
    case 'CaptureRecorded':
    case 'EnrichmentCaptured': {
      const answered = e.type === 'CaptureRecorded' ? e.seq : null
      const existing = w.entry(w.own(r, 'evidence'), e.data.evidence_id)
      if (existing !== undefined) {
        existing.repeats += e.data.repeat ? 1 : 0
        if (answered !== null) existing.last_result_seq = answered
      } else {
        r.evidence.set(e.data.evidence_id, {
          id: e.data.evidence_id,
          digest: e.data.capture.digest,
          kind: e.data.kind,
          first_seq: e.seq,
          repeats: 0,
          origin: e.type === 'CaptureRecorded' ? 'query' : 'enrichment',
          last_result_seq: answered,
          last_plan: null
        })
        w.own(r, 'byDigest').set(e.data.capture.digest, e.data.evidence_id)
        w.own(r, 'evidenceRefs').set(e.data.capture.digest, {
          digest: e.data.capture.digest,
          size: e.data.capture.size
        })
      }
      w.own(r, 'byRequest').set(e.data.request_digest, {
        evidence_id: e.data.evidence_id,
        capture: { digest: e.data.capture.digest, size: e.data.capture.size }
      })
      if (e.type === 'CaptureRecorded') r.outageStreak = 0
      return r
    }
    case 'QueryAnsweredFromCase': {
      const existing = w.entry(w.own(r, 'evidence'), e.data.evidence_id)
      if (existing !== undefined) {
        existing.repeats += 1
        existing.last_result_seq = e.seq
        existing.last_plan = e.data.plan_id
      }
      return r
    }
    case 'ResearchFailed':
      r.failures += 1
      if (e.data.unavailable) {
        r.unavailable += 1
        r.outageStreak += 1
      } else r.outageStreak = 0
      r.lastFailure = { code: e.data.code, reservation_id: e.data.reservation_id, unavailable: e.data.unavailable }
      return r
    default:
      return r
  }
}

/** The revision numbered `n`, to change in place (see Parts). */
const revisionOf = (revisions: RevisionInfo[], n: number, w: Parts): RevisionInfo | undefined => {
  const i = revisions.findIndex((x) => x.revision === n)
  return i < 0 ? undefined : w.own(revisions, i)
}

/**
 * Revisions: inputs, enrichment captures, completion with facts. The array of a state a snapshot
 * shares it with is copied first (`w`, see Parts): the fold assigns what this returns.
 */
export const evolveRevisions = (revisions: RevisionInfo[], e: RecordedEvent, w: Parts = IN_PLACE): RevisionInfo[] => {
  switch (e.type) {
    case 'InputsRecorded': {
      const own = w.mine(revisions)
      own.push({
        revision: e.data.revision,
        inputs_digest: e.data.inputs_digest,
        entities: [...e.data.entities, ...(e.data.extracted ?? []).map((x) => ({ type: x.type, id: x.id }))],
        ...(e.data.extracted === undefined ? {} : { extracted: e.data.extracted }),
        completed: false,
        facts: null,
        fact_count: 0,
        complete: false,
        captures: 0,
        binding: null
      })
      return own
    }
    case 'EnrichmentCaptured': {
      const own = w.mine(revisions)
      const r = revisionOf(own, e.data.revision, w)
      if (r !== undefined) r.captures += 1
      return own
    }
    case 'RevisionCompleted': {
      const own = w.mine(revisions)
      const r = revisionOf(own, e.data.revision, w)
      if (r !== undefined) {
        r.completed = true
        r.facts = { digest: e.data.facts.digest, size: e.data.facts.size }
        r.fact_count = e.data.fact_count
        r.complete = e.data.complete
        r.binding = e.data.binding
      }
      return own
    }
    default:
      return revisions
  }
}
