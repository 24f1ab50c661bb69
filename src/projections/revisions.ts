/** Revisions of a case: their inputs and whether (and with which facts) they completed. */
import type { Projection } from './projection.js'

export interface RevisionInfo {
  readonly revision: number
  readonly inputs_digest: string
  readonly entities: ReadonlyArray<{ type: string; id: number | string }>
  completed: boolean
  facts: { digest: string; size: number } | null
  fact_count: number
  complete: boolean
  captures: number
}

export interface RevisionsState {
  revisions: RevisionInfo[]
}

export interface RevisionsView {
  readonly revisions: readonly RevisionInfo[]
  readonly current: number
}

export const revisionsProjection: Projection<RevisionsState, RevisionsView> = {
  name: 'revisions',
  version: 1,
  init: () => ({ revisions: [] }),
  evolve: (s, e) => {
    switch (e.type) {
      case 'InputsRecorded':
        s.revisions.push({ revision: e.data.revision, inputs_digest: e.data.inputs_digest, entities: e.data.entities, completed: false, facts: null, fact_count: 0, complete: false, captures: 0 })
        return s
      case 'EnrichmentCaptured': {
        const r = s.revisions.find((x) => x.revision === e.data.revision)
        if (r !== undefined) r.captures += 1
        return s
      }
      case 'RevisionCompleted': {
        const r = s.revisions.find((x) => x.revision === e.data.revision)
        if (r !== undefined) {
          r.completed = true
          r.facts = { digest: e.data.facts.digest, size: e.data.facts.size }
          r.fact_count = e.data.fact_count
          r.complete = e.data.complete
        }
        return s
      }
      default:
        return s
    }
  },
  view: (s) => ({ revisions: s.revisions.map((r) => ({ ...r })), current: s.revisions[s.revisions.length - 1]?.revision ?? 0 })
}
