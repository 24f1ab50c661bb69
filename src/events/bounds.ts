/**
 * Bounded structure: every JSON value read from outside (a log line, an object, a model answer, a
 * prompt input, a row of a SQL store) is checked for its nesting depth and its number of members
 * by a walk that does not recurse, before anything recursive (a codec, the canonical encoder, a
 * reference scan, a renderer) touches it. A value 5,000 arrays deep is a coded refusal naming its
 * depth, never a stack overflow.
 */
import * as E from 'fp-ts/lib/Either.js'

/** The deepest nesting of arrays and objects a JSON value may have (the value itself is level 1). */
export const MAX_JSON_DEPTH = 64

/** The most members (array elements and object members, counted over the whole value) a JSON value may have. */
export const MAX_JSON_MEMBERS = 1_048_576

/** Why a value is out of bounds, in words that name the limit and what was found. */
export interface BoundsViolation {
  readonly limit: 'depth' | 'members'
  /** The depth reached (at least the limit + 1 for a depth violation). */
  readonly depth: number
  /** The members counted when the walk stopped. */
  readonly members: number
  readonly message: string
}

/**
 * Null when `value` (as JSON.parse produces it) is nested at most `maxDepth` deep and has at most
 * `maxMembers` members; the violation otherwise. Iterative: an explicit stack, no recursion, and
 * it stops at the first level past the limit.
 */
export const boundsViolation = (
  value: unknown,
  maxDepth: number = MAX_JSON_DEPTH,
  maxMembers: number = MAX_JSON_MEMBERS
): BoundsViolation | null => {
  if (typeof value !== 'object' || value === null) return null
  // An object with no object or array in it (most event data) is one level deep: its members counted.
  if (!Array.isArray(value) && maxDepth >= 1) {
    let members = 0
    let flat = true
    for (const k in value) {
      members++
      const c = (value as Record<string, unknown>)[k]
      if (typeof c === 'object' && c !== null) {
        flat = false
        break
      }
    }
    if (flat && members <= maxMembers) return null
  }
  const values: unknown[] = [value]
  const depths: number[] = [1]
  let members = 0
  let deepest = 1
  while (values.length > 0) {
    const v = values.pop() as object
    const d = depths.pop() as number
    if (d > deepest) deepest = d
    if (d > maxDepth)
      return {
        limit: 'depth',
        depth: d,
        members,
        message: `nested deeper than ${maxDepth} levels (at least ${d})`
      }
    if (Array.isArray(v)) {
      members += v.length
      for (let i = 0; i < v.length; i++) {
        const c: unknown = v[i]
        if (typeof c === 'object' && c !== null) {
          values.push(c)
          depths.push(d + 1)
        }
      }
    } else {
      const record = v as Record<string, unknown>
      for (const k in record) {
        members++
        const c = record[k]
        if (typeof c === 'object' && c !== null) {
          values.push(c)
          depths.push(d + 1)
        }
      }
    }
    if (members > maxMembers)
      return {
        limit: 'members',
        depth: deepest,
        members,
        message: `more than ${maxMembers} members (at least ${members})`
      }
  }
  return null
}

/** Line and column (from 1, in characters) of the UTF-16 offset `at` of `text`. */
const lineColumn = (text: string, at: number): string => {
  const before = text.slice(0, at)
  const line = before.split('\n').length
  return `line ${line}, column ${at - before.lastIndexOf('\n')}`
}

/**
 * Why V8's JSON.parse refused `text`, without a character of the text: V8 quotes the start of the
 * text ("Unexpected token 'd', \"db_passwor\"... is not valid JSON"), and the text may be a file
 * that was never meant to be shown (a secret named where a query was expected). Its messages that
 * name a position say what was expected there (grammar, not content) and keep it, as a line and
 * column; the others say where the first character that cannot start a value is, when it is the
 * first one, and otherwise only that a character was unexpected.
 */
const jsonErrorOf = (text: string, e: unknown): string => {
  const message = e instanceof Error ? e.message : ''
  if (message.startsWith('Unexpected end of JSON input')) return 'the text ends before the value does'
  const at = / at position (\d+)/.exec(message)
  const what = /^([A-Z][A-Za-z ',:{}[\]-]*?)(?: in JSON)? at position \d+/.exec(message)?.[1]
  if (at !== null && what !== undefined)
    return `${what.charAt(0).toLowerCase()}${what.slice(1)} (${lineColumn(text, Number(at[1]))})`
  const first = /\S/.exec(text)
  if (first !== null && !/[{["\-0-9tfn]/.test(first[0]))
    return `the text does not start with a JSON value (${lineColumn(text, first.index)})`
  return 'an unexpected character'
}

/**
 * JSON text parsed and bounded: Left with the reason when it is not JSON or out of bounds. The
 * parser itself (V8's JSON.parse) does not recurse, so only what comes after it needs the bound.
 */
export const parseBoundedJson = (text: string): E.Either<string, unknown> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    return E.left(`not JSON: ${jsonErrorOf(text, e)}`)
  }
  const v = boundsViolation(parsed)
  return v === null ? E.right(parsed) : E.left(v.message)
}

/**
 * UTF-8 JSON bytes (an object of a case) parsed and bounded: the value, or undefined when the bytes
 * are not UTF-8, not JSON or out of bounds (callers then refuse it as not of its kind).
 */
export const parseBoundedBytes = (bytes: Uint8Array): unknown => {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
  const parsed = parseBoundedJson(text)
  return E.isRight(parsed) ? parsed.right : undefined
}
