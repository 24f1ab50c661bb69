/**
 * Facts derive from captures (rule `revision.derived`): the facts of a revision must be exactly
 * what enrichment makes of the revision's entities with the enrichment settings it recorded,
 * asking its questions of the revision's own captures (and getting the refusals its coverage
 * records). Invented facts, or facts whose values were edited with their provenance kept, are
 * not what enrichment derives. Revisions completed by version 1 recorded no settings and are not
 * derived. Pure over `read`.
 */
import * as E from 'fp-ts/lib/Either.js'
import { canonicalJson } from '../../events/canonical.js'
import { Capture } from '../../events/capture.js'
import type { ObjectRefLite } from '../case-state.js'
import { EnrichmentConfig, type EntityRef } from '../enrichment-config.js'
import { enrich } from '../enrich.js'
import { extractEntities } from '../extract.js'
import type { ExtractedEntity } from '../../events/catalog.js'
import { FactsDocument, type CoverageGap } from '../facts-document.js'
import type { Failure } from '../../failures/failure.js'
import { parseBoundedBytes } from '../../events/bounds.js'

/** A completed revision whose facts are derived again once its objects are read. */
export interface FactsDerivation {
  readonly seq: number
  readonly ref: ObjectRefLite
  readonly revision: number
  readonly complete: boolean
  readonly entities: readonly EntityRef[]
  readonly report: ObjectRefLite | null
  readonly extracted: readonly ExtractedEntity[] | null
  readonly captures: readonly ObjectRefLite[]
  readonly enrichment: ObjectRefLite | null
}

const parse = (bytes: Uint8Array | undefined): unknown => {
  if (bytes === undefined) return undefined
  return parseBoundedBytes(bytes)
}

const keyOf = (v: unknown): string => {
  const t = canonicalJson(v)
  return E.isRight(t) ? t.right : JSON.stringify(v)
}

/**
 * Why the recorded extracted entities are not what the recorded patterns find in the recorded
 * report (listed entities winning), or null. Extraction that was turned off records no patterns.
 */
export const extractionProblem = (
  ob: FactsDerivation,
  settings: EnrichmentConfig,
  read: (ref: ObjectRefLite) => Uint8Array | undefined
): string | null => {
  const recorded = ob.extracted ?? []
  const patterns = settings.extract ?? []
  if (patterns.length === 0)
    return recorded.length === 0
      ? null
      : `the revision records ${recorded.length} extracted entit${recorded.length === 1 ? 'y' : 'ies'}, but its enrichment settings name no extraction patterns`
  if (ob.report === null) return null
  const bytes = read(ob.report)
  if (bytes === undefined) return null
  let report: string
  try {
    report = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return 'the report is not UTF-8 text; its entities cannot be extracted again'
  }
  const listed = ob.entities.slice(0, ob.entities.length - recorded.length)
  const want = extractEntities(report, patterns, listed)
  if (keyOf(want) === keyOf(recorded)) return null
  const i = want.findIndex((w, k) => keyOf(w) !== keyOf(recorded[k]))
  const at = i < 0 ? Math.min(want.length, recorded.length) : i
  const show = (x: ExtractedEntity | undefined): string =>
    x === undefined ? 'none' : `${x.type} ${x.id} at ${x.span.start}-${x.span.end}`
  return `the extracted entities are not what the recorded patterns find in the report (entity ${at + 1}: ${show(recorded[at])} recorded, ${show(want[at])} found)`
}

/** Why the recorded facts are not what enrichment derives, or null (also when an object is missing: reported elsewhere). */
export const factsProblem = async (
  ob: FactsDerivation,
  read: (ref: ObjectRefLite) => Uint8Array | undefined
): Promise<string | null> => {
  if (ob.enrichment === null) return null
  // An object that cannot be read is a finding of its own (OBJECT_MISSING), never a derivation's.
  const settingsBytes = read(ob.enrichment)
  const factsBytes = read(ob.ref)
  if (settingsBytes === undefined || factsBytes === undefined) return null
  const settings = EnrichmentConfig.decode(parse(settingsBytes))
  if (E.isLeft(settings)) return 'the recorded enrichment settings are not enrichment settings'
  const doc = FactsDocument.decode(parse(factsBytes))
  if (E.isLeft(doc)) return null
  const answers = new Map<string, Capture>()
  // Each capture as parsed, in the order recorded (parsed once: they are compared below too).
  const parsed: unknown[] = []
  for (const ref of ob.captures) {
    const bytes = read(ref)
    if (bytes === undefined) return null
    const raw = parse(bytes)
    parsed.push(raw)
    const c = Capture.decode(raw)
    if (E.isLeft(c)) return null
    answers.set(keyOf(c.right.request), c.right)
  }
  // The refusals the coverage records, by request: enrichment is told them again.
  const refusals = new Map<string, Failure>()
  for (const f of doc.right.facts) {
    if (f.type !== 'project_context_coverage') continue
    for (const g of f.left_out as readonly CoverageGap[]) {
      if (g.request !== undefined && g.code !== undefined)
        refusals.set(keyOf(g.request), {
          _tag: 'Failure',
          code: g.code as Failure['code'],
          message: g.detail ?? '',
          data: {}
        })
    }
  }
  const unrecorded: string[] = []
  const replay = {
    query: (args: unknown) => async (): Promise<E.Either<Failure, Capture>> => {
      const key = keyOf(args)
      const answer = answers.get(key)
      if (answer !== undefined) return E.right(answer)
      const refused = refusals.get(key)
      if (refused !== undefined) return E.left(refused)
      unrecorded.push(key)
      return E.left({ _tag: 'Failure', code: 'QUERY_INVALID', message: 'not recorded', data: {} })
    }
  }
  const derived = await enrich(replay, settings.right, ob.entities)
  if (E.isLeft(derived)) return `enrichment could not be derived again (${derived.left.code})`
  if (unrecorded.length > 0)
    return `enrichment asks ${unrecorded.length} question(s) the revision recorded no answer for, the first: ${unrecorded[0]?.slice(0, 160) ?? ''}`
  const asked = derived.right.captures.map((c) => keyOf(c.request))
  const recordedOrder = parsed.map((raw) => keyOf(Capture.is(raw) ? raw.request : null))
  if (keyOf(asked) !== keyOf(recordedOrder))
    return `the revision records its captures in another order or number than enrichment asks them (${ob.captures.length} recorded, ${asked.length} asked)`
  const want = derived.right.facts
  const got = doc.right.facts
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    if (keyOf(want[i]) !== keyOf(got[i])) {
      const id = got[i]?.fact_id ?? want[i]?.fact_id ?? `#${i + 1}`
      return want[i] === undefined
        ? `fact ${id} is not one enrichment derives (an invented fact)`
        : got[i] === undefined
          ? `enrichment derives fact ${id}, which the revision does not hold`
          : `fact ${id} is not what enrichment derives from its captures (${keyOf(got[i]).slice(0, 120)} recorded, ${keyOf(want[i]).slice(0, 120)} derived)`
    }
  }
  if (derived.right.complete !== ob.complete)
    return `the revision says ${ob.complete ? 'complete' : 'partial'}, enrichment derives ${derived.right.complete ? 'complete' : 'partial'}`
  return null
}
