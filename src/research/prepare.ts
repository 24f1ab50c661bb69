/**
 * `vba case prepare`: record a revision's raw inputs, run the configured enrichment once, and
 * complete the revision with its facts, in two atomic commands. A completed revision is never
 * rewritten: new inputs make a new revision; the same inputs again change nothing.
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../domain/failure.js'
import { EnrichmentConfig, RevisionInputs } from '../domain/enrichment-config.js'
import { evidenceFor } from '../domain/research-decider.js'
import { describeErrors } from '../events/decode.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import type { EventDraft } from '../events/chain.js'
import { researchProjection } from '../projections/research.js'
import { revisionsProjection } from '../projections/revisions.js'
import { openCaseWithState } from '../adapters/case-store/open.js'
import { appendCommand } from '../adapters/case-store/append.js'
import { objectRefOf } from '../adapters/case-store/objects.js'
import { FailureError } from '../adapters/fs-util.js'
import type { Env } from '../adapters/env.js'
import type { Profile } from '../adapters/config/profile.js'
import { captureBytes } from './capture.js'
import { CAPTURE_MEDIA_TYPE } from './case-query.js'
import { enrich } from './enrich.js'
import type { ProjectResearch } from './project-research.js'

export interface PrepareResult {
  readonly status: 'completed' | 'unchanged'
  readonly revision: number
  readonly facts: number
  readonly captures: number
  readonly complete: boolean
  readonly generation: number
}

const must = <A>(r: E.Either<Failure, A>): A => {
  if (E.isLeft(r)) throw new FailureError(r.left)
  return r.right
}

const canonicalBytes = (v: unknown): Buffer => Buffer.from(must(canonicalJson(v)), 'utf8')

/** The [enrichment] section of a profile, decoded. */
export const enrichmentConfig = (profile: Profile): E.Either<Failure, EnrichmentConfig> => {
  const raw = profile.raw['enrichment']
  if (raw === undefined) return E.left(failure('CONFIG_INVALID', 'the profile has no [enrichment] section (see config/trinitycore.toml)'))
  const d = EnrichmentConfig.decode(raw)
  return E.isLeft(d) ? E.left(failure('CONFIG_INVALID', `[enrichment] ${describeErrors(d.left)}`)) : E.right(d.right)
}

/** Reads REPORT.json: `{report, entities: [{type, id}], attachments?: [{name, path}]}`. */
export const readInputs = async (file: string): Promise<E.Either<Failure, RevisionInputs>> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(await fsp.readFile(file, 'utf8'))
  } catch {
    return E.left(failure('INPUT_INVALID', `cannot read ${file} as JSON`))
  }
  const d = RevisionInputs.decode(parsed)
  return E.isLeft(d) ? E.left(failure('INPUT_INVALID', `the inputs are invalid: ${describeErrors(d.left)}`)) : E.right(d.right)
}

export const prepareRevision = async (dir: string, research: ProjectResearch, config: EnrichmentConfig, inputs: RevisionInputs, inputsDir: string, env?: Env): Promise<E.Either<Failure, PrepareResult>> => {
  try {
    const options = env === undefined ? {} : { env }
    const report = Buffer.from(inputs.report, 'utf8')
    const attachments = await Promise.all((inputs.attachments ?? []).map(async (a) => ({ name: a.name, bytes: await fsp.readFile(path.resolve(inputsDir, a.path)) })))
    const index = {
      report: objectRefOf(report, 'text/plain'),
      entities: inputs.entities,
      attachments: attachments.map((a) => ({ name: a.name, object: objectRefOf(a.bytes) }))
    }
    const digest = sha256Digest(must(canonicalJson(index)))
    const first = must(await openCaseWithState(dir, revisionsProjection)())
    const same = first.state.revisions.find((r) => r.inputs_digest === digest)
    if (same?.completed === true) {
      return E.right({ status: 'unchanged', revision: same.revision, facts: same.fact_count, captures: same.captures, complete: same.complete, generation: first.handle.cursor.seq })
    }
    const revision = same?.revision ?? first.state.revisions.length + 1
    if (same === undefined) {
      must(await appendCommand(first.handle, {
        commandId: `prepare-r${revision}-inputs`,
        expectedGeneration: first.handle.cursor.seq,
        events: [{ type: 'InputsRecorded', actor: 'operator', data: { revision, inputs_version: 1, inputs_digest: digest, ...index } }],
        objects: [report, ...attachments.map((a) => a.bytes)]
      }, options)())
    }
    const result = must(await enrich(research, config, inputs.entities))
    const { handle, state } = must(await openCaseWithState(dir, researchProjection)())
    // Evidence ids continue the case's numbering; an identical earlier capture is a repeat.
    const evidence = state
    const drafts: EventDraft[] = []
    const objects: Buffer[] = []
    for (const capture of result.captures) {
      const bytes = captureBytes(capture)
      const ref = objectRefOf(bytes, CAPTURE_MEDIA_TYPE)
      const e = evidenceFor(evidence, ref.digest)
      drafts.push({ type: 'EnrichmentCaptured', actor: 'system', data: { revision, capture: ref, kind: capture.kind, request_digest: sha256Digest(must(canonicalJson(capture.request))), evidence_id: e.id, repeat: e.repeat } })
      objects.push(bytes)
      if (!e.repeat) {
        // The folded state is ours: extend it as the events will.
        evidence.evidence.set(e.id, { id: e.id, digest: ref.digest, kind: capture.kind, first_seq: 0, repeats: 0 })
        evidence.byDigest.set(ref.digest, e.id)
      }
    }
    const factsDoc = { format: 'vba-facts', version: 1, revision, facts: result.facts }
    const factsBytes = canonicalBytes(factsDoc)
    drafts.push({ type: 'RevisionCompleted', actor: 'system', data: { revision, facts: objectRefOf(factsBytes, 'application/vnd.vba.facts+json'), fact_count: result.facts.length, queries: result.captures.length, complete: result.complete } })
    const unique = [...new Map([...objects, factsBytes].map((b) => [sha256Digest(b), b])).values()]
    const done = must(await appendCommand(handle, { commandId: `prepare-r${revision}-enrich`, expectedGeneration: handle.cursor.seq, events: drafts, objects: unique }, options)())
    return E.right({ status: 'completed', revision, facts: result.facts.length, captures: result.captures.length, complete: result.complete, generation: done.generation })
  } catch (e) {
    if (e instanceof FailureError) return E.left(e.failure)
    throw e
  }
}
