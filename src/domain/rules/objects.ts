/**
 * The checks that read objects: the obligations a fold collected, checked against object
 * contents through a `read` function (pure over it). An object that cannot be read is skipped:
 * a missing object is a finding of its own (OBJECT_MISSING).
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import type { Binding } from '../../events/settings.js'
import { Capture } from '../../events/capture.js'
import { unknownMember } from '../../events/strict.js'
import type { ObjectRefLite } from '../case-state.js'
import { EnrichmentConfig, resolvePointer } from '../enrichment-config.js'
import { continuationOf, partialMarkers } from '../partial.js'
import { decisionProblem } from './derivation.js'
import { digestOf } from './digest.js'
import { extractionProblem, factsProblem } from './facts-derivation.js'
import { violation, type RuleId, type RuleViolation } from './ids.js'
import type { Obligation, ReadObject } from './context.js'
import { parseBoundedBytes } from '../../events/bounds.js'

/** The objects an obligation reads. */
export const obligationRefs = (ob: Obligation): readonly ObjectRefLite[] => {
  switch (ob.kind) {
    case 'capture':
    case 'decision':
      return [ob.ref]
    case 'binding':
      return ob.captures
    case 'prompt':
      return [
        ob.ref,
        ...(ob.state.report === null ? [] : [ob.state.report]),
        ...(ob.state.facts === null ? [] : [ob.state.facts]),
        ...ob.state.research.evidenceRefs.values()
      ]
    case 'facts':
      return [
        ob.ref,
        ...ob.captures,
        ...ob.known,
        ...(ob.enrichment === null ? [] : [ob.enrichment]),
        ...(ob.report === null ? [] : [ob.report])
      ]
  }
}

const Provenance = t.type({ capture: t.string, pointer: t.string })
const FactsDocument = t.type({
  format: t.literal('vba-facts'),
  version: t.number,
  revision: t.number,
  facts: t.array(t.UnknownRecord)
})

const parseJson = parseBoundedBytes

/** Every {capture, pointer} object inside a fact, wherever it sits (provenance, from, to). */
const provenanceOf = (
  value: unknown,
  out: Array<t.TypeOf<typeof Provenance>> = []
): Array<t.TypeOf<typeof Provenance>> => {
  if (Array.isArray(value)) for (const v of value) provenanceOf(v, out)
  else if (typeof value === 'object' && value !== null) {
    if (Provenance.is(value)) out.push(value)
    for (const v of Object.values(value)) provenanceOf(v, out)
  }
  return out
}

/** Why a capture's origin is not what the binding names, or null. */
const bindingProblem = (b: Binding, c: Capture): string | null => {
  const o = c.origin
  if (o.type === 'git') {
    if (b.source === null) return 'a source capture, but the case is bound to no repository'
    if (o.commit !== b.source.commit || o.url !== b.source.url)
      return `the capture is of ${o.url} at ${o.commit.slice(0, 12)}, the case is bound to ${b.source.url} at ${b.source.commit.slice(0, 12)}`
    return null
  }
  if (b.database === null) return 'a database capture, but the case is bound to no database'
  if (
    o.snapshot_id !== b.database.snapshot_id ||
    o.client !== b.database.client ||
    !b.database.databases.includes(o.database)
  ) {
    return `the capture is of ${o.client} ${o.database} snapshot ${o.snapshot_id}, the case is bound to ${b.database.client} ${b.database.databases.join(', ')} snapshot ${b.database.snapshot_id}`
  }
  return null
}

/** A capture object parsed and decoded (see CaptureDecodes). */
export interface DecodedCapture {
  readonly parsed: unknown
  readonly decoded: E.Either<t.Errors, Capture>
}

/**
 * Capture objects parsed and decoded by digest, shared by the checks of one verification (the
 * object checks and the prompt derivation both read every capture).
 */
export type CaptureDecodes = Map<string, DecodedCapture>

/** The capture object `ref` parsed and decoded, once per digest in `memo`; undefined when unreadable. */
export const decodeCaptureOnce = (
  read: ReadObject,
  memo: CaptureDecodes,
  ref: ObjectRefLite
): DecodedCapture | undefined => {
  let known = memo.get(ref.digest)
  if (known === undefined) {
    const bytes = read(ref)
    if (bytes === undefined) return undefined
    const parsed = parseJson(bytes)
    known = { parsed, decoded: Capture.decode(parsed) }
    memo.set(ref.digest, known)
  }
  return known
}

/** Captures by digest, decoded once: null when the object is not a capture of this format, undefined when unreadable. */
const captureReader = (
  read: ReadObject,
  decodes: CaptureDecodes = new Map()
): ((ref: ObjectRefLite) => Capture | null | undefined) => {
  const captures = new Map<string, Capture | null>()
  return (ref) => {
    if (captures.has(ref.digest)) return captures.get(ref.digest)
    const once = decodeCaptureOnce(read, decodes, ref)
    if (once === undefined) return undefined
    const { parsed, decoded } = once
    // A capture with members its format does not name is not a capture of this format.
    const c = E.isRight(decoded) && unknownMember(Capture, parsed) === null ? decoded.right : null
    captures.set(ref.digest, c)
    return c
  }
}

type Bad = (rule: RuleId, message: string) => void
type CaptureOf = ReturnType<typeof captureReader>
type FactsObligation = Extract<Obligation, { kind: 'facts' }>

