/**
 * The catalog of event types a case may contain. Later capabilities add their types here; a type
 * whose schema changes gets a new version plus an upcaster, never an edit of the old codec.
 */
import * as t from 'io-ts'
import { defineEvent, makeRegistry } from './registry.js'
import { Digest, Identifier, ObjectRef, PositiveInt, patternString } from './codecs.js'
import { QueryKind } from './capture.js'
import { ModelProvenance } from './model-provenance.js'
import {
  Binding,
  InvestigationSettings,
  InvestigationSettingsV1,
  InvestigationSettingsV2,
  InvestigationSettingsV3,
  upcastSettingsV2
} from './settings.js'

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

/**
 * Who asked for an operator's query, in the words of the program that asked: an MCP client by the
 * name and version it gave when it connected (its own claim, recorded as such; at most 128
 * characters each, no control characters).
 */
export const Requester = t.type(
  {
    protocol: t.literal('mcp'),
    name: patternString('RequesterName', /^[^\u0000-\u001f\u007f]{1,128}$/),
    version: patternString('RequesterVersion', /^[^\u0000-\u001f\u007f]{0,128}$/)
  },
  'Requester'
)
export type Requester = t.TypeOf<typeof Requester>

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

// ---------------------------------------------------------------------------------------------
// The investigation: settings fixed at its start, checkpoints of the lifecycle, every model
// exchange (prompt and raw answer as objects), the model's decided actions, and their outcomes.
// ---------------------------------------------------------------------------------------------

/** @category cases */
export const LifecycleState = t.keyof(
  { INTERPRETING: null, INVESTIGATING: null, BLOCKED: null, CONCLUDED: null, EXHAUSTED: null },
  'LifecycleState'
)
export type LifecycleState = t.TypeOf<typeof LifecycleState>
/** @category cases */
export const BlockReason = t.keyof(
  { RESEARCH_UNAVAILABLE: null, INVALID_LLM_RESPONSES: null, AWAITING_TEST_FEEDBACK: null, MODEL_UNAVAILABLE: null },
  'BlockReason'
)
export type BlockReason = t.TypeOf<typeof BlockReason>

/** Version 1: settings without a token limit. */
export const InvestigationStartedV1 = t.type(
  { settings: InvestigationSettingsV1, revision: t.number },
  'InvestigationStartedV1'
)
/** Version 2: settings with a token limit, without the query contract. */
export const InvestigationStartedV2 = t.type(
  { settings: InvestigationSettingsV2, revision: t.number },
  'InvestigationStartedV2'
)
/** Version 3: settings with the query contract, without a binding. */
export const InvestigationStartedV3 = t.type(
  { settings: InvestigationSettingsV3, revision: t.number },
  'InvestigationStartedV3'
)
export const InvestigationStarted = t.type(
  { settings: InvestigationSettings, revision: t.number },
  'InvestigationStarted'
)
export const InvestigationStartedEvent = defineEvent('InvestigationStarted', InvestigationStarted, [
  {
    codec: InvestigationStartedV1,
    upcast: (d) => {
      const v = d as t.TypeOf<typeof InvestigationStartedV1>
      return { ...v, settings: { ...v.settings, max_tokens: null } }
    }
  },
  {
    codec: InvestigationStartedV2,
    upcast: (d) => {
      const v = d as t.TypeOf<typeof InvestigationStartedV2>
      return { ...v, settings: upcastSettingsV2(v.settings) }
    }
  },
  {
    codec: InvestigationStartedV3,
    upcast: (d) => {
      const v = d as t.TypeOf<typeof InvestigationStartedV3>
      return { ...v, settings: { ...v.settings, binding: null } }
    }
  }
])

export const CheckpointRecorded = t.type(
  {
    /** Counts checkpoints: 1, 2, 3 … */
    generation: PositiveInt,
    state: LifecycleState,
    reason: t.union([BlockReason, t.string, t.null]),
    resume_state: t.union([LifecycleState, t.null]),
    retry_not_before: t.union([t.string, t.null]),
    manual_retry: t.boolean
  },
  'CheckpointRecorded'
)
export type CheckpointRecorded = t.TypeOf<typeof CheckpointRecorded>
export const CheckpointRecordedEvent = defineEvent('CheckpointRecorded', CheckpointRecorded)

