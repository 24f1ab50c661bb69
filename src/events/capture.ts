/**
 * The capture format (format_version 1): the immutable record of one project.query. A capture
 * holds the validated request, where the answer came from (a git commit's blobs, or a database
 * snapshot), the settings that bounded it with their hash, and the result. It carries no clock
 * time, so an identical answer is byte-identical and stored once.
 */
import * as t from 'io-ts'
import { Digest, Identifier, NonNegativeInt, ObjectRef, patternString } from './codecs.js'
import { QueryKind } from './query-requests.js'

export const CAPTURE_FORMAT = 'vba-capture'
export const CAPTURE_SCHEMA = 'project-query-v1'

export { QueryKind } from './query-requests.js'

export const CommitId = patternString('CommitId', /^[0-9a-f]{40}$/)
export const Sha256Hex = patternString('Sha256Hex', /^[0-9a-f]{64}$/)

/** One file a source answer read, identified by its git blob and by SHA-256 of its bytes. */
export const OriginFile = t.type(
  { path: t.string, blob: CommitId, sha256: Sha256Hex, size: NonNegativeInt },
  'OriginFile'
)

export const GitOrigin = t.type(
  {
    type: t.literal('git'),
    url: t.string,
    commit: CommitId,
    files: t.array(OriginFile)
  },
  'GitOrigin'
)

export const DatabaseOrigin = t.type(
  {
    type: t.literal('database'),
    client: t.keyof({ mysql2: null, 'better-sqlite3': null }),
    database: t.string,
    snapshot_id: t.string
  },
  'DatabaseOrigin'
)

/** The members of an event that records a capture (research's or an enrichment's) as evidence. */
export const CAPTURED = {
  capture: ObjectRef,
  kind: QueryKind,
  /** SHA-256 of the canonical request. */
  request_digest: Digest,
  evidence_id: Identifier,
  /** True when an identical capture was recorded before: the same evidence, not new evidence. */
  repeat: t.boolean
}

/** @category research */
export const Capture = t.type(
  {
    format: t.literal(CAPTURE_FORMAT),
    format_version: t.literal(1),
    schema: t.literal(CAPTURE_SCHEMA),
    kind: QueryKind,
    request: t.UnknownRecord,
    origin: t.union([GitOrigin, DatabaseOrigin]),
    settings: t.UnknownRecord,
    settings_hash: Digest,
    result: t.UnknownRecord
  },
  'Capture'
)
export type Capture = t.TypeOf<typeof Capture>
