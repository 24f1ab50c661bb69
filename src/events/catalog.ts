/**
 * The catalog of event types a case may contain. Later capabilities add their types here; a type
 * whose schema changes gets a new version plus an upcaster, never an edit of the old codec.
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { defineEventType, makeRegistry, type Intent } from './registry.js'
import { type Actor, Digest, Identifier, ObjectRef, PositiveInt } from './codecs.js'
import { CAPTURED } from './capture.js'
import { INVESTIGATION_EVENTS } from './investigation-events.js'
import { REVISION_EVENTS } from './revision-events.js'
import { CommandSignedEvent } from './command-signature.js'

// ---------------------------------------------------------------------------------------------
// NoteRecorded: a person's note on the case. Version 1 had only text; version 2 names the markup.
// ---------------------------------------------------------------------------------------------

export const NoteRecordedV1 = t.type({ text: t.string }, 'NoteRecordedV1')

// What people hand in may come together: a note with its attachments.
export const NoteRecordedEvent = defineEventType(
  'NoteRecorded',
  { text: t.string, format: t.keyof({ plain: null, markdown: null }) },
  {
    previous: [
      { codec: NoteRecordedV1, upcast: (d) => ({ ...(d as t.TypeOf<typeof NoteRecordedV1>), format: 'plain' }) }
    ],
    actors: ['operator', 'controller'],
    members: ['NoteRecorded', 'AttachmentAdded'],
    intent: ({ actor, data }) => ({ actor, text: data.text, format: data.format })
  }
)
export type NoteRecorded = t.TypeOf<typeof NoteRecordedEvent.codec>

// ---------------------------------------------------------------------------------------------
// AttachmentAdded: a file handed in by a person (a log, a screenshot), stored as an object.
// ---------------------------------------------------------------------------------------------

export const AttachmentAddedEvent = defineEventType(
  'AttachmentAdded',
  { name: t.string, object: ObjectRef },
  {
    actors: ['operator', 'controller'],
    members: ['NoteRecorded', 'AttachmentAdded'],
    intent: ({ actor, data }) => ({ actor, name: data.name, object: data.object })
  }
)
export type AttachmentAdded = t.TypeOf<typeof AttachmentAddedEvent.codec>

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

/** Version 3: an operator's query names its request's digest and who asked, but not the request. */
export const BudgetReservedV3 = t.type(
  {
    ...BudgetReservedV2.props,
    requester: t.union([Requester, t.null])
  },
  'BudgetReservedV3'
)

export const BudgetReservedEvent = defineEventType(
  'BudgetReserved',
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
    requester: t.union([Requester, t.null]),
    /**
     * The canonical request of an operator's query, whose digest is request_digest (so a refusal
     * shows what was refused); null for a plan (its PlanConfirmed holds it) and before version 4.
     */
    request: t.union([t.UnknownRecord, t.null])
  },
  {
    previous: [
      {
        codec: BudgetReservedV1,
        upcast: (d) => ({ ...(d as t.TypeOf<typeof BudgetReservedV1>), request_digest: null })
      },
      { codec: BudgetReservedV2, upcast: (d) => ({ ...(d as t.TypeOf<typeof BudgetReservedV2>), requester: null }) },
      { codec: BudgetReservedV3, upcast: (d) => ({ ...(d as t.TypeOf<typeof BudgetReservedV3>), request: null }) }
    ],
    actors: ['controller'],
    members: [],
    intent: ({ data }) => ({ request_digest: data.request_digest })
  }
)
export type BudgetReserved = t.TypeOf<typeof BudgetReservedEvent.codec>

export const CaptureRecordedEvent = defineEventType(
  'CaptureRecorded',
  { reservation_id: Identifier, ...CAPTURED },
  { actors: ['system'], members: ['BudgetConsumed', 'CheckpointRecorded'], intent: null }
)
export type CaptureRecorded = t.TypeOf<typeof CaptureRecordedEvent.codec>

