/**
 * The research and revision parts of the case fold: reservations, captures (evidence and
 * repeats), settlements and failures; revisions opened and completed. Pure, used by the whole
 * fold in case-state.ts and by the research and revisions projections.
 */
import type { RecordedEvent } from '../events/chain.js'
import type { ResearchState, RevisionInfo } from './case-state.js'

/** Research events: reservations, captures (evidence and repeats), settlements, failures. */
export const evolveResearch = (r: ResearchState, e: RecordedEvent): ResearchState => {
  switch (e.type) {
    case 'BudgetReserved':
      r.open.set(e.data.reservation_id, {
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
      r.open.delete(e.data.reservation_id)
      r.closed.add(e.data.reservation_id)
      r.consumed += e.data.amount
      return r
    case 'BudgetReleased':
      r.open.delete(e.data.reservation_id)
      r.closed.add(e.data.reservation_id)
      r.released += e.data.amount
      return r
    case 'CaptureRecorded':
    case 'EnrichmentCaptured': {
      const answered = e.type === 'CaptureRecorded' ? e.seq : null
      const existing = r.evidence.get(e.data.evidence_id)
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
        r.byDigest.set(e.data.capture.digest, e.data.evidence_id)
        r.evidenceRefs.set(e.data.capture.digest, { digest: e.data.capture.digest, size: e.data.capture.size })
      }
      r.byRequest.set(e.data.request_digest, {
        evidence_id: e.data.evidence_id,
        capture: { digest: e.data.capture.digest, size: e.data.capture.size }
      })
      if (e.type === 'CaptureRecorded') r.outageStreak = 0
      return r
    }
    case 'QueryAnsweredFromCase': {
      const existing = r.evidence.get(e.data.evidence_id)
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

/** Revisions: inputs, enrichment captures, completion with facts. */
export const evolveRevisions = (revisions: RevisionInfo[], e: RecordedEvent): RevisionInfo[] => {
  switch (e.type) {
    case 'InputsRecorded':
      revisions.push({
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
      return revisions
    case 'EnrichmentCaptured': {
      const r = revisions.find((x) => x.revision === e.data.revision)
      if (r !== undefined) r.captures += 1
      return revisions
    }
    case 'RevisionCompleted': {
      const r = revisions.find((x) => x.revision === e.data.revision)
      if (r !== undefined) {
        r.completed = true
        r.facts = { digest: e.data.facts.digest, size: e.data.facts.size }
        r.fact_count = e.data.fact_count
        r.complete = e.data.complete
        r.binding = e.data.binding
      }
      return revisions
    }
    default:
      return revisions
  }
}
