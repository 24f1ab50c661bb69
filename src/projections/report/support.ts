/**
 * What a conclusion rests on, and what a revision was bound to: read by `vba status`, the case
 * report and the Markdown summary, so a conclusion that cites only partial or empty answers is
 * marked in all three, and a prepared case names the commit and snapshot of its binding even when
 * no source or database query was asked. Pure.
 */
import type { Capture } from '../../events/capture.js'
import type { Binding } from '../../events/settings.js'
import { partialMarkers } from '../../domain/partial.js'
import { captureView } from '../capture-text.js'

/** A piece of cited evidence that holds less than it seems: partial (its markers) or empty (no rows, hits …). */
export interface WeakEvidence {
  readonly id: string
  readonly why: string
}

/** Why a capture is weak evidence, or null when it is whole and holds something. */
export const weakness = (c: Capture): string | null => {
  const view = captureView(c)
  const markers = partialMarkers(c.result)
  const empty = view.items.length === 0 ? `no ${view.unit}` : null
  const partial = markers.length === 0 ? null : `partial: ${markers.join(', ')}`
  return empty === null && partial === null ? null : [empty, partial].filter((x) => x !== null).join('; ')
}

/**
 * The evidence a conclusion rests on (its own and that of the hypotheses it cites), when every
 * piece of it is weak: each with why; null when some piece is whole, or nothing is cited or readable.
 */
export const onlyWeakSupport = (
  conclusion: { readonly evidence: readonly string[]; readonly hypotheses: readonly string[] },
  hypothesisEvidence: (id: string) => readonly string[],
  captureOf: (id: string) => Capture | null | undefined
): readonly WeakEvidence[] | null => {
  const cited = [...conclusion.evidence, ...conclusion.hypotheses.flatMap(hypothesisEvidence)].filter(
    (id, i, all) => all.indexOf(id) === i
  )
  const weak: WeakEvidence[] = []
  for (const id of cited) {
    const c = captureOf(id)
    if (c === null || c === undefined) return null
    const why = weakness(c)
    if (why === null) return null
    weak.push({ id, why })
  }
  return weak.length === 0 ? null : weak
}

/** The words of a conclusion that rests only on weak evidence. */
export const weakSupportText = (weak: readonly WeakEvidence[]): string =>
  `the conclusion rests only on partial or empty evidence: ${weak.map((w) => `${w.id} (${w.why})`).join(', ')}`

/** The commit and snapshot a revision was bound to, as report cells would name them (null: none). */
export const boundTo = (
  binding: Binding | null
): { readonly commit: string | null; readonly snapshot: string | null } => ({
  commit: binding?.source?.commit ?? null,
  snapshot:
    binding?.database == null ? null : `${binding.database.databases.join(', ')} @ ${binding.database.snapshot_id}`
})