export const BudgetConsumedEvent = defineEventType(
  'BudgetConsumed',
  { reservation_id: Identifier, amount: PositiveInt },
  { actors: ['system'], members: [], intent: null }
)
export type BudgetConsumed = t.TypeOf<typeof BudgetConsumedEvent.codec>

export const BudgetReleasedEvent = defineEventType(
  'BudgetReleased',
  { reservation_id: Identifier, amount: PositiveInt, reason: t.keyof({ refused: null, cancelled: null }) },
  { actors: ['system', 'operator'], members: [], intent: null }
)
export type BudgetReleased = t.TypeOf<typeof BudgetReleasedEvent.codec>

/**
 * An identical query asked again is answered from the case: the capture recorded for exactly this
 * request is shown again as a repeat of its evidence, and costs nothing (no reservation). Recorded
 * with the answer whose plan it answers (after PlanConfirmed), never first.
 */
export const QueryAnsweredFromCaseEvent = defineEventType(
  'QueryAnsweredFromCase',
  {
    plan_id: Identifier,
    /** SHA-256 of the canonical request (the plan's arguments). */
    request_digest: Digest,
    /** The evidence the recorded capture is, and the capture itself. */
    evidence_id: Identifier,
    capture: ObjectRef
  },
  { actors: ['system'], members: [], intent: null }
)
export type QueryAnsweredFromCase = t.TypeOf<typeof QueryAnsweredFromCaseEvent.codec>

export const ResearchFailedEvent = defineEventType(
  'ResearchFailed',
  {
    reservation_id: Identifier,
    code: t.string,
    message: t.string,
    /** The provider was unavailable (not a bad question): the reservation stays for a resume. */
    unavailable: t.boolean
  },
  { actors: ['system'], members: ['BudgetReleased', 'CheckpointRecorded'], intent: null }
)
export type ResearchFailed = t.TypeOf<typeof ResearchFailedEvent.codec>

export * from './revision-events.js'
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
  ...REVISION_EVENTS,
  ...INVESTIGATION_EVENTS,
  QueryAnsweredFromCaseEvent,
  CommandSignedEvent
] as const

export type EventDefinitions = (typeof EVENT_DEFINITIONS)[number]

/** The decoded, current-version form of every event: `{ type, data }`. @category cases */
export type CaseEventBody = {
  [D in EventDefinitions as D['type']]: { readonly type: D['type']; readonly data: t.TypeOf<D['codec']> }
}[EventDefinitions['type']]

export type EventType = CaseEventBody['type']

/** The definition of the event type `K`. */
export type EventTypeOf<K extends EventType> = Extract<EventDefinitions, { readonly type: K }>

/** The definitions by type. */
export const EVENT_TYPES = Object.fromEntries(EVENT_DEFINITIONS.map((d) => [d.type, d])) as {
  readonly [K in EventType]: EventTypeOf<K>
}

/** A command member that names no event type of the catalog (never, while the catalog compiles). */
type UnknownMember = Exclude<EventDefinitions['members'][number], EventType>
// Compiles only while every definition's members name event types of the catalog: the error names the one that does not.
const membersAreEventTypes: [UnknownMember] extends [never] ? true : UnknownMember = true
void membersAreEventTypes

/** The event types that may follow an event of type `first` in one command (empty: it stands alone). */
export const membersOf = (first: EventType): readonly EventType[] => EVENT_TYPES[first].members

export const registry = makeRegistry<EventDefinitions>(EVENT_DEFINITIONS)

/**
 * The intent of a recorded event (its data decoded and upcast to the current version, then read
 * by its definition's `intent`), or null when its type has none or its data does not decode.
 */
export const intentOf = (e: {
  readonly type: string
  readonly version: number
  readonly actor: Actor
  readonly data: unknown
}): Readonly<Record<string, unknown>> | null => {
  const def = registry.definitions.get(e.type)
  if (def === undefined || def.intent === null) return null
  const data = registry.decode(e.type, e.version, e.data)
  // the data was decoded by this definition's own codec
  return E.isLeft(data) ? null : (def.intent as NonNullable<Intent<unknown>>)({ actor: e.actor, data: data.right })
}
