/** Building captures (format_version 1): request, origin, settings with their hash, result. */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import { CAPTURE_FORMAT, CAPTURE_SCHEMA, type Capture, type QueryKind } from '../events/capture.js'

export type Origin = Capture['origin']

/**
 * Settings with their hash, computed once for the settings a research session answers under (they
 * do not change while it lasts). Frozen: the hash stays the hash of what is recorded.
 */
export class HashedSettings {
  private constructor(
    readonly settings: Readonly<Record<string, unknown>>,
    readonly hash: string
  ) {}

  static of(settings: Record<string, unknown>): E.Either<Failure, HashedSettings> {
    const hash = settingsHash(settings)
    return E.isLeft(hash) ? hash : E.right(new HashedSettings(deepFreeze(settings), hash.right))
  }
}

const settingsHash = (settings: Record<string, unknown>): E.Either<Failure, string> => {
  const text = canonicalJson(settings)
  return E.isLeft(text) ? text : E.right(sha256Digest(text.right))
}

const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

/** Assembles a capture; its canonical size must stay within `maxBytes` (RESULT_TOO_LARGE). */
export const buildCapture = (
  kind: QueryKind,
  request: Record<string, unknown>,
  origin: Origin,
  settings: Record<string, unknown> | HashedSettings,
  result: Record<string, unknown>,
  maxBytes: number,
  /** Size (or an upper bound) of JSON.stringify(result) when the caller measured it already. */
  resultBytes?: number
): E.Either<Failure, Capture> => {
  const hash = settings instanceof HashedSettings ? E.right(settings.hash) : settingsHash(settings)
  if (E.isLeft(hash)) return hash
  const capture: Capture = {
    format: CAPTURE_FORMAT,
    format_version: 1,
    schema: CAPTURE_SCHEMA,
    kind,
    request,
    origin,
    settings: (settings instanceof HashedSettings ? settings.settings : settings) as Record<string, unknown>,
    settings_hash: hash.right,
    result
  }
  // Canonical JSON differs from JSON.stringify only in member order, so the size is the same
  // (lone surrogates, which canonical JSON refuses, are refused when the capture is stored).
  const size =
    resultBytes === undefined
      ? Buffer.byteLength(JSON.stringify(capture))
      : Buffer.byteLength(JSON.stringify({ ...capture, result: {} })) - 2 + resultBytes
  if (size > maxBytes) {
    return E.left(
      failure('RESULT_TOO_LARGE', `the result has ${size} bytes, over the limit of ${maxBytes}; narrow the query`, {
        bytes: size,
        max_result_bytes: maxBytes
      })
    )
  }
  return E.right(capture)
}

/** Canonical bytes of a capture, as stored in a case's objects. */
export const captureBytes = (capture: Capture): Buffer => {
  const text = canonicalJson(capture)
  if (E.isLeft(text)) throw new TypeError('capture is not canonicalisable')
  return Buffer.from(text.right, 'utf8')
}
