/**
 * Deciding what people and controllers hand in: notes, attachments, and the raw inputs of a
 * revision with its enrichment and completion. A completed revision is never rewritten; the same
 * inputs again make no new revision; new inputs make the next one. Pure: objects are referenced
 * by digest, their bytes travel with the command.
 */
import type { Binding } from '../events/settings.js'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { eventDraft, type EventDraft } from '../events/chain.js'
import type { Actor, ObjectRef } from '../events/codecs.js'
import type { QueryKind } from '../events/capture.js'
import type { ExtractedEntity } from '../events/catalog.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import { evidenceFor } from './research-decider.js'
import type { Decision } from './decision.js'
import { initResearch, type CaseState, type ResearchState } from './case-state.js'

type InputsDecision = Decision

/** Who hands in notes, attachments and bug reports. @category investigations */
export type Author = Extract<Actor, 'operator' | 'controller'>

/** @category Deciders */
export interface Note {
  readonly author: Author
  readonly text: string
  readonly format?: 'plain' | 'markdown'
}

export const decideNote = ({ author, text, format = 'plain' }: Note): InputsDecision =>
  text.trim() === ''
    ? E.left(failure('INVALID_ARGUMENT', 'a note has text'))
    : E.right([{ type: 'NoteRecorded', actor: author, data: { text, format } }])

/** @category Deciders */
export interface Attachment {
  readonly author: Author
  readonly name: string
  readonly object: ObjectRef
}

export const decideAttachment = ({ author, name, object }: Attachment): InputsDecision =>
  name.trim() === '' || name.length > 255
    ? E.left(failure('INVALID_ARGUMENT', 'an attachment has a name of 1-255 characters'))
    : E.right([{ type: 'AttachmentAdded', actor: author, data: { name, object } }])

/**
 * The inputs index of a revision (version 1): the report, the entities, the attachments, and the
 * report's origin (the address it was exported from) when it has one. @category Deciders
 */
export interface InputsIndex {
  readonly report: ObjectRef
  readonly entities: ReadonlyArray<{ readonly type: string; readonly id: number | string }>
  readonly attachments: ReadonlyArray<{ readonly name: string; readonly object: ObjectRef }>
  readonly origin?: string | null
  /** The entities extracted from the report (inputs version 2; absent: version 1, nothing extracted). */
  readonly extracted?: ReadonlyArray<ExtractedEntity>
}

/**
 * What the inputs digest covers: the origin only when there is one and the extracted entities only
 * with inputs version 2 (so older revisions keep their digest).
 */
export const digestedIndex = (index: InputsIndex): Record<string, unknown> => ({
  report: index.report,
  entities: index.entities,
  attachments: index.attachments,
  ...(index.origin == null ? {} : { origin: index.origin }),
  ...(index.extracted === undefined ? {} : { extracted: index.extracted })
})

export const inputsDigest = (index: InputsIndex): E.Either<Failure, string> => {
  const text = canonicalJson(digestedIndex(index))
  return E.isLeft(text)
    ? E.left(failure('INPUT_INVALID', 'the inputs cannot be encoded as canonical JSON (lone surrogates?)'))
    : E.right(sha256Digest(text.right))
}

export type InputsOutcome =
  | { readonly status: 'new'; readonly revision: number; readonly events: EventDraft[] }
  /** An earlier revision with these inputs exists; `completed` says whether it was enriched. */
  | { readonly status: 'existing'; readonly revision: number; readonly completed: boolean }

/**
 * Records new inputs as the next revision, or finds the latest revision that already holds them.
 * `again`: the same inputs as a completed revision make a new revision (prepared again, with fresh
 * enrichment); an open revision holding them is continued, as without `again`.
 */
export const decideInputs = (
  s: CaseState,
  { author, index, again = false }: { readonly author: Author; readonly index: InputsIndex; readonly again?: boolean }
): E.Either<Failure, InputsOutcome> => {
  const digest = inputsDigest(index)
  if (E.isLeft(digest)) return digest
  const same = [...s.revisions].reverse().find((r) => r.inputs_digest === digest.right)
  if (same !== undefined && !(again && same.completed))
    return E.right({ status: 'existing', revision: same.revision, completed: same.completed })
  if (index.entities.length > 1000) return E.left(failure('INPUT_INVALID', 'a revision names at most 1000 entities'))
  const revision = s.revisions.length + 1
  return E.right({
    status: 'new',
    revision,
    events: [
      {
        type: 'InputsRecorded',
        actor: author,
        data: {
          revision,
          inputs_version: index.extracted === undefined ? 1 : 2,
          inputs_digest: digest.right,
          report: index.report,
          entities: index.entities,
          attachments: index.attachments,
          origin: index.origin ?? null,
          ...(index.extracted === undefined ? {} : { extracted: index.extracted })
        }
      }
    ]
  })
}

/** @category Deciders */
export interface EnrichmentCapture {
  readonly capture: ObjectRef
  readonly kind: QueryKind
  readonly requestDigest: string
}

/**
 * Completes the latest open revision with its enrichment captures (evidence ids continue the
 * case's numbering; an identical earlier capture is a repeat) and its facts object.
 */
/**
 * What completes a revision: its number, its enrichment captures, the facts object, its count and completeness, the binding and the enrichment settings' object.
 * @category Deciders
 */
export interface Completion {
  readonly revision: number
  readonly captures: readonly EnrichmentCapture[]
  readonly facts: ObjectRef
  readonly factCount: number
  readonly complete: boolean
  readonly binding: Binding | null
  readonly enrichment: ObjectRef | null
}

export const decideCompleteRevision = (s: CaseState, c: Completion): InputsDecision => {
  const { revision, captures } = c
  const r = s.revisions.find((x) => x.revision === revision)
  if (r === undefined || r !== s.revisions[s.revisions.length - 1])
    return E.left(failure('REVISION_NOT_OPEN', `revision ${revision} is not the latest revision`, { revision }))
  if (r.completed)
    return E.left(
      failure('REVISION_COMPLETED', `revision ${revision} is completed; a completed revision is never rewritten`, {
        revision
      })
    )
  // Number evidence as the events will, on a scratch copy of the research state.
  const scratch: ResearchState = {
    ...initResearch(),
    evidence: new Map(s.research.evidence),
    byDigest: new Map(s.research.byDigest)
  }
  const drafts: EventDraft[] = captures.map((c) => {
    const e = evidenceFor(scratch, c.capture.digest)
    if (!e.repeat) {
      scratch.evidence.set(e.id, {
        id: e.id,
        digest: c.capture.digest,
        kind: c.kind,
        first_seq: 0,
        repeats: 0,
        origin: 'enrichment',
        last_result_seq: null,
        last_plan: null
      })
      scratch.byDigest.set(c.capture.digest, e.id)
    }
    return eventDraft('EnrichmentCaptured', {
      revision,
      capture: c.capture,
      kind: c.kind,
      request_digest: c.requestDigest,
      evidence_id: e.id,
      repeat: e.repeat
    })
  })
  drafts.push(
    eventDraft('RevisionCompleted', {
      revision,
      facts: c.facts,
      fact_count: c.factCount,
      queries: captures.length,
      complete: c.complete,
      binding: c.binding,
      enrichment: c.enrichment
    })
  )
  return E.right(drafts)
}
