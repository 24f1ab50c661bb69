/**
 * The catalog of event types a case may contain. Later capabilities add their types here; a type
 * whose schema changes gets a new version plus an upcaster, never an edit of the old codec.
 */
import * as t from 'io-ts'
import { defineEvent, makeRegistry } from './registry.js'
import { Digest, Identifier, ObjectRef, PositiveInt, patternString } from './codecs.js'
import { QueryKind } from './capture.js'
import {
  InvestigationStartedEvent,
  CheckpointRecordedEvent,
  ModelRequestedEvent,
  ModelRespondedEvent,
  ModelFailedEvent,
  ModelResponseRejectedEvent,
  InterpretationRecordedEvent,
  PlanConfirmedEvent,
  HypothesisProposedEvent,
  HypothesisUpdatedEvent,
  LabTestRequestedEvent,
  LabFeedbackRecordedEvent,
  ConclusionRecordedEvent,
  PlanCancelledEvent,
  BudgetToppedUpEvent
} from './investigation-events.js'
import { Binding } from './settings.js'
import { CommandSignedEvent } from './command-signature.js'

// ---------------------------------------------------------------------------------------------
// NoteRecorded: a person's note on the case. Version 1 had only text; version 2 names the markup.
// ---------------------------------------------------------------------------------------------

export const NoteRecordedV1 = t.type({ text: t.string }, 'NoteRecordedV1')
export const NoteRecorded = t.type({ text: t.string, format: t.keyof({ plain: null, markdown: null }) }, 'NoteRecorded')
export type NoteRecorded = t.TypeOf<typeof NoteRecorded>

export const NoteRecordedEvent = defineEvent('NoteRecorded', NoteRecorded, [
  { codec: NoteRecordedV1, upcast: (d) => ({ ...(d as t.TypeOf<typeof NoteRecordedV1>), format: 'plain' }) }
])

// ---------------------------------------------------------------------------------------------
// AttachmentAdded: a file handed in by a person (a log, a screenshot), stored as an object.
// ---------------------------------------------------------------------------------------------

export const AttachmentAdded = t.type({ name: t.string, object: ObjectRef }, 'AttachmentAdded')
export type AttachmentAdded = t.TypeOf<typeof AttachmentAdded>
export const AttachmentAddedEvent = defineEvent('AttachmentAdded', AttachmentAdded)

// ---------------------------------------------------------------------------------------------
// Research inside a case: a reservation of action budget, then either the capture (with its
// evidence id; a result identical to an earlier one is a repeat, not new evidence) and the
// consumption, or the failure. An unavailable provider keeps the reservation for a resume.
// ---------------------------------------------------------------------------------------------

/** Version 1: a reservation named its plan, but an operator's query left no trace of its request. */
export const BudgetReservedV1 = t.type(
  {
    reservation_id: Identifier,
    action: t.literal('project.query'),
    amount: PositiveInt,
    plan_id: t.union([Identifier, t.null])
  },
  'BudgetReservedV1'
)

/** Version 2: an operator's query names its request, but not who asked for it. */
export const BudgetReservedV2 = t.type(
  {
    ...BudgetReservedV1.props,
    request_digest: t.union([Digest, t.null])
  },
  'BudgetReservedV2'
)

import { Requester } from './requester.js'
export { Requester } from './requester.js'

export const BudgetReserved = t.type(
  {
    reservation_id: Identifier,
    action: t.literal('project.query'),
    amount: PositiveInt,
    /** The confirmed plan the reservation belongs to, when there is one. */
    plan_id: t.union([Identifier, t.null]),
    /**
     * SHA-256 of the canonical request an operator's query (no plan) reserves for; the capture
     * recorded against the reservation must answer exactly this request. Null for a plan, whose
     * arguments are in its PlanConfirmed (and for version-1 events).
     */
    request_digest: t.union([Digest, t.null]),
    /** The program that asked for an operator's query (an MCP client); null otherwise (and before version 3). */
    requester: t.union([Requester, t.null])
  },
  'BudgetReserved'
)
export type BudgetReserved = t.TypeOf<typeof BudgetReserved>
export const BudgetReservedEvent = defineEvent('BudgetReserved', BudgetReserved, [
  { codec: BudgetReservedV1, upcast: (d) => ({ ...(d as t.TypeOf<typeof BudgetReservedV1>), request_digest: null }) },
  { codec: BudgetReservedV2, upcast: (d) => ({ ...(d as t.TypeOf<typeof BudgetReservedV2>), requester: null }) }
])

