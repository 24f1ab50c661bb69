/**
 * The event envelope, the case declaration (case.json) and HEAD: the three record shapes of a
 * case package besides objects. Every line of events.jsonl is one envelope in canonical JSON.
 */
import * as t from 'io-ts'
import { objectHints } from './json-schema.js'
import { Actor, Digest, Identifier, NonNegativeInt, PositiveInt, Timestamp, patternString } from './codecs.js'

/** Value of `format` on every event line of format version 1. */
export const EVENT_FORMAT = 'vba-event/1'
/** Value of `format` in case.json. */
export const CASE_FORMAT = 'vba-case'
/** The case package format version this library writes and reads. */
export const CASE_FORMAT_VERSION = 1

/** Event type names are PascalCase words in the past tense (`CaptureRecorded`). */
export const EventTypeName = patternString('EventTypeName', /^[A-Z][A-Za-z0-9]{1,63}$/)

/** One event line. `hash` is the SHA-256 of the canonical envelope without `hash`. @category cases */
export const EventEnvelope = t.type(
  {
    format: t.literal(EVENT_FORMAT),
    seq: PositiveInt,
    id: Identifier,
    type: EventTypeName,
    version: PositiveInt,
    at: Timestamp,
    actor: Actor,
    command_id: Identifier,
    data: t.UnknownRecord,
    prev: Digest,
    hash: Digest
  },
  'EventEnvelope'
)
export type EventEnvelope = t.TypeOf<typeof EventEnvelope>

objectHints.set(EventEnvelope, { additionalProperties: false })

/** The member names of an envelope, in canonical (RFC 8785) order. */
export const ENVELOPE_KEYS: readonly string[] = Object.keys(EventEnvelope.props).sort()

/** case.json: the declaration, written once when the case is created. @category cases */
export const CaseDeclaration = t.intersection(
  [
    t.type({
      format: t.literal(CASE_FORMAT),
      format_version: t.literal(CASE_FORMAT_VERSION),
      case_id: Identifier,
      created_at: Timestamp
    }),
    t.partial({
      title: t.string,
      created_by: t.string,
      /** The writer's format generation (src/events/generations.ts); absent in cases created before it was recorded. */
      format_generation: PositiveInt
    })
  ],
  'CaseDeclaration'
)
export type CaseDeclaration = t.TypeOf<typeof CaseDeclaration>

/**
 * HEAD: the last acknowledged event. `bytes` is the length of events.jsonl up to and including
 * that event's line; anything after it was never acknowledged to a writer.
 */
export const Head = t.type({ seq: NonNegativeInt, hash: Digest, bytes: NonNegativeInt }, 'Head')
export type Head = t.TypeOf<typeof Head>
