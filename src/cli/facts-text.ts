/**
 * The facts of a prepared revision and what its enrichment left out, as terminal lines: read by
 * `vba case prepare` (the refused lookups with their codes), `vba status` and `vba show`; and
 * whether a conclusion rests only on weak evidence (`vba status`).
 */
import { plural } from '../projections/query-kinds/parts.js'
import * as E from 'fp-ts/lib/Either.js'
import { openCaseAt, readObjectAt } from '../adapters/case-store/at.js'
import { Capture } from '../events/capture.js'
import { decodeJson } from '../events/decode.js'
import { decodeUtf8 } from '../adapters/fs-util.js'
import { onlyWeakSupport, type WeakEvidence } from '../projections/report/support.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { FactsDocument, type CoverageGap, type Fact } from '../domain/facts-document.js'
import type { RevisionInfo } from '../projections/revisions.js'
import { factEntry } from '../projections/prompt-v2/facts-index.js'
import { parseBoundedBytes } from '../events/bounds.js'
import { fail } from '../failures/error.js'

/** One line per item enrichment left out: why (the reason and the failure code), what, the detail. */
export const gapLine = (g: CoverageGap): string =>
  `left out (${[g.reason, ...(g.code === undefined ? [] : [g.code])].join(', ')}): ${g.what}${g.count === undefined ? '' : `, ${plural(g.count, 'item')}`}${g.detail === undefined ? '' : `: ${g.detail}`}`

/** The facts document of the latest completed revision, as it is stored (null when none completed). */
export const latestFactsDocument = async (
  at: CaseAt,
  revisions: readonly RevisionInfo[]
): Promise<{ readonly revision: RevisionInfo; readonly doc: unknown } | null> => {
  const done = [...revisions].reverse().find((r) => r.completed && r.facts !== null)
  if (done?.facts == null) return null
  const bytes = await readObjectAt(at, done.facts)
  const doc = parseBoundedBytes(bytes)
  return doc === undefined
    ? fail('CASE_CORRUPT', `object ${done.facts.digest} is not JSON within bounds`)
    : { revision: done, doc }
}

/** The facts of the latest completed revision, decoded (empty when none completed or it does not decode). */
export const latestFacts = async (
  at: CaseAt,
  revisions: readonly RevisionInfo[]
): Promise<{ readonly revision: number; readonly facts: readonly Fact[] } | null> => {
  const found = await latestFactsDocument(at, revisions)
  if (found === null) return null
  const d = FactsDocument.decode(found.doc)
  return { revision: found.revision.revision, facts: E.isRight(d) ? d.right.facts : [] }
}

/**
 * The lines of the facts of a revision: a header, one entry per fact (the coverage names every
 * item left out, with its code), at most `max` lines and then how many were left unshown.
 */
export const factLines = (revision: number, facts: readonly Fact[], max = 60): string[] => {
  const lines = facts.flatMap((f) => factEntry(f))
  const header = `facts of revision ${revision} (${facts.length}):`
  if (lines.length <= max) return [header, ...lines]
  return [header, ...lines.slice(0, max), `  … ${lines.length - max} more line(s): vba show CASE --json`]
}

/**
 * The weak evidence a case's conclusion rests on, when it rests only on partial or empty answers
 * (see projections/report/support.ts); null when it does not, or the case has no conclusion.
 */
export const weakConclusion = async (at: CaseAt): Promise<readonly WeakEvidence[] | null> => {
  const s = (await openCaseAt(at)).cursor.state
  if (s.conclusion === null) return null
  const cited = [
    ...s.conclusion.evidence,
    ...s.conclusion.hypotheses.flatMap((h) => s.hypotheses.get(h)?.evidence ?? [])
  ]
  const captures = new Map<string, Capture | null>()
  for (const id of cited) {
    const digest = s.research.evidence.get(id)?.digest
    const ref = digest === undefined ? undefined : s.research.evidenceRefs.get(digest)
    if (ref === undefined || captures.has(id)) continue
    const text = decodeUtf8(await readObjectAt(at, ref), `capture ${id}`)
    const c = decodeJson(Capture, text)
    captures.set(id, E.isRight(c) ? c.right : null)
  }
  return onlyWeakSupport(
    s.conclusion,
    (h) => s.hypotheses.get(h)?.evidence ?? [],
    (id) => captures.get(id)
  )
}