export const CaptureRecorded = t.type(
  {
    reservation_id: Identifier,
    capture: ObjectRef,
    kind: QueryKind,
    /** SHA-256 of the canonical request. */
    request_digest: Digest,
    evidence_id: Identifier,
    /** True when an identical capture was recorded before: the same evidence, not new evidence. */
    repeat: t.boolean
  },
  'CaptureRecorded'
)
export type CaptureRecorded = t.TypeOf<typeof CaptureRecorded>
export const CaptureRecordedEvent = defineEvent('CaptureRecorded', CaptureRecorded)

export const BudgetConsumed = t.type({ reservation_id: Identifier, amount: PositiveInt }, 'BudgetConsumed')
export type BudgetConsumed = t.TypeOf<typeof BudgetConsumed>
export const BudgetConsumedEvent = defineEvent('BudgetConsumed', BudgetConsumed)

export const BudgetReleased = t.type(
  { reservation_id: Identifier, amount: PositiveInt, reason: t.keyof({ refused: null, cancelled: null }) },
  'BudgetReleased'
)
export type BudgetReleased = t.TypeOf<typeof BudgetReleased>
export const BudgetReleasedEvent = defineEvent('BudgetReleased', BudgetReleased)

/**
 * An identical query asked again is answered from the case: the capture recorded for exactly this
 * request is shown again as a repeat of its evidence, and costs nothing (no reservation).
 */
export const QueryAnsweredFromCase = t.type(
  {
    plan_id: Identifier,
    /** SHA-256 of the canonical request (the plan's arguments). */
    request_digest: Digest,
    /** The evidence the recorded capture is, and the capture itself. */
    evidence_id: Identifier,
    capture: ObjectRef
  },
  'QueryAnsweredFromCase'
)
export type QueryAnsweredFromCase = t.TypeOf<typeof QueryAnsweredFromCase>
export const QueryAnsweredFromCaseEvent = defineEvent('QueryAnsweredFromCase', QueryAnsweredFromCase)

export const ResearchFailed = t.type(
  {
    reservation_id: Identifier,
    code: t.string,
    message: t.string,
    /** The provider was unavailable (not a bad question): the reservation stays for a resume. */
    unavailable: t.boolean
  },
  'ResearchFailed'
)
export type ResearchFailed = t.TypeOf<typeof ResearchFailed>
export const ResearchFailedEvent = defineEvent('ResearchFailed', ResearchFailed)

// ---------------------------------------------------------------------------------------------
// Case preparation: a revision's raw inputs, the captures of its enrichment, and its completion
// with the facts (an object) and the coverage of what was left out.
// ---------------------------------------------------------------------------------------------

/** Version 1: the report, its entities and attachments, with no word of where the report came from. */
export const InputsRecordedV1 = t.type(
  {
    revision: PositiveInt,
    /** Version of the inputs index below. */
    inputs_version: t.literal(1),
    inputs_digest: Digest,
    report: ObjectRef,
    entities: t.array(t.type({ type: t.string, id: t.union([t.number, t.string]) })),
    attachments: t.array(t.type({ name: t.string, object: ObjectRef }))
  },
  'InputsRecordedV1'
)

/** Where a report came from: the web address of the issue it was exported from (http or https, at most 2048 characters). */
export const ReportOrigin = patternString('ReportOrigin', /^https?:\/\/[^\s\u0000-\u001f\u007f]{1,2040}$/)

/** An entity found in the report: its type and number, the span of the report it came from and the text there. @category investigations */
export const ExtractedEntity = t.type(
  {
    type: t.string,
    id: t.number,
    /** Where in the report (UTF-16 code units, end exclusive). */
    span: t.type({ start: t.number, end: t.number }),
    /** The report's text in the span. */
    text: t.string,
    /** The kind of mention: link, command or label (as the pattern says; "mention" when it says none). */
    kind: t.string
  },
  'ExtractedEntity'
)
export type ExtractedEntity = t.TypeOf<typeof ExtractedEntity>

/**
 * Version 2: also the report's origin (null when it came from no address; the digest covers it
 * when set), and with inputs version 2 the entities extracted from the report.
 */
