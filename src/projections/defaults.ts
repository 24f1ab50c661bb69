/** The projections every replay folds, in output order. Later capabilities append theirs. */
import type { AnyProjection } from './projection.js'
import { summaryProjection } from './summary.js'
import { researchProjection } from './research.js'
import { revisionsProjection } from './revisions.js'

/** @category Projections */
export const defaultProjections = (): readonly AnyProjection[] => [
  summaryProjection,
  researchProjection,
  revisionsProjection
]
