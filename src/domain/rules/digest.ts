/** The digest rules compare requests and inputs by: sha256 of the canonical JSON, or null when the value has none. */
import * as E from 'fp-ts/lib/Either.js'
import { canonicalJson, sha256Digest } from '../../events/canonical.js'

export const digestOf = (value: unknown): string | null => {
  const text = canonicalJson(value)
  return E.isRight(text) ? sha256Digest(text.right) : null
}