export const InputsRecorded = t.intersection(
  [
    t.type({
      ...InputsRecordedV1.props,
      /** Version of the inputs index: 2 when it holds entities extracted from the report. */
      inputs_version: t.union([t.literal(1), t.literal(2)]),
      origin: t.union([ReportOrigin, t.null])
    }),
    t.partial({
      /** Inputs version 2: the entities found in the report, each with its span (derived again by verify). */
      extracted: t.array(ExtractedEntity)
    })
  ],
  'InputsRecorded'
)
export type InputsRecorded = t.TypeOf<typeof InputsRecorded>
export const InputsRecordedEvent = defineEvent('InputsRecorded', InputsRecorded, [
  { codec: InputsRecordedV1, upcast: (d) => ({ ...(d as t.TypeOf<typeof InputsRecordedV1>), origin: null }) }
])

export const EnrichmentCaptured = t.type(
  {
    revision: PositiveInt,
    capture: ObjectRef,
    kind: QueryKind,
    request_digest: Digest,
    evidence_id: Identifier,
    repeat: t.boolean
  },
  'EnrichmentCaptured'
)
export type EnrichmentCaptured = t.TypeOf<typeof EnrichmentCaptured>
export const EnrichmentCapturedEvent = defineEvent('EnrichmentCaptured', EnrichmentCaptured)

/** Version 1: no binding, no recorded enrichment settings. */
export const RevisionCompletedV1 = t.type(
  {
    revision: PositiveInt,
    facts: ObjectRef,
    fact_count: t.number,
    queries: t.number,
    complete: t.boolean
  },
  'RevisionCompletedV1'
)

export const RevisionCompleted = t.type(
  {
    revision: PositiveInt,
    facts: ObjectRef,
    fact_count: t.number,
    queries: t.number,
    /** False when anything was left out (see the coverage fact in the facts object). */
    complete: t.boolean,
    /** What the revision's enrichment asked (null: recorded by version 1, which did not say). */
    binding: t.union([Binding, t.null]),
    /** The enrichment settings it ran with, as an object (canonical JSON; null for version 1). */
    enrichment: t.union([ObjectRef, t.null])
  },
  'RevisionCompleted'
)
export type RevisionCompleted = t.TypeOf<typeof RevisionCompleted>
export const RevisionCompletedEvent = defineEvent('RevisionCompleted', RevisionCompleted, [
  {
    codec: RevisionCompletedV1,
    upcast: (d) => ({ ...(d as t.TypeOf<typeof RevisionCompletedV1>), binding: null, enrichment: null })
  }
])

export * from './investigation-events.js'
export * from './command-signature.js'

// ---------------------------------------------------------------------------------------------

/** Every event definition, in the order they were introduced. */
export const EVENT_DEFINITIONS = [
  NoteRecordedEvent,
  AttachmentAddedEvent,
  BudgetReservedEvent,
  CaptureRecordedEvent,
  BudgetConsumedEvent,
  BudgetReleasedEvent,
  ResearchFailedEvent,
  InputsRecordedEvent,
  EnrichmentCapturedEvent,
  RevisionCompletedEvent,
  InvestigationStartedEvent,
  CheckpointRecordedEvent,
  ModelRequestedEvent,
  ModelRespondedEvent,
  ModelResponseRejectedEvent,
  InterpretationRecordedEvent,
  PlanConfirmedEvent,
  HypothesisProposedEvent,
  HypothesisUpdatedEvent,
  LabTestRequestedEvent,
  LabFeedbackRecordedEvent,
  ConclusionRecordedEvent,
  ModelFailedEvent,
  PlanCancelledEvent,
  BudgetToppedUpEvent,
  QueryAnsweredFromCaseEvent,
  CommandSignedEvent
] as const

export type EventDefinitions = (typeof EVENT_DEFINITIONS)[number]

/** The decoded, current-version form of every event: `{ type, data }`. @category cases */
export type CaseEventBody = {
  [D in EventDefinitions as D['type']]: { readonly type: D['type']; readonly data: t.TypeOf<D['codec']> }
}[EventDefinitions['type']]

export type EventType = CaseEventBody['type']

export const registry = makeRegistry<EventDefinitions>(EVENT_DEFINITIONS)
