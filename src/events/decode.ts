/** Turning io-ts validation errors into short, path-qualified messages. */
import type * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { parseBoundedJson } from './bounds.js'

const COMBINATORS = new Set(['IntersectionType', 'UnionType', 'RefinementType', 'ExactType', 'ReadonlyType'])

const pathOf = (e: t.ValidationError): string => {
  const keys: string[] = []
  e.context.forEach((c, i) => {
    if (i === 0 || c.key === '') return
    const parentTag = (e.context[i - 1]?.type as { _tag?: string } | undefined)?._tag
    if (parentTag !== undefined && COMBINATORS.has(parentTag)) return
    keys.push(c.key)
  })
  return keys.join('.')
}

/** At most three errors, each as `path: expected Type`, e.g. `text: expected string`. */
export const describeErrors = (errors: t.Errors): string => {
  const parts = errors.slice(0, 3).map((e) => {
    const last = e.context[e.context.length - 1]
    const where = pathOf(e)
    return `${where === '' ? '(root)' : where}: ${e.message ?? `expected ${last?.type.name ?? 'value'}`}`
  })
  return parts.join('; ') + (errors.length > 3 ? ` (+${errors.length - 3} more)` : '')
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
