/** Revisions of a case: their inputs and whether (and with which facts) they completed. */
import type { RevisionInfo } from '../domain/case-state.js'
import { evolveRevisions } from '../domain/research-fold.js'
import type { Projection } from './projection.js'

export type { RevisionInfo } from '../domain/case-state.js'

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
    s.revisions = evolveRevisions(s.revisions, e)
    return s
  },
  view: (s) => ({
    revisions: s.revisions.map((r) => ({ ...r })),
    current: s.revisions[s.revisions.length - 1]?.revision ?? 0
  })
}
