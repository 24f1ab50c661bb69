/**
 * Revisions (family RULE_REVISION): numbered in order, inputs digested and repeated only after
 * every revision holding them is completed (prepared again),
 * enrichment recorded with the completion of the latest open revision, and the facts (an
 * obligation: read, checked and derived again from the revision's captures).
 */
import { digestOf } from './digest.js'
import { digestedIndex } from '../inputs-decider.js'
import { checkCaptured } from './research.js'
import type { EventOf, RuleContext } from './context.js'

export const checkInputs = (c: RuleContext<EventOf<'InputsRecorded'>>): void => {
  const { s } = c
  const d = c.e.data
  if (d.revision !== s.revisions.length + 1)
    c.bad(
      'revision.number',
      `revision ${d.revision} follows revision ${s.revisions.length}; it must be ${s.revisions.length + 1}`
    )
  if ((d.extracted !== undefined) !== (d.inputs_version === 2))
    c.bad(
      'revision.extracted',
      `inputs version ${d.inputs_version} ${d.extracted === undefined ? 'names no extracted entities; version 2 does' : 'holds extracted entities; only version 2 does'}`
    )
  if (digestOf(digestedIndex(d)) !== d.inputs_digest)
    c.bad('revision.inputs-digest', 'inputs_digest is not the digest of the recorded inputs index')
  // The same inputs again only as a revision prepared again: every earlier one holding them is completed.
  const same = s.revisions.find((r) => r.inputs_digest === d.inputs_digest && !r.completed)
  if (same !== undefined)
    c.bad(
      'revision.inputs-digest',
      `revision ${same.revision} holds these inputs already and is not completed; the same inputs make a new revision only once it is (prepared again)`
    )
}

export const checkEnrichment = (c: RuleContext<EventOf<'EnrichmentCaptured'>>): void => {
  const { s } = c
  const d = c.e.data
  const r = s.revisions.find((x) => x.revision === d.revision)
  const latest = s.revisions[s.revisions.length - 1]
  if (r === undefined || r.completed || r !== latest)
    c.bad(
      'revision.open',
      `revision ${d.revision} is ${r === undefined ? 'unknown' : r.completed ? 'completed already' : 'not the latest'}; enrichment belongs to the latest open revision`
    )
  checkCaptured(c, d)
  c.expect(
    'command.whole',
    `enrichment of revision ${d.revision} is recorded in the command that completes the revision`,
    (x) => x.type === 'RevisionCompleted' && x.data.revision === d.revision
  )
}

export const checkCompleted = (c: RuleContext<EventOf<'RevisionCompleted'>>): void => {
  const { s, e } = c
  const d = e.data
  const r = s.revisions.find((x) => x.revision === d.revision)
  if (r === undefined || r.completed)
    c.bad('revision.open', `revision ${d.revision} is ${r === undefined ? 'unknown' : 'completed already'}`)
  const captured = c.cmd.events.filter(
    (x): x is EventOf<'EnrichmentCaptured'> => x.type === 'EnrichmentCaptured' && x.data.revision === d.revision
  )
  if (captured.length !== d.queries)
    c.bad('revision.queries', `the revision says ${d.queries} queries, its enrichment recorded ${captured.length}`)
  const captures = captured.map((x) => ({ digest: x.data.capture.digest, size: x.data.capture.size }))
  c.obligations.push({
    kind: 'facts',
    seq: e.seq,
    ref: d.facts,
    revision: d.revision,
    factCount: d.fact_count,
    complete: d.complete,
    captures,
    known: [...s.research.evidenceRefs.values()],
    entities: r?.entities ?? [],
    report: s.report,
    extracted: r?.extracted ?? null,
    enrichment: d.enrichment
  })
  if (d.binding !== null) c.obligations.push({ kind: 'binding', seq: e.seq, binding: d.binding, captures })
}
