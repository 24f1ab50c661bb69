/** Building captures (format_version 1): request, origin, settings with their hash, result. */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import { CAPTURE_FORMAT, CAPTURE_SCHEMA, type Capture, type QueryKind } from '../events/capture.js'

export type Origin = Capture['origin']

/** Assembles a capture; its canonical size must stay within `maxBytes` (RESULT_TOO_LARGE). */
export const buildCapture = (
  kind: QueryKind,
  request: Record<string, unknown>,
  origin: Origin,
  settings: Record<string, unknown>,
  result: Record<string, unknown>,
  maxBytes: number,
  /** Size (or an upper bound) of JSON.stringify(result) when the caller measured it already. */
  resultBytes?: number
): E.Either<Failure, Capture> => {
  const settingsText = canonicalJson(settings)
  if (E.isLeft(settingsText)) return settingsText
  const capture: Capture = {
    format: CAPTURE_FORMAT,
    format_version: 1,
    schema: CAPTURE_SCHEMA,
    kind,
    request,
    origin,
    settings,
    settings_hash: sha256Digest(settingsText.right),
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
