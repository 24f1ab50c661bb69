/**
 * Versions (family RULE_VERSION): a case whose declaration records the writer's format generation
 * holds only the versions that generation writes (`version.current`: an older one is a downgrade,
 * such as a RevisionCompleted sealed again as version 1 to switch `revision.derived` off). For
 * cases older than generations, what a rule cannot check of an old version (or of a binding that
 * was never recorded) is said, never skipped in silence: a RULE_NOT_APPLIED notice per rule and
 * reason, naming the events (`verify --strict` makes it a finding).
 */
import { outdatedVersion } from '../../events/generations.js'
import { bindingInForce } from '../budget.js'
import type { RuleContext } from './context.js'

/** version.current, and the rules an old version keeps from applying. */
export const checkVersion = (c: RuleContext): void => {
  const { s, e } = c
  const g = s.formatGeneration
  const written = g === null ? null : outdatedVersion(g, e.type, e.version)
  if (written !== null)
    c.bad(
      'version.current',
      `${e.type} version ${e.version} in a case created by a writer of format generation ${String(g)}, which writes version ${written}: an older version from a newer writer`
    )
  switch (e.type) {
    case 'RevisionCompleted': {
      const d = e.data
      if (d.enrichment === null)
        c.skip(
          'revision.derived',
          `revisions completed without their enrichment settings (RevisionCompleted version ${e.version}): facts not re-derived`
        )
      if (d.binding === null && d.queries > 0)
        c.skip(
          'research.binding',
          `revisions completed without a binding (RevisionCompleted version ${e.version}): origins of their enrichment captures not checked`
        )
      break
    }
    case 'CaptureRecorded':
      // Only where a binding should be (a start or a completed revision recorded none); a query
      // in a case with neither binds nothing, and its origin is what --against asks again.
      if (bindingInForce(s) === null && (s.settings !== null || s.revisions.some((r) => r.completed)))
        c.skip(
          'research.binding',
          'no binding recorded (the investigation started without one and no completed revision names one): origins of captures not checked'
        )
      break
    case 'ModelResponded':
      if (e.data.provenance === null && s.settings?.max_tokens != null)
        c.skip(
          'budget.tokens',
          `answers without provenance (ModelResponded version ${e.version}) under a token limit: their tokens not counted`
        )
      break
    default:
  }
}
