/**
 * The event types of a case's preparation (a revision's raw inputs, the captures of its
 * enrichment, its completion); part of the catalog (catalog.ts lists every definition). A type
 * whose schema changes gets a new version plus an upcaster, never an edit of the old codec.
 */
import * as t from 'io-ts'
import { defineEventType } from './registry.js'
import { Digest, ObjectRef, PositiveInt, patternString } from './codecs.js'
import { CAPTURED } from './capture.js'
import { Binding } from './settings.js'

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
export const InputsRecordedEvent = defineEventType('InputsRecorded', InputsRecorded, {
  previous: [
    { codec: InputsRecordedV1, upcast: (d) => ({ ...(d as t.TypeOf<typeof InputsRecordedV1>), origin: null }) }
  ],
  actors: ['operator', 'controller'],
  members: [],
  intent: null
})

export const EnrichmentCapturedEvent = defineEventType(
  'EnrichmentCaptured',
  { revision: PositiveInt, ...CAPTURED },
  { actors: ['system'], members: ['EnrichmentCaptured', 'RevisionCompleted'], intent: null }
)
export type EnrichmentCaptured = t.TypeOf<typeof EnrichmentCapturedEvent.codec>

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

export const RevisionCompletedEvent = defineEventType(
  'RevisionCompleted',
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
  {
    previous: [
      {
        codec: RevisionCompletedV1,
        upcast: (d) => ({ ...(d as t.TypeOf<typeof RevisionCompletedV1>), binding: null, enrichment: null })
      }
    ],
    actors: ['system'],
    members: [],
    intent: null
  }
)
export type RevisionCompleted = t.TypeOf<typeof RevisionCompletedEvent.codec>

/** The preparation's event definitions, in the order they were introduced (catalog.ts lists them in its own). */
export const REVISION_EVENTS = [InputsRecordedEvent, EnrichmentCapturedEvent, RevisionCompletedEvent] as const
