/**
 * The catalog of event types a case may contain. Later capabilities add their types here; a type
 * whose schema changes gets a new version plus an upcaster, never an edit of the old codec.
 */
import * as t from 'io-ts'
import { defineEvent, makeRegistry } from './registry.js'
import { ObjectRef } from './codecs.js'

// ---------------------------------------------------------------------------------------------
// NoteRecorded: a person's note on the case. Version 1 had only text; version 2 names the markup.
// ---------------------------------------------------------------------------------------------

export const NoteRecordedV1 = t.type({ text: t.string }, 'NoteRecordedV1')
export const NoteRecorded = t.type(
  { text: t.string, format: t.keyof({ plain: null, markdown: null }) },
  'NoteRecorded'
)
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

/** Every event definition, in the order they were introduced. */
export const EVENT_DEFINITIONS = [NoteRecordedEvent, AttachmentAddedEvent] as const

export type EventDefinitions = (typeof EVENT_DEFINITIONS)[number]

/** The decoded, current-version form of every event: `{ type, data }`. */
export type CaseEventBody = {
  [D in EventDefinitions as D['type']]: { readonly type: D['type']; readonly data: t.TypeOf<D['codec']> }
}[EventDefinitions['type']]

export type EventType = CaseEventBody['type']

export const registry = makeRegistry<EventDefinitions>(EVENT_DEFINITIONS)
