/**
 * Research in a case: reservations (open, consumed, released), evidence by capture digest with
 * its repeats, and failures. The state research deciders decide on.
 */
import type { Projection } from './projection.js'

export interface Reservation {
  readonly id: string
  readonly amount: number
  readonly seq: number
  readonly plan_id: string | null
}

export interface Evidence {
  readonly id: string
  readonly digest: string
  readonly kind: string
  readonly first_seq: number
  repeats: number
}

export interface ResearchState {
  open: Map<string, Reservation>
  closed: Set<string>
  reserved: number
  consumed: number
  released: number
  evidence: Map<string, Evidence>
  byDigest: Map<string, string>
  /** Object references of the captures (digest → {digest, size}) for reading them back. */
  evidenceRefs: Map<string, { digest: string; size: number }>
  failures: number
  unavailable: number
  lastFailure: { code: string; reservation_id: string; unavailable: boolean } | null
}

export interface ResearchView {
  readonly reservations_open: ReadonlyArray<{ id: string; amount: number; plan_id: string | null; seq: number }>
  readonly budget: { readonly reserved: number; readonly consumed: number; readonly released: number; readonly held: number }
  readonly evidence: ReadonlyArray<{ id: string; kind: string; capture: string; first_seq: number; repeats: number }>
  readonly failures: number
  readonly unavailable_failures: number
  readonly last_failure: ResearchState['lastFailure']
}

export const initResearch = (): ResearchState => ({
  open: new Map(),
  closed: new Set(),
  reserved: 0,
  consumed: 0,
  released: 0,
  evidence: new Map(),
  byDigest: new Map(),
  evidenceRefs: new Map(),
  failures: 0,
  unavailable: 0,
  lastFailure: null
})

export const researchProjection: Projection<ResearchState, ResearchView> = {
  name: 'research',
  version: 1,
  init: initResearch,
  evolve: (s, e) => {
    switch (e.type) {
      case 'BudgetReserved':
        s.open.set(e.data.reservation_id, { id: e.data.reservation_id, amount: e.data.amount, seq: e.seq, plan_id: e.data.plan_id })
        s.reserved += e.data.amount
        return s
      case 'BudgetConsumed':
        s.open.delete(e.data.reservation_id)
        s.closed.add(e.data.reservation_id)
        s.consumed += e.data.amount
        return s
      case 'BudgetReleased':
        s.open.delete(e.data.reservation_id)
        s.closed.add(e.data.reservation_id)
        s.released += e.data.amount
        return s
      case 'CaptureRecorded':
      case 'EnrichmentCaptured': {
        const existing = s.evidence.get(e.data.evidence_id)
        if (existing !== undefined) existing.repeats += e.data.repeat ? 1 : 0
        else {
          s.evidence.set(e.data.evidence_id, { id: e.data.evidence_id, digest: e.data.capture.digest, kind: e.data.kind, first_seq: e.seq, repeats: 0 })
          s.byDigest.set(e.data.capture.digest, e.data.evidence_id)
          s.evidenceRefs.set(e.data.capture.digest, { digest: e.data.capture.digest, size: e.data.capture.size })
        }
        return s
      }
      case 'ResearchFailed':
        s.failures += 1
        if (e.data.unavailable) s.unavailable += 1
        s.lastFailure = { code: e.data.code, reservation_id: e.data.reservation_id, unavailable: e.data.unavailable }
        return s
      case 'NoteRecorded':
      case 'AttachmentAdded':
      default:
        return s
    }
  },
  view: (s) => ({
    reservations_open: [...s.open.values()].sort((a, b) => a.seq - b.seq).map((r) => ({ id: r.id, amount: r.amount, plan_id: r.plan_id, seq: r.seq })),
    budget: { reserved: s.reserved, consumed: s.consumed, released: s.released, held: s.reserved - s.consumed - s.released },
    evidence: [...s.evidence.values()].sort((a, b) => a.first_seq - b.first_seq).map((v) => ({ id: v.id, kind: v.kind, capture: v.digest, first_seq: v.first_seq, repeats: v.repeats })),
    failures: s.failures,
    unavailable_failures: s.unavailable,
    last_failure: s.lastFailure
  })
}
