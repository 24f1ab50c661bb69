/** Turning io-ts validation errors into short, path-qualified messages in words. */
import type * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { parseBoundedJson } from './bounds.js'
import { schemaHints } from './codecs.js'

// Only these add an entry of their own (a branch's index) to the context: exact, readonly and
// refinement validate their codec in the same context, so the entry after them is a member's key.
const COMBINATORS = new Set(['IntersectionType', 'UnionType'])

interface Codec {
  readonly _tag?: string
  readonly name: string
  readonly [k: string]: unknown
}

/**
 * The path of an error (`filters.0.operator`) and the entry of its context that declares the
 * member at that path (the codec a reader of the contract sees there, not a union's branch).
 */
const located = (e: t.ValidationError): { path: string; declared: t.ContextEntry | undefined } => {
  const keys: string[] = []
  let declared = e.context[0]
  e.context.forEach((c, i) => {
    if (i === 0 || c.key === '') return
    const parentTag = (e.context[i - 1]?.type as { _tag?: string } | undefined)?._tag
    if (parentTag !== undefined && COMBINATORS.has(parentTag)) return
    keys.push(c.key)
    declared = c
  })
  return { path: keys.join('.'), declared }
}

const joinOr = (parts: readonly string[]): string =>
  parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}`

const lengthWords = (min: unknown, max: unknown): string =>
  typeof min === 'number' && typeof max === 'number'
    ? ` of ${min}-${max} characters`
    : typeof min === 'number' && min > 0
      ? ` of at least ${min} character${min === 1 ? '' : 's'}`
      : typeof max === 'number'
        ? ` of at most ${max} characters`
        : ''

/** A JSON Schema hint (a refined codec's) in words, or null. */
const hintWords = (hint: Readonly<Record<string, unknown>>, name: string): string | null => {
  const { type, minimum: min, maximum: max } = hint
  if (type === 'integer') {
    if (typeof min === 'number' && typeof max === 'number' && max < Number.MAX_SAFE_INTEGER)
      return `a whole number from ${min} to ${max}`
    return typeof min === 'number' ? `a whole number from ${min}` : 'a whole number'
  }
  if (type === 'string') {
    const pattern = hint['pattern']
    if (typeof pattern === 'string') return `a ${name} (a string matching /${pattern}/)`
    return `a string${lengthWords(hint['minLength'], hint['maxLength'])}`
  }
  return null
}

/** A union's branches, the branches of a union inside it flattened (`a, b, c or d`, not `a, b or c or d`). */
const branches = (codec: t.Decoder<unknown, unknown>): t.Mixed[] => {
  const c = codec as unknown as Codec
  return c._tag === 'UnionType' && !schemaHints.has(codec as unknown as t.Any)
    ? (c['types'] as t.Mixed[]).flatMap(branches)
    : [codec as t.Mixed]
}

/** What a codec takes, in words: `a whole number from 1`, `one of "eq", "ne"`, `a list (each a string)`. */
export const expectedWords = (codec: t.Decoder<unknown, unknown>, depth = 0): string => {
  const c = codec as unknown as Codec
  const hint = schemaHints.get(codec as unknown as t.Any)
  const hinted = hint === undefined ? null : hintWords(hint, c.name)
  if (hinted !== null) return hinted
  if (depth > 3) return 'a value of another shape'
  switch (c._tag) {
    case 'StringType':
      return 'a string'
    case 'NumberType':
      return 'a number'
    case 'BooleanType':
      return 'true or false'
    case 'NullType':
      return 'null'
    case 'LiteralType':
      return JSON.stringify(c['value'])
    case 'KeyofType': {
      const keys = Object.keys(c['keys'] as object)
      return keys.length === 1 ? JSON.stringify(keys[0]) : `one of ${keys.map((k) => JSON.stringify(k)).join(', ')}`
    }
    case 'ArrayType':
      return `a list (each ${expectedWords(c['type'] as t.Mixed, depth + 1)})`
    case 'TupleType':
      return `a list of ${(c['types'] as unknown[]).length}`
    case 'InterfaceType':
    case 'PartialType':
    case 'IntersectionType':
    case 'DictionaryType':
    case 'UnknownRecordType':
    case 'AnyDictionaryType':
      return 'an object'
    case 'UnionType': {
      const parts = branches(codec).map((x) => expectedWords(x, depth + 1))
      return joinOr([...new Set(parts)])
    }
    case 'RefinementType':
      // The base type in words; the refinement's own condition is only its name.
      return `a ${c.name} (${expectedWords(c['type'] as t.Mixed, depth + 1)})`
    case 'ExactType':
    case 'ReadonlyType':
      return expectedWords(c['type'] as t.Mixed, depth + 1)
    default:
      // A custom codec without a schema hint: its own failure message says it, else its name.
      return `a ${c.name}`
  }
}

/**
 * At most three members, each as `path must be …` in words (`start_line must be a whole number
 * from 1`; `summary is missing: it must be a string`); errors of one member (a union's branches)
 * are said once.
 */
export const describeErrors = (errors: t.Errors): string => {
  const said = new Map<string, string>()
  for (const e of errors) {
    const { path, declared } = located(e)
    if (said.has(path)) continue
    const last = e.context[e.context.length - 1]
    // The declared codec in words; a custom codec without a schema hint says it in its own message.
    const hinted = declared !== undefined && schemaHints.has(declared.type as t.Any)
    const own = !hinted && e.message !== undefined && declared === last ? e.message.replace(/^expected /, '') : null
    const words = own ?? (declared === undefined ? 'a value of another shape' : expectedWords(declared.type))
    const where = path === '' ? 'the value' : path
    said.set(
      path,
      declared !== undefined && declared.actual === undefined && path !== ''
        ? `${where} is missing: it must be ${words}`
        : `${where} must be ${words}`
    )
  }
  const parts = [...said.values()]
  return parts.slice(0, 3).join('; ') + (parts.length > 3 ? ` (+${parts.length - 3} more)` : '')
}

/**
 * JSON text decoded with a codec, at a trust boundary (an object read from a case, a file, a
 * database row): Left with a short reason when it is not JSON, out of bounds (src/events/bounds.ts)
 * or not of the codec's shape.
 */
export const decodeJson = <A>(codec: t.Decoder<unknown, A>, text: string): E.Either<string, A> => {
  const parsed = parseBoundedJson(text)
  if (E.isLeft(parsed)) return parsed
  return E.mapLeft(describeErrors)(codec.decode(parsed.right))
}
