/**
 * Finding object references inside event data. By convention of the case format, any JSON object
 * with a `digest` member is a reference to objects/sha256/; its digest must be well formed and its
 * size a non-negative integer. A malformed reference (for example one smuggling a path such as
 * `sha256:../../etc/passwd`) is reported, never resolved.
 */
import { DIGEST_PATTERN } from './canonical.js'

export interface FoundRef {
  readonly digest: string
  readonly size: number
  /** RFC 6901 JSON pointer into the event's `data`. */
  readonly pointer: string
}

export interface InvalidRef {
  readonly pointer: string
  readonly reason: string
}

const escapePointer = (key: string): string =>
  key.includes('~') || key.includes('/') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key

/** The object references of a value, and the malformed ones, in document order. */
export interface FoundRefs {
  readonly refs: readonly FoundRef[]
  readonly invalid: readonly InvalidRef[]
}

/** What a value without references has (shared: nobody changes it). */
const NO_REFS: FoundRefs = Object.freeze({ refs: Object.freeze([]), invalid: Object.freeze([]) })

/** Whether `record` has no `digest` member and no member that is an object or an array. */
const flatWithoutDigest = (record: object): boolean => {
  if (Object.hasOwn(record, 'digest')) return false
  for (const key in record) {
    const v = (record as Record<string, unknown>)[key]
    if (typeof v === 'object' && v !== null) return false
  }
  return true
}

/** Walks `data` and returns its object references and malformed ones, in document order. */
export const collectRefs = (data: unknown): FoundRefs => {
  // An object without a digest member and with no object or array in it (a note's data) holds none.
  if (typeof data === 'object' && data !== null && !Array.isArray(data) && flatWithoutDigest(data)) return NO_REFS
  const refs: FoundRef[] = []
  const invalid: InvalidRef[] = []
  // Only objects and arrays are walked into: a pointer is built for them alone, not for every
  // string and number of the data (a note's text is most of a log).
  const walk = (value: object, pointer: string): void => {
    if (Array.isArray(value)) {
      value.forEach((v: unknown, i) => {
        if (typeof v === 'object' && v !== null) walk(v, `${pointer}/${i}`)
      })
      return
    }
    const record = value as Record<string, unknown>
    if (Object.hasOwn(record, 'digest')) {
      const { digest, size } = record
      if (typeof digest !== 'string' || !DIGEST_PATTERN.test(digest)) {
        invalid.push({ pointer, reason: 'digest is not sha256:<64 lowercase hex>' })
      } else if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
        invalid.push({ pointer, reason: 'size is not a non-negative integer' })
      } else {
        refs.push({ digest, size, pointer })
      }
    }
    for (const key of Object.keys(record)) {
      const v = record[key]
      if (typeof v === 'object' && v !== null) walk(v, `${pointer}/${escapePointer(key)}`)
    }
  }
  if (typeof data === 'object' && data !== null) walk(data, '')
  return { refs, invalid }
}

/** Case-relative path of an object: objects/sha256/ab/cdef… (only for well-formed digests). */
export const objectPath = (digest: string): string => {
  if (!DIGEST_PATTERN.test(digest)) throw new TypeError('objectPath needs a well-formed digest')
  const hex = digest.slice('sha256:'.length)
  return `objects/sha256/${hex.slice(0, 2)}/${hex.slice(2)}`
}
