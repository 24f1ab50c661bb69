/** Building captures (format_version 1): request, origin, settings with their hash, result. */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../domain/failure.js'
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
  maxBytes: number
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
  const text = canonicalJson(capture)
  if (E.isLeft(text)) return text
  const size = Buffer.byteLength(text.right)
  if (size > maxBytes) {
    return E.left(failure('RESULT_TOO_LARGE', `the result has ${size} bytes, over the limit of ${maxBytes}; narrow the query`, { bytes: size, max_result_bytes: maxBytes }))
  }
  return E.right(capture)
}

/** Canonical bytes of a capture, as stored in a case's objects. */
export const captureBytes = (capture: Capture): Buffer => {
  const text = canonicalJson(capture)
  if (E.isLeft(text)) throw new TypeError('capture is not canonicalisable')
  return Buffer.from(text.right, 'utf8')
}
