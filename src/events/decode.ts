/** Turning io-ts validation errors into short, path-qualified messages. */
import type * as t from 'io-ts'

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
