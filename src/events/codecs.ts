/**
 * Small shared io-ts codecs: digests, object references, timestamps, identifiers.
 *
 * Refinements record the JSON Schema facts they enforce (pattern, minimum) in {@link schemaHints},
 * so the JSON Schemas in case-format/ are generated from these codecs and a test keeps them equal.
 */
import * as t from 'io-ts'
import { DIGEST_PATTERN } from './canonical.js'

/** JSON Schema keywords a refined codec adds to its base type. */
export type SchemaHint = Readonly<Record<string, unknown>>

/** Registry of JSON Schema hints, keyed by codec instance. */
export const schemaHints = new WeakMap<t.Any, SchemaHint>()

const hinted = <C extends t.Any>(codec: C, hint: SchemaHint): C => {
  schemaHints.set(codec, hint)
  return codec
}

/** A string matching a regular expression, described in JSON Schema as `pattern`. */
export const patternString = (name: string, pattern: RegExp): t.Type<string, string, unknown> =>
  hinted(
    new t.Type<string, string, unknown>(
      name,
      (u): u is string => typeof u === 'string' && pattern.test(u),
      (u, c) => (typeof u === 'string' && pattern.test(u) ? t.success(u) : t.failure(u, c, `expected ${name}`)),
      t.identity
    ),
    { type: 'string', pattern: pattern.source }
  )

/** An integer >= min (a JSON Schema `integer` with `minimum`). */
export const intAtLeast = (name: string, min: number): t.Type<number, number, unknown> =>
  hinted(
    new t.Type<number, number, unknown>(
      name,
      (u): u is number => typeof u === 'number' && Number.isSafeInteger(u) && u >= min,
      (u, c) =>
        typeof u === 'number' && Number.isSafeInteger(u) && u >= min
          ? t.success(u)
          : t.failure(u, c, `expected ${name}`),
      t.identity
    ),
    { type: 'integer', minimum: min, maximum: Number.MAX_SAFE_INTEGER }
  )

/** An integer in [min, max] (a JSON Schema `integer` with `minimum` and `maximum`). */
export const intBetween = (name: string, min: number, max: number): t.Type<number, number, unknown> =>
  hinted(
    new t.Type<number, number, unknown>(
      name,
      (u): u is number => typeof u === 'number' && Number.isSafeInteger(u) && u >= min && u <= max,
      (u, c) =>
        typeof u === 'number' && Number.isSafeInteger(u) && u >= min && u <= max
          ? t.success(u)
          : t.failure(u, c, `expected a whole number from ${min} to ${max}`),
      t.identity
    ),
    { type: 'integer', minimum: min, maximum: max }
  )

/** `sha256:<64 lowercase hex>`. Anything else (including path fragments) is refused. */
export const Digest = patternString('Digest', DIGEST_PATTERN)

/** RFC 3339 UTC timestamp with milliseconds, as produced by `Date#toISOString`. */
export const Timestamp = patternString('Timestamp', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

/** Identifiers chosen by programs (case ids, event ids, command ids): no spaces, no path syntax. */
export const Identifier = patternString('Identifier', /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/)

export const NonNegativeInt = intAtLeast('NonNegativeInt', 0)
export const PositiveInt = intAtLeast('PositiveInt', 1)

/**
 * A reference from event data to a content-addressed object in objects/sha256/.
 * Any JSON object in event data with a string `digest` member is treated as an object reference
 * by verification, so a malformed digest anywhere is found, not skipped.
 * @category cases
 */
export const ObjectRef = t.intersection([
  t.type({ digest: Digest, size: NonNegativeInt }),
  t.partial({ media_type: t.string })
])
export type ObjectRef = t.TypeOf<typeof ObjectRef>

/** @category cases */
export const Actor = t.keyof({ operator: null, controller: null, model: null, system: null })
export type Actor = t.TypeOf<typeof Actor>
