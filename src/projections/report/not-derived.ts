/**
 * What the report must not present as derived: the facts and captures of the rules verify could
 * not apply (RULE_NOT_APPLIED: facts of a revision completed by version 1 were not re-derived, the
 * origins of captures of a case that recorded no binding were not checked).
 */
import type { RecordedEvent } from '../../events/chain.js'
import type { Finding } from '../../events/findings.js'

export interface NotDerived {
  /** Revisions whose facts were not re-derived. */
  readonly revisions: ReadonlySet<number>
  /** Evidence ids whose origins were not checked against a binding, in order of their first record. */
  readonly unbound: readonly string[]
  /** Whether any rule did not apply. */
  readonly any: boolean
}

const seqsOf = (findings: readonly Finding[], rule: string): Set<number> =>
  new Set(
    findings
      .filter((f) => f.code === 'RULE_NOT_APPLIED' && f.data?.['rule'] === rule)
      .flatMap((f) => (Array.isArray(f.data?.['seqs']) ? (f.data['seqs'] as number[]) : []))
  )

/** The facts and evidence of `events` that verification (its `findings`) did not derive or check. */
export const notDerived = (events: readonly RecordedEvent[], findings: readonly Finding[]): NotDerived => {
  const facts = seqsOf(findings, 'revision.derived')
  const binding = seqsOf(findings, 'research.binding')
  const revisions = new Set<number>()
  const unboundRevisions = new Set<number>()
  for (const e of events)
    if (e.type === 'RevisionCompleted') {
      if (facts.has(e.seq)) revisions.add(e.data.revision)
      if (binding.has(e.seq)) unboundRevisions.add(e.data.revision)
    }
  const unbound: string[] = []
  for (const e of events) {
    const hit =
      (e.type === 'CaptureRecorded' && binding.has(e.seq)) ||
      (e.type === 'EnrichmentCaptured' && unboundRevisions.has(e.data.revision))
    if (hit && !unbound.includes(e.data.evidence_id)) unbound.push(e.data.evidence_id)
  }
  return { revisions, unbound, any: findings.some((f) => f.code === 'RULE_NOT_APPLIED') }
}
