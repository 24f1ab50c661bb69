/**
 * Research in a case: reservations (open, consumed, released), evidence by capture digest with
 * its repeats, and failures. A view of the domain's research fold (src/domain/case-state.ts).
 */
import { initResearch, type ResearchState } from '../domain/case-state.js'
import { evolveResearch } from '../domain/research-fold.js'
import { heldBudget } from '../domain/budget.js'
import type { Projection } from './projection.js'

export type { Evidence, Reservation, ResearchState } from '../domain/case-state.js'

export interface ResearchView {
  readonly reservations_open: ReadonlyArray<{ id: string; amount: number; plan_id: string | null; seq: number }>
  readonly budget: {
    readonly reserved: number
    readonly consumed: number
    readonly released: number
    readonly held: number
  }
  readonly evidence: ReadonlyArray<{ id: string; kind: string; capture: string; first_seq: number; repeats: number }>
  readonly failures: number
  readonly unavailable_failures: number
  readonly last_failure: ResearchState['lastFailure']
}

export const researchProjection: Projection<ResearchState, ResearchView> = {
  name: 'research',
  version: 1,
  init: initResearch,
  evolve: evolveResearch,
  view: (s) => ({
    reservations_open: [...s.open.values()]
      .sort((a, b) => a.seq - b.seq)
      .map((r) => ({ id: r.id, amount: r.amount, plan_id: r.plan_id, seq: r.seq })),
    budget: { reserved: s.reserved, consumed: s.consumed, released: s.released, held: heldBudget(s) },
    evidence: [...s.evidence.values()]
      .sort((a, b) => a.first_seq - b.first_seq)
      .map((v) => ({ id: v.id, kind: v.kind, capture: v.digest, first_seq: v.first_seq, repeats: v.repeats })),
    failures: s.failures,
    unavailable_failures: s.unavailable,
    last_failure: s.lastFailure
  })
}
