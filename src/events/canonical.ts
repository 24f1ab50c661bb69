/**
 * RFC 8785 (JSON Canonicalization Scheme) encoding and SHA-256 digests.
 *
 * Canonical bytes are what every hash in a case package is computed over, so two machines that
 * agree on the data agree on the bytes. The encoder is the `canonicalize` package (the reference
 * JavaScript implementation by one of the RFC's authors); hashing uses node:crypto, which is pure
 * computation (no file, network or clock access) and native speed on the replay hot path.
 */
import canonicalize from 'canonicalize'
import { createHash } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../domain/failure.js'

export type CanonicalFailure = Failure<'NOT_CANONICALIZABLE'>

/** Canonical JSON text of a JSON value; refuses NaN, Infinity, lone surrogates and cycles. */
export const canonicalJson = (value: unknown): E.Either<CanonicalFailure, string> => {
  try {
    const text = canonicalize(value)
    return text === undefined
      ? E.left(failure('NOT_CANONICALIZABLE', 'value has no JSON representation'))
      : E.right(text)
  } catch (e) {
    return E.left(failure('NOT_CANONICALIZABLE', `value cannot be canonicalised: ${e instanceof Error ? e.message : String(e)}`))
  }
}

/** Digest strings are always `sha256:` followed by 64 lowercase hex digits. */
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/

/** `sha256:<hex>` of the given bytes or UTF-8 text. */
export const sha256Digest = (bytes: Uint8Array | string): string =>
  'sha256:' + createHash('sha256').update(bytes).digest('hex')

/** Plain lowercase hex SHA-256 (for places where the algorithm is implied, e.g. BagIt manifests). */
export const sha256Hex = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex')
