/**
 * The JSON lines verbs print (`--json`): canonical JSON, so the same value prints the same bytes.
 * Its own module, so that the canonical encoder loads with the verbs that print, not at start-up.
 */
import * as E from 'fp-ts/lib/Either.js'
import { canonicalJson } from '../events/canonical.js'
import { failure } from '../failures/failure.js'
import { FailureError } from '../failures/error.js'

/** Canonical JSON of a value the CLI prints (a value that has none is a bug: INTERNAL_ERROR). */
export const jsonLine = (value: unknown): string => {
  const text = canonicalJson(value)
  if (E.isLeft(text)) throw new FailureError(failure('INTERNAL_ERROR', `cannot print JSON: ${text.left.message}`))
  return text.right
}