/** revision.coverage: a complete coverage has no partial capture behind it (a page whose next page was captured is covered). */
const checkCoverage = (ob: FactsObligation, captureOf: CaptureOf, bad: Bad): void => {
  const behind = ob.captures.map((r) => captureOf(r)).filter((c): c is Capture => c != null)
  const requests = new Set(behind.map((c) => digestOf(c.request)))
  for (const c of behind) {
    const markers = partialMarkers(c.result).filter((m) => {
      const next = c.result['next_offset']
      return !(
        m.startsWith('has_more') &&
        typeof next === 'number' &&
        requests.has(digestOf(continuationOf(c.request, next)))
      )
    })
    if (markers.length > 0)
      bad(
        'revision.coverage',
        `the coverage says complete, but a ${c.kind} capture behind it is partial (${markers.join('; ')})`
      )
  }
}

/** revision.facts, revision.provenance, revision.coverage */
const checkFacts = (ob: FactsObligation, read: ReadObject, captureOf: CaptureOf, bad: Bad): void => {
  const bytes = read(ob.ref)
  if (bytes === undefined) return
  const doc = FactsDocument.decode(parseJson(bytes))
  if (E.isLeft(doc) || doc.right.revision !== ob.revision) {
    bad('revision.facts', `object ${ob.ref.digest} is not the facts document of revision ${ob.revision}`)
    return
  }
  const facts = doc.right.facts
  if (facts.length !== ob.factCount)
    bad('revision.facts', `the revision says ${ob.factCount} facts, its document has ${facts.length}`)
  const known = new Map(ob.known.map((r) => [r.digest, r]))
  for (const r of ob.captures) known.set(r.digest, r)
  for (const p of facts.flatMap((f) => provenanceOf(f))) {
    const ref = known.get(p.capture)
    if (ref === undefined) {
      bad('revision.provenance', `a fact points into ${p.capture.slice(0, 20)}…, which is not a capture of this case`)
      continue
    }
    const c = captureOf(ref)
    if (c != null && resolvePointer(c, p.pointer) === undefined)
      bad('revision.provenance', `pointer ${p.pointer} does not resolve in capture ${p.capture.slice(0, 20)}…`)
  }
  const coverage = facts.filter((f) => f['type'] === 'project_context_coverage')
  const claimed = coverage[0]?.['complete']
  if (coverage.length !== 1 || typeof claimed !== 'boolean') {
    bad('revision.facts', 'the facts hold exactly one project_context_coverage fact')
    return
  }
  if (claimed !== ob.complete)
    bad('revision.facts', `the revision says complete=${ob.complete}, its coverage fact says ${claimed}`)
  if (claimed) checkCoverage(ob, captureOf, bad)
}

/** Checks the obligations of a fold against object contents (prompts are checked by the prompt derivation); `decodes`: captures decoded by another check of the same objects. */
export const checkObligations = (
  obligations: readonly Obligation[],
  read: ReadObject,
  decodes?: CaptureDecodes
): RuleViolation[] => {
  const out: RuleViolation[] = []
  const captureOf = captureReader(read, decodes)
  for (const ob of obligations) {
    const bad: Bad = (rule, message) => {
      out.push(violation(rule, message, ob.seq))
    }
    switch (ob.kind) {
      case 'prompt':
        break
      case 'binding':
        for (const ref of ob.captures) {
          const c = captureOf(ref)
          const why = c == null ? null : bindingProblem(ob.binding, c)
          if (why !== null) bad('research.binding', why)
        }
        break
      case 'decision': {
        const bytes = read(ob.ref)
        const problem = bytes === undefined ? null : decisionProblem(ob, bytes)
        if (problem !== null) bad('turn.derived', problem)
        break
      }
      case 'capture': {
        const c = captureOf(ob.ref)
        if (c === null) bad('research.capture-object', `object ${ob.ref.digest} is not a capture`)
        else if (c === undefined) break
        else if (c.kind !== ob.queryKind)
          bad('research.capture-object', `the capture is a ${c.kind}, recorded as ${ob.queryKind}`)
        else if (digestOf(c.request) !== ob.requestDigest)
          bad('research.capture-object', "the capture's request does not have the recorded request digest")
        break
      }
      case 'facts':
        checkFacts(ob, read, captureOf, bad)
    }
  }
  return out
}

/** The facts derivations of the obligations (async: enrichment runs again over the recorded captures). */
export const checkFactsDerivation = async (
  obligations: readonly Obligation[],
  read: ReadObject
): Promise<RuleViolation[]> => {
  const out: RuleViolation[] = []
  for (const ob of obligations) {
    if (ob.kind !== 'facts') continue
    const problem = await factsProblem(ob, read)
    if (problem !== null) out.push(violation('revision.derived', problem, ob.seq))
    // Unreadable settings are OBJECT_MISSING's finding, not this rule's.
    const settingsBytes = ob.enrichment === null ? undefined : read(ob.enrichment)
    const settings = settingsBytes === undefined ? null : EnrichmentConfig.decode(parseJson(settingsBytes))
    const extracted = settings === null || E.isLeft(settings) ? null : extractionProblem(ob, settings.right, read)
    if (extracted !== null) out.push(violation('revision.extracted', extracted, ob.seq))
  }
  return out
}