export const ModelRequested = t.type(
  {
    turn: PositiveInt,
    phase: t.keyof({ interpretation: null, investigation: null }),
    prompt: ObjectRef,
    prompt_version: t.string,
    prompt_chars: t.number
  },
  'ModelRequested'
)
export const ModelRequestedEvent = defineEvent('ModelRequested', ModelRequested)
/** Version 1: the raw answer only. */
export const ModelRespondedV1 = t.type({ turn: PositiveInt, raw: ObjectRef }, 'ModelRespondedV1')
/** The raw answer and which model gave it at what cost (null: recorded by version 1, which did not say). */
export const ModelResponded = t.type(
  { turn: PositiveInt, raw: ObjectRef, provenance: t.union([ModelProvenance, t.null]) },
  'ModelResponded'
)
export const ModelRespondedEvent = defineEvent('ModelResponded', ModelResponded, [
  { codec: ModelRespondedV1, upcast: (d) => ({ ...(d as t.TypeOf<typeof ModelRespondedV1>), provenance: null }) }
])
/** The model function failed (threw, timed out, the provider refused): no answer for this turn. */
export const ModelFailed = t.type({ turn: PositiveInt, code: t.string, message: t.string }, 'ModelFailed')
// A call the controller cancelled records nothing: its request stays unanswered, and the next turn is asked anew.
export const ModelFailedEvent = defineEvent('ModelFailed', ModelFailed)
export const ModelResponseRejected = t.type(
  { turn: PositiveInt, code: t.string, message: t.string, consecutive: PositiveInt },
  'ModelResponseRejected'
)
export const ModelResponseRejectedEvent = defineEvent('ModelResponseRejected', ModelResponseRejected)

export const InterpretationRecorded = t.type({ turn: PositiveInt, summary: t.string }, 'InterpretationRecorded')
export const InterpretationRecordedEvent = defineEvent('InterpretationRecorded', InterpretationRecorded)
export const PlanConfirmed = t.type(
  { plan_id: Identifier, turn: PositiveInt, operation: t.literal('project.query'), arguments: t.UnknownRecord },
  'PlanConfirmed'
)
export const PlanConfirmedEvent = defineEvent('PlanConfirmed', PlanConfirmed)
export const HypothesisProposed = t.type(
  { hypothesis_id: Identifier, statement: t.string, evidence: t.array(t.string) },
  'HypothesisProposed'
)
export const HypothesisProposedEvent = defineEvent('HypothesisProposed', HypothesisProposed)
export const HypothesisUpdated = t.type(
  {
    hypothesis_id: Identifier,
    status: t.keyof({ open: null, supported: null, refuted: null }),
    evidence: t.array(t.string),
    note: t.string
  },
  'HypothesisUpdated'
)
export const HypothesisUpdatedEvent = defineEvent('HypothesisUpdated', HypothesisUpdated)
export const LabTestRequested = t.type({ request_id: Identifier, description: t.string }, 'LabTestRequested')
export const LabTestRequestedEvent = defineEvent('LabTestRequested', LabTestRequested)
export const LabFeedbackRecorded = t.type({ request_id: Identifier, feedback: t.string }, 'LabFeedbackRecorded')
export const LabFeedbackRecordedEvent = defineEvent('LabFeedbackRecorded', LabFeedbackRecorded)
export const ConclusionRecorded = t.type(
  { summary: t.string, hypotheses: t.array(t.string), evidence: t.array(t.string) },
  'ConclusionRecorded'
)
export const ConclusionRecordedEvent = defineEvent('ConclusionRecorded', ConclusionRecorded)

// ---------------------------------------------------------------------------------------------
// Operator decisions: cancelling a confirmed plan (its reservation is released as `cancelled`)
// and topping up the budget of a running investigation, each with a reason.
// ---------------------------------------------------------------------------------------------

export const PlanCancelled = t.type(
  { reservation_id: Identifier, plan_id: t.union([Identifier, t.null]), reason: t.string },
  'PlanCancelled'
)
export const PlanCancelledEvent = defineEvent('PlanCancelled', PlanCancelled)
export const BudgetToppedUp = t.type({ amount: PositiveInt, reason: t.string }, 'BudgetToppedUp')
export const BudgetToppedUpEvent = defineEvent('BudgetToppedUp', BudgetToppedUp)

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
  QueryAnsweredFromCaseEvent
] as const

export type EventDefinitions = (typeof EVENT_DEFINITIONS)[number]

/** The decoded, current-version form of every event: `{ type, data }`. @category cases */
export type CaseEventBody = {
  [D in EventDefinitions as D['type']]: { readonly type: D['type']; readonly data: t.TypeOf<D['codec']> }
}[EventDefinitions['type']]

export type EventType = CaseEventBody['type']

export const registry = makeRegistry<EventDefinitions>(EVENT_DEFINITIONS)
