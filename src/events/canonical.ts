/**
 * RFC 8785 (JSON Canonicalization Scheme) encoding and SHA-256 digests.
 *
 * Canonical bytes are what every hash in a case package is computed over, so two machines that
 * agree on the data agree on the bytes. The encoder is the `canonicalize` package (the reference
 * JavaScript implementation by one of the RFC's authors); hashing uses node:crypto's one-shot `hash` (Node >= 20.12), which is pure
 * computation (no file, network or clock access) and native speed on the replay hot path.
 */
import canonicalize from 'canonicalize'
import { hash } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { writeUtf8 } from './buffer-text.js'

export type CanonicalFailure = Failure<'NOT_CANONICALIZABLE'>

/** Canonical JSON text of a JSON value; refuses NaN, Infinity, lone surrogates and cycles. */
export const canonicalJson = (value: unknown): E.Either<CanonicalFailure, string> => {
  const text = plainText(value, 0)
  if (text !== undefined) return E.right(text)
  try {
    const made = canonicalize(value)
    return made === undefined
      ? E.left(failure('NOT_CANONICALIZABLE', 'value has no JSON representation'))
      : E.right(made)
  } catch (e) {
    return E.left(
      failure('NOT_CANONICALIZABLE', `value cannot be canonicalised: ${e instanceof Error ? e.message : String(e)}`)
    )
  }
}

/**
 * The canonical text `canonicalize` makes of a plain JSON value (null, booleans, finite numbers,
 * well-formed strings, arrays of them and plain objects without `undefined` members), made the
 * same way (members sorted by UTF-16 code units, primitives by JSON.stringify) with the strings'
 * check done natively; undefined for any other value (deeper than 64 levels too), which the
 * encoder then decides. test/events/canonical holds the two to the same texts.
 */
const plainText = (v: unknown, depth: number): string | undefined => {
  if (v === null) return 'null'
  switch (typeof v) {
    case 'string':
      return v.isWellFormed() ? JSON.stringify(v) : undefined
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : undefined
    case 'boolean':
      return v ? 'true' : 'false'
    case 'object':
      break
    default:
      return undefined
  }
  if (depth >= 64) return undefined
  if (Array.isArray(v)) {
    let out = '['
    for (let k = 0; k < v.length; k++) {
      if (!(k in v)) return undefined
      const t = plainText(v[k], depth + 1)
      if (t === undefined) return undefined
      out += k === 0 ? t : `,${t}`
    }
    return `${out}]`
  }
  if (!plain(v)) return undefined
  const record = v as Record<string, unknown>
  const keys = Object.keys(record).sort()
  let out = '{'
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k] as string
    if (!key.isWellFormed()) return undefined
    const t = plainText(record[key], depth + 1)
    if (t === undefined) return undefined
    out += `${k === 0 ? '' : ','}${JSON.stringify(key)}:${t}`
  }
  return `${out}}`
}

/**
 * Whether `a` and `b` have the same canonical JSON text, decided without making it: true only
 * when both are JSON values made of plain objects, arrays, finite numbers, well-formed strings,
 * booleans and null that are equal member for member (key order aside), so `canonicalJson` of
 * each succeeds with the same text. False says nothing: compare `canonicalJson` texts then.
 */
export const sameCanonicalJson = (a: unknown, b: unknown, depth = 0): boolean => {
  if (depth > 64) return false
  if (a === null || b === null) return a === b
  switch (typeof a) {
    case 'string':
      return a === b && a.isWellFormed()
    case 'number':
      return a === b && Number.isFinite(a)
    case 'boolean':
      return a === b
    case 'object':
      break
    default:
      return false
  }
  if (typeof b !== 'object') return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let k = 0; k < a.length; k++) if (!sameCanonicalJson(a[k], b[k], depth + 1)) return false
    return true
  }
  if (Array.isArray(b) || !plain(a) || !plain(b)) return false
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  const keys = Object.keys(ra)
  if (keys.length !== Object.keys(rb).length) return false
  for (const key of keys)
    if (!Object.hasOwn(rb, key) || !key.isWellFormed() || !sameCanonicalJson(ra[key], rb[key], depth + 1)) return false
  return true
}

/** An object canonicalize reads member by member: a plain object without toJSON. */
const plain = (o: object): boolean => {
  const proto = Object.getPrototypeOf(o)
  return (proto === Object.prototype || proto === null) && typeof (o as { toJSON?: unknown }).toJSON !== 'function'
}

/** Digest strings are always `sha256:` followed by 64 lowercase hex digits. */
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/

/** `sha256:<hex>` of the given bytes or UTF-8 text. */
export const sha256Digest = (bytes: Uint8Array | string): string => `sha256:${hash('sha256', bytes, 'hex')}`

/**
 * Where {@link utf8OfLines} encodes its pieces: reused from call to call (a verify compares every
 * prompt of a case, ~20 KB each), replaced by a larger one when a text needs it. Holds no state
 * between calls: every call writes the bytes it returns a view of.
 */
let encoded = Buffer.allocUnsafeSlow(1 << 16)

/** Texts up to this many characters are encoded into the reused buffer; longer ones into their own. */
const ENCODE_MAX_CHARS = 1 << 20

/**
 * `pieces` joined with LF, as UTF-8, without joining them: each piece encoded into one buffer. The
 * bytes are a view of a buffer the next call writes over: read them before calling again.
 */
export const utf8OfLines = (pieces: readonly string[]): Uint8Array => {
  let chars = pieces.length
  for (let k = 0; k < pieces.length; k++) chars += (pieces[k] ?? '').length
  if (chars > ENCODE_MAX_CHARS) return Buffer.from(pieces.join('\n'), 'utf8')
  // A UTF-16 code unit is at most 3 bytes of UTF-8.
  if (encoded.length < 3 * chars) encoded = Buffer.allocUnsafeSlow(3 * chars)
  let at = 0
  for (let k = 0; k < pieces.length; k++) {
    if (k > 0) encoded[at++] = 0x0a
    at += writeUtf8(encoded, pieces[k] ?? '', at)
  }
  return new Uint8Array(encoded.buffer, encoded.byteOffset, at)
}

const keysSorted = (value: unknown): boolean => {
  if (typeof value !== 'object' || value === null) return true
  if (Array.isArray(value)) {
    for (const v of value) if (!keysSorted(v)) return false
    return true
  }
  const record = value as Record<string, unknown>
  let previous: string | undefined
  for (const key in record) {
    if (previous !== undefined && !(previous < key)) return false
    previous = key
    if (!keysSorted(record[key])) return false
  }
  return true
}

/**
 * True iff `text` is the RFC 8785 canonical form of `parsed` (which must be `JSON.parse(text)`).
 *
 * Hot path of replay and verify. For the JSON values JSON.parse produces, RFC 8785 serialisation
 * equals ECMAScript's JSON.stringify with object members sorted by UTF-16 code units, except that
 * lone surrogates are refused. So: native JSON.stringify plus a key-order walk decides almost every
 * line; lines with \u escapes of surrogates or integer-like keys (which JSON.parse reorders) fall
 * back to the reference encoder. A property test checks this against `canonicalize`.
 */
export const isCanonicalText = (text: string, parsed: unknown): boolean => {
  if (!text.includes('\\ud') && JSON.stringify(parsed) === text && keysSorted(parsed)) return true
  const reference = canonicalJson(parsed)
  return E.isRight(reference) && reference.right === text
}
